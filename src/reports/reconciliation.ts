/**
 * Reconciliation of a month with the processor (premium reporting): every charge and refund the
 * ledger recorded in the month (sales and renewals by payment, endorsements and cancellations by
 * completion: the same transactions and month rule as the bordereaux) is read back from the
 * processor — a charge's payment intent (`amount_received`, `status`) and a refund (`amount`,
 * `status`) — and compared. A difference names the purchase it belongs to, what the ledger expects
 * and what the processor holds (integer minor units); the totals per currency add up each side.
 *
 * Refunds made in the processor's dashboard have ledger rows (`refund`) that name their payment
 * intent but no refund id: for each payment intent with such rows in the month, their sum is
 * compared with the refunds the processor lists for that payment intent, created in the month,
 * less the purchase's own refunds (cancellations', endorsements'), which are checked by id. A
 * dashboard refund made in the last seconds of a month whose event arrived in the next one is a
 * difference of both months.
 *
 * Premium tax: a sale or an endorsement paid through a checkout session with tax (an
 * endorsement's checkout link) is also read back as the
 * processor's line items of that session (`listLineItems`, products expanded): the lines whose
 * product carries the metadata `line: premium_tax` (the service's tax lines) are added up and
 * compared with the tax the purchase or endorsement charged; a difference (`kind: tax`, the session's id) is
 * flagged like any other, even when the total agrees (tax put in another line). `tax_collected`
 * adds up each side per currency. A payment intent charged without a checkout (a saved card) and
 * every refund carry one amount, so their tax is checked only as part of it. Commission is not
 * money the processor moves (the
 * buyer pays the agency's account the gross; the agency and its insurer or MGA settle commission
 * from the bordereau's net premium), so there is nothing at the processor to compare it with.
 *
 * What it does not see: money the processor holds that the ledger never recorded: a charge made
 * in the dashboard, or a dashboard refund whose event never arrived on a payment intent with no
 * other dashboard refund that month.
 *
 * Test mode: the test helper's payments (`POST /api/v1/test_helpers/purchases/{id}/pay`) move no
 * money; their payment intents are made up (`pi_testhelper_…`) and no processor holds them. Every
 * movement of such a payment intent (the charge, a refund part going back to it, its dashboard
 * refunds) is skipped, and the report says how many (`test_helper_skipped`), unless
 * `includeTestHelper` (a test that answers them itself): reported as differences they were noise
 * (issue 55 item 6).
 *
 * Run by `npm run ops -- reconcile` and, for both modes, by the monthly bordereaux run on the 1st.
 *
 * Errors: a month that is not YYYY-MM throws RangeError; a processor outage or refusal while reading throws (the run is then not stored); a
 * payment intent or refund the processor does not know is a difference (`missing`), not an error.
 */
import type Stripe from 'stripe';
import type { Payproc } from '../payproc/client';
import type { ExpectedMovement, ReportsRepository, StoredReconciliation } from './repository';
import { monthRange } from './bordereau';
import { PROCESSOR_TAX_LINE } from '../taxes/premium-tax';

/** One disagreement between the ledger and the processor (minor units). */
export interface ReconciliationDifference {
  purchase_id: number;
  root_account_id: number;
  /** `tax`: the premium tax of a sale against its checkout session's tax lines (`processor_id` the session). */
  kind: 'charge' | 'refund' | 'tax';
  source: ExpectedMovement['source'];
  /** The payment intent or refund id (`dashboard`: the payment intent whose dashboard refunds are added up). */
  processor_id: string;
  currency: string;
  ledger_amount: number;
  /** What the processor holds (0 when it does not know the id). */
  processor_amount: number;
  /** `amount` (both sides know it, amounts differ), `status` (not succeeded at the processor), `missing` (unknown to the processor). */
  reason: 'amount' | 'status' | 'missing';
  processor_status: string | null;
}

export interface ReconciliationReport {
  month: string;
  mode: 'live' | 'test';
  charges_checked: number;
  refunds_checked: number;
  /** Per currency (lower case, as stored): the ledger's and the processor's net money in (charges less refunds), minor units. */
  totals: Record<string, { ledger: number; processor: number }>;
  /** Sales and endorsements whose premium tax was read back from their checkout session's lines. */
  tax_checked: number;
  /** Per currency: the premium tax those sales charged (ledger) and the processor's tax lines of their sessions, minor units. */
  tax_collected: Record<string, { ledger: number; processor: number }>;
  differences: ReconciliationDifference[];
}

