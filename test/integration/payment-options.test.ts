/**
 * Payment options (b) and (c) of spec §4.4 step 3 with the real app, the Temporal dev server,
 * PostgreSQL and stripe-mock: the checkout link emailed to the buyer (read back from an
 * in-process SMTP server), and the saved-card charge `processUserDirectPayprocPayment`, never
 * charged twice (spec §7.2). The app talks to stripe-mock through the recording proxy, which can
 * drop a response after stripe-mock acted (a timeout), fail a request with a decline, and — since
 * stripe-mock keeps no state — answer payment intents as `succeeded` with the id the processor's
 * idempotency would replay; tests that rely on that say so in their names.
 */
import { createEventProductAccount, specialEventSelection } from '../helpers/purchases';
import { startSmtp } from '../helpers/smtp';
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createKey, createRootAccount } from '../helpers/fixtures';
import { eventually, startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';
import { answerPaymentIntentsAsPaid, startProcessorProxy, type ProcessorProxy } from '../helpers/processor-proxy';
import { formatMinorUnits } from '../../src/payments/checkout-link-email';
import { purchaseWorkflowId } from '../../workflows/contracts';
import { createSaleRepository } from '../../src/purchases/sale-repository';

/** The decoded text/plain part and the Subject header of a raw MIME message (enough for nodemailer's output). */
function readMail(raw: string): { subject: string; text: string } {
  const subject = /^Subject: (.*)$/m.exec(raw)?.[1] ?? '';
  const part = raw.split(/\r?\n--/).find((p) => /Content-Type: text\/plain/i.test(p)) ?? raw;
  const [headers, ...body] = part.split(/\r?\n\r?\n/);
  const content = body.join('\n\n');
  const encoding = /Content-Transfer-Encoding: (\S+)/i.exec(headers ?? '')?.[1]?.toLowerCase();
  if (encoding === 'base64') return { subject, text: Buffer.from(content, 'base64').toString() };
  if (encoding === 'quoted-printable') {
    const bytes = content.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    return { subject, text: Buffer.from(bytes, 'latin1').toString('utf8') };
  }
  return { subject, text: content };
}

interface Buyer {
  idp_accnt_uuid: string;
  access_token: string;
  email: string;
}

interface Env {
  app: TestApp;
  worker: TestWorker;
  proxy: ProcessorProxy;
  smtp: Awaited<ReturnType<typeof startSmtp>>;
  key: string;
  newBuyer(): Promise<Buyer>;
  /** adminValidateBuyerResponses for `buyer` (a new one by default): the purchase and its session. */
  checkout(
    buyer?: Buyer,
  ): Promise<{ buyer: Buyer; purchaseId: number; sessionId: string; url: string; amount: number; currency: string; expiresAt: string }>;
}

/** A worker on its own task queue, the app behind the proxy and the SMTP server, an account with a product. */
async function setUp(config: Record<string, string> = {}): Promise<Env> {
  const taskQueue = uniqueTaskQueue();
  const proxy = await startProcessorProxy();
  // The worker charges saved cards (the purchase workflow's update): it talks to the processor through the proxy too.
  const worker = await startTestWorker(taskQueue, {}, { PAYPROC_API_BASE: proxy.url, PURCHASE_RETRY_MAX_INTERVAL_SECONDS: '1', ...config });
  const smtp = await startSmtp();
  const app = await startTestApp({
    TEMPORAL_TASK_QUEUE: taskQueue,
    PAYPROC_API_BASE: proxy.url,
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    MAIL_FROM: 'Certificates <certificates@example.test>',
    ...config,
  });
  const { account, key, productId } = await createEventProductAccount(app, 'Lakeside Agency');
  let n = 0;
  const newBuyer = async (): Promise<Buyer> => {
    const email = `dana${n++}.${account.id}@example.com`;
    const res = await call(app.baseUrl, '/platform-seller-invites/newConnect', {
      method: 'POST',
      key,
      body: { buyer_first_name: 'Dana', buyer_last_name: 'Reyes', buyer_email: email, seller_slug: account.slug, query_param: '' },
    });
    return { idp_accnt_uuid: res.body.idp_accnt_uuid, access_token: res.body.access_token, email };
  };
  const checkout: Env['checkout'] = async (given) => {
    const buyer = given ?? (await newBuyer());
    const res = await call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
      method: 'POST',
      key,
      body: {
        idp_accnt_uuid: buyer.idp_accnt_uuid,
        access_token: buyer.access_token,
        selected_product_lines_to_purchase: [specialEventSelection(productId, 'Dana Reyes')],
      },
    });
    expect(res.status).toBe(200);
    return {
      buyer,
      purchaseId: res.body.purchase_id,
      sessionId: res.body.id,
      url: res.body.url,
      amount: res.body.amount_total,
      currency: res.body.currency,
      expiresAt: res.body.expires_at,
    };
  };
  return { app, worker, proxy, smtp, key, newBuyer, checkout };
}

