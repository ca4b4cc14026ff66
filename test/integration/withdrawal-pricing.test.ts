/**
 * What a withdrawal and a free-look cancellation give back, on the real servers (API, worker on
 * the Temporal dev server, stripe-mock, PostgreSQL): purchases checked out through the API, paid
 * with the test helper and issued, then withdrawn through the buyer's signed link or cancelled
 * through the API; the refunds are made at stripe-mock.
 *
 * - The buyer's withdrawal (issue 48, item 4): terms with no free look, a 10 % short rate and a
 *   minimum earned premium are accepted, and within 14 days of payment the buyer's withdrawal
 *   ignores them: everything of the cover not started comes back (a cancellation by the same
 *   terms keeps the penalty); a day already started stays in force at its share, the rest comes
 *   back in full. After the 14 days (the purchase's test clock) the link cancels by the terms.
 * - The free-look fee (issue 48, item 11): one day of three cancelled in free look gives back its
 *   premium and its share of the platform fee (by premium, largest remainder), and the three days
 *   cancelled one at a time give back exactly what the whole purchase paid.
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createKey } from '../helpers/fixtures';
import { cancellationCalls, createQuotingAccount, issuedPurchase, type QuotingAccount } from '../helpers/purchases';
import { eventually } from '../helpers/worker';
import { signWithdrawalToken } from '../../src/withdrawals/token';

jest.setTimeout(180_000);

const stack = useStack({ app: { RATE_LIMIT_PER_MINUTE: '100000' } });
let app: TestApp;

const apiOf =
  (key: string) =>
  (path: string, init: { method?: string; body?: unknown } = {}) =>
    call(app.baseUrl, `/api/v1${path}`, { key, ...init });
const pageOf = async (id: number) => {
  const path = `/withdraw/${signWithdrawalToken(app.container.config.WITHDRAWAL_LINK_KEY, id)}`;
  const res = await call(app.baseUrl, path, { headers: { accept: 'text/html' } });
  expect(res.status).toBe(200);
  return {
    path,
    totalMinor: Number(/id="refund-total" data-minor="(\d+)"/.exec(res.text)?.[1]),
    quote: /name="quote" value="(cq_[0-9a-f]{24})"/.exec(res.text)?.[1],
    text: res.text,
  };
};

beforeAll(() => {
  app = stack.app;
});

describe("the buyer's withdrawal under terms that would charge a cancellation", () => {
  let account: QuotingAccount;

  beforeAll(async () => {
    account = await createQuotingAccount(app);
    // Accepted: the terms apply to cancellations; a withdrawal within its 14 days ignores them.
    const set = await apiOf(account.key)(`/products/${account.productId}/cancellation_terms`, {
      method: 'PATCH',
      body: {
        free_look_days: 0,
        refund_method: 'short_rate',
        short_rate_penalty_bps: 1000,
        minimum_earned_premium: 500,
        buyer_withdrawal: true,
      },
    });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ free_look_days: 0, refund_method: 'short_rate', buyer_withdrawal: true });
  });

  test('when the buyer withdraws before the cover starts, then everything comes back (40.00), not the 35.00 a cancellation by the terms gives (10 % short rate, 5.00 minimum earned)', async () => {
    const id = await issuedPurchase(app, account); // 2 days at 20.00 in May 2027, no fee
    const { quote, purchase } = cancellationCalls(apiOf(account.key));
    // The agency's cancellation asked by the buyer: priced by the terms, 36.00 after 10 %, capped at 40.00 − 5.00 earned.
    expect(await quote(id, { requested_by: 'buyer' })).toMatchObject({ method: 'short_rate', refund: { premium: 3500, total: 3500 } });

    const page = await pageOf(id);
    expect(page.totalMinor).toBe(4000);
    expect(page.text).toContain('14-day withdrawal period');
    const confirmed = await call(app.baseUrl, page.path, {
      method: 'POST',
      rawBody: new URLSearchParams({ quote: page.quote! }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    });
    expect([confirmed.status, confirmed.text.includes('Withdrawal received')]).toEqual([200, true]);
    const done = await eventually(async () => {
      const p = await purchase(id);
      return p.cancellations[0]?.status === 'completed' ? p : null;
    });
    expect(done.cancellations).toHaveLength(1);
    expect(done.cancellations[0]).toMatchObject({ requested_by: 'buyer', refund: { premium: 4000, platform_fee: 0, total: 4000 } });
    expect(done.amount_refunded).toBe(4000);
  });

  test('when the first day has started (cover provided at the buyer’s request), then it stays in force and the second day comes back in full: 20.00, not the short-rate 18.00', async () => {
    // Cover starting within the withdrawal period: the day after tomorrow and the day after, in Chicago.
    const day = (n: number) => new Date(Date.now() + n * 86_400_000).toLocaleDateString('en-CA', { timeZone: 'America/Chicago' });
    const soon: QuotingAccount = {
      ...account,
      quoteBody: async () => {
        const body = await account.quoteBody();
        const [line] = body.selected_product_lines_to_purchase as Array<Record<string, any>>;
        line!.coverage = { ...line!.coverage, start_date: day(2), end_date: day(3) };
        return body;
      },
    };
    const id = await issuedPurchase(app, soon);
    const { quote, purchase } = cancellationCalls(apiOf(account.key));
    const [first, second] = (await purchase(id)).items[0].covered_units as Array<{ id: number; starts_at: string }>;
    const moved = await apiOf(account.key)(`/test_helpers/purchases/${id}/test_clock`, {
      method: 'POST',
      body: { frozen_time: new Date(Date.parse(first!.starts_at) + 3_600_000).toISOString() },
    });
    expect(moved.status).toBe(200);
    // A cancellation by the terms: 20.00 less 10 %.
    expect((await quote(id, { requested_by: 'buyer' })).refund).toMatchObject({ premium: 1800, total: 1800 });
    const page = await pageOf(id);
    expect(page.totalMinor).toBe(2000);
    expect(page.text).toContain('Cover that has started stays in force.');
    await call(app.baseUrl, page.path, {
      method: 'POST',
      rawBody: new URLSearchParams({ quote: page.quote! }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    });
    const done = await eventually(async () => {
      const p = await purchase(id);
      return p.cancellations[0]?.status === 'completed' ? p : null;
    });
    expect(done.cancellations[0]).toMatchObject({ refund: { total: 2000 } });
    expect((done.items[0].covered_units as Array<{ id: number; state: string }>).map((u) => [u.id, u.state])).toEqual([
      [first!.id, 'active'],
      [second!.id, 'cancelled'],
    ]);
  });

  test('when 15 days have passed since payment (test clock), then the link cancels by the terms: 35.00', async () => {
    const id = await issuedPurchase(app, account);
    const paidAt = new Date((await cancellationCalls(apiOf(account.key)).purchase(id)).paid_at as string);
    const moved = await apiOf(account.key)(`/test_helpers/purchases/${id}/test_clock`, {
      method: 'POST',
      body: { frozen_time: new Date(paidAt.getTime() + 15 * 86_400_000).toISOString() },
    });
    expect(moved.status).toBe(200);
    const page = await pageOf(id);
    expect(page.totalMinor).toBe(3500);
    expect(page.text).not.toContain('14-day withdrawal period');
  });
});

describe('the platform fee in free look', () => {
  test('when one day of three is cancelled in free look, then its fee share comes back too, and the days one at a time add up to the whole purchase', async () => {
    const base = await createQuotingAccount(app);
    // A key with a 12.34 % platform fee: 3 days at 20.00 → 60.00 + 7.40.
    const key = (await createKey(app.container, { rootAccountId: base.accountId, mode: 'test', platformFeeBps: 1234 })).key;
    const account: QuotingAccount = {
      ...base,
      key,
      quoteBody: async () => {
        const body = await base.quoteBody();
        const [line] = body.selected_product_lines_to_purchase as Array<Record<string, any>>;
        line!.coverage = { ...line!.coverage, end_date: '2027-05-03' };
        return body;
      },
    };
    const id = await issuedPurchase(app, account);
    const { quote, cancel, purchase } = cancellationCalls(apiOf(key));
    const bought = await purchase(id);
    expect([bought.amount_total, bought.items[0].covered_units.length]).toEqual([6740, 3]);
    const [day1, day2, day3] = (bought.items[0].covered_units as Array<{ id: number }>).map((u) => u.id);

    // The whole purchase in free look: everything, fee included.
    expect((await quote(id, {})).refund).toEqual({ premium: 6000, tax: 0, platform_fee: 740, total: 6740 });
    // Fee shares by premium, largest remainder, ties to the earliest: 2.47, 2.47, 2.46.
    const parts: number[] = [];
    for (const [unit, fee] of [
      [day3, 246],
      [day1, 247],
      [day2, 247],
    ] as const) {
      const q = await quote(id, { covered_unit_ids: [unit] });
      expect([q.method, q.refund]).toEqual(['free_look', { premium: 2000, tax: 0, platform_fee: fee, total: 2000 + fee }]);
      const res = await cancel(id, { quote_id: q.id });
      expect(res.status).toBe(200);
      parts.push(res.body.data.refund.total);
    }
    expect(parts.reduce((a, b) => a + b, 0)).toBe(6740);
    const done = await eventually(async () => {
      const p = await purchase(id);
      return p.cancellations.length === 3 && p.cancellations.every((c: { status: string }) => c.status === 'completed') ? p : null;
    });
    expect(done.amount_refunded).toBe(6740);
  });
});
