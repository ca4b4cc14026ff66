/**
 * The model-based suite's subscription commands (issue 54; see test/model/commands.ts): buy a
 * subscription of the monthly product (chosen days or a whole month) and renew it through the
 * test helper, up to twice, its latest period's test clock moved into its last day or not.
 */
import { call } from '../helpers/fixtures';
import { payByTestHelper } from '../helpers/purchases';
import { api, checkAnswer, settledPurchase } from './invariants';
import {
  addDays,
  addMonths,
  MONTHLY_DAY_PREMIUM_MINOR,
  recordSale,
  renewalDates,
  type ModelPurchase,
  type PolicyModel,
} from './policy-model';
import { platformFeeOf, quoteBodyFor, type ModelStack } from './real';
import { expectAnswer, fail, FIRST_DAY, MAX_PURCHASES, step, type Cmd } from './command-kit';

/** A subscription's first period's id and days, oldest first, and its periods so far. */
const subscriptionOf = (m: PolicyModel) => {
  const first = m.purchases.find((p) => p.subscription?.period === 0);
  return first ? { first, periods: m.purchases.filter((p) => p.subscription?.firstId === first.id).length } : null;
};
/** Periods a sequence's subscription reaches at most (the first and two renewals). */
const MAX_PERIODS = 3;

/**
 * Buys a subscription of the monthly product (one a sequence) and pays its first period through
 * the test helper: `days` chosen days (1–3) from FIRST_DAY + `offset`, or (`days` 0) every day
 * of the month from there.
 */
export class BuySubscription implements Cmd {
  constructor(
    readonly days: number,
    readonly offset: number,
  ) {}
  check = (m: Readonly<PolicyModel>) => m.purchases.length < MAX_PURCHASES && subscriptionOf(m as PolicyModel) === null;
  run = (m: PolicyModel, s: ModelStack) =>
    step('buy-subscription', m, s, async () => {
      const first = addDays(FIRST_DAY, this.offset);
      const last = this.days === 0 ? addDays(addMonths(first, 1), -1) : addDays(first, this.days - 1);
      const body = await quoteBodyFor(s, first, last, 'monthly');
      const quoted = await call(s.app.baseUrl, '/public-quote/adminValidateBuyerResponses', { method: 'POST', key: s.key, body });
      expectAnswer(quoted, 200);
      const id = quoted.body.purchase_id as number;
      const paid = expectAnswer(checkAnswer(s, 'POST /api/v1/test_helpers/purchases/{id}/pay', await payByTestHelper(s.app, s, id)), 200);
      const p = await recordPeriod(m, s, id, paid.body.data?.payment_intent ?? paid.body.payment_intent, null);
      p.subscription = { firstId: id, period: 0 };
    });
  toString = () => `BuySubscription(${this.days === 0 ? 'every day of a month' : `${this.days} days`} from +${this.offset})`;
}

/**
 * Records period `id` of a subscription (settled: its certificates issued) in the model: its days
 * as the service numbered them, dated as the model says (`dates`, or one a day from the first's
 * date for a first period), its one answered holder, paid by `paymentIntent`, billed as the first
 * period was (`first`, or the monthly price of its days for a first period).
 */
async function recordPeriod(
  m: PolicyModel,
  s: ModelStack,
  id: number,
  paymentIntent: string,
  first: ModelPurchase | null,
  dates?: string[],
) {
  const view = await settledPurchase(s, id);
  const units = (view.items[0].covered_units as Array<{ id: number; index: number; local_label: string }>).sort(
    (a, b) => a.index - b.index,
  );
  if (dates && units.length !== dates.length)
    fail(`period ${id} covers ${units.length} days, the model ${dates.length} (${dates.join(', ')})`);
  const holders = checkAnswer(s, 'GET /api/v1/purchases/{id}/certificate_holders', await api(s, `/purchases/${id}/certificate_holders`))
    .body.data as Array<{ id: number }>;
  if (holders.length !== 1) fail(`period ${id} has ${holders.length} holders, the answered one due`);
  const p = recordSale(m, {
    id,
    unitIds: units.map((u) => u.id),
    firstDate: dates?.[0] ?? units[0]!.local_label,
    ...(dates ? { dates } : {}),
    dayPremiumMinor: MONTHLY_DAY_PREMIUM_MINOR,
    holderId: holders[0]!.id,
    paymentIntent,
    feeMinor: first ? first.feeMinor : platformFeeOf(units.length * MONTHLY_DAY_PREMIUM_MINOR),
  });
  if (first) {
    // Billed as sold: the first period's total, whatever the month's length.
    const charged = first.payments[0]!.chargedMinor;
    const sale = m.ledger.find((x) => x.purchaseId === id && x.kind === 'sale')!;
    p.payments[0]!.chargedMinor = charged;
    sale.amountMinor = charged;
  }
  return p;
}

/**
 * The sequence's subscription renews (the test helper's paid billing-cycle invoice): its next
 * period is a purchase of its own, of the days the model says, billed as the first. With `clock`,
 * the latest period's test clock is first moved to noon of its last day (its days under way, as
 * when the processor bills the next month): cover and money stay as they were.
 */
export class Renew implements Cmd {
  constructor(readonly clock: boolean) {}
  check = (m: Readonly<PolicyModel>) => {
    const sub = subscriptionOf(m as PolicyModel);
    return sub !== null && sub.periods < MAX_PERIODS;
  };
  run = (m: PolicyModel, s: ModelStack) =>
    step('renew', m, s, async () => {
      const { first, periods } = subscriptionOf(m)!;
      if (this.clock) {
        const latest = m.purchases.find((p) => p.subscription?.firstId === first.id && p.subscription.period === periods - 1)!;
        const lastDay = latest.units
          .map((u) => u.date)
          .sort()
          .at(-1)!;
        // Noon in Chicago whether daylight saving is on (−05:00) or not (−06:00): inside the day.
        expectAnswer(
          checkAnswer(
            s,
            'POST /api/v1/test_helpers/purchases/{id}/test_clock',
            await api(s, `/test_helpers/purchases/${latest.id}/test_clock`, {
              method: 'POST',
              body: { frozen_time: `${lastDay}T17:30:00Z` },
            }),
          ),
          200,
        );
      }
      const res = expectAnswer(
        checkAnswer(
          s,
          'POST /api/v1/test_helpers/purchases/{id}/renew',
          await api(s, `/test_helpers/purchases/${first.id}/renew`, { method: 'POST', body: {} }),
        ),
        200,
      );
      const data = res.body.data ?? res.body;
      if (data.renewal_period !== periods || typeof data.renewal_purchase_id !== 'number')
        fail(
          `renewing subscription ${first.id} answered period ${data.renewal_period} (purchase ${data.renewal_purchase_id}), period ${periods} due`,
        );
      const dates = renewalDates(
        first.units.map((u) => u.date),
        periods,
      );
      const p = await recordPeriod(m, s, data.renewal_purchase_id, data.payment_intent, first, dates);
      p.subscription = { firstId: first.id, period: periods };
    });
  toString = () => `Renew(${this.clock ? 'its latest period under way' : ''})`;
}
