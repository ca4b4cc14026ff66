/**
 * The purchase's owner `policy-<id>` and its sale run `purchase-<id>` hand off by signal: a change
 * that reaches the owner while the first certificates are still being issued waits until the sale
 * run says issuance is over (`notifyWhenIssued`, answered by `saleIssued`), never looking again on
 * a short timer; and the processor's refund and dispute events are recorded by the owner, in turn.
 */
import type { History } from '@temporalio/common/lib/proto-utils';
import { startTestApp, type TestApp } from '../helpers/app';
import { call } from '../helpers/fixtures';
import {
  WEBHOOK_SECRET,
  chargeRefundedEvent,
  checkout,
  checkoutPaidByWebhook,
  createQuotingAccount,
  deliverWebhook,
  processorEventRecorded,
  sessionCompletedEvent,
  type QuotingAccount,
} from '../helpers/purchases';
import { eventually, startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';
import { STATUS_QUERY, policyWorkflowId, purchaseWorkflowId } from '../../workflows/contracts';
import type { PolicyStatusView } from '../../workflows/policy';

jest.setTimeout(120_000);

let app: TestApp;
let worker: TestWorker;
let account: QuotingAccount;
/** Purchases whose first render is held until the test lets it go (by purchase id). */
const holds = new Map<number, { entered: () => void; released: Promise<void> }>();

const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });
const historyOf = (workflowId: string): Promise<History> => app.container.temporal.client.workflow.getHandle(workflowId).fetchHistory();
const signalsReceived = (h: History) =>
  (h.events ?? []).flatMap((e) =>
    e.workflowExecutionSignaledEventAttributes ? [e.workflowExecutionSignaledEventAttributes.signalName] : [],
  );
const signalsSent = (h: History) =>
  (h.events ?? []).flatMap((e) => {
    const a = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
    return a ? [`${a.signalName} → ${a.workflowExecution?.workflowId}`] : [];
  });
/** The durations (s) of the timers a history started. */
const timers = (h: History) =>
  (h.events ?? []).flatMap((e) =>
    e.timerStartedEventAttributes ? [Number(e.timerStartedEventAttributes.startToFireTimeout?.seconds ?? 0)] : [],
  );

beforeAll(async () => {
  const taskQueue = uniqueTaskQueue();
  worker = await startTestWorker(taskQueue, (real) => ({
    // Holds the first issuance of a purchase the test named, then renders it as usual.
    async issueCertificatesAndArchives(input) {
      const hold = holds.get(input.purchaseId);
      if (hold) {
        hold.entered();
        await hold.released;
      }
      return real.issueCertificatesAndArchives(input);
    },
  }));
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' });
  account = await createQuotingAccount(app);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await worker?.shutdown();
});

test('when a certificate holder is added while the first certificates are being issued, then the owner waits for the sale run to say they are issued, without looking again on a timer, and then adds the holder', async () => {
  const { purchaseId, sessionId } = await checkout(app, account);
  let entered!: () => void;
  const issuing = new Promise<void>((r) => (entered = r));
  let release!: () => void;
  holds.set(purchaseId, { entered, released: new Promise<void>((r) => (release = r)) });
  expect((await deliverWebhook(app, sessionCompletedEvent(purchaseId, sessionId))).status).toBe(200);
  await issuing;

  const added = api(`/purchases/${purchaseId}/certificate_holders`, {
    method: 'POST',
    body: {
      name: 'Riverside Hall LLC',
      address: { line1: '200 River Rd', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
    },
  });
  // The owner asked the sale run to tell it when issuance is over, and waits.
  await eventually(async () =>
    signalsSent(await historyOf(policyWorkflowId(purchaseId)).catch(() => ({ events: [] }))).includes(
      `notifyWhenIssued → ${purchaseWorkflowId(purchaseId)}`,
    ),
  );
  expect((await api(`/purchases/${purchaseId}`)).body.data.status).toBe('awaiting_certificates');
  release();

  const res = await added;
  expect(res.status).toBe(201);
  expect(res.body.data.name).toBe('Riverside Hall LLC');
  // The holder's certificates are issued after the answer (the purchase reads awaiting_certificates until they are stored).
  await eventually(async () => (await api(`/purchases/${purchaseId}`)).body.data.status === 'issued');
  const sale = await historyOf(purchaseWorkflowId(purchaseId));
  expect(signalsReceived(sale)).toContain('notifyWhenIssued');
  expect(signalsSent(sale)).toEqual([`saleIssued → ${policyWorkflowId(purchaseId)}`]);
  const owner = await historyOf(policyWorkflowId(purchaseId));
  expect(signalsReceived(owner)).toContain('saleIssued');
  // Its only timers are the long waits (the idle end, the hand-off's safety net): no short look-again.
  expect(timers(owner).filter((seconds) => seconds < 600)).toEqual([]);
});

test('when a purchase is issued without any change waiting, then its sale run signals nobody', async () => {
  const { purchaseId } = await checkoutPaidByWebhook(app, account);
  await eventually(async () => (await api(`/purchases/${purchaseId}`)).body.data.status === 'issued');
  await app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).result();
  expect(signalsSent(await historyOf(purchaseWorkflowId(purchaseId)))).toEqual([]);
});

test('when the processor refunds the whole sale, then the owner records it and the purchase is refunded, and a redelivery records nothing new', async () => {
  const { purchaseId } = await checkoutPaidByWebhook(app, account);
  await eventually(async () => (await api(`/purchases/${purchaseId}`)).body.data.status === 'issued');
  const p = (await api(`/purchases/${purchaseId}`)).body.data;
  const eventId = `evt_owner_refund_${purchaseId}`;
  const event = chargeRefundedEvent({
    id: eventId,
    chargeId: `ch_owner_${purchaseId}`,
    paymentIntent: p.payment_intent,
    amountMinor: p.amount_total,
    amountRefundedMinor: p.amount_total,
    purchaseId,
  });
  expect((await deliverWebhook(app, event)).body).toMatchObject({ purchase_id: purchaseId, relayed: true, duplicate: false });
  expect(await processorEventRecorded(app, purchaseId, `evt_owner_refund_${purchaseId}`)).toEqual({
    eventId: `evt_owner_refund_${purchaseId}`,
    kind: 'refund',
    refundedMinor: p.amount_total,
    refunded: true,
  });
  expect((await api(`/purchases/${purchaseId}`)).body.data.status).toBe('refunded');

  expect((await deliverWebhook(app, event)).body).toMatchObject({ purchase_id: purchaseId, relayed: true, duplicate: true });
  // The redelivery reaches the owner too (signalled again), which records the same running total.
  const owner = app.container.temporal.client.workflow.getHandle(policyWorkflowId(purchaseId));
  const recorded = await eventually(async () => {
    const seen = (await owner.query<PolicyStatusView>(STATUS_QUERY)).processorEvents.filter((e) => e.eventId === eventId);
    return seen.length === 2 ? seen : null;
  });
  expect(recorded![1]).toEqual(recorded![0]);
  const rows = await app.container.db('purchases').where({ id: purchaseId }).first('refunded_minor', 'status');
  expect({ refunded: Number(rows.refunded_minor), status: rows.status }).toEqual({ refunded: p.amount_total, status: 'refunded' });
});
