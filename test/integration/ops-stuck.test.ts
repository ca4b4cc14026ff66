/**
 * `npm run ops -- stuck` against the Temporal dev server, PostgreSQL and stripe-mock: a purchase
 * left awaiting payment past its deadline while the processor refuses to expire it, a paid
 * purchase whose certificates cannot be stored, and a purchase whose payment failed are listed
 * under their agency, with the activities that keep retrying, among them the agency's event
 * deliveries to a webhook endpoint that refuses connections (by the runs' AgencyId and Mode).
 * And an operator's reissue of a purchase still issuing in its own run answers `running`.
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createRootAccount } from '../helpers/fixtures';
import { eventually, startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';
import {
  WEBHOOK_SECRET,
  checkout,
  createQuotingAccount,
  deliverWebhook,
  payByTestHelper,
  sessionCompletedEvent,
} from '../helpers/purchases';
import { runScript } from '../helpers/run';
import { certificatesWorkflowId, purchaseWorkflowId } from '../../workflows/contracts';
import { createPurchaseOperations } from '../../src/purchases/operations';
import { createSaleRepository } from '../../src/purchases/sale-repository';
import { createLedgerRepository } from '../../src/purchases/ledger-repository';

let worker: TestWorker;
let app: TestApp;

/** `npm run ops -- stuck` counting every run as stuck from its first retry on, with `extra` options. */
const stuck = (...extra: string[]) =>
  runScript('scripts/ops.ts', ['stuck', '--older-than-minutes', '0', '--min-attempts', '2', ...extra], { LOG_LEVEL: 'silent' });

beforeAll(async () => {
  const taskQueue = uniqueTaskQueue();
  const settings = {
    CHECKOUT_SESSION_TTL_SECONDS: '3',
    CHECKOUT_POLL_INTERVAL_SECONDS: '1',
    PURCHASE_RETRY_MAX_INTERVAL_SECONDS: '1',
    WEBHOOK_RETRY_INITIAL_SECONDS: '1',
  };
  worker = await startTestWorker(
    taskQueue,
    {
      // The processor will not expire sessions, and storage refuses certificates: both retry.
      expireCheckoutSession: async () => {
        throw Object.assign(new Error('connect ECONNREFUSED processor'), { type: 'StripeConnectionError' });
      },
      issueCertificatesAndArchives: async () => {
        throw new Error('storage unavailable');
      },
    },
    settings,
  );
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, ...settings });
});

afterAll(async () => {
  // The stuck runs would retry forever: end them.
  for await (const wf of app.container.temporal.client.workflow.list({
    query: `ExecutionStatus='Running' AND TaskQueue='${worker.taskQueue}'`,
  })) {
    await app.container.temporal.client.workflow
      .getHandle(wf.workflowId)
      .terminate('test over')
      .catch(() => undefined);
  }
  await app.close();
  await worker.shutdown();
});

