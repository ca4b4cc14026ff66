/**
 * Priced endorsements on the real stack (API, Temporal dev server, worker with Chromium,
 * fake-gcs-server, stripe-mock behind the recording proxy, PostgreSQL): covered units added after
 * the sale are priced like a quote and collected before they take effect, by the buyer's saved
 * card (declined: nothing changes) or by a checkout link the agency sends (paid: applied in turn;
 * paid after the purchase changed: refunded in full); the new units get their certificates, and a
 * later cancellation refunds across the sale's and the endorsement's payment intents; on a taxed
 * product the day added is taxed at the sale's rates and a cancellation gives that tax back. The purchase
 * bought is two days, 2027-05-01 and 2027-05-02 (America/Chicago), at 20.00 a day.
 *
 * stripe-mock keeps no state: the proxy answers payment intents as the processor would (succeeded,
 * one id per idempotency key; a declined card for `pm_card_chargeDeclined`) and an endorsement's
 * checkout session as paid once the test says the buyer paid.
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import {
  chargeRefundedEvent,
  createQuotingAccountWithoutFreeLook,
  type QuotingAccount,
  deliverWebhook,
  endorsementSessionCompletedEvent,
  issuedPurchase,
  payByTestHelper,
  WEBHOOK_SECRET,
  processorEventRecorded,
} from '../helpers/purchases';
import { eventually } from '../helpers/worker';
import { answerPaymentIntentsAsPaid, type ProcessorProxy, type RecordedRequest } from '../helpers/processor-proxy';
import { quoteInTexas } from '../helpers/taxes';

jest.setTimeout(180_000);

const stack = useStack({
  proxy: true,
  workerEnv: { PURCHASE_RETRY_MAX_INTERVAL_SECONDS: '1' },
  // The suite polls until certificates are issued again after each change: no per-key rate limit.
  app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' },
});
let app: TestApp;
let proxy: ProcessorProxy;
let account: QuotingAccount;
/** Idempotency key → the payment intent id the processor answered. */
let intentIds: Map<string, string>;
/** Checkout sessions the buyer has paid (id → payment intent). */
const paidSessions = new Map<string, string>();

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });
const quote = (purchaseId: number, changes: unknown[]) =>
  api(`/purchases/${purchaseId}/endorsement_quote`, { method: 'POST', body: { changes } });
const endorse = (purchaseId: number, body: unknown) => api(`/purchases/${purchaseId}/endorse`, { method: 'POST', body });
const endorsement = async (purchaseId: number, quoteId: string) =>
  (await api(`/purchases/${purchaseId}/endorsements/${quoteId}`)).body.data;
const purchase = async (purchaseId: number) => (await api(`/purchases/${purchaseId}`)).body.data;
const addDay = (itemId: number, day: string) => ({ type: 'add_covered_units', purchase_item_id: itemId, start_date: day, end_date: day });
const certificateCount = async (purchaseId: number) =>
  Number((await app.container.db('certificates').where({ purchase_id: purchaseId }).whereNotNull('storage_key').count('* as n'))[0]!.n);
const posts = (path: string, match: (r: RecordedRequest) => boolean = () => true) =>
  proxy.requests.filter((r) => r.method === 'POST' && r.path === path && match(r));

/** The premium one more day of the purchase's first item costs: its unit price × its price factor, rounded once. */
async function dayPremium(purchaseId: number): Promise<number> {
  const item = await app.container.db('purchase_items').where({ purchase_id: purchaseId }).orderBy('position').first();
  return Math.round(Number(item.unit_price_minor) * Number(item.price_factor));
}

/**
 * The buyer pays the checkout link `sessionId` of endorsement quote `quoteId` with `paymentIntent`
 * (the session reads paid, and its signed `checkout.session.completed` webhook is accepted);
 * answers the endorsement once it is `outcome` (waits up to a minute).
 */
async function payLink(purchaseId: number, quoteId: string, sessionId: string, paymentIntent: string, outcome: 'applied' | 'refunded') {
  paidSessions.set(sessionId, paymentIntent);
  expect((await deliverWebhook(app, endorsementSessionCompletedEvent(sessionId, quoteId, purchaseId, paymentIntent))).status).toBe(200);
  return eventually(async () => {
    const e = await endorsement(purchaseId, quoteId);
    return e.status === outcome ? e : null;
  }, 60_000);
}

