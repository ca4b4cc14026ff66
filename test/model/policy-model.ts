/**
 * The model of the model-based suite (issue 54): what the public API promises about one or more
 * paid purchases, in plain TypeScript with no I/O, so that a random sequence of commands can be
 * checked step by step against the real stack (test/model/commands.ts).
 *
 * Per purchase it holds its covered days (the real unit id, the local date, `active` or
 * `cancelled`), its certificate holders (the answered one first; added and removed ones), money per
 * payment intent in integer minor units (charged, refunded by cancellations, refunded from the
 * processor's dashboard), and the ledger movements a bordereau would show (a sale, each
 * cancellation's refund, each dashboard refund). The ids come from the real service (they only
 * name things); every amount, state and count is computed here from the documented rules:
 *
 * - price: the quoting account's product costs 20.00 a covered day (scripts/harness/purchases.ts,
 *   `createEventProductAccount`), no tax, the key's platform fee (0 for test keys unless set) on
 *   the whole purchase; a bundle (api-guide.md "Bundles") adds, as a second item, an equipment
 *   damage waiver for the same days at 10.00 a day, each product priced as on its own, paid once;
 *   its units are the purchase's like any other (cancelled, certified and given back one by one);
 * - cancellation (docs/lifecycle.md "What comes back"): inside free look, or for a day not started
 *   under pro rata, each cancelled day gives back its premium and its share of the fee (the fee
 *   spread over all the purchase's days in proportion to premium, largest remainder, ties to the
 *   earliest day); the cancellation that leaves no day active gives back all the fee still held;
 * - cancelled days' certificates are voided; a scheduled cancellation rescinded changes nothing;
 * - holders (lifecycle.md "Certificate holders"): each holder has one current certificate per day
 *   in force (the holder the buyer answered is one per item, on its item's days; one added covers
 *   every item); removing one voids its certificates; the last holder of an item stays while a
 *   day of the purchase is active (409 LAST_CERTIFICATE_HOLDER);
 * - a dashboard refund (api-guide.md "Test helpers") adds to the refunded total; the one that
 *   reaches the total ends the purchase `refunded` and voids every certificate;
 * - moving a day (an endorsement) keeps its price, so money does not move;
 * - adding a day to an item (lifecycle.md "Adding covered units") costs a day's premium plus the
 *   platform fee rate on it, charged as a payment intent of its own; the fee shares then spread the
 *   sale's and the added days' fees over every unit (the added ones last in their item), and a
 *   cancellation's refund is taken from the newest payment first, each up to what is left of it;
 * - the buyer's withdrawal (lifecycle.md "The buyer's own withdrawal") within 14 days of payment
 *   gives back every day not started in full, with all the fee still held: here, where no day has
 *   started, exactly what cancelling every active day gives back;
 * - a dispute (api-guide.md "Test helpers") is recorded on the purchase and moves no money;
 * - a subscription (api-guide.md "Subscriptions": the monthly product, 30.00 a day) is a first
 *   purchase, then one purchase per renewal, each billed as the first was (its total and fee) with
 *   a payment intent of its own; its months count from the first covered day (Jan 31 → Feb 28 →
 *   Mar 31); a first month covered every day renews as every day of the next month (no gap or
 *   overlap between periods), chosen days as the same days of the month (a 29th–31st becomes a
 *   short month's last day).
 */

/** The premium of one covered day of the quoting account's product (20.00), minor units. */
export const DAY_PREMIUM_MINOR = 2000;
/** The premium of one covered day of the bundle's equipment damage waiver (10.00), minor units. */
export const EQUIPMENT_DAY_PREMIUM_MINOR = 1000;
/** The premium of one covered day of the monthly (subscription) product (30.00), minor units. */
export const MONTHLY_DAY_PREMIUM_MINOR = 3000;

export type UnitState = 'active' | 'cancelled';

export interface ModelUnit {
  /** The real covered unit's id. */
  id: number;
  /** Its local date (YYYY-MM-DD, America/Chicago). */
  date: string;
  premiumMinor: number;
  state: UnitState;
  /** Its item: 0 the product's (a bundle's primary), 1 a bundle's equipment waiver. */
  item: number;
}

