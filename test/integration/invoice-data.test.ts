/**
 * getInvoiceData (spec §4.5, §7.2; issue 7) with the real app, the Temporal worker (which creates
 * the checkout sessions), PostgreSQL and stripe-mock behind the recording proxy.
 *
 * stripe-mock keeps no state: a retrieved session is always open with no invoice, and a retrieved
 * invoice is a fixture. Tests that need a paid session carrying an invoice have the proxy answer
 * them (and say so in their names): the invoice's lines are built from the checkout session the
 * app really sent (one line per line item at its unit amount), as the processor would. Payment is
 * recorded on the purchase row with knex (paid_at, payment_intent_id), as the webhook would.
 */
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createKey, createQuestionSet, createRootAccount } from '../helpers/fixtures';
import { specialEventSelection } from '../helpers/purchases';
import { startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';
import { startProcessorProxy, type ProcessorProxy, type RecordedRequest } from '../helpers/processor-proxy';
import { createAccountsRepository } from '../../src/accounts/repository';
import { SPECIAL_EVENT_LIABILITY } from '../../src/question-sets/examples';

const TEAMMATE = '/platform-agency-certs/getInvoiceData';
const ROOT = '/platform-agency-root-certs/getInvoiceData';
const PRODUCT_NAME = 'Event Liability';
/** The instant the simulated processor created the invoices (unix seconds). */
const INVOICED_AT = 1_795_000_000;
const isoOf = (s: number) => new Date(s * 1000).toISOString();
/** The answer for a purchase without an invoice: its id and payment intent, `status`, no invoices, and `receipt` (the processor's, or null). */
const withoutInvoice = (purchaseId: number, paymentIntent: string, status: string, receipt: Record<string, unknown> | null = null) => ({
  purchase_id: purchaseId,
  payment_intent: paymentIntent,
  status,
  invoices: [],
  receipt,
});

interface Purchase {
  purchaseId: number;
  sessionId: string;
  buyerUuid: string;
  amountTotal: number;
}

/** What the simulated processor says about a session the test marked paid (or expired). */
interface SessionState {
  status: 'complete' | 'expired';
  invoiceId: string | null;
}

interface Env {
  app: TestApp;
  worker: TestWorker;
  proxy: ProcessorProxy;
  accountId: number;
  /** Test key of teammate A, with a 5 % platform fee. */
  key: string;
  teammateUuid: string;
  otherTeammateUuid: string;
  rootUuid: string;
  sessions: Map<string, SessionState>;
  /** Invoices the simulated processor knows → their purchase and how many lines it embeds. */
  invoices: Map<string, { purchaseId: number; embedded: number }>;
  checkout(): Promise<Purchase>;
}

/** The recorded checkout-session create of the purchase (what the worker sent to the processor). */
function sessionCreate(proxy: ProcessorProxy, purchaseId: number): RecordedRequest | undefined {
  return proxy.requests.find(
    (r) => r.method === 'POST' && r.path === '/v1/checkout/sessions' && r.params.get('metadata[purchase_id]') === String(purchaseId),
  );
}

/** The invoice lines the processor makes of the session's line items. */
function linesOf(proxy: ProcessorProxy, purchaseId: number, invoiceId: string) {
  const sent = sessionCreate(proxy, purchaseId);
  if (!sent) throw new Error(`no checkout session was created for purchase ${purchaseId}`);
  const lines = [];
  for (let i = 0; sent.params.has(`line_items[${i}][quantity]`); i++) {
    const p = (k: string) => sent.params.get(`line_items[${i}]${k}`);
    const quantity = Number(p('[quantity]'));
    const product = p('[price_data][product]');
    lines.push({
      id: `il_${invoiceId}_${i}`,
      object: 'line_item',
      amount: Number(p('[price_data][unit_amount]')) * quantity,
      currency: p('[price_data][currency]'),
      description: product ? PRODUCT_NAME : p('[price_data][product_data][name]'),
      discount_amounts: [],
      discountable: true,
      discounts: [],
      invoice: invoiceId,
      livemode: false,
      metadata: {},
      parent: null,
      period: { start: INVOICED_AT, end: INVOICED_AT },
      pretax_credit_amounts: null,
      pricing: {
        type: 'price_details',
        price_details: { price: `price_${invoiceId}_${i}`, product: product ?? `prod_fee_${invoiceId}` },
        unit_amount_decimal: null,
      },
      quantity,
      quantity_decimal: null,
      subscription: null,
      subtotal: Number(p('[price_data][unit_amount]')) * quantity,
      taxes: [],
    });
  }
  return lines;
}

async function setUp(): Promise<Env> {
  const taskQueue = uniqueTaskQueue();
  const proxy = await startProcessorProxy();
  // The worker creates the checkout sessions: through the proxy too, so their requests are recorded.
  const worker = await startTestWorker(taskQueue, {}, { PAYPROC_API_BASE: proxy.url });
  const app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, PAYPROC_API_BASE: proxy.url });
  const { db } = app.container;
  const account = await createRootAccount(app.container, 'Harbor Agency');
  const accounts = createAccountsRepository(db);
  const teammate = await accounts.upsertAgent({ rootAccountId: account.id, name: 'Ana Ruiz', email: `ana.${account.id}@example.com` });
  const other = await accounts.upsertAgent({ rootAccountId: account.id, name: 'Ben Ode', email: `ben.${account.id}@example.com` });
  const teammateUuid = (await db('agents').where({ id: teammate.id }).first('idp_teammate_uuid')).idp_teammate_uuid as string;
  const otherTeammateUuid = (await db('agents').where({ id: other.id }).first('idp_teammate_uuid')).idp_teammate_uuid as string;
  const rootUuid = (await db('root_accounts').where({ id: account.id }).first('idp_root_account_uuid')).idp_root_account_uuid as string;
  const key = (await createKey(app.container, { rootAccountId: account.id, mode: 'test', agentId: teammate.id, platformFeeBps: 500 })).key;
  const set = await createQuestionSet(app.container, account.id, SPECIAL_EVENT_LIABILITY);
  const product = await call(app.baseUrl, '/api/v1/products', {
    method: 'POST',
    key,
    body: { customerName: PRODUCT_NAME, defaultPrice: 20, questionSetId: set.id },
  });
  expect(product.status).toBe(201);

  const sessions = new Map<string, SessionState>();
  const invoices = new Map<string, { purchaseId: number; embedded: number }>();
  proxy.patchResponses({
    method: 'GET',
    pathPrefix: '/v1/checkout/sessions/',
    patch: (body, req) => {
      const state = sessions.get(req.path.split('/')[4] ?? '');
      if (!state) return body;
      return { ...body, status: state.status, payment_status: state.status === 'complete' ? 'paid' : 'unpaid', invoice: state.invoiceId };
    },
  });
  proxy.patchResponses({
    method: 'GET',
    pathPrefix: '/v1/invoices/',
    patch: (body, req) => {
      const [, , , invoiceId = '', sub] = req.path.split('/');
      const known = invoices.get(invoiceId);
      if (!known) return body;
      const lines = linesOf(proxy, known.purchaseId, invoiceId);
      if (sub === 'lines') return { object: 'list', data: lines, has_more: false, url: req.path };
      const sum = lines.reduce((s, l) => s + l.amount, 0);
      return {
        ...body,
        id: invoiceId,
        number: `HARBOR-${known.purchaseId}`,
        status: 'paid',
        currency: 'usd',
        subtotal: sum,
        subtotal_excluding_tax: sum,
        total: sum,
        total_excluding_tax: sum,
        total_taxes: [],
        amount_paid: sum,
        amount_due: 0,
        amount_remaining: 0,
        created: INVOICED_AT,
        period_start: INVOICED_AT,
        period_end: INVOICED_AT,
        status_transitions: { finalized_at: INVOICED_AT, marked_uncollectible_at: null, paid_at: INVOICED_AT + 1, voided_at: null },
        hosted_invoice_url: `https://invoice.stripe.com/i/acct_test/${invoiceId}`,
        invoice_pdf: `https://pay.stripe.com/invoice/acct_test/${invoiceId}/pdf`,
        metadata: { purchase_id: String(known.purchaseId) },
        lines: {
          object: 'list',
          data: lines.slice(0, known.embedded),
          has_more: known.embedded < lines.length,
          url: `/v1/invoices/${invoiceId}/lines`,
        },
      };
    },
  });

  let n = 0;
  const checkout = async (): Promise<Purchase> => {
    const buyer = await call(app.baseUrl, '/platform-seller-invites/newConnect', {
      method: 'POST',
      key,
      body: {
        buyer_first_name: 'Noor',
        buyer_last_name: 'Haddad',
        buyer_email: `noor${n++}.${account.id}@example.com`,
        seller_slug: account.slug,
        query_param: '',
      },
    });
    expect(buyer.status).toBe(200);
    const res = await call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
      method: 'POST',
      key,
      body: {
        idp_accnt_uuid: buyer.body.idp_accnt_uuid,
        access_token: buyer.body.access_token,
        selected_product_lines_to_purchase: [specialEventSelection(product.body.data.id, 'Noor Haddad')],
      },
    });
    expect(res.status).toBe(200);
    return {
      purchaseId: res.body.purchase_id,
      sessionId: res.body.id,
      buyerUuid: buyer.body.idp_accnt_uuid,
      amountTotal: res.body.amount_total,
    };
  };
  return { app, worker, proxy, accountId: account.id, key, teammateUuid, otherTeammateUuid, rootUuid, sessions, invoices, checkout };
}

