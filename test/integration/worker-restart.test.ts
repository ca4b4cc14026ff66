/**
 * A worker killed while a purchase waits, then restarted, finishes that purchase (ISSUE 5
 * "Done when"). The worker is the real entry point as a separate process (`tsx src/worker.ts`),
 * killed with SIGKILL, so nothing in it gets to clean up; the payment webhook arrives while no
 * worker runs (the API stores the event and signals; the server holds the signal), and a fresh
 * worker process on the same task queue picks the purchase up from its history.
 *
 * `tsx` runs the script in a child node process and cannot forward SIGKILL to it: killing the
 * `tsx` wrapper would leave the real worker running. The test kills the worker's own pid, taken
 * from its "worker running" log line, and afterAll kills every process whose environment names
 * this test's task queue, so no worker outlives the suite even when a step fails.
 */
import fs from 'node:fs';
import { startTestApp, type TestApp } from '../helpers/app';
import { processAlive, startProcess } from '../helpers/run';
import { eventually, uniqueTaskQueue } from '../helpers/worker';
import {
  WEBHOOK_SECRET,
  checkout,
  createQuotingAccount,
  deliverWebhook,
  scheduledActivities,
  sessionCompletedEvent,
} from '../helpers/purchases';
import { PAYMENT_EVENT_SIGNAL, purchaseWorkflowId, type PurchaseStatusView } from '../../workflows/contracts';

const taskQueue = uniqueTaskQueue();
const POLL_SECONDS = '2';
/** Bundling the workflows in a fresh process on a loaded 2-core machine can take a minute or more. */
const WORKER_READY_MS = 100_000;

interface WorkerProcess {
  /** The node process that runs src/worker.ts (not the tsx wrapper). */
  pid: number;
  output: () => string;
  /** Resolves when the tsx wrapper has exited. */
  exited: Promise<number | null>;
  stop(signal: NodeJS.Signals): void;
}

async function startWorkerProcess(): Promise<WorkerProcess> {
  const started = await startProcess(
    'src/worker.ts',
    /"msg":"worker running"/,
    {
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE,
      LOG_LEVEL: 'info',
      CHECKOUT_POLL_INTERVAL_SECONDS: POLL_SECONDS,
    },
    WORKER_READY_MS,
  );
  const pid = Number(/"pid":(\d+)[^\n]*"msg":"worker running"/.exec(started.output())?.[1]);
  if (!pid) throw new Error(`no pid in the worker's "worker running" line:\n${started.output()}`);
  return { pid, output: started.output, exited: started.exited, stop: (signal) => process.kill(pid, signal) };
}

/** Pids of processes (tsx wrappers and workers) started with this test's unique task queue. */
function processesOfThisTest(): number[] {
  const marker = `TEMPORAL_TASK_QUEUE=${taskQueue}\0`;
  const pids: number[] = [];
  for (const entry of fs.existsSync('/proc') ? fs.readdirSync('/proc') : []) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/environ`, 'latin1').includes(marker)) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

let app: TestApp | undefined;

afterAll(async () => {
  for (const pid of processesOfThisTest()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await eventually(async () => processesOfThisTest().every((pid) => !processAlive(pid)), 10_000).catch(() => undefined);
  await app?.close();
});

test('when the worker is SIGKILLed while a purchase waits and the webhook arrives with no worker running, then a restarted worker finishes the purchase with one payment recorded', async () => {
  // arrange: a worker process, the API on its task queue, a purchase waiting for payment
  const first = await startWorkerProcess();
  app = await startTestApp({
    TEMPORAL_TASK_QUEUE: taskQueue,
    PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET,
    CHECKOUT_POLL_INTERVAL_SECONDS: POLL_SECONDS,
  });
  const account = await createQuotingAccount(app);
  const { purchaseId, sessionId } = await checkout(app, account);
  const handle = app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId));
  const row = () => app!.container.db('purchases').where({ id: purchaseId }).first();
  await eventually(
    async () =>
      (await row()).status === 'awaiting_payment' && (await handle.query<PurchaseStatusView>('status')).status === 'awaiting_payment',
  );

  // act 1: kill the worker outright, then the buyer pays and the webhook comes in
  first.stop('SIGKILL');
  await first.exited;
  expect(processAlive(first.pid)).toBe(false);
  const delivered = await deliverWebhook(app, sessionCompletedEvent(purchaseId, sessionId));
  expect(delivered.status).toBe(200);
  expect(delivered.body).toEqual({ received: true, duplicate: false, purchase_id: purchaseId, relayed: true });
  // with no worker, the signal waits in the history (the server holds a workflow task for it that
  // no worker takes) and nothing is recorded yet
  await eventually(async () => {
    const signalled = (await handle.fetchHistory()).events?.some(
      (e) => e.workflowExecutionSignaledEventAttributes?.signalName === PAYMENT_EVENT_SIGNAL,
    );
    return signalled === true && (await handle.describe()).raw.pendingWorkflowTask != null;
  });
  expect((await row()).status).toBe('awaiting_payment');
  expect(scheduledActivities(await handle.fetchHistory(), 'recordPayment')).toBe(0);

  // act 2: a new worker process on the same task queue
  const second = await startWorkerProcess();
  const result = await handle.result();

  // assert: the purchase finished, paid once, certificates issued
  expect(result).toMatchObject({ purchaseId, status: 'issued', paymentIntentId: `pi_paid_${purchaseId}` });
  const finished = await row();
  expect(finished).toMatchObject({ status: 'issued', payment_intent_id: `pi_paid_${purchaseId}` });
  expect(finished.paid_at).toBeInstanceOf(Date);
  expect(await app.container.db('payproc_events').where({ purchase_id: purchaseId }).count('* as n').first()).toEqual({ n: '1' });
  expect(scheduledActivities(await handle.fetchHistory(), 'recordPayment')).toBe(1);
  expect((await handle.describe()).status.name).toBe('COMPLETED');
  // Issued by the purchase workflow itself (no certificates child): its one render-and-store step ran.
  expect(result.certificates).toMatchObject({ phase: 'issued' });
  expect(scheduledActivities(await handle.fetchHistory(), 'issueCertificatesAndArchives')).toBe(1);

  second.stop('SIGTERM');
  await second.exited;
  expect(second.output()).toContain('"msg":"worker stopped"');
}, 240_000);
