/**
 * Test-mode helpers (`/api/v1/test_helpers/purchases/{id}/pay|expire|refund|renew`) against the
 * Temporal dev server, PostgreSQL, stripe-mock and fake-gcs-server: each one goes through the
 * webhook handling (the event is stored like a processor's) and the workflow it starts or signals,
 * to certificates, `failed`, `expired`, a recorded refund or the next month of a subscription;
 * live keys and other accounts are refused.
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createKey, createRootAccount } from '../helpers/fixtures';
import { eventually, startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';
import {
  checkout,
  createQuotingAccount,
  deliverWebhook,
  issuedPurchase,
  processorEventRecorded,
  type QuotingAccount,
} from '../helpers/purchases';
import { purchaseWorkflowId, type PurchaseStatusView } from '../../workflows/contracts';

let worker: TestWorker;
let app: TestApp;
let account: QuotingAccount;

beforeAll(async () => {
  const taskQueue = uniqueTaskQueue();
  worker = await startTestWorker(taskQueue, {}, { CHECKOUT_POLL_INTERVAL_SECONDS: '1' });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, CHECKOUT_POLL_INTERVAL_SECONDS: '1' });
  account = await createQuotingAccount(app);
});

afterAll(async () => {
  await app.close();
  await worker.shutdown();
});

const helper = (
  key: string,
  purchaseId: number | string,
  action: 'pay' | 'expire' | 'refund' | 'renew' | 'dispute',
  body?: unknown,
  headers: Record<string, string> = {},
) =>
  call(app.baseUrl, `/api/v1/test_helpers/purchases/${purchaseId}/${action}`, {
    method: 'POST',
    key,
    headers,
    ...(body === undefined ? {} : { body }),
  });
const purchaseRow = (id: number) => app.container.db('purchases').where({ id }).first();
/**
 * Checks out a new purchase and asks `action` of it before it is paid: expects 400 INVALID_REQUEST,
 * `Purchase <id> is awaiting_payment and not paid: <why>`. Returns the purchase's id.
 */
const refusedBeforePayment = async (action: 'refund' | 'dispute', why: string): Promise<number> => {
  const { purchaseId } = await checkout(app, account);
  const res = await helper(account.key, purchaseId, action);
  expect(res.status).toBe(400);
  expect(res.body.error).toEqual({
    code: 'INVALID_REQUEST',
    message: `Purchase ${purchaseId} is awaiting_payment and not paid: ${why}`,
  });
  return purchaseId;
};
/**
 * Asserts a helper's answer that delivered an event: 200, the success envelope with `message`, the
 * event (`type`, a test helper's id) relayed for `purchaseId`, and exactly the further `data` fields.
 */
const expectDelivered = (
  res: Awaited<ReturnType<typeof helper>>,
  purchaseId: number,
  type: string,
  message: string,
  data: Record<string, unknown>,
) => {
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    success: true,
    data: { purchase_id: purchaseId, event: { id: expect.stringMatching(/^evt_testhelper_/), type }, relayed: true, ...data },
    message,
  });
};
/** Waits until the purchase's owner has recorded the dispute event `eventId`. */
const disputeHandled = (purchaseId: number, eventId: string) => processorEventRecorded(app, purchaseId, eventId);
const result = (id: number) =>
  app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(id)).result() as Promise<PurchaseStatusView>;

