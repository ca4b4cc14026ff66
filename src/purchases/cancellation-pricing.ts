/**
 * The refund rule (./refund-rule.ts) applied to a stored purchase: its items with the terms they
 * were bought with, the units earlier cancellations took, the premium those gave back per item, and
 * the most still refundable (paid, less what went back: refunds recorded, completed cancellations,
 * refunds made in the processor's dashboard, and cancellations still on their way or scheduled). Units added by a priced endorsement count
 * with the premium, platform fee and payment that endorsement collected: an item's premium is what
 * its sale and its endorsements charged for it (less what endorsements gave back: a holder's paid
 * endorsement removed), spread over all its units; its tax is the premium tax its sale and its
 * endorsements charged (given back by the rule in proportion to the premium); what endorsements gave back counts as refunded. Shared by the cancellation quote (API) and the acceptance
 * of a cancellation (worker), so both price the same way. Amounts in minor units.
 */
import { randomBytes } from 'node:crypto';
import type { PurchaseItemDetail, PurchaseRecord } from './purchase-record';
import type { StoredCancellation, StoredCancellationQuote } from './ledger-record';
import type { LedgerRepository } from './ledger-repository';
import type { SaleRepository } from './sale-repository';
import { priceCancellation, spreadByWeight, type CancellationRequester, type RefundQuote, type RuleItem } from './refund-rule';
import { cancellableUnits, hasStarted } from './rules';

export interface CancellationAsk {
  /** The units to cancel; omitted: every unit that may be cancelled at `effectiveAt` (./rules.ts `cancellableUnits`). */
  unitIds?: number[];
  requestedBy: CancellationRequester;
  effectiveAt: Date;
  /** The buyer's own withdrawal (the withdrawal link): priced by the withdrawal rule within its period (./refund-rule.ts). */
  withdrawal?: boolean;
}

/** What a completed endorsement collected (minor units): its platform fee, total, and premium per added unit's item. */
export type EndorsementCharge = Pick<
  Awaited<ReturnType<LedgerRepository['endorsementCharges']>>[number],
  'platformFeeMinor' | 'totalMinor' | 'breakdown'
> &
  Partial<Pick<Awaited<ReturnType<LedgerRepository['endorsementCharges']>>[number], 'dashboardRefundedMinor' | 'taxMinor'>>;

/**
 * The premium tax endorsements charged, per item (minor units): each endorsement's tax spread over
 * the items it added premium to, by that premium (as the bordereau spreads it), so the shares add
 * up to what it charged.
 */
export function endorsementTaxByItem(charges: Pick<EndorsementCharge, 'breakdown' | 'taxMinor'>[]): Map<number, number> {
  const byItem = new Map<number, number>();
  for (const c of charges) {
    if (!c.taxMinor || c.taxMinor <= 0) continue;
    const added = new Map<number, number>();
    for (const u of c.breakdown) added.set(u.itemId, (added.get(u.itemId) ?? 0) + u.premiumMinor);
    const ids = [...added.keys()].filter((id) => added.get(id)! > 0).sort((a, b) => a - b);
    const shares = spreadByWeight(
      c.taxMinor,
      ids.map((id) => added.get(id)!),
    );
    ids.forEach((id, k) => byItem.set(id, (byItem.get(id) ?? 0) + (shares[k] ?? 0)));
  }
  return byItem;
}

/**
 * Prices `ask` on purchase `p` (with the endorsements that added units to it: `charges`, and
 * `saleDashboardRefundedMinor`, what the processor's dashboard refunded of the sale's payment).
 * @returns the refund, and `firstStartMs`: when the first cancelled unit starts (epoch ms), the
 *   latest a quote of it can hold.
 * @throws {RefundRuleError} as priceCancellation does.
 */
