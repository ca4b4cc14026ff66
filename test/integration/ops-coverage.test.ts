/**
 * Coverage truth for operators (issue 55 item 1), on the real stack (API, Temporal dev server,
 * worker, PostgreSQL, stripe-mock): `npm run ops -- find` and `reissue` tell a partly or wholly
 * cancelled or refunded purchase as such from the purchase's own record, although its sale run
 * completed `issued`; `npm run ops -- coverage` counts one agency's policies and covered units in
 * force, cancelled and refunded, and its void certificates, per day.
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
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
let app: TestApp;
let account: QuotingAccount;
const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });
const { quote, cancel, purchase } = cancellationCalls(api);
const ops = (args: string[]) => runScript('scripts/ops.ts', args, { LOG_LEVEL: 'silent' });
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
    expect(lines[1]!.split(/\s{2,}/)).toEqual([
      'agency',
      'mode',
      'day',
      'policies in force',
      'cancelled',
      'refunded',
      'units in force',
      'cancelled',
      'refunded',
      'certs voided',
    ]);
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
    expect((await ops(['coverage', '--from', '2027-02-30'])).stderr.trim()).toBe('ops: --from must be a day YYYY-MM-DD, got "2027-02-30"');
  });
});