async function tearDown(env: Env): Promise<void> {
  await env.app.close();
  await env.worker.shutdown();
  await env.proxy.close();
  await env.smtp.close();
}

const purchaseRow = (env: Env, id: number) => env.app.container.db('purchases').where({ id }).first();
const waitForStatus = (env: Env, id: number, status: string) =>
  eventually(async () => {
    const r = await purchaseRow(env, id);
    return r.status === status ? r : null;
  });

/** Pays the purchase the way a checkout webhook would: the workflow's `paid` signal. */
async function payThroughCheckout(env: Env, purchaseId: number): Promise<void> {
  await env.app.container.purchaseWorkflows.signalPayment(purchaseId, {
    eventId: `evt_checkout_${purchaseId}`,
    outcome: 'paid',
    paymentIntentId: `pi_checkout_${purchaseId}`,
  });
  await waitForStatus(env, purchaseId, 'issued');
}

describe('emailed checkout link (POST /public-quote/emailCheckoutLink)', () => {
  let env: Env;
  beforeAll(async () => {
    env = await setUp();
  });
  afterAll(() => tearDown(env));

  const email = (body: unknown) => call(env.app.baseUrl, '/public-quote/emailCheckoutLink', { method: 'POST', key: env.key, body });

  test('when the agent asks for the link, then the buyer receives the same session URL with the amount, the products and the expiry', async () => {
    const { buyer, purchaseId, sessionId, url, amount, currency, expiresAt } = await env.checkout();
    const before = env.smtp.messages.length;

    const res = await email({ idp_accnt_uuid: buyer.idp_accnt_uuid, access_token: buyer.access_token, purchase_id: purchaseId });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      purchase_id: purchaseId,
      emailed_to: buyer.email,
      checkout_session_id: sessionId,
      expires_at: expiresAt,
      emailed_at: expect.any(String),
      deduplicated: false,
    });
    expect(Math.abs(Date.parse(res.body.emailed_at) - Date.now())).toBeLessThan(60_000);
    expect(env.smtp.messages).toHaveLength(before + 1);
    const mail = env.smtp.messages.at(-1)!;
    expect(mail.to).toEqual([buyer.email]);
    expect(mail.from).toBe('certificates@example.test');
    const { subject, text } = readMail(mail.raw);
    const shown = formatMinorUnits(amount, currency);
    expect(shown).toMatch(/^\$\d+\.\d{2}$/);
    expect(subject).toBe(`Complete your insurance purchase: ${shown}`);
    expect(text).toContain(url);
    expect(text).toContain(`Total: ${shown}`);
    expect(text).toContain('Event Liability (2 days)');
    expect(text).toContain('Lakeside Agency');
    expect(text).toContain(new Date(expiresAt).toUTCString());
    // the link and the buyer's token never reach the logs
    expect(env.app.rawLogs()).not.toContain(url);
    expect(env.app.rawLogs()).not.toContain(buyer.access_token);
  });

  test('when the link is asked for again within the window, even three times at once, then the buyer gets one email and each answer names it', async () => {
    const { buyer, purchaseId, sessionId } = await env.checkout();
    const before = env.smtp.messages.length;
    const body = { idp_accnt_uuid: buyer.idp_accnt_uuid, access_token: buyer.access_token, purchase_id: purchaseId };
    const first = await email(body);
    expect(first.body).toMatchObject({ checkout_session_id: sessionId, deduplicated: false });
    const again = await Promise.all([email(body), email(body), email(body)]);
    expect(again.map((r) => [r.status, r.body.deduplicated, r.body.emailed_at])).toEqual(Array(3).fill([200, true, first.body.emailed_at]));
    expect(env.smtp.messages.filter((m) => m.to.includes(buyer.email))).toHaveLength(1);
    expect(env.smtp.messages).toHaveLength(before + 1);
  });

  test('when several calls for a purchase arrive at once with no earlier email, then exactly one email is sent', async () => {
    const { buyer, purchaseId } = await env.checkout();
    const body = { idp_accnt_uuid: buyer.idp_accnt_uuid, access_token: buyer.access_token, purchase_id: purchaseId };
    const answers = await Promise.all([email(body), email(body), email(body)]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(answers.filter((r) => r.body.deduplicated === false)).toHaveLength(1);
    expect(new Set(answers.map((r) => r.body.emailed_at)).size).toBe(1);
    expect(env.smtp.messages.filter((m) => m.to.includes(buyer.email))).toHaveLength(1);
  });

  test('when the window is 0 (configured off), then every call sends', async () => {
    const noDedupe = await startTestApp({
      TEMPORAL_TASK_QUEUE: env.worker.taskQueue,
      PAYPROC_API_BASE: env.proxy.url,
      SMTP_URL: `smtp://127.0.0.1:${env.smtp.port}`,
      MAIL_FROM: 'certificates@example.test',
      CHECKOUT_LINK_EMAIL_DEDUPE_SECONDS: '0',
    });
    try {
      const { buyer, purchaseId } = await env.checkout();
      const body = { idp_accnt_uuid: buyer.idp_accnt_uuid, access_token: buyer.access_token, purchase_id: purchaseId };
      for (let i = 0; i < 2; i++) {
        const res = await call(noDedupe.baseUrl, '/public-quote/emailCheckoutLink', { method: 'POST', key: env.key, body });
        expect(res.body.deduplicated).toBe(false);
      }
      expect(env.smtp.messages.filter((m) => m.to.includes(buyer.email))).toHaveLength(2);
    } finally {
      await noDedupe.close();
    }
  });

  test('when the purchase is another buyer’s or another account’s, then 404 NOT_FOUND and no email', async () => {
    const { purchaseId } = await env.checkout();
    const other = await env.newBuyer();
    const before = env.smtp.messages.length;
    const wrongBuyer = await email({ idp_accnt_uuid: other.idp_accnt_uuid, access_token: other.access_token, purchase_id: purchaseId });
    const missing = await email({ idp_accnt_uuid: other.idp_accnt_uuid, access_token: other.access_token, purchase_id: 2_000_000_000 });
    for (const r of [wrongBuyer, missing]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ code: 'NOT_FOUND', message: expect.any(String) });
    }
    expect(env.smtp.messages).toHaveLength(before);
  });

  test('when the body is invalid or the token is wrong, then 400 VALIDATION_ERROR or 401', async () => {
    const { buyer, purchaseId } = await env.checkout();
    const unknownField = await email({
      idp_accnt_uuid: buyer.idp_accnt_uuid,
      access_token: buyer.access_token,
      purchase_id: purchaseId,
      to: 'x@example.com',
    });
    const missing = await email({ idp_accnt_uuid: buyer.idp_accnt_uuid, access_token: buyer.access_token });
    const notInt = await email({ idp_accnt_uuid: buyer.idp_accnt_uuid, access_token: buyer.access_token, purchase_id: '1' });
    for (const r of [unknownField, missing, notInt]) {
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
    const badToken = await email({
      idp_accnt_uuid: buyer.idp_accnt_uuid,
      access_token: 'bat_not_a_real_token_at_all_0000000000000000',
      purchase_id: purchaseId,
    });
    expect(badToken.status).toBe(401);
    expect(badToken.body.code).toBe('ACCESS_TOKEN_INVALID');
  });

  test('when the purchase is already paid, then 400 INVALID_REQUEST, no email, and its closed workflow is not started again', async () => {
    const { buyer, purchaseId } = await env.checkout();
    await payThroughCheckout(env, purchaseId);
    const before = env.smtp.messages.length;

    const res = await email({ idp_accnt_uuid: buyer.idp_accnt_uuid, access_token: buyer.access_token, purchase_id: purchaseId });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'INVALID_REQUEST', message: `Purchase ${purchaseId} is already paid` });
    expect(env.smtp.messages).toHaveLength(before);
    // Below the service's own check: update-with-start never brings back a closed purchase workflow.
    const handle = env.app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId));
    const runBefore = (await handle.describe()).runId;
    await expect(
      env.app.container.purchaseWorkflows.startCheckout((await createSaleRepository(env.app.container.db).findById(purchaseId))!),
    ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect((await handle.describe()).runId).toBe(runBefore);
  });

  test('when the mail relay is unreachable, then 500 INTERNAL_ERROR without the message in the logs', async () => {
    const broken = await startTestApp({
      TEMPORAL_TASK_QUEUE: env.worker.taskQueue,
      PAYPROC_API_BASE: env.proxy.url,
      SMTP_URL: 'smtp://127.0.0.1:1',
    });
    try {
      const { buyer, purchaseId, url } = await env.checkout();
      const res = await call(broken.baseUrl, '/public-quote/emailCheckoutLink', {
        method: 'POST',
        key: env.key,
        body: { idp_accnt_uuid: buyer.idp_accnt_uuid, access_token: buyer.access_token, purchase_id: purchaseId },
      });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ code: 'INTERNAL_ERROR', message: 'The email could not be sent; retry with backoff' });
      expect(broken.rawLogs()).toContain('mail not sent');
      expect(broken.rawLogs()).not.toContain(url);
    } finally {
      await broken.close();
    }
  });
});

