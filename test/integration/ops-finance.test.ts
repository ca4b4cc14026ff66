/**
 * `npm run ops -- finance` (issue 55 item 6) on the real stack (API, Temporal dev server, worker,
 * PostgreSQL, stripe-mock): one agency whose product names an insurer sells three purchases this
 * month (paid through the test helper), cancels a day of one and has 2.00 of another refunded in
 * the processor's dashboard; the month to date shows the sales' premium and fees, the
 * cancellation's refund, the dashboard refund and the net, per agency and for the insurer; another
 * month shows nothing, and bad options are usage errors.
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createRootAccountOfKind } from '../helpers/fixtures';
import { runScript } from '../helpers/run';
import {
  WEBHOOK_SECRET,
  cancellationCalls,
  chargeRefundedEvent,
  createQuotingAccount,
  deliverWebhook,
  issuedPurchase,
  type QuotingAccount,
} from '../helpers/purchases';
import { eventually } from '../helpers/worker';

jest.setTimeout(240_000);

const stack = useStack({ app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' } });
let app: TestApp;
let account: QuotingAccount;
let insurerId: number;
const ids: number[] = [];
const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });
const { quote, cancel, purchase } = cancellationCalls(api);
const ops = (args: string[]) => runScript('scripts/ops.ts', args, { LOG_LEVEL: 'silent' });
const month = new Date().toISOString().slice(0, 7);

beforeAll(async () => {
  app = stack.app;
  account = await createQuotingAccount(app);
  insurerId = (await createRootAccountOfKind(app.container, 'insurer', 'Evergreen Mutual Insurance Co.')).id;
  const named = await call(app.baseUrl, `/api/v1/products/${account.productId}`, {
    method: 'PATCH',
    key: account.key,
    body: { insurerRootAccountID: insurerId },
  });
  expect(named.status).toBe(200);
  for (let i = 0; i < 3; i++) ids.push(await issuedPurchase(app, account));
  // A day of the second cancelled (its refund completed).
  const unit = (await purchase(ids[1]!)).items[0].covered_units[1].id as number;
  const q = await quote(ids[1]!, { covered_unit_ids: [unit] });
  expect((await cancel(ids[1]!, { quote_id: q.id })).status).toBe(200);
  await eventually(async () => {
    const t = await app.container.db('policy_transactions').where({ purchase_id: ids[1], kind: 'cancellation' }).first();
    return t?.status === 'completed' ? t : null;
  }, 60_000);
  // 2.00 of the third refunded in the processor's dashboard.
  const row = await app.container.db('purchases').where({ id: ids[2] }).first('payment_intent_id', 'total_minor');
  const refund = chargeRefundedEvent({
    id: `evt_finance_${ids[2]}`,
    chargeId: `ch_finance_${ids[2]}`,
    paymentIntent: row.payment_intent_id,
    amountMinor: Number(row.total_minor),
    amountRefundedMinor: 200,
    purchaseId: ids[2]!,
  });
  expect((await deliverWebhook(app, refund)).status).toBe(200);
  await eventually(async () => {
    const t = await app.container.db('policy_transactions').where({ purchase_id: ids[2], kind: 'refund' }).first();
    return t?.status === 'completed' ? t : null;
  }, 60_000);
});

test('when the month runs, then finance shows the agency’s sales, premium, fees, cancellation, dashboard refund and net to date, and the insurer’s premium as its bordereau counts it', async () => {
  const db = app.container.db;
  const sold = await db('purchases').whereIn('id', ids).select('subtotal_minor', 'platform_fee_minor', 'total_minor');
  const premium = sold.reduce((s, r) => s + Number(r.subtotal_minor), 0);
  const fees = sold.reduce((s, r) => s + Number(r.platform_fee_minor), 0);
  const cancellation = await db('policy_transactions').where({ purchase_id: ids[1], kind: 'cancellation' }).first();
  const dashboard = await db('policy_transactions').where({ purchase_id: ids[2], kind: 'refund' }).first();
  expect(Number(dashboard.total_minor)).toBe(200);
  expect(Number(cancellation.total_minor)).toBeGreaterThan(0);

  const run = await ops(['finance', '--month', month, '--account', String(account.accountId), '--json']);
  expect([run.code, run.stderr]).toEqual([0, '']);
  const out = JSON.parse(run.stdout);
  expect(out).toMatchObject({ month, month_to_date: true });
  expect(Date.parse(out.to)).toBeLessThanOrEqual(Date.now());
  expect(out.agencies).toEqual([
    {
      root_account_id: account.accountId,
      agency: 'Workflow Agency',
      mode: 'test',
      currency: 'usd',
      sales: 3,
      premium,
      fees,
      tax: 0,
      endorsements: 0,
      cancellations: 1,
      cancelled_refunded: Number(cancellation.total_minor),
      cancelled_premium: Number(cancellation.premium_minor),
      cancelled_fees: Number(cancellation.platform_fee_minor),
      refunds: 1,
      refunded: 200,
      net: premium + fees - Number(cancellation.total_minor) - 200,
    },
  ]);
  // The insurer's premium: the sales', less what the cancellation and the dashboard refund returned of premium.
  expect(out.parties).toEqual([
    {
      root_account_id: account.accountId,
      agency: 'Workflow Agency',
      party_root_account_id: insurerId,
      party: 'Evergreen Mutual Insurance Co.',
      mode: 'test',
      currency: 'usd',
      premium,
      cancelled_premium: -Number(cancellation.premium_minor),
      refunded_premium: -Number(dashboard.premium_minor),
      fees: fees - Number(cancellation.platform_fee_minor) - Number(dashboard.platform_fee_minor),
      net_premium: premium - Number(cancellation.premium_minor) - Number(dashboard.premium_minor),
    },
  ]);

  const human = await ops(['finance', '--month', month, '--account', String(account.accountId)]);
  expect(human.code).toBe(0);
  const lines = human.stdout.trim().split('\n');
  expect(lines[0]).toMatch(
    new RegExp(`^finance ${month} to date \\(until \\S+\\) \\(root account ${account.accountId}; amounts in major units`),
  );
  const major = (minor: number) =>
    `${minor < 0 ? '-' : ''}${Math.floor(Math.abs(minor) / 100)}.${String(Math.abs(minor) % 100).padStart(2, '0')}`;
  expect(lines[2]!.split(/\s{2,}/)).toEqual([
    `Workflow Agency (${account.accountId})`,
    'test',
    'USD',
    '3',
    major(premium),
    major(fees),
    '0.00',
    '1',
    major(-Number(cancellation.total_minor)),
    '1',
    '-2.00',
    major(premium + fees - Number(cancellation.total_minor) - 200),
  ]);
  expect(lines[3]).toBe('premium by insurer or MGA (products that name one; as their bordereaux):');
  expect(lines[5]!.split(/\s{2,}/).slice(0, 2)).toEqual([
    `Workflow Agency (${account.accountId})`,
    `Evergreen Mutual Insurance Co. (${insurerId})`,
  ]);
});

test('when another month, a future month or a bad option is asked for, then nothing for a month without money, and usage errors otherwise', async () => {
  const before = await ops(['finance', '--month', '2025-01', '--account', String(account.accountId)]);
  expect(before.code).toBe(0);
  expect(before.stdout).toContain('nothing paid, changed or refunded in this range');
  expect(before.stdout).not.toContain('to date');
  const live = JSON.parse(
    (await ops(['finance', '--month', month, '--account', String(account.accountId), '--mode', 'live', '--json'])).stdout,
  );
  expect([live.agencies, live.parties]).toEqual([[], []]);
  for (const [args, message] of [
    [['finance'], 'ops: --month YYYY-MM is required'],
    [['finance', '--month', '2026-13'], 'ops: --month must be YYYY-MM, got "2026-13"'],
    [['finance', '--month', '2099-01'], 'ops: --month 2099-01 has not started yet'],
    [['finance', '--month', month, '--mode', 'both'], 'ops: --mode must be test or live, got "both"'],
  ] as const) {
    const run = await ops([...args]);
    expect([run.code, run.stderr.trim()]).toEqual([1, message]);
  }
});
