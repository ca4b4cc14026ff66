/**
 * The cancellation refund rule: what a cancellation of some covered units gives back, written
 * once and used by the cancellation quote, the cancellation itself and the docs. Pure: no I/O,
 * no clock (the effective time is an input), integers only (minor units, basis points), so the
 * same inputs always price the same refund.
 *
 * The rule (issue "Policy lifecycle I", cancellation terms on the product):
 * - A covered unit whose coverage has started is earned in full: a day starts at local midnight
 *   in the risk's IANA time zone (the unit's `startsAt` is that instant), a trip at its start;
 *   only units not yet started at the effective time can be cancelled.
 * - Each unit's share of its item's premium (and tax) is the item's amount split evenly over its
 *   units in whole minor units; the residue of the division goes one minor unit each to the
 *   earliest units, so the shares always add up to the item exactly and nothing is lost.
 * - **Free look**: when no covered unit of the purchase has started and the effective time is
 *   within the product's `freeLookDays` of payment, every cancelled unit's premium and tax comes
 *   back in full, whatever the method, and the platform fee too when the cancellation leaves no
 *   unit active. `freeLookDays` 0 turns it off (covers shorter than a month may be exempt).
 * - Otherwise the method applies, by who asks: `refundMethod` when the buyer or the agency asks,
 *   `insurerRefundMethod` when the insurer cancels.
 *   - `pro_rata`: the cancelled units' premium shares;
 *   - `short_rate`: the same less a penalty of `shortRatePenaltyBps` (basis points, 1000 = 10 %)
 *     of it, the penalty rounded up to a whole minor unit;
 *   - `none`: nothing.
 * - A **minimum earned premium** per item (`minimumEarnedPremiumMinor`) caps the premium an
 *   item can ever give back at its premium less that minimum (earlier refunds of the item count).
 * - **Tax** follows premium at the item's own rate: the item's tax times the premium refunded
 *   over the item's premium, rounded down, and never more than the cancelled units' tax shares
 *   (free look: those shares in full). Using the item's rate, not the units' shares, keeps
 *   "cancelling more never gives back less" true when a minimum earned premium caps the premium.
 * - The **platform fee** is spread over every unit of the purchase in proportion to its premium
 *   share (largest remainder, ties to the earliest: the unit shares add up to the fee exactly).
 *   A unit cancelled within free look (or by a withdrawal) gives back its fee share with its
 *   premium, so cancelling one day of three returns that day's share. A cancellation that leaves
 *   no unit active gives back all of the fee not given back yet (`refundedPlatformFeeMinor`) if
 *   free look applies, it is a withdrawal, or the product says the fee is refundable
 *   (`platformFeeRefundable`, of the purchase's first item: a bundle's primary product); so the
 *   parts of a purchase cancelled piece by piece add up to the whole-purchase refund. Outside
 *   free look and withdrawal a partial cancellation gives back none of the fee.
 * - A **withdrawal** (`withdrawal: true`: the buyer's own, through the withdrawal link, within
 *   `WITHDRAWAL_PERIOD_DAYS` (14) of payment) ignores the product's method, short-rate penalty,
 *   minimum earned premium and free-look days: every cancelled unit (not started) gives back its
 *   premium, tax and fee shares in full. Cover already provided at the buyer's request (units
 *   started: a day from its local midnight) is not cancelled and stays in force, so the buyer
 *   keeps paying only its pro-rata share, never a penalty. After the period the link cancels
 *   under the product's terms like any cancellation asked by the buyer.
 * - Per unit, the item's refund is spread over its cancelled units in proportion to their shares
 *   (largest remainder, ties to the earliest), so the breakdown adds up to the refund exactly.
 * - Never more than `refundableMinor` (paid less already refunded, a dashboard refund included):
 *   above it, premium is cut first, then tax, then the fee.
 *
 * Worked example (also a unit test): 7 days at 10.00 with 12 % tax (8.40) and a flat platform fee
 * of 2.00, pro rata, free look 0 days; the buyer cancels at 09:00 on the third day. Days 1–3 have
 * started (earned); days 4–7 are cancelled: premium 4 × 10.00 = 40.00, tax 4 × 1.20 = 4.80, fee 0
 * (units 1–3 stay active) → 44.80 back, 4 certificates voided. Short rate with a 10 % penalty:
 * premium 40.00 − 4.00 = 36.00, tax 4.80 × 36/40 = 4.32 → 40.32. Cancelled on day 0 within a
 * 14-day free look: 70.00 + 8.40 + 2.00 = 80.40, everything back.
 *
 * Free-look fee (also a unit test): 3 days at 20.00 and a fee of 7.40, cancelled on day 0 of a
 * 14-day free look one day at a time. Fee shares by premium: 740 × 2000/6000 = 246.67 each, so
 * 246 + 246 + 246 with the 2 left over to the two largest remainders, ties to the earliest:
 * 2.47, 2.47, 2.46. Cancelling day 3 gives 20.00 + 2.46; then day 1, 20.00 + 2.47; then day 2
 * (ending the policy: the 2.47 of the fee still held) → 67.40 in all, what cancelling all three
 * at once gives. Withdrawal (short rate 10 %, no free look, nothing started): 3 days → 67.40,
 * not 54.00 + 0; on day 2 (day 1 started): days 2–3 → 40.00 + 4.93, day 1 kept at 20.00 + 2.47.
 */