describe('saved-card charge (POST /public-quote/processUserDirectPayprocPayment)', () => {
  let env: Env;
  // stripe-mock answers every payment intent as unpaid with a new id; the processor would replay
  // the first answer for a repeated idempotency key. The proxy plays that part.
  let intentIds: Map<string, string>;
  beforeAll(async () => {
    // a short processor timeout, so a hanging request fails the call quickly
    env = await setUp({ PAYPROC_TIMEOUT_MS: '1500' });
    intentIds = answerPaymentIntentsAsPaid(env.proxy);
    env.proxy.patchResponses({ method: 'GET', pathPrefix: '/v1/payment_intents/', patch: (body) => ({ ...body, status: 'succeeded' }) });
  });
  afterAll(() => tearDown(env));

  const charge = (body: unknown) =>
    call(env.app.baseUrl, '/public-quote/processUserDirectPayprocPayment', { method: 'POST', key: env.key, body });
  /** The direct-payment body: `buyer`'s connection pays purchase `purchaseId` with the card `paymentMethodId`. */
  const chargeBody = (buyer: { idp_accnt_uuid: string; access_token: string }, purchaseId: number, paymentMethodId: string) => ({
    idp_accnt_uuid: buyer.idp_accnt_uuid,
    access_token: buyer.access_token,
    purchase_id: purchaseId,
    payment_method_id: paymentMethodId,
  });
  const creates = (purchaseId: number) =>
    env.proxy.requests.filter(
      (r) => r.method === 'POST' && r.path === '/v1/payment_intents' && r.params.get('metadata[purchase_id]') === String(purchaseId),
    );
  const chargeRows = (purchaseId: number) =>
    env.app.container.db('purchase_direct_charges').where({ purchase_id: purchaseId }).orderBy('attempt');

  test('when the first charge times out after reaching the processor, then the workflow re-sends it with the same idempotency key and the purchase is paid once (payment intent state from the patching proxy, since stripe-mock keeps none)', async () => {
    const { buyer, purchaseId, sessionId, amount } = await env.checkout();
    const body = chargeBody(buyer, purchaseId, 'pm_card_visa');
    env.proxy.dropResponseOnce({ method: 'POST', pathPrefix: '/v1/payment_intents', how: 'hang' });

    // The charge activity times out, and its retry settles the same attempt within the call.
    const second = await charge(body);

    const [sent] = creates(purchaseId);
    expect(sent!.idempotencyKey).toBe(`purchase-${purchaseId}-direct-charge`);
    expect(Object.fromEntries(sent!.params)).toMatchObject({
      amount: String(amount),
      currency: 'usd',
      payment_method: 'pm_card_visa',
      off_session: 'true',
      confirm: 'true',
      'metadata[purchase_id]': String(purchaseId),
    });
    const customerId = sent!.params.get('customer');
    expect(customerId).toMatch(/^cus_/);

    const piId = intentIds.get(`purchase-${purchaseId}-direct-charge`)!;
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ purchase_id: purchaseId, payment_intent: piId, status: 'succeeded' });
    // the retry is the same request under the same key (the processor replays it), not a new charge
    const both = creates(purchaseId);
    expect(both).toHaveLength(2);
    expect(both[1]!.idempotencyKey).toBe(both[0]!.idempotencyKey);
    expect(both[1]!.params.toString()).toBe(both[0]!.params.toString());
    // the buyer became a processor customer once, under the buyer's key
    const buyerId = (await env.app.container.db('buyers').where({ idp_accnt_uuid: buyer.idp_accnt_uuid }).first()).id;
    expect(
      env.proxy.requests.filter((r) => r.path === '/v1/customers' && r.idempotencyKey === `buyer-${buyerId}-test-customer`),
    ).toHaveLength(1);
    expect(await env.app.container.db('buyer_payproc_customers').where({ buyer_id: buyerId })).toMatchObject([
      { mode: 'test', payproc_customer_id: customerId },
    ]);

    const row = await waitForStatus(env, purchaseId, 'issued');
    expect(row.payment_intent_id).toBe(piId);
    expect(await chargeRows(purchaseId)).toMatchObject([{ attempt: 1, status: 'succeeded', payment_intent_id: piId }]);
    const result = await env.app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).result();
    expect(result).toMatchObject({ status: 'issued', paymentIntentId: piId });
    // the checkout link is closed so the buyer cannot pay a second time
    expect(env.proxy.requests.some((r) => r.method === 'POST' && r.path === `/v1/checkout/sessions/${sessionId}/expire`)).toBe(true);

    // a third call answers the recorded payment intent, and nothing reaches the processor
    const before = env.proxy.requests.length;
    const third = await charge(body);
    expect(third.status).toBe(200);
    expect(third.body).toEqual(second.body);
    expect(env.proxy.requests.length).toBe(before);
    expect((await purchaseRow(env, purchaseId)).paid_at).toEqual(row.paid_at);
  });

  test('when the connection is reset after the processor acted, then every resend — the processor library’s one automatic resend and the activity’s retry — carries the same idempotency key (payment intent state from the patching proxy)', async () => {
    const { buyer, purchaseId } = await env.checkout();
    const body = chargeBody(buyer, purchaseId, 'pm_card_visa');
    // stripe-node resends once on a reset connection even with retries off; drop that one too
    env.proxy.dropResponseOnce({ method: 'POST', pathPrefix: '/v1/payment_intents' });
    env.proxy.dropResponseOnce({ method: 'POST', pathPrefix: '/v1/payment_intents' });

    // The workflow's charge activity retries the unknown outcome with the same attempt.
    const second = await charge(body);
    expect(second.status).toBe(200);
    expect(second.body).toEqual({
      purchase_id: purchaseId,
      payment_intent: intentIds.get(`purchase-${purchaseId}-direct-charge`),
      status: 'succeeded',
    });
    const sent = creates(purchaseId);
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((r) => r.idempotencyKey))).toEqual(new Set([`purchase-${purchaseId}-direct-charge`]));
    expect(new Set(sent.map((r) => r.params.toString())).size).toBe(1);
    expect(await chargeRows(purchaseId)).toHaveLength(1);
    await waitForStatus(env, purchaseId, 'issued');
  });

  test('when the card is declined, then 400 CARD_ERROR, the same card is refused without a processor call, and another card is charged under a new key', async () => {
    const { buyer, purchaseId } = await env.checkout();
    const body = chargeBody(buyer, purchaseId, 'pm_card_chargeDeclined');
    env.proxy.failNext({
      method: 'POST',
      pathPrefix: '/v1/payment_intents',
      status: 402,
      body: {
        error: {
          type: 'card_error',
          code: 'card_declined',
          decline_code: 'insufficient_funds',
          message: 'Your card has insufficient funds.',
          payment_intent: { id: `pi_declined_${purchaseId}`, object: 'payment_intent' },
        },
      },
    });

    const declined = await charge(body);

    expect(declined.status).toBe(400);
    expect(declined.body).toEqual({
      code: 'CARD_ERROR',
      message: 'Payment processor: Your card has insufficient funds.',
      decline_code: 'insufficient_funds',
      payment_intent: `pi_declined_${purchaseId}`,
    });
    expect(await chargeRows(purchaseId)).toMatchObject([
      { attempt: 1, status: 'failed', failure_kind: 'card_error', failure_code: 'insufficient_funds' },
    ]);

    const sameCard = await charge(body);
    expect(sameCard.status).toBe(400);
    expect(sameCard.body.code).toBe('CARD_ERROR');
    expect(creates(purchaseId)).toHaveLength(1);

    const otherCard = await charge({ ...body, payment_method_id: 'pm_card_mastercard' });
    expect(otherCard.status).toBe(200);
    expect(otherCard.body.status).toBe('succeeded');
    expect(creates(purchaseId).map((r) => r.idempotencyKey)).toEqual([
      `purchase-${purchaseId}-direct-charge`,
      `purchase-${purchaseId}-direct-charge-2`,
    ]);
    await waitForStatus(env, purchaseId, 'issued');
  });

  test('when the purchase is another buyer’s or another account’s, then 404 NOT_FOUND and nothing reaches the processor', async () => {
    const { purchaseId } = await env.checkout();
    const other = await env.newBuyer();
    const otherAccount = await createRootAccount(env.app.container, 'Other Agency');
    const otherKey = (await createKey(env.app.container, { rootAccountId: otherAccount.id, mode: 'test' })).key;
    const outsider = await call(env.app.baseUrl, '/platform-seller-invites/newConnect', {
      method: 'POST',
      key: otherKey,
      body: {
        buyer_first_name: 'Ola',
        buyer_last_name: 'Berg',
        buyer_email: `ola.${otherAccount.id}@example.com`,
        seller_slug: otherAccount.slug,
        query_param: '',
      },
    });

    const wrongBuyer = await charge(chargeBody(other, purchaseId, 'pm_card_visa'));
    const wrongAccount = await call(env.app.baseUrl, '/public-quote/processUserDirectPayprocPayment', {
      method: 'POST',
      key: otherKey,
      body: chargeBody(outsider.body, purchaseId, 'pm_card_visa'),
    });

    for (const r of [wrongBuyer, wrongAccount]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ code: 'NOT_FOUND', message: `purchase ${purchaseId} not found` });
    }
    expect(creates(purchaseId)).toHaveLength(0);
  });

  test('when the body is invalid, then 400 VALIDATION_ERROR', async () => {
    const { buyer, purchaseId } = await env.checkout();
    const base = { idp_accnt_uuid: buyer.idp_accnt_uuid, access_token: buyer.access_token, purchase_id: purchaseId };
    const bodies = [
      base,
      { ...base, payment_method_id: 'visa' },
      { ...base, payment_method_id: 'pm_card_visa', amount: 1 },
      { ...base, purchase_id: 0, payment_method_id: 'pm_card_visa' },
    ];
    for (const b of bodies) {
      const r = await charge(b);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'VALIDATION_ERROR', details: expect.any(Array) });
    }
    expect(creates(purchaseId)).toHaveLength(0);
  });

  test('when the purchase was already paid through checkout, then 400 INVALID_REQUEST and nothing is charged', async () => {
    const { buyer, purchaseId } = await env.checkout();
    await payThroughCheckout(env, purchaseId);

    const res = await charge(chargeBody(buyer, purchaseId, 'pm_card_visa'));

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'INVALID_REQUEST', message: `Purchase ${purchaseId} is already paid` });
    expect(creates(purchaseId)).toHaveLength(0);
  });

  test('when the OpenAPI document is read, then both payment options are described', async () => {
    const doc = (await call(env.app.baseUrl, '/openapi.json')).body;
    expect(doc.paths['/public-quote/emailCheckoutLink'].post.responses).toHaveProperty('200');
    expect(doc.paths['/public-quote/processUserDirectPayprocPayment'].post.responses).toHaveProperty('503');
    expect(doc.components.schemas).toHaveProperty('DirectPaymentRequest');
  });
});