/** The test helper's movements left out of a test-mode run: charges, refunds and their purchases (counts). */
export interface TestHelperSkipped {
  charges: number;
  refunds: number;
  purchases: number;
}

/** True for a payment intent the test helper made up (`pi_testhelper_…`): no money moved for it. */
export function isTestHelperPayment(paymentIntentId: string | null | undefined): boolean {
  return typeof paymentIntentId === 'string' && paymentIntentId.startsWith('pi_testhelper_');
}

/** What the processor holds for one movement: its amount and status, or null when it does not know the id. */
export type ProcessorReading = { amountMinor: number; status: string } | null;

/** The key of a movement's reading in `held`: a payment intent's charge and its dashboard refunds are read apart. */
export function heldKey(m: Pick<ExpectedMovement, 'kind' | 'source' | 'processorId'>): string {
  return `${m.kind === 'charge' ? 'charge' : m.source === 'dashboard' ? 'dashboard' : 'refund'}:${m.processorId}`;
}

/** The key in `held` of a checkout session's tax lines (their sum as `amountMinor`, status `listed`). */
export const taxKey = (checkoutSessionId: string): string => `tax:${checkoutSessionId}`;

/**
 * Compares `expected` with what the processor holds (`held`, by `heldKey`). Pure.
 * A charge counts `amount_received` when its payment intent succeeded; a refund its amount when it
 * succeeded; a payment intent's dashboard refunds the sum of the succeeded ones; a taxed sale's
 * tax the sum of its session's tax lines (`taxKey`; none read: `missing`).
 */
export function compareMovements(
  month: string,
  mode: 'live' | 'test',
  expected: ExpectedMovement[],
  held: ReadonlyMap<string, ProcessorReading>,
): ReconciliationReport {
  const totals: ReconciliationReport['totals'] = {};
  const taxCollected: ReconciliationReport['tax_collected'] = {};
  const differences: ReconciliationDifference[] = [];
  const differ = (m: ExpectedMovement, d: Omit<ReconciliationDifference, 'purchase_id' | 'root_account_id' | 'source' | 'currency'>) =>
    differences.push({ purchase_id: m.purchaseId, root_account_id: m.rootAccountId, source: m.source, currency: m.currency, ...d });
  for (const m of expected) {
    const got = held.get(heldKey(m)) ?? null;
    const sign = m.kind === 'charge' ? 1 : -1;
    const t = (totals[m.currency] ??= { ledger: 0, processor: 0 });
    t.ledger += sign * m.amountMinor;
    const succeeded = got !== null && got.status === 'succeeded';
    const processorAmount = succeeded ? got.amountMinor : 0;
    t.processor += sign * processorAmount;
    const reason = got === null ? 'missing' : !succeeded ? 'status' : got.amountMinor !== m.amountMinor ? 'amount' : null;
    if (reason)
      differ(m, {
        kind: m.kind,
        processor_id: m.processorId,
        ledger_amount: m.amountMinor,
        processor_amount: processorAmount,
        reason,
        processor_status: got?.status ?? null,
      });
    if (!m.tax) continue;
    const lines = held.get(taxKey(m.tax.checkoutSessionId)) ?? null;
    const tax = (taxCollected[m.currency] ??= { ledger: 0, processor: 0 });
    tax.ledger += m.tax.minor;
    tax.processor += lines?.amountMinor ?? 0;
    if (lines === null || lines.amountMinor !== m.tax.minor)
      differ(m, {
        kind: 'tax',
        processor_id: m.tax.checkoutSessionId,
        ledger_amount: m.tax.minor,
        processor_amount: lines?.amountMinor ?? 0,
        reason: lines === null ? 'missing' : 'amount',
        processor_status: null,
      });
  }
  return {
    month,
    mode,
    charges_checked: expected.filter((m) => m.kind === 'charge').length,
    refunds_checked: expected.filter((m) => m.kind === 'refund').length,
    totals,
    tax_checked: expected.filter((m) => m.tax).length,
    tax_collected: taxCollected,
    differences,
  };
}

const isMissing = (err: unknown) => (err as { statusCode?: number }).statusCode === 404;