import {
  DEFAULT_CANCELLATION_TERMS,
  WITHDRAWAL_PERIOD_DAYS,
  type CancellationTerms,
  type RefundMethod,
} from '../products/cancellation-terms';
import { hasStarted } from './rules';

export type { CancellationTerms, RefundMethod } from '../products/cancellation-terms';
export { DEFAULT_CANCELLATION_TERMS, REFUND_METHODS, WITHDRAWAL_PERIOD_DAYS } from '../products/cancellation-terms';

/** Who asks for the cancellation (the insurer's may have a method of its own). */
export const CANCELLATION_REQUESTERS = ['buyer', 'agency', 'insurer'] as const;
export type CancellationRequester = (typeof CANCELLATION_REQUESTERS)[number];

export interface RuleUnit {
  id: number;
  /** When its coverage starts (a day: local midnight in its time zone). */
  startsAt: Date;
  /** Already cancelled by an earlier cancellation (not active, not cancellable again). */
  cancelled: boolean;
}

export interface RuleItem {
  id: number;
  /** The item's premium (minor units), as charged. */
  premiumMinor: number;
  /** Tax charged on it (minor units; 0 when none). */
  taxMinor: number;
  /** Premium of this item already refunded by earlier cancellations (minor units). */
  refundedPremiumMinor: number;
  /** Units in coverage order (earliest first). */
  units: RuleUnit[];
  terms: CancellationTerms;
}

export interface RuleInput {
  items: RuleItem[];
  /** Platform fee charged on the purchase (minor units). */
  platformFeeMinor: number;
  /** When the payment was made. */
  paidAt: Date;
  /** When the cancellation takes effect. */
  effectiveAt: Date;
  /** The units to cancel (ids of `items[].units`). */
  cancelUnitIds: number[];
  requestedBy: CancellationRequester;
  /**
   * The most that may still go back (minor units): what was paid less what was already refunded,
   * by earlier cancellations or in the processor's dashboard. Omitted: no cap.
   */
  refundableMinor?: number;
  /** Platform fee already given back by earlier cancellations of the purchase (minor units; default 0). */
  refundedPlatformFeeMinor?: number;
  /**
   * The buyer's own withdrawal (the withdrawal link): within WITHDRAWAL_PERIOD_DAYS of payment it
   * is priced by the withdrawal rule (module comment), whatever the terms; after it, as a
   * cancellation asked by `requestedBy`. Default false.
   */
  withdrawal?: boolean;
}