/** An issued purchase of two days: its id, its state as read, its first item and what one more day of it costs. */
async function issuedWithDayPremium() {
  const id = await issuedPurchase(app, account);
  const before = await purchase(id);
  return { id, before, itemId: before.items[0].id as number, premium: await dayPremium(id) };
}

beforeAll(async () => {
  ({ app, proxy } = stack);
  intentIds = answerPaymentIntentsAsPaid(proxy, { declined: (req) => req.params.get('payment_method') === 'pm_card_chargeDeclined' });
  proxy.patchResponses({
    method: 'GET',
    pathPrefix: '/v1/checkout/sessions/',
    patch: (body, req: RecordedRequest) => {
      const id = req.path.split('/').pop()!;
      const pi = paidSessions.get(id);
      return pi ? { ...body, id, status: 'complete', payment_status: 'paid', payment_intent: pi } : { ...body, id, status: 'open' };
    },
  });
  // No free look: a cancellation is priced pro rata.
  account = await createQuotingAccountWithoutFreeLook(app);
});

test('when a day is added and paid by the saved card, then the preview prices it like a quote, the charge is one off-session payment intent for the difference, the day and its certificate exist, the purchase’s amount_paid counts that payment, and cancelling every day refunds the endorsement’s payment first and the sale’s for the rest, never more than was paid', async () => {
  const { id, before, itemId, premium } = await issuedWithDayPremium();

  const q = await quote(id, [addDay(itemId, '2027-05-03')]);
  expect(q.status).toBe(201);
  expect(q.body.data).toMatchObject({
    status: 'quoted',
    premium_difference: premium,
    platform_fee_difference: 0,
    total_difference: premium,
    new_amount_total: before.amount_total + premium,
    reissues: [],
    added_covered_units: [{ purchase_item_id: itemId, local_label: '2027-05-03', premium }],
    payment: null,
  });
  const quoteId = q.body.data.id as string;

  // Without a payment the change is refused, and nothing is charged.
  const unpaid = await endorse(id, { quote_id: quoteId });
  expect(unpaid.status).toBe(402);
  expect(unpaid.body.error.code).toBe('PAYMENT_REQUIRED');

  const done = await endorse(id, { quote_id: quoteId, payment: { method: 'saved_card', payment_method_id: 'pm_card_visa' } });
  expect(done.status).toBe(200);
  expect(done.body.data).toMatchObject({ object: 'endorsement', status: 'applied', payment: { method: 'saved_card' } });
  const charges = posts('/v1/payment_intents', (r) => r.params.get('metadata[endorsement_quote_id]') === quoteId);
  expect(charges.length).toBeGreaterThanOrEqual(1);
  expect(new Set(charges.map((c) => c.idempotencyKey))).toEqual(new Set([`endorsement-${quoteId}-charge`]));
  expect(Object.fromEntries(charges[0]!.params)).toMatchObject({
    amount: String(premium),
    currency: 'usd',
    payment_method: 'pm_card_visa',
    off_session: 'true',
    confirm: 'true',
    'metadata[endorsed_purchase_id]': String(id),
  });
  // Never the purchase's own metadata key: the processor's events about it must not reach the purchase workflow.
  expect(charges[0]!.params.has('metadata[purchase_id]')).toBe(false);
  const endorsementPi = intentIds.get(`endorsement-${quoteId}-charge`)!;
  expect(done.body.data.payment.payment_intent).toBe(endorsementPi);

  const after = await purchase(id);
  expect(after.items[0].covered_units.map((u: { local_label: string }) => u.local_label)).toEqual([
    '2027-05-01',
    '2027-05-02',
    '2027-05-03',
  ]);
  expect(after.payment_intent).toBe(before.payment_intent);
  // What the buyer paid on the purchase is the sale's charge and the day's; nothing is owed.
  const paid = { amount_total: before.amount_total, amount_paid: before.amount_total + premium, amount_outstanding: 0 };
  expect(after).toMatchObject(paid);
  const listed = (await api('/purchases?pageSize=100')).body.data.find((p: { id: number }) => p.id === id);
  expect(listed).toMatchObject(paid);
  // The new day gets its own certificate (one holder), stored and announced by certificates.issued.
  await eventually(async () => ((await certificateCount(id)) === 3 ? true : null), 90_000);
  const issued = await eventually(async () => {
    const list = (await api('/events?type=certificates.issued')).body.data as Array<{ data: { object: { purchase_id?: number } } }>;
    const mine = list.filter((e) => JSON.stringify(e).includes(`"purchase_id":${id}`));
    return mine.length >= 2 ? mine : null;
  }, 60_000);
  expect(issued!.length).toBe(2);
  const ledger = await app.container.db('policy_transactions').where({ purchase_id: id, kind: 'endorsement' });
  expect(ledger).toMatchObject([
    { status: 'completed', premium_minor: String(premium), total_minor: String(premium), payment_intent_id: endorsementPi },
  ]);

  // Cancel all three days: the refund is the whole premium, split newest payment first.
  const cq = await api(`/purchases/${id}/cancellation_quote`, { method: 'POST', body: { requested_by: 'buyer' } });
  expect(cq.status).toBe(201);
  expect(cq.body.data.refund.premium).toBe(before.items[0].amount + premium);
  const refundTotal = cq.body.data.refund.total as number;
  const cancelled = await api(`/purchases/${id}/cancel`, { method: 'POST', body: { quote_id: cq.body.data.id } });
  expect(cancelled.status).toBe(200);
  const refunds = await eventually(async () => {
    const sent = posts('/v1/refunds', (r) => r.params.get('metadata[purchase_id]') === String(id));
    return new Set(sent.map((r) => r.idempotencyKey)).size >= 2 ? sent : null;
  }, 60_000);
  const byKey = new Map(refunds!.map((r) => [r.idempotencyKey, r]));
  const cancellationId = cancelled.body.data.id as number;
  expect(Object.fromEntries(byKey.get(`policy-transaction-${cancellationId}-refund`)!.params)).toMatchObject({
    payment_intent: endorsementPi,
    amount: String(premium),
  });
  expect(Object.fromEntries(byKey.get(`policy-transaction-${cancellationId}-refund-2`)!.params)).toMatchObject({
    payment_intent: before.payment_intent,
    amount: String(refundTotal - premium),
  });
  await eventually(async () => {
    const row = await app.container.db('policy_transactions').where({ id: cancellationId }).first();
    return row.status === 'completed' ? row : null;
  }, 60_000);
  const final = await purchase(id);
  expect(final).toMatchObject({ ...paid, amount_refunded: refundTotal });
  expect(final.amount_refunded).toBeLessThanOrEqual(final.amount_paid);
});