/**
 * Reconciles `month` (YYYY-MM, UTC) in `mode`: reads the ledger's movements, reads each back from
 * the processor (one request each, `concurrency` at a time), compares, stores the run and answers it.
 */
export async function reconcileMonth(
  deps: { reports: Pick<ReportsRepository, 'expectedMovements' | 'saveReconciliation'>; payproc: Payproc },
  input: { month: string; mode: 'live' | 'test'; concurrency?: number; includeTestHelper?: boolean },
): Promise<ReconciliationReport & { id: StoredReconciliation['id']; test_helper_skipped: TestHelperSkipped }> {
  const range = monthRange(input.month);
  if (!range) throw new RangeError(`not a month (YYYY-MM): ${input.month}`);
  const movements = await deps.reports.expectedMovements({ ...range, mode: input.mode });
  const skip = (m: ExpectedMovement) => input.mode === 'test' && !input.includeTestHelper && isTestHelperPayment(m.paymentIntentId);
  const expected = movements.filter((m) => !skip(m));
  const skipped = movements.filter(skip);
  const testHelperSkipped: TestHelperSkipped = {
    charges: skipped.filter((m) => m.kind === 'charge').length,
    refunds: skipped.filter((m) => m.kind === 'refund').length,
    purchases: new Set(skipped.map((m) => m.purchaseId)).size,
  };
  const stripe: Stripe = deps.payproc.client(input.mode);
  const held = new Map<string, ProcessorReading>();
  /** The refunds the processor lists for a payment intent, created in the month, that are not the purchase's own. */
  const dashboardRefunds = async (m: ExpectedMovement): Promise<ProcessorReading> => {
    const own = new Set(m.ownRefundIds ?? []);
    const created = { gte: Math.floor(range.from.getTime() / 1000), lt: Math.floor(range.to.getTime() / 1000) };
    let amountMinor = 0;
    let status: string | null = null;
    for await (const refund of stripe.refunds.list({ payment_intent: m.processorId, created, limit: 100 })) {
      if (own.has(refund.id)) continue;
      if (refund.status === 'succeeded') {
        amountMinor += refund.amount;
        status = 'succeeded';
      } else status ??= refund.status ?? 'unknown';
    }
    return status === null ? null : { amountMinor, status };
  };
  const read = async (m: ExpectedMovement): Promise<ProcessorReading> => {
    try {
      if (m.source === 'dashboard') return await dashboardRefunds(m);
      if (m.kind === 'charge') {
        const pi = await stripe.paymentIntents.retrieve(m.processorId);
        return { amountMinor: pi.amount_received, status: pi.status };
      }
      const refund = await stripe.refunds.retrieve(m.processorId);
      return { amountMinor: refund.amount, status: refund.status ?? 'unknown' };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  };
  /** The sum of a checkout session's premium tax lines (PROCESSOR_TAX_LINE), as the processor lists them. */
  const taxLines = async (checkoutSessionId: string): Promise<ProcessorReading> => {
    try {
      let amountMinor = 0;
      const lines = stripe.checkout.sessions.listLineItems(checkoutSessionId, { limit: 100, expand: ['data.price.product'] });
      for await (const line of lines) {
        const product = line.price?.product;
        if (typeof product === 'object' && product && 'metadata' in product && product.metadata?.line === PROCESSOR_TAX_LINE)
          amountMinor += line.amount_total;
      }
      return { amountMinor, status: 'listed' };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  };
  const queue = [...expected];
  const workers = Array.from({ length: Math.max(1, input.concurrency ?? 8) }, async () => {
    for (let m = queue.shift(); m; m = queue.shift()) {
      if (!held.has(heldKey(m))) held.set(heldKey(m), await read(m));
      if (m.tax && !held.has(taxKey(m.tax.checkoutSessionId)))
        held.set(taxKey(m.tax.checkoutSessionId), await taxLines(m.tax.checkoutSessionId));
    }
  });
  await Promise.all(workers);
  const report = compareMovements(input.month, input.mode, expected, held);
  const stored = await deps.reports.saveReconciliation({
    month: report.month,
    mode: report.mode,
    chargesChecked: report.charges_checked,
    refundsChecked: report.refunds_checked,
    differenceCount: report.differences.length,
    totals: report.totals,
    differences: report.differences,
  });
  return { ...report, id: stored.id, test_helper_skipped: testHelperSkipped };
}
