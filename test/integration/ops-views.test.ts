/**
 * The operators' views of coverage and money (issue 55) on the real stack (API, Temporal dev
 * server, worker, PostgreSQL, stripe-mock):
 * - `npm run ops -- find` and `reissue` tell a partly or wholly cancelled or refunded purchase as
 *   such from the purchase's own record, although its sale run completed `issued`; `npm run ops --
 *   coverage` counts one agency's policies and covered units in force, cancelled and refunded, and
 *   its void certificates, per day;
 * - `npm run ops -- finance`: one agency whose product names an insurer sells three purchases this
 *   month (paid through the test helper), cancels a day of one and has 2.00 of another refunded in
 *   the processor's dashboard; the month to date shows the sales' premium and fees, the
 *   cancellation's refund, the dashboard refund and the net, per agency and for the insurer;
 *   another month shows nothing, and bad options are usage errors.
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
import { purchaseWorkflowId } from '../../workflows/contracts';

jest.setTimeout(240_000);

const stack = useStack({ app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' } });
const ops = (args: string[]) => runScript('scripts/ops.ts', args, { LOG_LEVEL: 'silent' });

/** A suite's agency and its calls with the agency's key: the API, a quote, a cancellation, a purchase. */
function agencyCalls() {
  const agency = { app: undefined as unknown as TestApp, account: undefined as unknown as QuotingAccount };
  const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
    call(agency.app.baseUrl, `/api/v1${path}`, { key: agency.account.key, ...init });
  return { agency, api, ...cancellationCalls(api) };
}