test('when an endorsement’s payment is partly refunded in the processor’s dashboard, then it is kept as a refund of that payment (the purchase’s own refunded amount and status unchanged), the same amount reported again adds nothing, and cancelling every day gives back only what is left: the endorsement’s remainder first, then the sale’s', async () => {
  const { id, before, itemId, premium } = await issuedWithDayPremium();
  const q = await quote(id, [addDay(itemId, '2027-05-03')]);
  expect(q.status).toBe(201);
  const quoteId = q.body.data.id as string;
  const done = await endorse(id, { quote_id: quoteId, payment: { method: 'saved_card', payment_method_id: 'pm_card_visa' } });
  expect(done.status).toBe(200);
  const endorsementPi = done.body.data.payment.payment_intent as string;
  const cancelAll = () => api(`/purchases/${id}/cancellation_quote`, { method: 'POST', body: { requested_by: 'buyer' } });
  const untouched = await cancelAll();
  expect(untouched.body.data.refund.total).toBe(before.amount_total + premium);

  // A quarter of the endorsement's charge refunded in the dashboard: first reported with no metadata
  // (found by its payment intent), then again with the endorsement's own metadata and the same amount.
  const dashboard = Math.floor(premium / 4);
  const reported = async (eventId: string, metadata?: Record<string, string>) => {
    const event = chargeRefundedEvent({
      id: eventId,
      chargeId: `ch_endorsement_${id}`,
      paymentIntent: endorsementPi,
      amountMinor: premium,
      amountRefundedMinor: dashboard,
      purchaseId: null,
      ...(metadata ? { metadata } : {}),
    });
    const res = await deliverWebhook(app, event);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ purchase_id: id, relayed: true });
    const recorded = await processorEventRecorded(app, id, eventId);
    return recorded.kind === 'refund' ? { refundedMinor: recorded.refundedMinor, refunded: recorded.refunded } : recorded;
  };
  await expect(reported(`evt_dashboard_${id}_a`)).resolves.toEqual({ refundedMinor: 0, refunded: false });
  await expect(reported(`evt_dashboard_${id}_b`, { endorsement_quote_id: quoteId, endorsed_purchase_id: String(id) })).resolves.toEqual({
    refundedMinor: 0,
    refunded: false,
  });
  const rows = await app.container.db('policy_transactions').where({ purchase_id: id, kind: 'refund' });
  expect(rows).toMatchObject([
    {
      status: 'completed',
      payment_intent_id: endorsementPi,
      premium_minor: String(dashboard),
      platform_fee_minor: '0',
      total_minor: String(dashboard),
      breakdown: [{ itemId, refundableMinor: dashboard }],
    },
  ]);
  // Read once the added day's certificates are stored (the purchase reads awaiting_certificates until then).
  const after = await eventually(async () => {
    const p = await purchase(id);
    return p.status === 'awaiting_certificates' ? null : p;
  }, 90_000);
  expect({ status: after.status, amount_refunded: after.amount_refunded }).toEqual({ status: 'issued', amount_refunded: 0 });

  // Cancelling every day: what was paid less the dashboard refund, the endorsement's remainder first.
  const cq = await cancelAll();
  expect(cq.status).toBe(201);
  expect(cq.body.data.refund.total).toBe(before.amount_total + premium - dashboard);
  const cancelled = await api(`/purchases/${id}/cancel`, { method: 'POST', body: { quote_id: cq.body.data.id } });
  expect(cancelled.status).toBe(200);
  const cancellationId = cancelled.body.data.id as number;
  const refunds = await eventually(async () => {
    const sent = posts('/v1/refunds', (r) => r.params.get('metadata[purchase_id]') === String(id));
    return new Set(sent.map((r) => r.idempotencyKey)).size >= 2 ? sent : null;
  }, 60_000);
  const byKey = new Map(refunds!.map((r) => [r.idempotencyKey, Object.fromEntries(r.params)]));
  expect(byKey.get(`policy-transaction-${cancellationId}-refund`)).toMatchObject({
    payment_intent: endorsementPi,
    amount: String(premium - dashboard),
  });
  expect(byKey.get(`policy-transaction-${cancellationId}-refund-2`)).toMatchObject({
    payment_intent: before.payment_intent,
    amount: String(before.amount_total),
  });
  expect(byKey.size).toBe(2);
});