export interface ModelHolder {
  /** The real certificate holder's id. */
  id: number;
  active: boolean;
  /** The item whose units its certificates cover (a holder the buyer answered: one per item); absent, every item (one added). */
  item?: number;
}

/** Money of one payment intent, minor units. */
export interface ModelPayment {
  paymentIntent: string;
  chargedMinor: number;
  /** Refunded by cancellations (the service's refunds, which the processor sees). */
  cancellationRefundedMinor: number;
  /** Refunded from the processor's dashboard (reported to the service by `charge.refunded`). */
  dashboardRefundedMinor: number;
}

/** A ledger movement: + money in, − money out, per payment intent. */
export interface LedgerMovement {
  purchaseId: number;
  paymentIntent: string;
  kind: 'sale' | 'added_units' | 'cancellation' | 'dashboard_refund';
  amountMinor: number;
}

export type PurchaseStatus = 'issued' | 'partly_cancelled' | 'cancelled' | 'refunded';

export interface ModelPurchase {
  id: number;
  /** Whether it is a bundle's purchase (event liability, then the equipment waiver for the same days). */
  bundle: boolean;
  /** Every covered unit, item by item (the purchase's order: the platform fee is spread in it), each item's by date. */
  units: ModelUnit[];
  holders: ModelHolder[];
  payments: ModelPayment[];
  /** The platform fee charged with the sale and with each priced endorsement, minor units. */
  feeMinor: number;
  /** The fee given back so far by cancellations, minor units. */
  feeRefundedMinor: number;
  /** Whether the processor's dashboard refunded part of it (the model then stops cancelling it: see below). */
  partlyRefundedAtProcessor: boolean;
  refundedAtProcessor: boolean;
  /** Cancellations completed (count), for the ledger's cancellation rows. */
  cancellations: number;
  /**
   * The buyer's disputes (chargebacks) of its payment, oldest first, by the status each must read:
   * `needs_response` while open, `won` or `lost` once decided. A dispute moves no money and
   * changes no cover (the policy stays as it is until the agency cancels it).
   */
  disputes: DisputeStatus[];
  /** Whether the buyer withdrew through their link (single use). */
  withdrawn: boolean;
  /** A subscription's period: the first purchase's id and the period (0: the first purchase, 1: the first renewal). */
  subscription?: { firstId: number; period: number };
}

/** The status a dispute must read (the processor's words). */
export type DisputeStatus = 'needs_response' | 'won' | 'lost';

export interface PolicyModel {
  purchases: ModelPurchase[];
  ledger: LedgerMovement[];
}

export function emptyModel(): PolicyModel {
  return { purchases: [], ledger: [] };
}

/** `date` (YYYY-MM-DD) plus `days` days. */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/**
 * Records a paid purchase: days `unitIds` (in order, one a day from `firstDate`) at 20.00 with
 * the answered holder `holderId`, for a bundle then the equipment waiver's days `bundledUnitIds`
 * (the same dates) at 10.00 with its answered holder `bundledHolderId`, paid by `paymentIntent`:
 * the premiums plus `feeMinor`.
 */