/** Records the payment on the purchase as the webhook would; returns its (unique) payment intent. */
async function markPaid(env: Env, purchaseId: number): Promise<string> {
  const paymentIntent = `pi_inv_${purchaseId}_${randomUUID().slice(0, 8)}`;
  await env.app.container
    .db('purchases')
    .where({ id: purchaseId })
    .update({ paid_at: env.app.container.db.fn.now(), payment_intent_id: paymentIntent });
  return paymentIntent;
}

/** A purchase paid through checkout whose session carries an invoice at the (simulated) processor. */
async function invoicedPurchase(env: Env, embedded = 10): Promise<Purchase & { paymentIntent: string; invoiceId: string }> {
  const p = await env.checkout();
  const paymentIntent = await markPaid(env, p.purchaseId);
  const invoiceId = `in_test_${p.purchaseId}`;
  env.sessions.set(p.sessionId, { status: 'complete', invoiceId });
  env.invoices.set(invoiceId, { purchaseId: p.purchaseId, embedded });
  return { ...p, paymentIntent, invoiceId };
}

describe('invoice data (POST /platform-agency-certs/getInvoiceData and /platform-agency-root-certs/getInvoiceData)', () => {
  let env: Env;
  beforeAll(async () => {
    env = await setUp();
  });
  afterAll(async () => {
    await env.app.close();
    await env.worker.shutdown();
    await env.proxy.close();
  });

  const post = (path: string, body: unknown, key: string | undefined = env.key) =>
    call(env.app.baseUrl, path, { method: 'POST', key, body });
  const sessionReads = (sessionId: string) =>
    env.proxy.requests.filter((r) => r.method === 'GET' && r.path === `/v1/checkout/sessions/${sessionId}`).length;

  test('when a one-time checkout session is created, then it asks the processor for an invoice carrying the purchase id, under the same idempotency key', async () => {
    const { purchaseId } = await env.checkout();

    const sent = sessionCreate(env.proxy, purchaseId);

    expect(sent).toBeDefined();
    expect(sent!.params.get('mode')).toBe('payment');
    expect(sent!.params.get('invoice_creation[enabled]')).toBe('true');
    expect(sent!.params.get('invoice_creation[invoice_data][metadata][purchase_id]')).toBe(String(purchaseId));
    expect(sent!.idempotencyKey).toBe(`purchase-${purchaseId}-checkout`);
  });

  test('when a one-time purchase is paid, then its invoice comes back with every line in minor units and the platform fee as its own line (paid session and invoice from the patching proxy)', async () => {
    const p = await invoicedPurchase(env);
    const row = await env.app.container.db('purchases').where({ id: p.purchaseId }).first();
    const [item] = await env.app.container.db('purchase_items').where({ purchase_id: p.purchaseId });
    const total = Number(row.total_minor);
    const fee = Number(row.platform_fee_minor);
    expect(fee).toBe(Math.round(Number(row.subtotal_minor) * 0.05));
    expect(fee).toBeGreaterThan(0);
    expect(total).toBe(p.amountTotal);

    const res = await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: p.paymentIntent, idp_accnt_uuid: p.buyerUuid });

    expect(res.status).toBe(200);
    const at = isoOf(INVOICED_AT);
    expect(res.body).toEqual({
      purchase_id: p.purchaseId,
      payment_intent: p.paymentIntent,
      status: 'invoiced',
      invoices: [
        {
          id: p.invoiceId,
          number: `HARBOR-${p.purchaseId}`,
          status: 'paid',
          currency: 'usd',
          subtotal: total,
          tax: 0,
          total,
          amount_paid: total,
          amount_due: 0,
          created: at,
          paid_at: isoOf(INVOICED_AT + 1),
          period_start: at,
          period_end: at,
          hosted_invoice_url: `https://invoice.stripe.com/i/acct_test/${p.invoiceId}`,
          invoice_pdf: `https://pay.stripe.com/invoice/acct_test/${p.invoiceId}/pdf`,
          lines: [
            {
              id: `il_${p.invoiceId}_0`,
              description: PRODUCT_NAME,
              quantity: 1,
              amount: Number(item.amount_minor),
              currency: 'usd',
              period_start: at,
              period_end: at,
              price_id: `price_${p.invoiceId}_0`,
              product_id: expect.stringMatching(/^prod_/),
            },
            {
              id: `il_${p.invoiceId}_1`,
              description: 'Platform fee',
              quantity: 1,
              amount: fee,
              currency: 'usd',
              period_start: at,
              period_end: at,
              price_id: `price_${p.invoiceId}_1`,
              product_id: `prod_fee_${p.invoiceId}`,
            },
          ],
        },
      ],
      receipt: null,
    });
    for (const amount of [res.body.invoices[0].total, ...res.body.invoices[0].lines.map((l: { amount: number }) => l.amount)])
      expect(Number.isInteger(amount)).toBe(true);
    // the same purchase named by its id reads the same
    const byId = await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, purchase_id: p.purchaseId });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(res.body);
  });

  test('when the invoice embeds only part of its lines, then the rest are read from the line-item list (paginated invoice from the patching proxy)', async () => {
    const p = await invoicedPurchase(env, 1);

    const res = await post(ROOT, { idp_root_account_uuid: env.rootUuid, payment_intent: p.paymentIntent });

    expect(res.status).toBe(200);
    expect(res.body.invoices[0].lines.map((l: { description: string }) => l.description)).toEqual([PRODUCT_NAME, 'Platform fee']);
    expect(env.proxy.requests.some((r) => r.method === 'GET' && r.path === `/v1/invoices/${p.invoiceId}/lines`)).toBe(true);
  });

  test('when the root account asks, then it sees its teammate’s purchase; another teammate, another account, the other mode and another buyer get 404 NOT_FOUND without a processor call (invoice from the patching proxy)', async () => {
    const p = await invoicedPurchase(env);
    const teammateView = await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: p.paymentIntent });
    expect(teammateView.status).toBe(200);

    const rootView = await post(ROOT, {
      idp_root_account_uuid: env.rootUuid,
      payment_intent: p.paymentIntent,
      idp_accnt_uuid: p.buyerUuid,
    });
    expect(rootView.status).toBe(200);
    expect(rootView.body).toEqual(teammateView.body);

    const c = env.app.container;
    const otherAccount = await createRootAccount(c, 'Other Agency');
    const outsider = await createAccountsRepository(c.db).upsertAgent({
      rootAccountId: otherAccount.id,
      name: 'Olu Berg',
      email: `olu.${otherAccount.id}@example.com`,
    });
    const outsiderUuid = (await c.db('agents').where({ id: outsider.id }).first('idp_teammate_uuid')).idp_teammate_uuid as string;
    const otherRootUuid = (await c.db('root_accounts').where({ id: otherAccount.id }).first('idp_root_account_uuid'))
      .idp_root_account_uuid as string;
    const otherKey = (await createKey(c, { rootAccountId: otherAccount.id, mode: 'test' })).key;
    const liveKey = (await createKey(c, { rootAccountId: env.accountId, mode: 'live' })).key;
    const readsBefore = sessionReads(p.sessionId);

    const hidden = [
      await post(TEAMMATE, { idp_teammate_uuid: env.otherTeammateUuid, payment_intent: p.paymentIntent }),
      await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: p.paymentIntent, idp_accnt_uuid: randomUUID() }),
      await post(ROOT, { idp_root_account_uuid: env.rootUuid, payment_intent: p.paymentIntent, idp_accnt_uuid: randomUUID() }),
      await post(TEAMMATE, { idp_teammate_uuid: outsiderUuid, payment_intent: p.paymentIntent }, otherKey),
      await post(ROOT, { idp_root_account_uuid: otherRootUuid, payment_intent: p.paymentIntent }, otherKey),
      await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: p.paymentIntent }, liveKey),
      await post(ROOT, { idp_root_account_uuid: env.rootUuid, payment_intent: p.paymentIntent }, liveKey),
    ];
    const unknown = await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: 'pi_does_not_exist_anywhere' });

    for (const r of hidden) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ code: 'NOT_FOUND', message: `payment_intent ${p.paymentIntent} not found` });
    }
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 'NOT_FOUND', message: 'payment_intent pi_does_not_exist_anywhere not found' });
    // another account's key cannot borrow this account's teammate or root ids
    const borrowedTeammate = await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: p.paymentIntent }, otherKey);
    const borrowedRoot = await post(ROOT, { idp_root_account_uuid: env.rootUuid, payment_intent: p.paymentIntent }, otherKey);
    expect(borrowedTeammate.status).toBe(404);
    expect(borrowedTeammate.body.code).toBe('TEAMMATE_NOT_FOUND');
    expect(borrowedRoot.status).toBe(404);
    expect(borrowedRoot.body.code).toBe('SELLER_NOT_FOUND');
    expect(sessionReads(p.sessionId)).toBe(readsBefore);
  });

  test('when the purchase id or payment intent is unknown, then 404 NOT_FOUND on both surfaces', async () => {
    const byIntent = await post(ROOT, { idp_root_account_uuid: env.rootUuid, payment_intent: 'pi_unknown_0000' });
    const byId = await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, purchase_id: 2_000_000_000 });

    expect(byIntent.status).toBe(404);
    expect(byIntent.body).toEqual({ code: 'NOT_FOUND', message: 'payment_intent pi_unknown_0000 not found' });
    expect(byId.status).toBe(404);
    expect(byId.body).toEqual({ code: 'NOT_FOUND', message: 'purchase 2000000000 not found' });
  });

  test('when the purchase is not paid yet, then 200 with no invoices and status unpaid (stripe-mock’s open session)', async () => {
    const p = await env.checkout();

    const res = await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, purchase_id: p.purchaseId });

    const row = await env.app.container.db('purchases').where({ id: p.purchaseId }).first();
    expect(res.status).toBe(200);
    expect(res.body).toEqual(withoutInvoice(p.purchaseId, row.payment_intent_id, 'unpaid'));
    expect(sessionReads(p.sessionId)).toBe(1);
  });

  test('when the session is paid but carries no invoice yet, then status pending; when paid by saved card (session expired), then not_invoiced with the processor’s receipt (session and payment intent state from the patching proxy)', async () => {
    const awaiting = await env.checkout();
    const awaitingIntent = await markPaid(env, awaiting.purchaseId);
    env.sessions.set(awaiting.sessionId, { status: 'complete', invoiceId: null });
    const savedCard = await env.checkout();
    const savedCardIntent = await markPaid(env, savedCard.purchaseId);
    env.sessions.set(savedCard.sessionId, { status: 'expired', invoiceId: null });
    // The processor's payment intent of the saved-card charge, its latest charge expanded (partly refunded since).
    const chargedAt = INVOICED_AT + 60;
    env.proxy.patchResponses({
      method: 'GET',
      pathPrefix: `/v1/payment_intents/${savedCardIntent}`,
      patch: (body) => {
        return {
          ...body,
          id: savedCardIntent,
          status: 'succeeded',
          amount: savedCard.amountTotal,
          latest_charge: {
            ...body.latest_charge,
            id: `ch_${savedCard.purchaseId}`,
            paid: true,
            status: 'succeeded',
            amount: savedCard.amountTotal,
            amount_refunded: 700,
            currency: 'usd',
            created: chargedAt,
            receipt_number: '1234-5678',
            receipt_url: `https://pay.stripe.com/receipts/payment/${savedCard.purchaseId}`,
          },
        };
      },
    });

    const pending = await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: awaitingIntent });
    const notInvoiced = await post(ROOT, { idp_root_account_uuid: env.rootUuid, payment_intent: savedCardIntent });

    expect(pending.status).toBe(200);
    expect(pending.body).toEqual(withoutInvoice(awaiting.purchaseId, awaitingIntent, 'pending'));
    expect(notInvoiced.status).toBe(200);
    expect(notInvoiced.body).toEqual(
      withoutInvoice(savedCard.purchaseId, savedCardIntent, 'not_invoiced', {
        charge_id: `ch_${savedCard.purchaseId}`,
        amount: savedCard.amountTotal,
        amount_refunded: 700,
        currency: 'usd',
        paid_at: isoOf(chargedAt),
        receipt_number: '1234-5678',
        receipt_url: `https://pay.stripe.com/receipts/payment/${savedCard.purchaseId}`,
      }),
    );
    // Only a purchase without an invoice asks for the payment intent.
    const intentReads = (id: string) => env.proxy.requests.filter((r) => r.method === 'GET' && r.path === `/v1/payment_intents/${id}`);
    expect([intentReads(awaitingIntent).length, intentReads(savedCardIntent).length]).toEqual([0, 1]);
    expect([...intentReads(savedCardIntent)[0]!.query].filter(([k]) => k.startsWith('expand'))).toEqual([['expand[0]', 'latest_charge']]);
  });

  test('when a purchase paid without an invoice has a payment intent the processor does not hold (a test helper’s made-up one), then not_invoiced with receipt null', async () => {
    const p = await env.checkout();
    const intent = await markPaid(env, p.purchaseId);
    env.sessions.set(p.sessionId, { status: 'expired', invoiceId: null });
    env.proxy.failNext({
      method: 'GET',
      pathPrefix: `/v1/payment_intents/${intent}`,
      status: 404,
      body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such payment_intent: '${intent}'` } },
    });

    const res = await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, purchase_id: p.purchaseId });

    expect(res.status).toBe(200);
    expect(res.body).toEqual(withoutInvoice(p.purchaseId, intent, 'not_invoiced'));
  });

  test('when the processor is unreachable, then 503 CONNECTION_ERROR as a bare error; when it fails, then 500 API_ERROR (failure from the proxy)', async () => {
    const p = await invoicedPurchase(env);
    const unreachable = await startTestApp({
      TEMPORAL_TASK_QUEUE: env.worker.taskQueue,
      PAYPROC_API_BASE: 'http://127.0.0.1:1',
      PAYPROC_TIMEOUT_MS: '1000',
    });
    try {
      const res = await call(unreachable.baseUrl, TEAMMATE, {
        method: 'POST',
        key: env.key,
        body: { idp_teammate_uuid: env.teammateUuid, payment_intent: p.paymentIntent },
      });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ code: 'CONNECTION_ERROR', message: 'Payment processor could not be reached' });
    } finally {
      await unreachable.close();
    }

    env.proxy.failNext({
      method: 'GET',
      pathPrefix: `/v1/invoices/${p.invoiceId}`,
      status: 500,
      body: { error: { type: 'api_error', message: 'Something went wrong on the processor' } },
    });
    const failed = await post(ROOT, { idp_root_account_uuid: env.rootUuid, payment_intent: p.paymentIntent });
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual({ code: 'API_ERROR', message: 'Payment processor returned an error' });
  });

  test('when the body is invalid, then 400 VALIDATION_ERROR with details', async () => {
    const bodies: Array<[string, unknown]> = [
      [TEAMMATE, {}],
      [TEAMMATE, { idp_teammate_uuid: env.teammateUuid }],
      [TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: 'pi_1', purchase_id: 1 }],
      [TEAMMATE, { idp_teammate_uuid: 'not-a-uuid', payment_intent: 'pi_1' }],
      [TEAMMATE, { idp_teammate_uuid: env.teammateUuid, purchase_id: 0 }],
      [TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: 'pi 1; drop' }],
      [TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: 'pi_1', idp_accnt_uuid: 'nope' }],
      [TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: 'pi_1', include_lines: true }],
      [ROOT, { idp_teammate_uuid: env.teammateUuid, payment_intent: 'pi_1' }],
      [ROOT, { idp_root_account_uuid: env.rootUuid, purchase_id: '12' }],
    ];
    for (const [path, body] of bodies) {
      const r = await post(path, body);
      expect([path, r.status]).toEqual([path, 400]);
      expect(r.body).toMatchObject({ code: 'VALIDATION_ERROR', details: expect.any(Array) });
    }
    const both = await post(TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: 'pi_1', purchase_id: 1 });
    expect(both.body.message).toContain('send exactly one of purchase_id, checkout_session_id or payment_intent');
  });

  test('when the API key is missing or unknown, then the gateway’s 403 Forbidden', async () => {
    for (const key of [undefined, 'ik_test_not_a_real_key_0000000000000000000000']) {
      for (const [path, body] of [
        [TEAMMATE, { idp_teammate_uuid: env.teammateUuid, payment_intent: 'pi_1' }],
        [ROOT, { idp_root_account_uuid: env.rootUuid, payment_intent: 'pi_1' }],
      ] as const) {
        const r = await call(env.app.baseUrl, path, { method: 'POST', key, body });
        expect(r.status).toBe(403);
        expect(r.body).toEqual({ message: 'Forbidden' });
      }
    }
  });

  test('when the OpenAPI document is read, then both surfaces describe getInvoiceData with minor units and the processor errors', async () => {
    const doc = (await call(env.app.baseUrl, '/openapi.json')).body;
    for (const path of [TEAMMATE, ROOT]) {
      const op = doc.paths[path].post;
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '403', '404', '500', '503']));
      expect(op.description).toContain('minor units');
    }
    expect(doc.components.schemas).toHaveProperty('GetInvoiceDataResponse');
    expect(doc.components.schemas.InvoiceData.properties.total.description).toContain('minor units');
    expect(doc.components.schemas.GetInvoiceDataResponse.example.invoices[0].lines).toHaveLength(2);
  });
});