test('when an endorsement’s charge is disputed, then the dispute (found by that charge’s payment intent, as a dispute carries no metadata of ours) is recorded on its purchase and shown with it', async () => {
  const { id, itemId, premium } = await issuedWithDayPremium();
  const q = await quote(id, [addDay(itemId, '2027-05-03')]);
  expect(q.status).toBe(201);
  const done = await endorse(id, { quote_id: q.body.data.id, payment: { method: 'saved_card', payment_method_id: 'pm_card_visa' } });
  expect(done.status).toBe(200);
  const endorsementPi = done.body.data.payment.payment_intent as string;
  const created = Math.floor(Date.now() / 1000);
  const event = JSON.stringify({
    id: `evt_endorsement_dispute_${id}`,
    object: 'event',
    type: 'charge.dispute.created',
    livemode: false,
    created,
    data: {
      object: {
        id: `dp_endorsement_${id}`,
        object: 'dispute',
        charge: `ch_endorsement_${id}`,
        payment_intent: endorsementPi,
        amount: premium,
        currency: 'usd',
        reason: 'fraudulent',
        status: 'needs_response',
        created,
        metadata: {},
      },
    },
  });
  const res = await deliverWebhook(app, event);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ purchase_id: id, relayed: true });
  const stored = await eventually(() => app.container.db('purchase_disputes').where({ purchase_id: id }).first(), 60_000);
  expect(stored).toMatchObject({
    payproc_dispute_id: `dp_endorsement_${id}`,
    payproc_charge_id: `ch_endorsement_${id}`,
    amount_minor: String(premium),
    status: 'needs_response',
  });
  expect((await purchase(id)).disputes).toEqual([
    expect.objectContaining({ id: `dp_endorsement_${id}`, charge: `ch_endorsement_${id}`, amount: premium, status: 'needs_response' }),
  ]);
});

