/**
 * The purchase workflow end to end (ARCHITECTURE §3 steps 3–7) with the Temporal dev server,
 * PostgreSQL and stripe-mock: quote → checkout session → signed webhook → payment recorded →
 * certificates child. Webhooks are signed with the processor library's test header helper,
 * exactly as the processor signs them (stripe-mock sends none).
 */
import Stripe from 'stripe';
import { startQuotingStack, type QuotingStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import { eventually } from '../helpers/worker';
import { purchaseWorkflowId, type PurchaseStatusView } from '../../workflows/contracts';
import { createSaleRepository } from '../../src/purchases/sale-repository';
import type { SessionState } from '../../activities/purchase';
import { startProcessorProxy } from '../helpers/processor-proxy';
import { WEBHOOK_SECRET, processorEvent, processorEventRecorded, sessionCompletedEvent } from '../helpers/purchases';

const SECRET = WEBHOOK_SECRET;
const stripe = new Stripe('sk_test_123');

type Env = QuotingStack;
/** An app and a worker on their own task queue, an account with a product and a buyer. */
const setUp = startQuotingStack;
const tearDown = (env: Env) => env.close();

async function checkout(env: Env): Promise<{ purchaseId: number; sessionId: string; paymentIntent: string | null }> {
  const res = await call(env.app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
    method: 'POST',
    key: env.key,
    body: await env.quoteBody(),
  });
  expect(res.status).toBe(200);
  return { purchaseId: res.body.purchase_id, sessionId: res.body.id, paymentIntent: res.body.payment_intent };
}

const sessionCompleted = sessionCompletedEvent;

async function deliver(env: Env, payload: string, secret = SECRET, timestamp?: number) {
  const signature = stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp ? { timestamp } : {}) });
  return call(env.app.baseUrl, '/webhooks/payproc', { method: 'POST', rawBody: payload, headers: { 'stripe-signature': signature } });
}

const purchaseRow = (env: Env, id: number) => env.app.container.db('purchases').where({ id }).first();
const statusOf = async (env: Env, id: number) =>
  env.app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(id)).query<PurchaseStatusView>('status');