test('when purchases are stuck in each way, then ops stuck lists them under their agency with the retrying activities, and exits 3', async () => {
  const account = await createQuotingAccount(app);
  // The agency's own endpoint refuses connections: its event deliveries keep retrying (test mode).
  const endpoint = await call(app.baseUrl, '/api/v1/webhook_endpoints', {
    method: 'POST',
    key: account.key,
    body: { url: 'http://127.0.0.1:1/hooks', enabled_events: ['*'] },
  });
  expect(endpoint.status).toBe(201);
  const late = await checkout(app, account);
  const unissued = await checkout(app, account);
  expect((await deliverWebhook(app, sessionCompletedEvent(unissued.purchaseId, unissued.sessionId))).body).toMatchObject({ relayed: true });
  const failed = await checkout(app, account);
  expect((await payByTestHelper(app, account, failed.purchaseId, 'failed')).status).toBe(200);

  const attempts = async (workflowId: string) =>
    (await app.container.temporal.client.workflow.getHandle(workflowId).describe()).raw.pendingActivities?.[0]?.attempt ?? 0;
  await eventually(
    async () =>
      (await attempts(purchaseWorkflowId(late.purchaseId))) >= 2 && (await attempts(purchaseWorkflowId(unissued.purchaseId))) >= 2,
    40_000,
  );
  await eventually(async () => (await app.container.db('purchases').where({ id: failed.purchaseId }).first()).status === 'failed');

  const rootAccountId = (await app.container.db('purchases').where({ id: late.purchaseId }).first()).root_account_id;
  // The delivery runs carry the endpoint's agency and mode, so the Temporal UI and CLI find them by AgencyId.
  const deliveryRuns = `WorkflowType='eventDeliveryWorkflow' AND AgencyId='${rootAccountId}' AND \`Mode\`='test' AND ExecutionStatus='Running'`;
  await eventually(async () => {
    for await (const wf of app.container.temporal.client.workflow.list({ query: deliveryRuns }))
      if ((await attempts(wf.workflowId)) >= 2) return true;
    return false;
  }, 40_000);
  // The whole service's list: this agency among the others the run's suites have left stuck.
  const all = JSON.parse((await stuck('--json')).stdout);
  expect(all.root_account_id).toBeNull();
  expect(all.agencies.map((a: { root_account_id: number }) => a.root_account_id)).toContain(rootAccountId);
  // One agency's (each kind is capped at 500 rows over the whole service; one account's rows are exact).
  const run = await stuck('--account', String(rootAccountId), '--json');
  expect(run.code).toBe(3);
  const out = JSON.parse(run.stdout);
  expect(out.root_account_id).toBe(rootAccountId);
  expect(out.agencies).toHaveLength(1);
  const mine = out.agencies[0];
  expect(mine).toMatchObject({ root_account_id: rootAccountId, agency: 'Workflow Agency' });
  const kinds = Object.fromEntries(mine.purchases.map((p: { id: number; kind: string }) => [p.id, p.kind]));
  expect(kinds).toEqual({
    [late.purchaseId]: 'awaiting_payment_past_deadline',
    [unissued.purchaseId]: 'paid_without_certificates',
    [failed.purchaseId]: 'failed',
  });
  const retrying = mine.retrying_activities
    .map((a: { workflowId: string; activityType: string }) => `${a.workflowId} ${a.activityType}`)
    .sort();
  // The paid purchase issues its certificates itself: its render-and-store step is the one retrying.
  expect(retrying.filter((r: string) => !r.startsWith('event-delivery-'))).toEqual(
    [`purchase-${unissued.purchaseId} issueCertificatesAndArchives`, `purchase-${late.purchaseId} expireCheckoutSession`].sort(),
  );
  // The agency's event deliveries are listed under the agency, with its mode, not under "no purchase".
  const deliveries = mine.retrying_activities.filter((a: { workflowId: string }) => a.workflowId.startsWith('event-delivery-'));
  expect(deliveries.length).toBeGreaterThan(0);
  for (const d of deliveries) expect(d).toMatchObject({ activityType: 'deliverEvent', purchaseId: null, rootAccountId, mode: 'test' });
  // --mode live: nothing of this test-mode agency; --mode test: all of it.
  const live = JSON.parse((await stuck('--account', String(rootAccountId), '--mode', 'live', '--json')).stdout);
  expect(live).toMatchObject({ mode: 'live', agencies: [] });
  const test = JSON.parse((await stuck('--account', String(rootAccountId), '--mode', 'test', '--json')).stdout);
  expect(test.agencies[0].retrying_activities.length).toBe(mine.retrying_activities.length);
  expect(
    mine.retrying_activities.find((a: { activityType: string }) => a.activityType === 'issueCertificatesAndArchives').lastFailure,
  ).toMatch(/storage unavailable/);

  const human = await stuck();
  expect(human.stdout).toContain(`purchase ${failed.purchaseId} test failed since`);
  // Read by a person: the deliveries sit under the agency's own heading, each with its mode.
  const mineHuman = (await stuck('--account', String(rootAccountId))).stdout;
  expect(mineHuman.split('\n')[0]).toBe(`Workflow Agency (root account ${rootAccountId})`);
  expect(mineHuman).toMatch(/^ {2}event-delivery-\d+-\d+ test deliverEvent attempt \d+: .*ECONNREFUSED/m);
  expect(mineHuman).not.toMatch(/no purchase|root account -/);
  // A failure is final: one older than the window (72 h by default) has had its look.
  expect(out.failed_within_hours).toBe(72);
  await app.container
    .db('purchases')
    .where({ id: failed.purchaseId })
    .update({ failed_at: app.container.db.raw(`now() - interval '73 hours'`) });
  const later = JSON.parse((await stuck('--account', String(rootAccountId), '--json')).stdout);
  const mineLater = later.agencies.find((a: { root_account_id: number }) => a.root_account_id === rootAccountId);
  expect(mineLater.purchases.map((p: { id: number }) => p.id).sort()).toEqual([late.purchaseId, unissued.purchaseId].sort());
  const wider = JSON.parse((await stuck('--failed-within-hours', '96', '--account', String(rootAccountId), '--json')).stdout);
  expect(
    wider.agencies.find((a: { root_account_id: number }) => a.root_account_id === rootAccountId).purchases.map((p: { id: number }) => p.id),
  ).toContain(failed.purchaseId);
  const bad = await runScript('scripts/ops.ts', ['stuck', '--min-attempts', '0']);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/^ops: --min-attempts must be a positive integer/m);
  const badAccount = await runScript('scripts/ops.ts', ['stuck', '--account', 'acme']);
  expect(badAccount.code).toBe(1);
  expect(badAccount.stderr).toMatch(/^ops: --account must be a positive integer, got "acme"/m);
  // An account with nothing stuck: exit 0, said so.
  const quiet = await runScript(
    'scripts/ops.ts',
    ['stuck', '--account', String((await createRootAccount(app.container, 'Quiet Agency')).id)],
    { LOG_LEVEL: 'silent' },
  );
  expect(quiet.code).toBe(0);
  expect(quiet.stdout).toMatch(/^nothing stuck for root account \d+ /m);
  // An account that does not exist reads the same: nothing of it is stuck.
  expect(await app.container.db('root_accounts').where({ id: 2000000000 }).first()).toBeUndefined();
  const noSuch = await runScript('scripts/ops.ts', ['stuck', '--account', '2000000000'], { LOG_LEVEL: 'silent' });
  expect(noSuch.code).toBe(0);
  expect(noSuch.stdout).toMatch(/^nothing stuck for root account 2000000000 /m);
}, 120_000);

test('when an operator reissues a paid purchase whose own run is still issuing, then reissue answers running with that run and starts no other', async () => {
  const account = await createQuotingAccount(app);
  const paid = await checkout(app, account);
  expect((await deliverWebhook(app, sessionCompletedEvent(paid.purchaseId, paid.sessionId))).body).toMatchObject({ relayed: true });
  const handle = app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(paid.purchaseId));
  // Storage refuses the certificates: the purchase run's render-and-store step keeps retrying.
  await eventually(async () => (await handle.describe()).raw.pendingActivities?.[0]?.activityType?.name === 'issueCertificatesAndArchives');
  const operations = createPurchaseOperations({
    sales: createSaleRepository(app.container.db),
    ledger: createLedgerRepository(app.container.db),
    workflows: app.container.purchaseWorkflows,
  });
  expect(await operations.reissue(paid.purchaseId)).toEqual({
    purchaseId: paid.purchaseId,
    workflowId: purchaseWorkflowId(paid.purchaseId),
    action: 'running',
  });
  await expect(app.container.temporal.client.workflow.getHandle(certificatesWorkflowId(paid.purchaseId)).describe()).rejects.toThrow(
    /not found/i,
  );
});