test('when the saved card is declined, then the answer is CARD_ERROR, the endorsement ends payment_failed and the purchase keeps its two days', async () => {
  const id = await issuedPurchase(app, account);
  const itemId = (await purchase(id)).items[0].id as number;
  const q = (await quote(id, [addDay(itemId, '2027-05-03')])).body.data;
  const refused = await endorse(id, { quote_id: q.id, payment: { method: 'saved_card', payment_method_id: 'pm_card_chargeDeclined' } });
  expect(refused.status).toBe(400);
  expect(refused.body.error.code).toBe('CARD_ERROR');
  expect(await endorsement(id, q.id)).toMatchObject({
    status: 'payment_failed',
    payment: { method: 'saved_card', failure: { code: 'generic_decline' } },
  });
  expect((await purchase(id)).items[0].covered_units).toHaveLength(2);
  expect(await app.container.db('policy_transactions').where({ purchase_id: id, kind: 'endorsement' })).toEqual([]);
  // The same quote cannot be charged again: a new quote is needed.
  const again = await endorse(id, { quote_id: q.id, payment: { method: 'saved_card', payment_method_id: 'pm_card_visa' } });
  expect(again.status).toBe(409);
  expect(again.body.error.code).toBe('ENDORSEMENT_QUOTE_EXPIRED');
});

test('when the difference is sent as a checkout link, then the answer awaits payment with the link, and once the buyer pays the day is added; a link paid after the purchase changed is refunded in full and changes nothing', async () => {
  const id = await issuedPurchase(app, account);
  const sale = await purchase(id);
  const itemId = sale.items[0].id as number;
  const premium = await dayPremium(id);

  const q = (await quote(id, [addDay(itemId, '2027-05-03')])).body.data;
  const open = await endorse(id, { quote_id: q.id, payment: { method: 'checkout_link' } });
  expect(open.status).toBe(200);
  expect(open.body.data).toMatchObject({ status: 'awaiting_payment', payment: { method: 'checkout_link', paid_at: null } });
  expect(open.body.data.payment.checkout_url).toEqual(expect.any(String));
  const [session] = posts('/v1/checkout/sessions', (r) => r.params.get('metadata[endorsement_quote_id]') === q.id);
  expect(session!.idempotencyKey).toBe(`endorsement-${q.id}-checkout`);
  expect(session!.params.get('line_items[0][price_data][unit_amount]')).toBe(String(premium));
  expect(session!.params.has('metadata[purchase_id]')).toBe(false);
  const sessionId = (await app.container.db('endorsements').where({ quote_id: q.id }).first()).checkout_session_id as string;
  // An open link is neither paid nor owed.
  const awaiting = await purchase(id);
  expect(awaiting.items[0].covered_units).toHaveLength(2);
  expect(awaiting).toMatchObject({ amount_paid: sale.amount_total, amount_outstanding: 0 });

  // A second quote, for the 4th, paid by link later; meanwhile the 4th is added by the saved card.
  const late = (await quote(id, [addDay(itemId, '2027-05-04')])).body.data;
  expect((await endorse(id, { quote_id: late.id, payment: { method: 'checkout_link' } })).status).toBe(200);
  const lateSession = (await app.container.db('endorsements').where({ quote_id: late.id }).first()).checkout_session_id as string;

  // The buyer pays the first link.
  const applied = await payLink(id, q.id, sessionId, `pi_link_${id}`, 'applied');
  expect(applied!.payment).toMatchObject({ payment_intent: `pi_link_${id}`, paid_at: expect.any(String) });
  expect((await purchase(id)).items[0].covered_units.map((u: { local_label: string }) => u.local_label)).toContain('2027-05-03');

  // Its certificate is issued first: a quote made before that would be stale (the purchase's certificates change).
  await eventually(async () => ((await certificateCount(id)) === 3 ? true : null), 90_000);
  const direct = (await quote(id, [addDay(itemId, '2027-05-04')])).body.data;
  expect(
    (await endorse(id, { quote_id: direct.id, payment: { method: 'saved_card', payment_method_id: 'pm_card_visa' } })).body.data.status,
  ).toBe('applied');

  // The late link is paid now: the 4th is already covered, so its payment goes back and nothing changes.
  const refunded = await payLink(id, late.id, lateSession, `pi_late_${id}`, 'refunded');
  expect(refunded!.payment.failure.code).toBe('ENDORSEMENT_NOT_APPLIED');
  const [refund] = posts('/v1/refunds', (r) => r.idempotencyKey === `endorsement-${late.id}-refund`);
  expect(refund!.params.get('payment_intent')).toBe(`pi_late_${id}`);
  const labels = (await purchase(id)).items[0].covered_units.map((u: { local_label: string }) => u.local_label);
  expect(labels).toEqual(['2027-05-01', '2027-05-02', '2027-05-03', '2027-05-04']);
  expect(await app.container.db('policy_transactions').where({ purchase_id: id, kind: 'endorsement' })).toHaveLength(2);

  // The processor then reports that refund on the late charge: never applied, so the event is only stored.
  const amount = Number(refund!.params.get('amount'));
  const reported = await deliverWebhook(
    app,
    chargeRefundedEvent({
      id: `evt_late_refund_${id}`,
      chargeId: `ch_late_${id}`,
      paymentIntent: `pi_late_${id}`,
      amountMinor: amount,
      amountRefundedMinor: amount,
      purchaseId: null,
      metadata: { endorsement_quote_id: late.id, endorsed_purchase_id: String(id) },
    }),
  );
  expect(reported.status).toBe(200);
  expect(reported.body).toMatchObject({ purchase_id: id, relayed: false });
  expect(await app.container.db('policy_transactions').where({ purchase_id: id, kind: 'refund' })).toHaveLength(0);
  // Once the 4th day's certificate is stored (awaiting_certificates until then), the purchase is issued, not refunded.
  const settled = await eventually(async () => {
    const p = await purchase(id);
    return p.status === 'awaiting_certificates' ? null : p;
  }, 90_000);
  expect(settled.status).toBe('issued');
  // Paid: the sale and the two days added (the link paid late went back and counts in neither).
  expect(settled).toMatchObject({ amount_paid: sale.amount_total + 2 * premium, amount_outstanding: 0, amount_refunded: 0 });
});