describe('POST /api/v1/test_helpers/purchases/{id}/pay', () => {
  test('when a test purchase is paid by the helper, then the event is stored like the processor’s and the purchase is paid and issued', async () => {
    const { purchaseId, sessionId } = await checkout(app, account);
    // stripe-mock hands out a payment intent with the session; the real processor often does not.
    const before = await purchaseRow(purchaseId);
    const res = await helper(account.key, purchaseId, 'pay');
    expectDelivered(res, purchaseId, 'checkout.session.completed', 'Test payment delivered', {
      purchase_status: expect.stringMatching(/^(paid|awaiting_certificates|issued)$/),
      payment_intent: expect.stringMatching(/^pi_testhelper_/),
    });
    const stored = await app.container.db('payproc_events').where({ id: res.body.data.event.id }).first();
    expect(stored).toMatchObject({ type: 'checkout.session.completed', livemode: false, purchase_id: purchaseId });
    expect(stored.payload.data.object).toMatchObject({
      id: sessionId,
      payment_status: 'paid',
      metadata: { purchase_id: String(purchaseId) },
    });

    expect((await result(purchaseId)).status).toBe('issued');
    const row = await purchaseRow(purchaseId);
    // A payment intent of its own, not the one stripe-mock gives every checkout (recorded before it).
    expect(row.payment_intent_id).toBe(res.body.data.payment_intent);
    expect(row.payment_intent_id).not.toBe(before.payment_intent_id);
    expect(stored.payload.data.object.payment_intent).toBe(row.payment_intent_id);
    expect(row.certificates_issued_at).toBeInstanceOf(Date);
    const certs = await call(app.baseUrl, '/platform-agency-root-certs/getCertificates', {
      method: 'POST',
      key: account.key,
      body: {
        idp_root_account_uuid: (await app.container.db('root_accounts').where({ id: row.root_account_id }).first()).idp_root_account_uuid,
        purchase_id: purchaseId,
      },
    });
    expect(certs.status).toBe(200);
    expect(certs.body.status).toBe('issued');
    expect(certs.body.certificates.length).toBeGreaterThan(0);

    // The request log lines name the purchase and its workflow.
    const lines = app.logs.filter((l) => l.msg === 'request' && l.purchaseId === purchaseId);
    expect(lines.map((l) => l.path)).toEqual(
      expect.arrayContaining([
        '/public-quote/adminValidateBuyerResponses',
        `/api/v1/test_helpers/purchases/${purchaseId}/pay`,
        '/platform-agency-root-certs/getCertificates',
      ]),
    );
    expect(lines.every((l) => l.workflowId === `purchase-${purchaseId}`)).toBe(true);

    // Nothing is left to pay.
    const again = await helper(account.key, purchaseId, 'pay');
    expect(again.status).toBe(400);
    expect(again.body.error).toEqual({
      code: 'INVALID_REQUEST',
      message: `Purchase ${purchaseId} is issued, not awaiting payment: there is no checkout left to pay or end`,
    });
  }, 90_000);

  test('when the helper fails the payment, then the purchase ends failed with the reason', async () => {
    const { purchaseId } = await checkout(app, account);
    const res = await helper(account.key, purchaseId, 'pay', { outcome: 'failed' });
    expect(res.status).toBe(200);
    expect(res.body.data.event.type).toBe('checkout.session.async_payment_failed');
    expect(await result(purchaseId)).toMatchObject({ status: 'failed', failureReason: expect.stringMatching(/^payment failed/) });
    const row = await purchaseRow(purchaseId);
    expect(row).toMatchObject({ status: 'failed', paid_at: null, certificates_issued_at: null });
    expect(row.failure_reason).toMatch(/payment failed/);
  }, 60_000);

  test('when it is sent with an Idempotency-Key and retried, then one event is delivered and the answer replayed', async () => {
    const { purchaseId } = await checkout(app, account);
    const headers = { 'Idempotency-Key': `pay-${purchaseId}` };
    const first = await helper(account.key, purchaseId, 'pay', {}, headers);
    const retry = await helper(account.key, purchaseId, 'pay', {}, headers);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(Number((await app.container.db('payproc_events').where({ purchase_id: purchaseId }).count({ n: '*' }).first())!.n)).toBe(1);
    expect((await result(purchaseId)).status).toBe('issued');
  }, 90_000);
});

describe('POST /api/v1/test_helpers/purchases/{id}/expire', () => {
  test('when the helper expires the checkout, then the purchase ends expired and can no longer be paid by it', async () => {
    const { purchaseId } = await checkout(app, account);
    const res = await helper(account.key, purchaseId, 'expire');
    expect(res.status).toBe(200);
    expect(res.body.data.event.type).toBe('checkout.session.expired');
    // The answer says what the event did, not the status from before it.
    expect(res.body.data.purchase_status).toBe('expired');
    expect((await result(purchaseId)).status).toBe('expired');
    await eventually(async () => (await purchaseRow(purchaseId)).status === 'expired');
    const pay = await helper(account.key, purchaseId, 'pay');
    expect(pay.status).toBe(400);
    expect(pay.body.error.code).toBe('INVALID_REQUEST');
  }, 60_000);
});