export interface UnitRefund {
  unitId: number;
  itemId: number;
  /** The unit's share of its item's premium. */
  premiumMinor: number;
  /** Premium the insurer keeps for it (share − refundable). */
  earnedMinor: number;
  /** Premium coming back for it. */
  refundableMinor: number;
}

export interface RefundQuote {
  /** `withdrawal` (the buyer's withdrawal within its period), `free_look`, or the method applied (when items differ: the first cancelled item's). */
  method: 'withdrawal' | 'free_look' | RefundMethod;
  freeLook: boolean;
  premiumMinor: number;
  taxMinor: number;
  platformFeeMinor: number;
  totalMinor: number;
  units: UnitRefund[];
  /** Whether the cancellation leaves no active unit (the whole policy ends). */
  endsPolicy: boolean;
}

/** Why a set of units cannot be cancelled (a stable code for the API's error). */
export class RefundRuleError extends Error {
  constructor(
    readonly code:
      'UNKNOWN_COVERED_UNIT' | 'DUPLICATE_COVERED_UNIT' | 'COVERED_UNIT_ALREADY_CANCELLED' | 'COVERED_UNIT_STARTED' | 'NOTHING_TO_CANCEL',
    message: string,
    readonly unitIds: number[] = [],
  ) {
    super(message);
    this.name = 'RefundRuleError';
  }
}

const DAY_MS = 86_400_000;

/** `total` split over `n` whole shares: even, the residue one each to the first shares. */
export function splitEvenly(total: number, n: number): number[] {
  if (n <= 0) return [];
  const base = Math.floor(total / n);
  const residue = total - base * n;
  return Array.from({ length: n }, (_, i) => base + (i < residue ? 1 : 0));
}

/**
 * `total` spread in proportion to `weights` (non-negative integers), largest remainder, ties to
 * the earliest: the parts add up to `total` exactly. All weights 0: everything to the first.
 */
export function spreadByWeight(total: number, weights: number[]): number[] {
  const sum = weights.reduce((s, w) => s + w, 0);
  if (weights.length === 0) return [];
  if (sum === 0) return weights.map((_, i) => (i === 0 ? total : 0));
  // Integer arithmetic: total × w stays below 2^53 for any charge the processor accepts.
  const exact = weights.map((w) => total * w);
  const parts = exact.map((e) => Math.floor(e / sum));
  let left = total - parts.reduce((s, p) => s + p, 0);
  const order = exact.map((e, i) => ({ i, rem: e % sum })).sort((a, b) => b.rem - a.rem || a.i - b.i);
  for (const { i } of order) {
    if (left === 0) break;
    parts[i]! += 1;
    left -= 1;
  }
  return parts;
}

/**
 * The platform fee `feeMinor` spread over every unit of `items` in proportion to its premium
 * share (largest remainder, ties to the earliest unit): unit id → its fee share in minor units.
 * The shares add up to `feeMinor` exactly; a partial free-look cancellation or a withdrawal gives
 * back the cancelled units' shares (module comment).
 */
export function platformFeeShares(items: Pick<RuleItem, 'premiumMinor' | 'units'>[], feeMinor: number): Map<number, number> {
  const all = items.flatMap((item) => {
    const shares = splitEvenly(item.premiumMinor, item.units.length);
    return item.units.map((u, i) => ({ id: u.id, premium: shares[i]! }));
  });
  const spread = spreadByWeight(
    feeMinor,
    all.map((u) => u.premium),
  );
  return new Map(all.map((u, k) => [u.id, spread[k]!]));
}