export function recordSale(
  model: PolicyModel,
  s: {
    id: number;
    unitIds: number[];
    bundledUnitIds?: number[];
    firstDate: string;
    /** The days' dates when not one a day from `firstDate` (a renewal's). */
    dates?: string[];
    /** The premium of a day of `unitIds` when not 20.00 (the monthly product's). */
    dayPremiumMinor?: number;
    holderId: number;
    bundledHolderId?: number;
    paymentIntent: string;
    feeMinor: number;
  },
): ModelPurchase {
  const item = (ids: number[], premiumMinor: number, item: number) =>
    ids.map((id, k) => ({ id, date: s.dates?.[k] ?? addDays(s.firstDate, k), premiumMinor, state: 'active' as const, item }));
  const units = [
    ...item(s.unitIds, s.dayPremiumMinor ?? DAY_PREMIUM_MINOR, 0),
    ...item(s.bundledUnitIds ?? [], EQUIPMENT_DAY_PREMIUM_MINOR, 1),
  ];
  const holders: ModelHolder[] = [{ id: s.holderId, active: true, item: 0 }];
  if (s.bundledHolderId !== undefined) holders.push({ id: s.bundledHolderId, active: true, item: 1 });
  const charged = units.reduce((a, u) => a + u.premiumMinor, 0) + s.feeMinor;
  const p: ModelPurchase = {
    id: s.id,
    bundle: s.bundledUnitIds !== undefined,
    units,
    holders,
    payments: [{ paymentIntent: s.paymentIntent, chargedMinor: charged, cancellationRefundedMinor: 0, dashboardRefundedMinor: 0 }],
    feeMinor: s.feeMinor,
    feeRefundedMinor: 0,
    partlyRefundedAtProcessor: false,
    refundedAtProcessor: false,
    cancellations: 0,
    disputes: [],
    withdrawn: false,
  };
  model.purchases.push(p);
  model.ledger.push({ purchaseId: p.id, paymentIntent: s.paymentIntent, kind: 'sale', amountMinor: charged });
  return p;
}

/** The days of `p` in force. */
export const activeUnits = (p: ModelPurchase): ModelUnit[] => p.units.filter((u) => u.state === 'active');
/** The holders of `p` not removed. */
export const activeHolders = (p: ModelPurchase): ModelHolder[] => p.holders.filter((h) => h.active);

/**
 * Each day's share of the fee `feeMinor`, in proportion to premium, in whole minor units: floors,
 * then the minor units left over one each to the largest remainders, ties to the earliest day
 * (lifecycle.md, "Free look"). The shares add up to the fee.
 */
export function feeShares(premiums: number[], feeMinor: number): number[] {
  const total = premiums.reduce((a, b) => a + b, 0);
  if (total === 0 || feeMinor === 0) return premiums.map(() => 0);
  const exact = premiums.map((p) => (feeMinor * p) / total);
  const shares = exact.map(Math.floor);
  let left = feeMinor - shares.reduce((a, b) => a + b, 0);
  const order = exact.map((e, i) => ({ i, r: e - Math.floor(e) })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of order) {
    if (left === 0) break;
    shares[i]! += 1;
    left -= 1;
  }
  return shares;
}

/**
 * Why the API must refuse cancelling `unitIds` of `p` now (its error code), or null when it must
 * accept: refunded in full, PURCHASE_ALREADY_CANCELLED; every day cancelled, NOTHING_TO_CANCEL; a
 * named day cancelled already, COVERED_UNIT_ALREADY_CANCELLED (lifecycle.md, the API reference).
 */
export function cancellationRefusal(p: ModelPurchase, unitIds: number[]): string | null {
  if (p.refundedAtProcessor) return 'PURCHASE_ALREADY_CANCELLED';
  // Every day cancelled: the purchase is `cancelled`, nothing left (lifecycle.md), whatever days are named.
  if (activeUnits(p).length === 0) return 'NOTHING_TO_CANCEL';
  if (unitIds.some((id) => p.units.find((u) => u.id === id)?.state === 'cancelled')) return 'COVERED_UNIT_ALREADY_CANCELLED';
  return null;
}

/**
 * What cancelling the active days `unitIds` of `p` gives back now (minor units), inside free look
 * (every day not started): each day's premium and fee share; the cancellation that leaves no day
 * active gives back all the fee still held.
 */
export function cancellationRefundMinor(p: ModelPurchase, unitIds: number[]): number {
  const shares = feeShares(
    p.units.map((u) => u.premiumMinor),
    p.feeMinor,
  );
  const leavesNone = activeUnits(p).every((u) => unitIds.includes(u.id));
  let premium = 0;
  let fee = 0;
  p.units.forEach((u, k) => {
    if (!unitIds.includes(u.id)) return;
    premium += u.premiumMinor;
    fee += shares[k]!;
  });
  if (leavesNone) fee = p.feeMinor - p.feeRefundedMinor;
  return premium + fee;
}