describe('POST /api/v1/test_helpers/purchases/{id}/refund', () => {
  test('when a paid test purchase is refunded in part and then in full, then each refund is recorded through the refund handling and the full one ends it refunded', async () => {
    const purchaseId = await issuedPurchase(app, account);
    const total = Number((await purchaseRow(purchaseId)).total_minor);
    expect(total).toBeGreaterThan(500);

    const tooMuch = await helper(account.key, purchaseId, 'refund', { amount: total + 1 });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ path: 'amount', message: `must be at most ${total}` }],
    });

    const part = await helper(account.key, purchaseId, 'refund', { amount: 500 });
    expectDelivered(part, purchaseId, 'charge.refunded', 'Test refund delivered', {
      amount: 500,
      amount_refunded: 500,
      refunded: false,
      purchase_status: 'issued',
    });
    // Stored like the processor's event, about the purchase's own payment intent.
    const stored = await app.container.db('payproc_events').where({ id: part.body.data.event.id }).first();
    expect(stored).toMatchObject({ type: 'charge.refunded', livemode: false, purchase_id: purchaseId });
    expect(stored.payload.data.object).toMatchObject({
      object: 'charge',
      amount: total,
      amount_refunded: 500,
      refunded: false,
      payment_intent: (await purchaseRow(purchaseId)).payment_intent_id,
    });
    expect(await purchaseRow(purchaseId)).toMatchObject({ refunded_minor: '500', status: 'issued' });

    // The rest: the running total reaches the purchase's total.
    const rest = await helper(account.key, purchaseId, 'refund');
    expect(rest.status).toBe(200);
    expect(rest.body.data).toMatchObject({ amount: total - 500, amount_refunded: total, refunded: true, purchase_status: 'refunded' });
    expect(await purchaseRow(purchaseId)).toMatchObject({ refunded_minor: String(total), status: 'refunded' });
    await eventually(
      async () => (await app.container.db('agency_events').where({ purchase_id: purchaseId, type: 'purchase.refunded' })).length >= 1,
    );

    const again = await helper(account.key, purchaseId, 'refund', { amount: 1 });
    expect(again.status).toBe(400);
    expect(again.body.error).toEqual({
      code: 'INVALID_REQUEST',
      message: `Purchase ${purchaseId} is refunded in full: there is nothing left to refund`,
    });
  }, 120_000);

  test('when the purchase is not paid yet, then 400 INVALID_REQUEST and nothing is delivered', async () => {
    const purchaseId = await refusedBeforePayment('refund', 'there is no charge to refund');
    expect(await app.container.db('payproc_events').where({ purchase_id: purchaseId })).toEqual([]);
  });
});