/**
 * Prices the buyer's own withdrawal of `input.cancelUnitIds` (their withdrawal link): within
 * WITHDRAWAL_PERIOD_DAYS (14) of payment every cancelled unit gives back its premium, tax and
 * platform-fee shares in full (the whole fee left when it ends the policy), whatever the product's
 * refund method, short-rate penalty, minimum earned premium or free-look days; cover already
 * provided (units started) stays in force at its pro-rata share. After the period, priced as a
 * cancellation asked by the buyer. Amounts in minor units.
 * @throws {RefundRuleError} as priceCancellation does (a started unit cannot be withdrawn from).
 */
export function priceWithdrawal(input: Omit<RuleInput, 'requestedBy' | 'withdrawal'>): RefundQuote {
  return priceCancellation({ ...input, requestedBy: 'buyer', withdrawal: true });
}

/**
 * Prices the cancellation of `input.cancelUnitIds` at `input.effectiveAt`.
 * @returns the refund split into premium, tax and platform fee, per unit, with the method applied.
 * @throws {RefundRuleError} UNKNOWN_COVERED_UNIT (not a unit of these items), DUPLICATE_COVERED_UNIT,
 *   COVERED_UNIT_ALREADY_CANCELLED, COVERED_UNIT_STARTED (its coverage began before the effective
 *   time: earned in full, not cancellable), NOTHING_TO_CANCEL (an empty list).
 */