export function priceCancellationOf(
  p: PurchaseRecord,
  items: PurchaseItemDetail[],
  cancellations: StoredCancellation[],
  ask: CancellationAsk,
  charges: EndorsementCharge[] = [],
  saleDashboardRefundedMinor = 0,
): RefundQuote & { firstStartMs: number } {
  // A refused refund and a rescinded cancellation give nothing back (a rescinded one's units are free again).
  const live = cancellations.filter((c) => c.status !== 'refund_failed' && c.status !== 'rescinded');
  const refundedByItem = new Map<number, number>();
  for (const c of live) for (const u of c.breakdown) refundedByItem.set(u.itemId, (refundedByItem.get(u.itemId) ?? 0) + u.refundableMinor);
  const completed = live.filter((c) => c.status === 'completed').reduce((s, c) => s + c.totalMinor, 0);
  const underway = live.filter((c) => c.status !== 'completed').reduce((s, c) => s + c.totalMinor, 0);
  const refundedPlatformFeeMinor = live.reduce((s, c) => s + c.platformFeeMinor, 0);
  const addedByItem = new Map<number, number>();
  for (const c of charges) for (const u of c.breakdown) addedByItem.set(u.itemId, (addedByItem.get(u.itemId) ?? 0) + u.premiumMinor);
  const addedTaxByItem = endorsementTaxByItem(charges);
  const ruleItems: RuleItem[] = items.map((i) => ({
    id: i.id,
    premiumMinor: i.amountMinor + (addedByItem.get(i.id) ?? 0),
    // The premium tax the item was charged at the sale and on the premium endorsements added to it.
    taxMinor: (i.taxMinor ?? 0) + (addedTaxByItem.get(i.id) ?? 0),
    refundedPremiumMinor: refundedByItem.get(i.id) ?? 0,
    units: i.units.map((u) => ({ id: u.id, startsAt: u.startsAt, cancelled: u.cancellationId !== null })),
    terms: i.cancellationTerms,
  }));
  const units = ruleItems.flatMap((i) => i.units);
  const unitIds =
    ask.unitIds ??
    cancellableUnits(units, (u) => ({ cancelled: u.cancelled, started: hasStarted(u.startsAt, ask.effectiveAt) })).map((u) => u.id);
  const priced = priceCancellation({
    items: ruleItems,
    platformFeeMinor: p.platformFeeMinor + charges.reduce((n, c) => n + c.platformFeeMinor, 0),
    paidAt: p.paidAt ?? p.createdAt,
    effectiveAt: ask.effectiveAt,
    cancelUnitIds: unitIds,
    requestedBy: ask.requestedBy,
    withdrawal: ask.withdrawal === true,
    refundedPlatformFeeMinor,
    // An endorsement that gave premium back (negative total) is a refund already made, like a completed cancellation's;
    // so is a dashboard refund. The purchase's refunded amount (what the processor reported of the sale's
    // charge) covers the ledger's refunds when an event of them has not arrived, or came from before the
    // ledger kept dashboard refunds; the greater of the two counts, never both.
    refundableMinor:
      p.totalMinor +
      charges.reduce((n, c) => n + Math.max(c.totalMinor, 0), 0) -
      Math.max(p.refundedMinor, completed + charges.reduce((n, c) => n + Math.max(0 - c.totalMinor, 0), 0) + saleDashboardRefundedMinor) -
      charges.reduce((n, c) => n + (c.dashboardRefundedMinor ?? 0), 0) -
      underway,
  });
  const startOf = new Map(units.map((u) => [u.id, u.startsAt.getTime()]));
  return { ...priced, firstStartMs: Math.min(...priced.units.map((u) => startOf.get(u.unitId)!)) };
}

/** The purchase's "now" for its policy's life: its test clock when it has one (test mode), else `real`. */
export function policyClock(p: Pick<PurchaseRecord, 'testClockAt'>, real: Date): Date {
  return p.testClockAt ?? real;
}

/** How long a cancellation quote holds at most (15 minutes), in ms; less when its first unit starts sooner. */
export const CANCELLATION_QUOTE_TTL_MS = 15 * 60_000;

/**
 * Prices `ask` on paid purchase `p` as it is stored now and keeps the quote (`cq_…`), which holds
 * 15 minutes of real time, or until its first unit starts on the purchase's clock if sooner.
 * `clock` is the purchase's now (its test clock when it has one), `realNow` the real time. Reads
 * the items from `repos.sales`, the ledger's rows from `repos.ledger`, which stores the quote.
 * Shared by the agency's quote (API) and a subscription cancelled at once (worker).
 * @throws {RefundRuleError} as priceCancellation does (nothing to cancel, a started unit, …).
 */
export async function storeCancellationQuote(
  repos: {
    sales: Pick<SaleRepository, 'itemDetails'>;
    ledger: Pick<LedgerRepository, 'cancellations' | 'saveCancellationQuote' | 'chargesAndSaleDashboardRefund'>;
  },
  p: PurchaseRecord,
  ask: CancellationAsk & { apiKeyId: number; reason: string | null },
  clock: Date,
  realNow: Date,
): Promise<StoredCancellationQuote> {
  const [items, cancellations, { charges, saleDashboardRefundedMinor }] = await Promise.all([
    repos.sales.itemDetails(p.id),
    repos.ledger.cancellations(p.id),
    repos.ledger.chargesAndSaleDashboardRefund(p),
  ]);
  const priced = priceCancellationOf(p, items, cancellations, ask, charges, saleDashboardRefundedMinor);
  return repos.ledger.saveCancellationQuote({
    id: `cq_${randomBytes(12).toString('hex')}`,
    purchaseId: p.id,
    apiKeyId: ask.apiKeyId,
    requestedBy: ask.requestedBy,
    reason: ask.reason,
    coveredUnitIds: priced.units.map((u) => u.unitId),
    effectiveAt: ask.effectiveAt,
    method: priced.method,
    freeLook: priced.freeLook,
    endsPolicy: priced.endsPolicy,
    currency: p.currency,
    premiumMinor: priced.premiumMinor,
    taxMinor: priced.taxMinor,
    platformFeeMinor: priced.platformFeeMinor,
    totalMinor: priced.totalMinor,
    breakdown: priced.units,
    expiresAt: new Date(realNow.getTime() + Math.min(CANCELLATION_QUOTE_TTL_MS, priced.firstStartMs - clock.getTime())),
  });
}