/**
 * The status the purchase must read (lifecycle.md "Purchases and cancellations"): `refunded`
 * after a full dashboard refund, `cancelled` when every day is, `partly_cancelled` when some are.
 */
export function expectedStatus(p: ModelPurchase): PurchaseStatus {
  if (p.refundedAtProcessor) return 'refunded';
  const cancelled = p.units.filter((u) => u.state === 'cancelled').length;
  if (cancelled === 0) return 'issued';
  return cancelled === p.units.length ? 'cancelled' : 'partly_cancelled';
}

/**
 * Applies a completed cancellation of the active days `unitIds`; answers the refund (minor units).
 * The refund is taken from the newest payment first, each up to what cancellations left of it
 * (lifecycle.md "Adding covered units"): one ledger movement per payment intent it touches.
 */
export function applyCancellation(model: PolicyModel, p: ModelPurchase, unitIds: number[]): number {
  const refund = cancellationRefundMinor(p, unitIds);
  const premium = p.units.filter((u) => unitIds.includes(u.id)).reduce((a, u) => a + u.premiumMinor, 0);
  p.feeRefundedMinor += refund - premium;
  for (const u of p.units) if (unitIds.includes(u.id)) u.state = 'cancelled';
  let left = refund;
  for (const payment of [...p.payments].reverse()) {
    const part = Math.min(left, payment.chargedMinor - payment.cancellationRefundedMinor);
    if (part <= 0) continue;
    payment.cancellationRefundedMinor += part;
    model.ledger.push({ purchaseId: p.id, paymentIntent: payment.paymentIntent, kind: 'cancellation', amountMinor: -part });
    left -= part;
  }
  if (left > 0) throw new Error(`purchase ${p.id}: a refund of ${refund} is more than its payments hold`);
  p.cancellations += 1;
  return refund;
}

/**
 * Applies a paid endorsement that added the day `unit` (id, date) to item `item` of `p` at
 * `premiumMinor` plus `feeMinor`, charged as `paymentIntent`: the day goes after its item's
 * other days (the order the fee is spread in).
 */
export function applyAddedUnit(
  model: PolicyModel,
  p: ModelPurchase,
  a: { unitId: number; date: string; item: number; premiumMinor: number; feeMinor: number; paymentIntent: string },
): void {
  const after = p.units.reduce((last, u, k) => (u.item <= a.item ? k : last), -1);
  p.units.splice(after + 1, 0, { id: a.unitId, date: a.date, premiumMinor: a.premiumMinor, state: 'active', item: a.item });
  p.feeMinor += a.feeMinor;
  const charged = a.premiumMinor + a.feeMinor;
  p.payments.push({ paymentIntent: a.paymentIntent, chargedMinor: charged, cancellationRefundedMinor: 0, dashboardRefundedMinor: 0 });
  model.ledger.push({ purchaseId: p.id, paymentIntent: a.paymentIntent, kind: 'added_units', amountMinor: charged });
}

/** What is left to refund of `p`'s payments (minor units). */
export function refundableMinor(p: ModelPurchase): number {
  return p.payments.reduce((a, x) => a + x.chargedMinor - x.cancellationRefundedMinor - x.dashboardRefundedMinor, 0);
}

/**
 * Applies a refund of `amountMinor` made in the processor's dashboard (the sale's payment): the
 * one that reaches the total ends the purchase `refunded`, every day no longer in force.
 * @throws {Error} when it is more than is left (the API refuses that: 400 VALIDATION_ERROR).
 */
export function applyDashboardRefund(model: PolicyModel, p: ModelPurchase, amountMinor: number): void {
  if (amountMinor <= 0 || amountMinor > refundableMinor(p)) throw new Error(`dashboard refund of ${amountMinor} is not refundable`);
  const payment = p.payments[0]!;
  payment.dashboardRefundedMinor += amountMinor;
  model.ledger.push({ purchaseId: p.id, paymentIntent: payment.paymentIntent, kind: 'dashboard_refund', amountMinor: -amountMinor });
  if (refundableMinor(p) === 0) {
    p.refundedAtProcessor = true;
    for (const u of p.units) u.state = 'cancelled';
  } else {
    p.partlyRefundedAtProcessor = true;
  }
}