describe('POST /api/v1/test_helpers/purchases/{id}/renew', () => {
  let monthlyProductId: number;
  beforeAll(async () => {
    const { question_set_id: questionSetId } = await app.container
      .db('product_lines')
      .where({ id: account.productId })
      .first('question_set_id');
    const product = await call(app.baseUrl, '/api/v1/products', {
      method: 'POST',
      key: account.key,
      body: { customerName: 'Monthly Event Liability', defaultPrice: 30, questionSetId, isRecurring: true },
    });
    expect(product.status).toBe(201);
    monthlyProductId = product.body.data.id;
  });
  /** Quotes the account's usual answers for the monthly product; returns the awaiting-payment purchase's id. */
  const quoteMonthly = async (): Promise<number> => {
    const body = await account.quoteBody();
    const [selection] = body.selected_product_lines_to_purchase as Array<Record<string, unknown>>;
    const quoted = await call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
      method: 'POST',
      key: account.key,
      body: { ...body, selected_product_lines_to_purchase: [{ ...selection, product_line_template_id: monthlyProductId }] },
    });
    expect(quoted.status).toBe(200);
    return quoted.body.purchase_id as number;
  };

  test('when a paid test subscription is renewed twice, then each call creates the next month’s purchase with its own certificates', async () => {
    const purchaseId = await quoteMonthly();

    const early = await helper(account.key, purchaseId, 'renew');
    expect(early.status).toBe(400);
    expect(early.body.error).toEqual({
      code: 'INVALID_REQUEST',
      message: `Purchase ${purchaseId} is awaiting_payment: a subscription renews only after its first period is paid`,
    });

    expect((await helper(account.key, purchaseId, 'pay')).status).toBe(200);
    expect((await result(purchaseId)).status).toBe('issued');

    const first = await helper(account.key, purchaseId, 'renew');
    expectDelivered(first, purchaseId, 'invoice.paid', 'Test renewal delivered', {
      invoice: expect.stringMatching(/^in_testhelper_/),
      payment_intent: expect.stringMatching(/^pi_testhelper_/),
      renewal_purchase_id: expect.any(Number),
      renewal_period: 1,
    });
    const renewalId = first.body.data.renewal_purchase_id as number;
    expect(await purchaseRow(renewalId)).toMatchObject({
      renewal_of_purchase_id: purchaseId,
      renewal_period: 1,
      payproc_invoice_id: first.body.data.invoice,
      payment_intent_id: first.body.data.payment_intent,
    });
    // The renewal's certificates cover the same days a month on.
    await eventually(async () => (await purchaseRow(renewalId)).status === 'issued', 60_000);
    const labels = async (id: number) =>
      (await app.container.db('covered_units').where({ purchase_id: id }).orderBy('unit_index')).map((u) => u.local_label);
    expect(await labels(purchaseId)).toEqual(['2027-05-01', '2027-05-02']);
    expect(await labels(renewalId)).toEqual(['2027-06-01', '2027-06-02']);
    expect(await app.container.db('certificates').where({ purchase_id: renewalId }).whereNotNull('storage_key')).toHaveLength(2);
    await eventually(
      async () => (await app.container.db('agency_events').where({ purchase_id: renewalId, type: 'subscription.renewed' })).length === 1,
    );

    // Any period names the subscription; each call pays one more month.
    const second = await helper(account.key, renewalId, 'renew');
    expect(second.status).toBe(200);
    expect(second.body.data).toMatchObject({ purchase_id: purchaseId, renewal_period: 2 });
    expect(await labels(second.body.data.renewal_purchase_id)).toEqual(['2027-07-01', '2027-07-02']);
  }, 180_000);

  test('when the subscription is set to cancel at the end of its period, then renewing it is 409 SUBSCRIPTION_ENDING (the processor sends no invoice) and nothing is delivered', async () => {
    const purchaseId = await quoteMonthly();
    expect((await helper(account.key, purchaseId, 'pay')).status).toBe(200);
    expect((await result(purchaseId)).status).toBe('issued');

    const cancelled = await call(app.baseUrl, `/api/v1/subscriptions/${purchaseId}/cancel`, {
      method: 'POST',
      key: account.key,
      body: { when: 'at_period_end' },
    });
    expect(cancelled.status).toBe(200);
    // The first month runs 2027-05-01 to 2027-05-31 (it covers the 1st and 2nd): it ends then, active until.
    expect(cancelled.body).toMatchObject({
      data: { status: 'active', cancel_at_period_end: true, ended_at: null },
      message: 'Subscription will end at the end of the current period on 2027-05-31',
    });
    const events = async () => app.container.db('payproc_events').where({ type: 'invoice.paid' }).count<{ n: string }[]>({ n: '*' });
    const before = (await events())[0]!.n;

    const res = await helper(account.key, purchaseId, 'renew');
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      success: false,
      error: {
        code: 'SUBSCRIPTION_ENDING',
        message: `Subscription ${purchaseId} is cancelled at the end of its current period (2027-05-31): the processor sends no further invoice, so it does not renew`,
      },
    });
    expect((await events())[0]!.n).toBe(before);
    expect(await app.container.db('purchases').where({ renewal_of_purchase_id: purchaseId })).toEqual([]);
  }, 180_000);

  test('when the purchase is a one-time purchase, then 400 INVALID_REQUEST and nothing is delivered', async () => {
    const purchaseId = await issuedPurchase(app, account);
    const res = await helper(account.key, purchaseId, 'renew');
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'INVALID_REQUEST',
      message: `Purchase ${purchaseId} is a one-time purchase: only a subscription renews`,
    });
    expect(await app.container.db('purchases').where({ renewal_of_purchase_id: purchaseId })).toEqual([]);
  }, 90_000);
});