describe('purchase workflow with webhooks', () => {
  let env: Env;
  beforeAll(async () => {
    env = await setUp();
  });
  afterAll(() => tearDown(env));

  test('when the signed checkout.session.completed arrives, then the payment is recorded and the certificates child runs', async () => {
    const { purchaseId, sessionId } = await checkout(env);
    expect((await purchaseRow(env, purchaseId)).status).toBe('awaiting_payment');
    expect((await statusOf(env, purchaseId)).status).toBe('awaiting_payment');

    const res = await deliver(env, sessionCompleted(purchaseId, sessionId));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true, duplicate: false, purchase_id: purchaseId, relayed: true });

    const row = await eventually(async () => {
      const r = await purchaseRow(env, purchaseId);
      return r.status === 'issued' ? r : null;
    });
    expect(row.payment_intent_id).toBe(`pi_paid_${purchaseId}`);
    expect(row.paid_at).toBeInstanceOf(Date);
    const result = await env.app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).result();
    expect(result).toMatchObject({ purchaseId, status: 'issued', paymentIntentId: `pi_paid_${purchaseId}` });
    // The purchase issued its certificates itself: no certificates child ran.
    expect(result.certificates).toMatchObject({ phase: 'issued', round: 0 });
    await expect(env.app.container.temporal.client.workflow.getHandle(`certificates-${purchaseId}`).describe()).rejects.toThrow(
      /not found/i,
    );
    const described = await env.app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).describe();
    expect(described.searchAttributes).toMatchObject({
      PurchaseId: [String(purchaseId)],
      PurchaseStatus: ['issued'],
      PaymentIntentId: [`pi_paid_${purchaseId}`],
    });
  });

  test('when the same webhook is delivered 5 times and events arrive in reverse order, then one payment is recorded', async () => {
    const { purchaseId, sessionId } = await checkout(env);
    const completed = sessionCompleted(purchaseId, sessionId, `evt_same_${purchaseId}`);
    const piSucceeded = processorEvent(
      'payment_intent.succeeded',
      { id: `pi_paid_${purchaseId}`, object: 'payment_intent', metadata: { purchase_id: String(purchaseId) } },
      `evt_pi_${purchaseId}`,
    );
    // reverse order: the payment intent's event first, then the session's, five times over
    const first = await deliver(env, piSucceeded);
    const repeats = await Promise.all([1, 2, 3, 4, 5].map(() => deliver(env, completed)));
    expect(first.body.duplicate).toBe(false);
    expect(repeats.every((r) => r.status === 200)).toBe(true);
    expect(repeats.filter((r) => r.body.duplicate === false)).toHaveLength(1);

    const row = await eventually(async () => {
      const r = await purchaseRow(env, purchaseId);
      return r.status === 'issued' ? r : null;
    });
    const events = await env.app.container.db('payproc_events').where({ purchase_id: purchaseId });
    expect(events.map((e) => e.id).sort()).toEqual([`evt_pi_${purchaseId}`, `evt_same_${purchaseId}`].sort());
    // later deliveries change nothing
    await deliver(env, completed);
    await deliver(
      env,
      processorEvent('checkout.session.expired', {
        id: sessionId,
        object: 'checkout.session',
        metadata: { purchase_id: String(purchaseId) },
      }),
    );
    const after = await purchaseRow(env, purchaseId);
    expect(after.paid_at).toEqual(row.paid_at);
    expect(after.status).toBe('issued');
  });

  test('when the signature is forged, stale or missing, then 400 WEBHOOK_SIGNATURE_INVALID and nothing is stored', async () => {
    const { purchaseId, sessionId } = await checkout(env);
    const payload = sessionCompleted(purchaseId, sessionId, `evt_forged_${purchaseId}`);
    const forged = await deliver(env, payload, 'whsec_not_the_secret');
    const stale = await deliver(env, payload, SECRET, Math.floor(Date.now() / 1000) - 3600);
    const unsigned = await call(env.app.baseUrl, '/webhooks/payproc', { method: 'POST', rawBody: payload });
    const tampered = await call(env.app.baseUrl, '/webhooks/payproc', {
      method: 'POST',
      rawBody: payload.replace('"paid"', '"unpaid"'),
      headers: { 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) },
    });
    for (const r of [forged, stale, unsigned, tampered]) {
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ code: 'WEBHOOK_SIGNATURE_INVALID', message: expect.any(String) });
      expect(r.headers.get('x-request-id')).toBeTruthy();
    }
    expect(await env.app.container.db('payproc_events').where({ id: `evt_forged_${purchaseId}` })).toEqual([]);
    expect((await purchaseRow(env, purchaseId)).status).toBe('awaiting_payment');
  });

  test('when a correctly signed body is not a processor event, then 400 VALIDATION_ERROR and nothing is stored', async () => {
    const bodies = [
      '{"id":"evt_shape_nul","type":"x","livemode":false,"data":{"object":{"name":"a\\u0000b"}}}',
      '{}',
      '[]',
      '{"id":"evt_shape_1"}',
      '{"id":"evt_shape_2","type":"checkout.session.completed","livemode":false}',
      '{"id":5,"type":[],"livemode":false,"data":{"object":null}}',
      '{"id":"evt_shape_3","type":"charge.refunded","livemode":false,"data":{"object":"x"}}',
      `{"id":"${'e'.repeat(300)}","type":"x","livemode":false,"data":{"object":{}}}`,
    ];
    for (const payload of bodies) {
      const r = await deliver(env, payload);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ code: 'VALIDATION_ERROR', message: expect.any(String) });
    }
    expect(await env.app.container.db('payproc_events').where('id', 'like', 'evt_shape_%')).toEqual([]);
  });

  test('when an event names an unknown purchase or an unhandled type, then 200 and nothing changes', async () => {
    const unknown = await deliver(env, sessionCompleted(2_000_000_000, 'cs_test_unknown'));
    expect(unknown.body).toMatchObject({ received: true, purchase_id: null, relayed: false });
    const other = await deliver(env, processorEvent('customer.created', { id: 'cus_1', object: 'customer' }));
    expect(other.body).toMatchObject({ received: true, relayed: false });
  });

  test('when charge.refunded events arrive (partial, then full, out of order and twice), then the refund is recorded once and the purchase ends refunded', async () => {
    const { purchaseId, sessionId } = await checkout(env);
    await deliver(env, sessionCompleted(purchaseId, sessionId));
    const paid = await eventually(async () => {
      const r = await purchaseRow(env, purchaseId);
      return r.status === 'issued' ? r : null;
    });
    const total = Number(paid.total_minor);
    // Charges carry no purchase metadata here: the purchase is found by the payment intent.
    const refunded = (id: string, amount: number) =>
      processorEvent(
        'charge.refunded',
        {
          id: `ch_${purchaseId}`,
          object: 'charge',
          payment_intent: paid.payment_intent_id,
          amount: total,
          amount_refunded: amount,
          refunded: amount === total,
          metadata: {},
        },
        id,
      );
    const full = refunded(`evt_refund_full_${purchaseId}`, total);
    const partial = refunded(`evt_refund_part_${purchaseId}`, 1000);
    const results = [await deliver(env, full), await deliver(env, full), await deliver(env, partial)];
    expect(results.map((r) => [r.status, r.body.purchase_id, r.body.duplicate])).toEqual([
      [200, purchaseId, false],
      [200, purchaseId, true],
      [200, purchaseId, false],
    ]);
    const row = await eventually(async () => {
      const r = await purchaseRow(env, purchaseId);
      return r.status === 'refunded' ? r : null;
    });
    await processorEventRecorded(env.app, purchaseId, `evt_refund_part_${purchaseId}`);
    const after = await purchaseRow(env, purchaseId);
    expect(Number(after.refunded_minor)).toBe(total); // the later, smaller event did not shrink it
    expect(after.refunded_at).toEqual(row.refunded_at);
    expect(after.status).toBe('refunded');
  });

  test('when the same quote request is replayed for the same purchase, then the workflow attaches and returns the same session', async () => {
    const { purchaseId, sessionId } = await checkout(env);
    const again = await env.app.container.purchaseWorkflows.startCheckout(
      (await createSaleRepository(env.app.container.db).findById(purchaseId))!,
    );
    expect(again.id).toBe(sessionId);
  });
});