test('when added units are malformed or clash, then the quote is refused in the envelope and nothing is stored', async () => {
  const id = await issuedPurchase(app, account);
  const itemId = (await purchase(id)).items[0].id as number;
  const cases: Array<[unknown[], number, string]> = [
    [[addDay(itemId, '2027-05-02')], 400, 'VALIDATION_ERROR'], // already covered
    [[addDay(itemId, '2020-01-01')], 400, 'VALIDATION_ERROR'], // in the past
    [[{ type: 'add_covered_units', purchase_item_id: itemId, start_date: '2027-05-03' }], 400, 'VALIDATION_ERROR'], // no end_date
    [
      [{ type: 'add_covered_units', purchase_item_id: itemId, trips: [{ start: '2027-05-03T08:00', end: '2027-05-04T08:00' }] }],
      400,
      'VALIDATION_ERROR',
    ], // trips on a per-day item
    [[addDay(999_999, '2027-05-03')], 404, 'NOT_FOUND'],
    [[addDay(itemId, '2027-05-03'), { type: 'named_insured', name: 'Kim Park LLC' }], 400, 'VALIDATION_ERROR'], // mixed with another kind
    [[addDay(itemId, '2027-05-03'), addDay(itemId, '2027-05-03')], 400, 'VALIDATION_ERROR'], // the same day twice
  ];
  for (const [changes, status, code] of cases) {
    const res = await quote(id, changes);
    expect({ changes, status: res.status, code: res.body.error?.code }).toEqual({ changes, status, code });
    expect(res.body.success).toBe(false);
  }
  expect(await app.container.db('endorsements').where({ purchase_id: id })).toEqual([]);
  // A quote with nothing to collect refuses a payment.
  const free = (await quote(id, [{ type: 'named_insured', name: 'Kim Park LLC' }])).body.data;
  const res = await endorse(id, { quote_id: free.id, payment: { method: 'checkout_link' } });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('VALIDATION_ERROR');
});