describe('POST /api/v1/test_helpers/purchases/{id}/dispute', () => {
  test('when a paid test purchase’s payment is disputed and then lost, then the dispute is recorded through the webhook handling and the agency hears dispute.opened then dispute.closed', async () => {
    const purchaseId = await issuedPurchase(app, account);
    const total = Number((await purchaseRow(purchaseId)).total_minor);

    const res = await helper(account.key, purchaseId, 'dispute', { outcome: 'lost', reason: 'product_not_received', amount: total - 100 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        purchase_id: purchaseId,
        dispute: expect.stringMatching(/^dp_testhelper_/),
        events: [
          { id: expect.stringMatching(/^evt_testhelper_/), type: 'charge.dispute.created' },
          { id: expect.stringMatching(/^evt_testhelper_/), type: 'charge.dispute.closed' },
        ],
        relayed: true,
        status: 'lost',
      },
      message: 'Test dispute delivered',
    });
    const dp = res.body.data.dispute as string;
    // Found by its payment intent (a dispute carries no metadata of ours), stored like the processor's events.
    const stored = await app.container
      .db('payproc_events')
      .whereIn(
        'id',
        res.body.data.events.map((e: { id: string }) => e.id),
      )
      .orderBy('received_at');
    expect(stored.map((e) => [e.type, e.purchase_id])).toEqual([
      ['charge.dispute.created', purchaseId],
      ['charge.dispute.closed', purchaseId],
    ]);
    expect(await app.container.db('purchase_disputes').where({ purchase_id: purchaseId })).toEqual([
      expect.objectContaining({
        payproc_dispute_id: dp,
        amount_minor: String(total - 100),
        currency: 'usd',
        reason: 'product_not_received',
        status: 'lost',
        closed_at: expect.any(Date),
      }),
    ]);
    await eventually(
      async () =>
        (await app.container.db('agency_events').where({ purchase_id: purchaseId }).whereIn('type', ['dispute.opened', 'dispute.closed']))
          .length === 2,
    );
    const events = await app.container
      .db('agency_events')
      .where({ purchase_id: purchaseId })
      .whereIn('type', ['dispute.opened', 'dispute.closed'])
      .orderBy('created_at');
    expect(events.map((e) => e.type).sort()).toEqual(['dispute.closed', 'dispute.opened']);
    // The closed dispute as the agency's event and the purchase (below) both read it.
    const lost = {
      id: dp,
      charge: `ch_testhelper_${purchaseId}`,
      amount: total - 100,
      currency: 'usd',
      reason: 'product_not_received',
      status: 'lost',
      opened_at: expect.any(String),
      closed_at: expect.any(String),
    };
    expect(events.find((e) => e.type === 'dispute.closed').data.data.object).toEqual({
      object: 'dispute',
      purchase_id: purchaseId,
      ...lost,
    });
    // An open status of the same second as the closing, handled after it, does not reopen it.
    const closing = stored[1].payload as { created: number; data: { object: Record<string, unknown> } };
    const sameSecond = JSON.stringify({
      id: `evt_same_second_${purchaseId}`,
      object: 'event',
      type: 'charge.dispute.updated',
      livemode: false,
      created: closing.created,
      data: { object: { ...closing.data.object, status: 'under_review' } },
    });
    expect((await deliverWebhook(app, sameSecond, app.container.config.PAYPROC_WEBHOOK_SECRET)).status).toBe(200);
    await disputeHandled(purchaseId, `evt_same_second_${purchaseId}`);
    expect(await app.container.db('purchase_disputes').where({ purchase_id: purchaseId }).first()).toMatchObject({ status: 'lost' });

    // The purchase shows it; the policy stays as it is: still issued, its certificates in force.
    const purchase = await call(app.baseUrl, `/api/v1/purchases/${purchaseId}`, { key: account.key });
    expect(purchase.status).toBe(200);
    expect(purchase.body.data.disputes).toEqual([lost]);
    expect(purchase.body.data.status).toBe('issued');
  }, 120_000);

  test('when a dispute is left open, then it is recorded needs_response; an older event arriving late changes nothing', async () => {
    const purchaseId = await issuedPurchase(app, account);
    const res = await helper(account.key, purchaseId, 'dispute');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ events: [{ type: 'charge.dispute.created' }], status: 'needs_response' });
    const before = await app.container.db('purchase_disputes').where({ payproc_dispute_id: res.body.data.dispute }).first();
    expect(before).toMatchObject({ status: 'needs_response', reason: 'fraudulent', closed_at: null });
    expect(Number(before.amount_minor)).toBe(Number((await purchaseRow(purchaseId)).total_minor));

    // The processor's own update of the same dispute, created a minute before the helper's event, arrives late.
    const stale = JSON.stringify({
      id: `evt_late_${purchaseId}`,
      object: 'event',
      type: 'charge.dispute.updated',
      livemode: false,
      created: Math.floor(before.status_at.getTime() / 1000) - 60,
      data: {
        object: {
          id: res.body.data.dispute,
          object: 'dispute',
          amount: 100,
          currency: 'usd',
          payment_intent: (await purchaseRow(purchaseId)).payment_intent_id,
          reason: 'general',
          status: 'under_review',
          created: Math.floor(before.opened_at.getTime() / 1000),
          metadata: {},
        },
      },
    });
    const late = await deliverWebhook(app, stale, app.container.config.PAYPROC_WEBHOOK_SECRET);
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ purchase_id: purchaseId, relayed: true });
    await disputeHandled(purchaseId, `evt_late_${purchaseId}`);
    expect(await app.container.db('purchase_disputes').where({ payproc_dispute_id: res.body.data.dispute }).first()).toMatchObject({
      status: 'needs_response',
      reason: 'fraudulent',
      amount_minor: before.amount_minor,
    });
  }, 120_000);

  test('when the purchase is not paid or the amount is above its total, then 400 and nothing is delivered', async () => {
    const purchaseId = await refusedBeforePayment('dispute', 'there is no payment to dispute');
    const paid = await issuedPurchase(app, account);
    const total = Number((await purchaseRow(paid)).total_minor);
    const tooMuch = await helper(account.key, paid, 'dispute', { amount: total + 1 });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error.details).toEqual([{ path: 'amount', message: `must be at most ${total}` }]);
    const badOutcome = await helper(account.key, paid, 'dispute', { outcome: 'maybe' });
    expect(badOutcome.status).toBe(400);
    expect(badOutcome.body.error.details[0].path).toBe('outcome');
    expect(await app.container.db('purchase_disputes').whereIn('purchase_id', [purchaseId, paid])).toEqual([]);
  }, 120_000);
});