describe('coverage truth: find, reissue and coverage', () => {
  const { agency, quote, cancel, purchase } = agencyCalls();
  let app: TestApp;
  let account: QuotingAccount;
  const why = ['--reason', 'issue 55 coverage truth'];

  /** The four purchases of the suite's agency, each two days (2027-05-01 and -02, America/Chicago). */
  const ids = { issued: 0, partly: 0, cancelled: 0, refunded: 0 };

  /** Cancels the units `unitIds` of purchase `id` and waits until the purchase reads `status`. */
  async function cancelUnits(id: number, unitIds: number[], status: string) {
    const q = await quote(id, { covered_unit_ids: unitIds });
    expect((await cancel(id, { quote_id: q.id })).status).toBe(200);
    await eventually(async () => ((await purchase(id)).status === status ? true : null), 60_000);
  }

  beforeAll(async () => {
    app = stack.app;
    account = await createQuotingAccount(app);
    Object.assign(agency, { app, account });
    for (const k of Object.keys(ids) as Array<keyof typeof ids>) ids[k] = await issuedPurchase(app, account);
    const unitsOf = async (id: number) => ((await purchase(id)).items[0].covered_units as Array<{ id: number }>).map((u) => u.id);
    await cancelUnits(ids.partly, [(await unitsOf(ids.partly))[1]!], 'partly_cancelled');
    await cancelUnits(ids.cancelled, await unitsOf(ids.cancelled), 'cancelled');
    const row = await app.container.db('purchases').where({ id: ids.refunded }).first('payment_intent_id', 'total_minor');
    const refund = chargeRefundedEvent({
      id: `evt_refund_ops_${ids.refunded}`,
      chargeId: `ch_ops_${ids.refunded}`,
      paymentIntent: row.payment_intent_id,
      amountMinor: Number(row.total_minor),
      amountRefundedMinor: Number(row.total_minor),
      purchaseId: ids.refunded,
    });
    expect((await deliverWebhook(app, refund)).status).toBe(200);
    await eventually(async () => ((await purchase(ids.refunded)).status === 'refunded' ? true : null), 60_000);
  });

  describe('ops find and reissue read the purchase, not the sale run', () => {
    test('when a purchase is partly cancelled, cancelled or refunded, then find says so (units in force from its record) while its sale run still last said issued', async () => {
      for (const [kind, summary] of [
        ['partly', /^partly cancelled: 1 of 2 covered units cancelled, 1 in force$/],
        ['cancelled', /^cancelled: 2 of 2 covered units cancelled, nothing in force$/],
        ['refunded', /^refunded in full at \S+: certificates void, nothing in force$/],
        ['issued', /^issued: 2 covered units in force, none cancelled$/],
      ] as const) {
        const id = ids[kind];
        const { buyer_email: email } = await app.container.db('purchases').where({ id }).first('buyer_email');
        const run = await ops(['find', '--email', email, '--json']);
        expect([kind, run.code, run.stderr]).toEqual([kind, 0, '']);
        const out = JSON.parse(run.stdout);
        const status = { partly: 'partly_cancelled', cancelled: 'cancelled', refunded: 'refunded', issued: 'issued' }[kind];
        expect(out.purchases).toEqual([
          expect.objectContaining({ purchase_id: id, status, root_account_id: account.accountId, covered_units: 2, mode: 'test' }),
        ]);
        expect(out.purchases[0].summary).toMatch(summary);
        const saleRun = out.runs.find((r: { workflowId: string }) => r.workflowId === purchaseWorkflowId(id));
        expect(saleRun).toMatchObject({ status: 'COMPLETED', purchaseId: id, purchaseStatus: status, runPurchaseStatus: 'issued' });
        const human = await ops(['find', '--email', email]);
        expect(human.stdout).toContain(`purchase ${id} (agency ${account.accountId}, test): ${out.purchases[0].summary}`);
      }
    });

    test('when reissue runs on a partly cancelled purchase, then it starts and says partly cancelled; on a cancelled or refunded one it refuses, saying which', async () => {
      const partly = await ops(['reissue', '--purchase', String(ids.partly), ...why, '--json']);
      expect(partly.code).toBe(0);
      expect(JSON.parse(partly.stdout)).toMatchObject({
        purchaseId: ids.partly,
        purchase_status: 'partly_cancelled',
        standing: { in_force_units: 1, cancelled_units: 1 },
      });
      const human = await ops(['reissue', '--purchase', String(ids.partly), ...why]);
      expect(human.stdout).toMatch(
        new RegExp(`^purchase ${ids.partly} \\(partly cancelled: 1 of 2 covered units cancelled, 1 in force\\): certificate issuance`),
      );
      for (const [kind, reason] of [
        ['cancelled', 'is cancelled'],
        ['refunded', 'is refunded'],
      ] as const) {
        const refused = await ops(['reissue', '--purchase', String(ids[kind]), ...why]);
        expect([kind, refused.code]).toEqual([kind, 2]);
        expect(refused.stderr).toContain(`ops: refused: purchase ${ids[kind]} ${reason}`);
      }
    });
  });

  describe('ops coverage', () => {
    test('when the agency has one purchase in force, one partly cancelled, one cancelled and one refunded, then each day counts them apart, with the void certificates', async () => {
      // One certificate per covered unit (one holder): the void ones are the cancelled and refunded units.
      expect(Number((await app.container.db('certificates').where({ purchase_id: ids.issued }).count({ n: '*' }).first())!.n)).toBe(2);
      const range = ['--account', String(account.accountId), '--from', '2027-05-01', '--to', '2027-05-02'];
      const run = await ops(['coverage', ...range, '--json']);
      expect([run.code, run.stderr]).toEqual([0, '']);
      const out = JSON.parse(run.stdout);
      const base = { root_account_id: account.accountId, agency: 'Workflow Agency', mode: 'test' };
      expect(out).toEqual({
        from: '2027-05-01',
        to: '2027-05-02',
        root_account_id: account.accountId,
        mode: null,
        days: [
          {
            ...base,
            day: '2027-05-01',
            ...{ policies_in_force: 2, policies_cancelled: 1, policies_refunded: 1 },
            ...{ units_in_force: 2, units_cancelled: 1, units_refunded: 1, certificates_voided: 2 },
          },
          {
            ...base,
            day: '2027-05-02',
            ...{ policies_in_force: 1, policies_cancelled: 2, policies_refunded: 1 },
            ...{ units_in_force: 1, units_cancelled: 2, units_refunded: 1, certificates_voided: 3 },
          },
        ],
      });
      const human = await ops(['coverage', ...range]);
      const lines = human.stdout.trim().split('\n');
      expect(lines[0]).toBe(
        `coverage 2027-05-01 to 2027-05-02 (root account ${account.accountId}; a day is a covered unit's first local day)`,
      );
      expect(lines[1]!.split(/\s{2,}/).join(' | ')).toBe(
        'agency | mode | day | policies in force | cancelled | refunded | units in force | cancelled | refunded | certs voided',
      );
      expect(lines[2]!.trim().split(/\s{2,}/)).toEqual([
        `Workflow Agency (${account.accountId})`,
        'test',
        '2027-05-01',
        '2',
        '1',
        '1',
        '2',
        '1',
        '1',
        '2',
      ]);
      // Live mode and days outside the purchases: nothing.
      expect((await ops(['coverage', ...range, '--mode', 'live'])).stdout).toContain('nothing sold covers these days');
      const bad = await ops(['coverage', '--from', '2027-05-02', '--to', '2027-05-01']);
      expect([bad.code, bad.stderr.trim()]).toEqual([1, 'ops: --to 2027-05-01 is before --from 2027-05-02']);
      expect((await ops(['coverage', '--from', '2027-02-30'])).stderr.trim()).toBe(
        'ops: --from must be a day YYYY-MM-DD, got "2027-02-30"',
      );
    });
  });
});

describe('ops finance', () => {
  const { agency, quote, cancel, purchase } = agencyCalls();
  let app: TestApp;
  let account: QuotingAccount;
  let insurerId: number;
  const ids: number[] = [];
  const month = new Date().toISOString().slice(0, 7);

  beforeAll(async () => {
    app = stack.app;
    account = await createQuotingAccount(app);
    Object.assign(agency, { app, account });
    insurerId = (await createRootAccountOfKind(app.container, 'insurer', 'Evergreen Mutual Insurance Co.', [account.accountId])).id;
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
});
