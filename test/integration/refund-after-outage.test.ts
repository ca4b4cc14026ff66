/**
 * Refunds resume soon after a processor outage (issue 48, item 12). stripe-mock sits behind a TCP
 * proxy that refuses every connection while "down"; the worker and the API reach the processor
 * only through it and keep the default retry ceiling (PURCHASE_RETRY_MAX_INTERVAL_SECONDS, 300 s).
 * A purchase is paid while the processor is up, then the processor goes down and one day of it is
 * cancelled: the cancellation is accepted and its refund waits, retrying. Once the refund has
 * failed seven times (about a minute of outage: waits of 1, 2, 4, 8, 16 and 30 s) the processor
 * comes back, and the refund must be made, and the cancellation completed, within 45 s of its
 * return: the money calls' 30 s ceiling brings the eighth try 30 s after the seventh, where the
 * old 300 s one would have waited 64 s. While down, each try is one refund call (with the
 * processor client's own two network retries), never more.
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { call } from '../helpers/fixtures';
import {
  WEBHOOK_SECRET,
  cancellationCalls,
  createQuotingAccountWithoutFreeLook,
  issuedPurchase,
  type QuotingAccount,
} from '../helpers/purchases';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { eventually, startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';
import { policyWorkflowId } from '../../workflows/contracts';
import { MONEY_RETRY_MAX_INTERVAL_SECONDS } from '../../workflows/retry-policy';

jest.setTimeout(480_000);

let processor: TcpProxy;
let worker: TestWorker;
let app: TestApp;
let account: QuotingAccount;

beforeAll(async () => {
  const stripeMock = new URL(process.env.PAYPROC_API_BASE ?? 'http://127.0.0.1:12111');
  processor = await startTcpProxy({ host: stripeMock.hostname, port: Number(stripeMock.port) });
  const taskQueue = uniqueTaskQueue();
  // No PURCHASE_RETRY_MAX_INTERVAL_SECONDS here: the default ceiling, as in production.
  worker = await startTestWorker(taskQueue, {}, { PAYPROC_API_BASE: processor.url });
  app = await startTestApp({
    TEMPORAL_TASK_QUEUE: taskQueue,
    PAYPROC_API_BASE: processor.url,
    PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET,
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  account = await createQuotingAccountWithoutFreeLook(app);
});

afterAll(async () => {
  processor?.up();
  await app?.close();
  await worker?.shutdown();
  await processor?.close();
});

test('when the processor comes back after an outage during which a cancellation was accepted, then its refund is made within 45 s of the return, and the down processor was asked once per try', async () => {
  const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
    call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });
  const { quote, cancel, purchase } = cancellationCalls(api);
  const id = await issuedPurchase(app, account);
  const second = (await purchase(id)).items[0].covered_units[1];
  const q = await quote(id, { covered_unit_ids: [second.id], requested_by: 'buyer', reason: 'Called off during the outage' });

  processor.down();
  const accepted = await cancel(id, { quote_id: q.id });
  expect(accepted.status).toBe(200);
  expect(accepted.body.data.status).not.toBe('completed');

  // The refund waits, retrying: wait until seven tries have failed (the eighth is scheduled).
  const owner = app.container.temporal.client.workflow.getHandle(policyWorkflowId(id));
  const refundTry = async () =>
    (await owner.describe()).raw.pendingActivities?.find((a) => a.activityType?.name === 'createCancellationRefund') ?? null;
  const waiting = await eventually(async () => {
    const pending = await refundTry();
    return pending && (pending.attempt ?? 0) >= 8 && pending.lastFailure ? pending : null;
  }, 300_000);
  const failedTries = (waiting!.attempt ?? 0) - 1;
  // Each try was one refund request (the processor client retries a refused connection twice itself): no more.
  expect(processor.refused).toBeGreaterThanOrEqual(failedTries);
  expect(processor.refused).toBeLessThanOrEqual(3 * (failedTries + 1));
  expect((await purchase(id)).cancellations[0].status).not.toBe('completed');

  processor.up();
  const back = Date.now();
  const done = await eventually(async () => {
    const p = await purchase(id);
    return p.cancellations[0]?.status === 'completed' ? p : null;
  }, 300_000);
  const elapsedMs = Date.now() - back;
  expect({ elapsedMs, under45s: elapsedMs < 45_000 }).toEqual({ elapsedMs, under45s: true });
  expect(done.cancellations).toHaveLength(1);
  expect(done.cancellations[0].refund.total).toBe(q.refund.total);

  // The refund's tries were scheduled with the money calls' ceiling.
  let maximumInterval: unknown;
  for (const event of (await owner.fetchHistory()).events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'createCancellationRefund') maximumInterval = scheduled.retryPolicy?.maximumInterval?.seconds;
  }
  expect(Number(maximumInterval)).toBe(MONEY_RETRY_MAX_INTERVAL_SECONDS);
});