describe('who may use the helpers, and bad input', () => {
  let purchaseId: number;
  beforeAll(async () => {
    ({ purchaseId } = await checkout(app, account));
  });

  test('when a live key of the same account calls them, then 404 ROUTE_NOT_FOUND, as if they did not exist', async () => {
    const rootAccountId = (await purchaseRow(purchaseId)).root_account_id;
    const live = (await createKey(app.container, { rootAccountId, mode: 'live' })).key;
    for (const action of ['pay', 'expire', 'refund', 'renew', 'dispute'] as const) {
      const res = await helper(live, purchaseId, action);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('ROUTE_NOT_FOUND');
    }
    expect((await purchaseRow(purchaseId)).status).toBe('awaiting_payment');
  });

  test('when another account’s test key names the purchase, or the purchase does not exist, then 404 NOT_FOUND', async () => {
    const other = await createRootAccount(app.container, 'Other Agency');
    const otherKey = (await createKey(app.container, { rootAccountId: other.id, mode: 'test' })).key;
    const theirs = await helper(otherKey, purchaseId, 'pay');
    expect(theirs.status).toBe(404);
    expect(theirs.body.error).toEqual({ code: 'NOT_FOUND', message: `Purchase ${purchaseId} not found` });
    for (const action of ['refund', 'renew', 'dispute'] as const) {
      const res = await helper(otherKey, purchaseId, action, { nonsense: true });
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: `Purchase ${purchaseId} not found` });
    }
    const missing = await helper(account.key, 2_000_000_000, 'expire');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    expect(Number((await app.container.db('payproc_events').where({ purchase_id: purchaseId }).count({ n: '*' }).first())!.n)).toBe(0);
  });

  test('when the id or body is malformed, then 400 VALIDATION_ERROR naming the problem and nothing is delivered', async () => {
    const badId = await helper(account.key, 'abc', 'pay');
    expect(badId.status).toBe(400);
    expect(badId.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('id must be a positive integer') });
    const badOutcome = await helper(account.key, purchaseId, 'pay', { outcome: 'maybe' });
    expect(badOutcome.status).toBe(400);
    expect(badOutcome.body.error.details[0].path).toBe('outcome');
    const extra = await helper(account.key, purchaseId, 'expire', { now: true });
    expect(extra.status).toBe(400);
    expect(extra.body.error.code).toBe('VALIDATION_ERROR');
    for (const amount of [0, 1.5, '100', -5]) {
      const badAmount = await helper(account.key, purchaseId, 'refund', { amount });
      expect(badAmount.status).toBe(400);
      expect(badAmount.body.error.details[0].path).toBe('amount');
    }
    const renewExtra = await helper(account.key, purchaseId, 'renew', { months: 2 });
    expect(renewExtra.status).toBe(400);
    expect(renewExtra.body.error.code).toBe('VALIDATION_ERROR');
    expect((await purchaseRow(purchaseId)).status).toBe('awaiting_payment');
  });
});