/**
 * Why a change (a holder added or removed, an endorsement) must be refused, or null: only a
 * purchase in force (not refunded in full, not every day cancelled) can be changed
 * (src/purchases/rules.ts, "Changeable"; 409 PURCHASE_NOT_CHANGEABLE).
 */
export function changeRefusal(p: ModelPurchase): string | null {
  return p.refundedAtProcessor || activeUnits(p).length === 0 ? 'PURCHASE_NOT_CHANGEABLE' : null;
}

/**
 * Why removing holder `holderId` must be refused (its code), or null: the last holder of the
 * items it covers (no other holder in force of the same item or of every item) stays while any
 * day of the purchase is active (activities/certificate-holders.ts, "the last of them cannot go
 * while a unit is active").
 */
export function holderRemovalRefusal(p: ModelPurchase, holderId: number): string | null {
  const refusal = changeRefusal(p);
  if (refusal) return refusal;
  const h = p.holders.find((x) => x.id === holderId);
  if (!h || !h.active) return null; // removing again answers the same
  const others = activeHolders(p).filter((x) => x.id !== h.id && (x.item === undefined || h.item === undefined || x.item === h.item));
  if (others.length === 0 && activeUnits(p).length > 0) return 'LAST_CERTIFICATE_HOLDER';
  return null;
}

/** The certificates that must be in force: one per active day and active holder covering its item, keyed `unitId/holderId`. */
export function expectedCertificatesInForce(p: ModelPurchase): string[] {
  if (p.refundedAtProcessor) return [];
  return activeUnits(p).flatMap((u) =>
    activeHolders(p)
      .filter((h) => h.item === undefined || h.item === u.item)
      .map((h) => `${u.id}/${h.id}`),
  );
}

/** Money per payment intent the ledger must show: charged less refunded (minor units). */
export function netByPaymentIntent(model: PolicyModel): Map<string, number> {
  const net = new Map<string, number>();
  for (const m of model.ledger) net.set(m.paymentIntent, (net.get(m.paymentIntent) ?? 0) + m.amountMinor);
  return net;
}

/** Whether day `date` is free for a day of `p` to move to: no day of the purchase on it (a cancelled one neither: the model keeps clear of it). */
export function dateFree(p: ModelPurchase, date: string): boolean {
  return !p.units.some((u) => u.date === date);
}

/** The last day of month `month` (1–12) of `year`. */
const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** `date` (YYYY-MM-DD) plus `months` months, a day past the month's end becoming its last day (Jan 31 + 1 → Feb 28). */
export function addMonths(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const index = y * 12 + (m - 1) + months;
  const year = Math.floor(index / 12);
  const month = (index % 12) + 1;
  return `${year}-${String(month).padStart(2, '0')}-${String(Math.min(d, daysInMonth(year, month))).padStart(2, '0')}`;
}

/**
 * Whether the first period's days `dates` cover every day of its month (from the earliest date to
 * the same date a month later, exclusive): such a subscription renews as every day of each month.
 */
export function coversWholeMonth(dates: string[]): boolean {
  const sorted = [...dates].sort();
  const to = addMonths(sorted[0]!, 1);
  for (let d = sorted[0]!; d < to; d = addDays(d, 1)) if (!sorted.includes(d)) return false;
  return true;
}

/**
 * The days of renewal `n` (>= 1) of a subscription whose first period covers `firstDates`, in
 * order: every day from the anchor plus `n` months to plus `n + 1` months for a whole first month,
 * else each chosen day plus `n` months (clamped, once), inside that window.
 */
export function renewalDates(firstDates: string[], n: number): string[] {
  const sorted = [...firstDates].sort();
  const anchor = sorted[0]!;
  const from = addMonths(anchor, n);
  const to = addMonths(anchor, n + 1);
  if (coversWholeMonth(sorted)) {
    const out: string[] = [];
    for (let d = from; d < to; d = addDays(d, 1)) out.push(d);
    return out;
  }
  return [...new Set(sorted.map((d) => addMonths(d, n)))].filter((d) => d >= from && d < to);
}