export function priceCancellation(input: RuleInput): RefundQuote {
  const { items, effectiveAt, cancelUnitIds } = input;
  if (cancelUnitIds.length === 0)
    throw new RefundRuleError('NOTHING_TO_CANCEL', 'No covered unit to cancel: every unit has started or is already cancelled');
  const unitsById = new Map(items.flatMap((item) => item.units.map((u) => [u.id, { item, unit: u }] as const)));
  const seen = new Set<number>();
  const duplicate = cancelUnitIds.filter((id) => (seen.has(id) ? true : (seen.add(id), false)));
  if (duplicate.length)
    throw new RefundRuleError('DUPLICATE_COVERED_UNIT', `Covered unit ${duplicate[0]} is listed more than once`, duplicate);
  const unknown = cancelUnitIds.filter((id) => !unitsById.has(id));
  if (unknown.length)
    throw new RefundRuleError('UNKNOWN_COVERED_UNIT', `Covered unit ${unknown[0]} does not belong to this purchase`, unknown);
  const cancelled = cancelUnitIds.filter((id) => unitsById.get(id)!.unit.cancelled);
  if (cancelled.length)
    throw new RefundRuleError('COVERED_UNIT_ALREADY_CANCELLED', `Covered unit ${cancelled[0]} is already cancelled`, cancelled);
  const started = cancelUnitIds.filter((id) => hasStarted(unitsById.get(id)!.unit.startsAt, effectiveAt));
  if (started.length)
    throw new RefundRuleError(
      'COVERED_UNIT_STARTED',
      `Covered unit ${started[0]} has started: its premium is earned and it cannot be cancelled`,
      started,
    );

  const toCancel = new Set(cancelUnitIds);
  const anyStarted = items.some((item) => item.units.some((u) => hasStarted(u.startsAt, effectiveAt)));
  const sincePayment = effectiveAt.getTime() - input.paidAt.getTime();
  const endsPolicy = items.every((item) => item.units.every((u) => u.cancelled || toCancel.has(u.id)));
  const firstTerms = items[0]?.terms ?? DEFAULT_CANCELLATION_TERMS;
  const withdrawal = input.withdrawal === true && sincePayment <= WITHDRAWAL_PERIOD_DAYS * DAY_MS;
  const feeShares = platformFeeShares(items, input.platformFeeMinor);

  let method: RefundQuote['method'] | null = withdrawal ? 'withdrawal' : null;
  let freeLookAll = true;
  let premiumMinor = 0;
  let taxMinor = 0;
  let feeOfFullRefunds = 0;
  const units: UnitRefund[] = [];
  for (const item of items) {
    const picked = item.units.map((u, i) => ({ u, i })).filter(({ u }) => toCancel.has(u.id));
    const freeLook = !anyStarted && item.terms.freeLookDays > 0 && sincePayment <= item.terms.freeLookDays * DAY_MS;
    if (!freeLook) freeLookAll = false;
    if (picked.length === 0) continue;
    const premiumShares = splitEvenly(item.premiumMinor, item.units.length);
    const taxShares = splitEvenly(item.taxMinor, item.units.length);
    const premiumOfPicked = picked.reduce((s, { i }) => s + premiumShares[i]!, 0);
    const taxOfPicked = picked.reduce((s, { i }) => s + taxShares[i]!, 0);
    const itemMethod: RefundMethod = input.requestedBy === 'insurer' ? item.terms.insurerRefundMethod : item.terms.refundMethod;
    method ??= freeLook ? 'free_look' : itemMethod;
    // Free look and withdrawal give back the cancelled units' premium, tax and fee shares in full.
    const full = freeLook || withdrawal;
    if (full) feeOfFullRefunds += picked.reduce((s, { u }) => s + feeShares.get(u.id)!, 0);

    let refund: number;
    if (full) refund = premiumOfPicked;
    else if (itemMethod === 'none') refund = 0;
    else if (itemMethod === 'short_rate') refund = premiumOfPicked - Math.ceil((premiumOfPicked * item.terms.shortRatePenaltyBps) / 10_000);
    else refund = premiumOfPicked;
    if (!full) {
      const refundable = Math.max(
        0,
        item.premiumMinor - item.refundedPremiumMinor - Math.min(item.terms.minimumEarnedPremiumMinor, item.premiumMinor),
      );
      refund = Math.max(0, Math.min(refund, refundable));
    }
    // The item's own tax rate (not the picked units' shares, whose residue would make cancelling more give back less).
    const tax = full
      ? taxOfPicked
      : item.premiumMinor === 0
        ? 0
        : Math.min(taxOfPicked, Math.floor((item.taxMinor * refund) / item.premiumMinor));
    premiumMinor += refund;
    taxMinor += tax;
    const perUnit = spreadByWeight(
      refund,
      picked.map(({ i }) => premiumShares[i]!),
    );
    picked.forEach(({ u, i }, k) =>
      units.push({
        unitId: u.id,
        itemId: item.id,
        premiumMinor: premiumShares[i]!,
        refundableMinor: perUnit[k]!,
        earnedMinor: premiumShares[i]! - perUnit[k]!,
      }),
    );
  }
  const freeLook = freeLookAll && items.length > 0;
  const feeLeft = Math.max(0, input.platformFeeMinor - (input.refundedPlatformFeeMinor ?? 0));
  let platformFeeMinor =
    endsPolicy && (freeLook || withdrawal || firstTerms.platformFeeRefundable) ? feeLeft : Math.min(feeOfFullRefunds, feeLeft);
  if (input.refundableMinor !== undefined) {
    let excess = Math.max(0, premiumMinor + taxMinor + platformFeeMinor - Math.max(0, input.refundableMinor));
    const cut = (amount: number) => {
      const c = Math.min(amount, excess);
      excess -= c;
      return amount - c;
    };
    const premiumBefore = premiumMinor;
    premiumMinor = cut(premiumMinor);
    taxMinor = cut(taxMinor);
    platformFeeMinor = cut(platformFeeMinor);
    if (premiumMinor !== premiumBefore) {
      const spread = spreadByWeight(
        premiumMinor,
        units.map((u) => u.refundableMinor),
      );
      units.forEach((u, k) => {
        u.refundableMinor = spread[k]!;
        u.earnedMinor = u.premiumMinor - u.refundableMinor;
      });
    }
  }
  return {
    method: method ?? 'none',
    freeLook,
    premiumMinor,
    taxMinor,
    platformFeeMinor,
    totalMinor: premiumMinor + taxMinor + platformFeeMinor,
    units,
    endsPolicy,
  };
}