test('when the product prices additional insured at 5.00 a unit, then a holder asks for it through an endorsement: collected by the saved card before its certificates carry the mark, the holder cannot be removed while it is paid for, and removing the mark gives the 10.00 back from the endorsement’s payment', async () => {
  const terms = await api(`/products/${account.productId}/endorsement_terms`, {
    method: 'PATCH',
    body: { additional_insured_premium: 500, waiver_of_subrogation_premium: 150 },
  });
  expect(terms.status).toBe(200);
  expect(terms.body.data).toMatchObject({ additional_insured_premium: 500, waiver_of_subrogation_premium: 150, is_default: false });
  try {
    const id = await issuedPurchase(app, account);
    const before = await purchase(id);
    const venue = {
      name: 'Lakeside Pavilion LLC',
      address: { line1: '1 Shore Rd', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
    };
    // Asked for with the holder: refused, since its premium is collected first.
    const priced = await api(`/purchases/${id}/certificate_holders`, { method: 'POST', body: { ...venue, additional_insured: true } });
    expect(priced.status).toBe(402);
    expect(priced.body.error.code).toBe('PAYMENT_REQUIRED');
    expect(priced.body.error.message).toContain('certificate_holder_endorsements');
    const added = await api(`/purchases/${id}/certificate_holders`, { method: 'POST', body: venue });
    expect(added.status).toBe(201);
    const holderId = added.body.data.id as number;
    await eventually(async () => ((await certificateCount(id)) === 4 ? true : null), 90_000);

    const q = await quote(id, [{ type: 'certificate_holder_endorsements', certificate_holder_id: holderId, additional_insured: true }]);
    expect(q.status).toBe(201);
    expect(q.body.data).toMatchObject({
      premium_difference: 1000,
      total_difference: 1000,
      new_amount_total: before.amount_total + 1000,
      holder_endorsement_premiums: [
        { certificate_holder_id: holderId, endorsement: 'additional_insured', local_label: '2027-05-01', premium: 500 },
        { certificate_holder_id: holderId, endorsement: 'additional_insured', local_label: '2027-05-02', premium: 500 },
      ],
      refund: null,
    });
    expect(q.body.data.reissues.map((r: { certificate_holder_id: number }) => r.certificate_holder_id)).toEqual([holderId, holderId]);
    expect((await endorse(id, { quote_id: q.body.data.id })).status).toBe(402);
    const done = await endorse(id, { quote_id: q.body.data.id, payment: { method: 'saved_card', payment_method_id: 'pm_card_visa' } });
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ status: 'applied', payment: { method: 'saved_card' } });
    expect(done.body.data.reissued).toHaveLength(2);
    const paidPi = done.body.data.payment.payment_intent as string;
    expect(
      Object.fromEntries(posts('/v1/payment_intents', (r) => r.idempotencyKey === `endorsement-${q.body.data.id}-charge`)[0]!.params),
    ).toMatchObject({
      amount: '1000',
      'metadata[endorsed_purchase_id]': String(id),
    });
    const holders = (await api(`/purchases/${id}/certificate_holders`)).body.data as Array<{ id: number; additional_insured: boolean }>;
    expect(holders.find((h) => h.id === holderId)!.additional_insured).toBe(true);
    const [charged] = await app.container.db('policy_transactions').where({ purchase_id: id, kind: 'endorsement' });
    expect(charged).toMatchObject({ premium_minor: '1000', total_minor: '1000', payment_intent_id: paidPi });
    expect(charged.breakdown).toHaveLength(2);
    // The new versions (with the mark) are issued after the answer.
    await eventually(async () => ((await certificateCount(id)) === 6 ? true : null), 90_000);

    // Paid for on units not started: the holder stays until the mark is removed (its premium given back).
    const blocked = await api(`/purchases/${id}/certificate_holders/${holderId}`, { method: 'DELETE' });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.code).toBe('HOLDER_ENDORSEMENT_PAID');

    const down = await quote(id, [{ type: 'certificate_holder_endorsements', certificate_holder_id: holderId, additional_insured: false }]);
    expect(down.status).toBe(201);
    expect(down.body.data).toMatchObject({ premium_difference: -1000, platform_fee_difference: 0, total_difference: -1000, payment: null });
    const withPayment = await endorse(id, { quote_id: down.body.data.id, payment: { method: 'checkout_link' } });
    expect(withPayment.status).toBe(400);
    const given = await endorse(id, { quote_id: down.body.data.id });
    expect(given.status).toBe(200);
    expect(given.body.data).toMatchObject({ status: 'applied', total_difference: -1000, refund: { amount: 1000 } });
    // Newest payment first: the endorsement's own payment gives the 10.00 back, under the ledger row's key.
    const refunded = await eventually(async () => {
      const e = await endorsement(id, down.body.data.id);
      return e.refund?.status === 'submitted' ? e : null;
    }, 60_000);
    expect(refunded!.refund.refunds).toEqual([{ refund_id: expect.stringMatching(/^re_/), payment_intent: paidPi, amount: 1000 }]);
    const [, back] = await app.container.db('policy_transactions').where({ purchase_id: id, kind: 'endorsement' }).orderBy('id');
    const sent = posts('/v1/refunds', (r) => r.idempotencyKey === `policy-transaction-${back.id}-refund`);
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(Object.fromEntries(sent[0]!.params)).toMatchObject({ payment_intent: paidPi, amount: '1000' });
    expect(back).toMatchObject({ premium_minor: '-1000', platform_fee_minor: '0', total_minor: '-1000' });

    // Nothing paid for any more: the holder can go, and a cancellation prices the sale as sold (the 10.00 came back already).
    await eventually(async () => ((await certificateCount(id)) === 8 ? true : null), 90_000);
    expect((await api(`/purchases/${id}/certificate_holders/${holderId}`, { method: 'DELETE' })).status).toBe(200);
    const cq = await api(`/purchases/${id}/cancellation_quote`, { method: 'POST', body: { requested_by: 'buyer' } });
    expect(cq.status).toBe(201);
    expect(cq.body.data.refund.premium).toBe(before.items[0].amount);
  } finally {
    await api(`/products/${account.productId}/endorsement_terms`, {
      method: 'PATCH',
      body: { additional_insured_premium: 0, waiver_of_subrogation_premium: 0 },
    });
  }
});