describe('saving the card at checkout', () => {
  test('when the agent asks to save the card, then the session is for the buyer as a processor customer with off-session setup; otherwise not', async () => {
    const proxy = await startProcessorProxy();
    const env = await setUp({ PAYPROC_API_BASE: proxy.url });
    try {
      const sessions = () => proxy.requests.filter((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions');
      const saved = await call(env.app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
        method: 'POST',
        key: env.key,
        body: { ...(await env.quoteBody()), save_payment_method: true },
      });
      expect(saved.status).toBe(200);
      const customers = proxy.requests.filter((r) => r.method === 'POST' && r.path === '/v1/customers');
      expect(customers).toHaveLength(1);
      expect(customers[0]!.idempotencyKey).toMatch(/^buyer-\d+-test-customer$/);
      const withSave = sessions()[0]!;
      expect(withSave.params.get('customer')).toMatch(/^cus_/);
      expect(withSave.params.get('payment_intent_data[setup_future_usage]')).toBe('off_session');
      expect(withSave.params.has('customer_email')).toBe(false);

      const plain = await call(env.app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
        method: 'POST',
        key: env.key,
        body: await env.quoteBody(),
      });
      expect(plain.status).toBe(200);
      const without = sessions()[1]!;
      expect(without.params.has('customer')).toBe(false);
      expect(without.params.has('payment_intent_data[setup_future_usage]')).toBe(false);
      expect(without.params.get('customer_email')).toMatch(/@example\.com$/);
      expect(without.params.get('metadata[purchase_id]')).toBe(String(plain.body.purchase_id));
    } finally {
      await tearDown(env);
      await proxy.close();
    }
  });
});

describe('purchase workflow timing', () => {
  test('when nobody pays before the session TTL, then the session is expired and the purchase says so', async () => {
    const env = await setUp({ CHECKOUT_SESSION_TTL_SECONDS: '3', CHECKOUT_POLL_INTERVAL_SECONDS: '1' });
    try {
      const { purchaseId } = await checkout(env);
      const row = await eventually(async () => {
        const r = await purchaseRow(env, purchaseId);
        return r.status === 'expired' ? r : null;
      }, 20_000);
      expect(row.paid_at).toBeNull();
      expect((await statusOf(env, purchaseId)).status).toBe('expired');
    } finally {
      await tearDown(env);
    }
  });

  test('when the webhook is lost, then the periodic check finds the payment (processor state from a recording adapter, since stripe-mock keeps none)', async () => {
    const paidSessions = new Set<number>();
    /** Periodic checks answered while the session was still open, by purchase. */
    const openChecks = new Map<number, number>();
    const env = await setUp(
      { CHECKOUT_POLL_INTERVAL_SECONDS: '1' },
      {
        // stripe-mock always reports an open session; this adapter reports the session paid once
        // the test says the buyer paid, which is the processor state a real session would have.
        getCheckoutState: async (input: { purchaseId: number }): Promise<SessionState> => {
          if (paidSessions.has(input.purchaseId)) return { state: 'paid', paymentIntentId: `pi_polled_${input.purchaseId}` };
          openChecks.set(input.purchaseId, (openChecks.get(input.purchaseId) ?? 0) + 1);
          return { state: 'open' };
        },
      },
    );
    try {
      const { purchaseId } = await checkout(env);
      // A second check means the workflow took the first one's "open" and went on waiting.
      await eventually(async () => (openChecks.get(purchaseId) ?? 0) >= 2, 60_000);
      expect((await purchaseRow(env, purchaseId)).status).toBe('awaiting_payment');
      paidSessions.add(purchaseId); // the buyer pays; no webhook is ever delivered
      const row = await eventually(async () => {
        const r = await purchaseRow(env, purchaseId);
        return r.status === 'issued' ? r : null;
      });
      expect(row.payment_intent_id).toBe(`pi_polled_${purchaseId}`);
    } finally {
      await tearDown(env);
    }
  });
});