test('when a day is added to a Texas-taxed purchase, then the endorsement charges the surplus-lines tax and stamping fee on the added premium at the sale’s rates, and cancelling every day gives back the sale’s and the endorsement’s tax', async () => {
  try {
    const sold = await quoteInTexas(app, account);
    expect(sold.status).toBe(200);
    const id = sold.body.purchase_id as number;
    expect((await payByTestHelper(app, account, id)).status).toBe(200);
    const before = await eventually(async () => {
      const p = await purchase(id);
      return p.status === 'issued' ? p : null;
    }, 90_000);
    const premium = await dayPremium(id);
    // Texas: surplus-lines tax 4.85 % and stamping fee 0.04 % of the day added, each rounded half up, as at the sale.
    const halfUp = (bps: number) => Math.floor((premium * bps + 5_000) / 10_000);
    const tax = halfUp(485) + halfUp(4);
    expect(before.amount_tax).toBeGreaterThan(0);

    const q = await quote(id, [addDay(before.items[0].id, '2027-05-03')]);
    expect(q.status).toBe(201);
    expect(q.body.data).toMatchObject({
      premium_difference: premium,
      platform_fee_difference: 0,
      tax_difference: tax,
      total_difference: premium + tax,
      new_amount_total: before.amount_total + premium + tax,
    });
    const quoteId = q.body.data.id as string;
    const done = await endorse(id, { quote_id: quoteId, payment: { method: 'saved_card', payment_method_id: 'pm_card_visa' } });
    expect(done.status).toBe(200);
    const [charge] = posts('/v1/payment_intents', (r) => r.params.get('metadata[endorsement_quote_id]') === quoteId);
    expect(charge!.params.get('amount')).toBe(String(premium + tax));
    expect(await app.container.db('policy_transactions').where({ purchase_id: id, kind: 'endorsement' })).toMatchObject([
      { premium_minor: String(premium), tax_minor: String(tax), total_minor: String(premium + tax) },
    ]);

    // Every day cancelled before it starts: all the premium back, and with it the sale's and the endorsement's tax.
    const cq = await api(`/purchases/${id}/cancellation_quote`, { method: 'POST', body: { requested_by: 'buyer' } });
    expect(cq.status).toBe(201);
    expect(cq.body.data.refund).toMatchObject({ premium: before.items[0].amount + premium, tax: before.amount_tax + tax });
  } finally {
    await api(`/products/${account.productId}/tax_settings`, { method: 'PATCH', body: { line_of_business: null } });
  }
});
