/**
 * Subscription products (issue 5 "Subscription products"; issue 7 invoice data) against the real
 * servers. The checkout is created at stripe-mock through a recording proxy (the test reads the
 * subscription-mode request from it); the processor's events (the paid subscription checkout,
 * then the second invoice of the subscription) are signed webhooks built here, since stripe-mock
 * keeps no subscription state and sends no events.
 */
import { DateTime } from 'luxon';
import type { TestApp } from '../helpers/app';
import { eventually } from '../helpers/worker';
import { call } from '../helpers/fixtures';
import { deliverWebhook, subscriptionInvoicePaidEvent } from '../helpers/purchases';
import { eventSelection, getCertificates, quoteForNewBuyer, waitIssued, type Agency } from '../helpers/certificates';
import { payFirstPeriod, useMonthlyAgencyStack } from '../helpers/subscriptions';
import type { ProcessorProxy } from '../helpers/processor-proxy';

jest.setTimeout(180_000);

const stack = useMonthlyAgencyStack('EVM-SUB-1');
let proxy: ProcessorProxy;
let app: TestApp;
let agency: Agency;
let monthlyProductId: number;

beforeAll(() => {
  ({ proxy, app, agency, monthlyProductId } = stack);
});

const quote = async (selections: Record<string, unknown>[]) => (await quoteForNewBuyer(agency, selections)).quote;

test('given a recurring product, when it is bought and the second invoice is paid, then the next month gets its own certificates, once', async () => {
  const monthly = { ...eventSelection(agency, { start: '2027-05-01', end: '2027-05-02' }), product_line_template_id: monthlyProductId };
  const checkout = await quote([monthly]);
  expect(checkout.status).toBe(200);
  expect(checkout.body).toHaveProperty('subscription_invoice');
  const purchaseId = checkout.body.purchase_id as number;

  // The session was created in subscription mode with monthly prices (read from the proxy).
  const created = proxy.requests.filter(
    (r) => r.method === 'POST' && r.path === '/v1/checkout/sessions' && r.params.get('metadata[purchase_id]') === String(purchaseId),
  );
  expect(created).toHaveLength(1);
  expect(created[0]!.params.get('mode')).toBe('subscription');
  expect(created[0]!.params.get('line_items[0][price_data][recurring][interval]')).toBe('month');
  expect(created[0]!.params.get('subscription_data[metadata][purchase_id]')).toBe(String(purchaseId));
  expect(created[0]!.params.has('payment_intent_data[metadata][purchase_id]')).toBe(false);

  // First period: the paid subscription checkout.
  const subscription = `sub_${purchaseId}_${Date.now()}`;
  const first = await payFirstPeriod(app, agency, {
    purchaseId,
    sessionId: checkout.body.id,
    eventId: `evt_sub_paid_${purchaseId}`,
    subscription,
    invoice: `in_first_${purchaseId}`,
  });
  expect(first.certificates.map((c: any) => c.coverage_label)).toEqual(['2027-05-01', '2027-05-02']);

  // Second period: the subscription's billing-cycle invoice, delivered twice.
  const invoiceId = `in_cycle_${purchaseId}_${Date.now()}`;
  const renewalPi = `pi_renew_${purchaseId}`;
  const cycle = subscriptionInvoicePaidEvent({
    invoiceId,
    subscription,
    paymentIntent: renewalPi,
    purchaseId,
    amountPaid: checkout.body.amount_total,
  });
  const deliveries = [await deliverWebhook(app, cycle), await deliverWebhook(app, cycle)];
  expect(deliveries.map((d) => [d.status, d.body.purchase_id, d.body.duplicate])).toEqual([
    [200, purchaseId, false],
    [200, purchaseId, true],
  ]);

  const second = await waitIssued(agency, renewalPi);
  expect(second.certificate_count).toBe(2);
  expect(second.certificates.map((c: any) => c.coverage_label)).toEqual(['2027-06-01', '2027-06-02']);
  expect(second.certificates[0].coverage_starts_at).toBe('2027-06-01T05:00:00.000Z'); // local midnight, CDT
  expect(second.purchase_id).not.toBe(purchaseId);
  const renewals = await app.container.db('purchases').where({ renewal_of_purchase_id: purchaseId });
  expect(renewals.map((r) => [r.renewal_period, r.payproc_invoice_id, r.payment_intent_id, r.status])).toEqual([
    [1, invoiceId, renewalPi, 'issued'],
  ]);
  expect((await app.container.db('purchases').where({ id: purchaseId }).first('payproc_subscription_id')).payproc_subscription_id).toBe(
    subscription,
  );
  // The agency hears of it: one subscription.renewed event for the renewal purchase, then its
  // certificates.issued (published just after the certificates are marked issued: waited for).
  const events = await eventually(async () => {
    const rows = await app.container.db('agency_events').where({ purchase_id: renewals[0].id }).orderBy('created_at');
    return rows.length >= 2 ? rows : null;
  }).then((rows) => rows!);
  expect(events.map((e) => e.type).sort()).toEqual(['certificates.issued', 'subscription.renewed']);
  expect(events.find((e) => e.type === 'subscription.renewed').data.data.object).toMatchObject({
    object: 'purchase',
    id: renewals[0].id,
    renewal_of_purchase_id: purchaseId,
    subscription_id: subscription,
  });

  // The first period is unchanged and still answers for its own payment.
  expect((await getCertificates(agency, `pi_paid_${purchaseId}`)).body.certificate_count).toBe(2);

  // getInvoiceData of the renewal reads the invoice that paid it (stripe-mock answers the fixture).
  const invoices = await call(app.baseUrl, '/platform-agency-certs/getInvoiceData', {
    method: 'POST',
    key: agency.key,
    body: { idp_teammate_uuid: agency.teammateUuid, payment_intent: renewalPi },
  });
  expect(invoices.status).toBe(200);
  expect(invoices.body).toMatchObject({ purchase_id: second.purchase_id, status: 'invoiced' });
  expect(proxy.requests.some((r) => r.method === 'GET' && r.path.startsWith(`/v1/invoices/${invoiceId}`))).toBe(true);
});

test('given a recurring and a one-time product in one cart, when quoted, then it is refused with the reason', async () => {
  const monthly = { ...eventSelection(agency, { start: '2027-05-01', end: '2027-05-01' }), product_line_template_id: monthlyProductId };
  const once = eventSelection(agency, { start: '2027-05-01', end: '2027-05-01' });
  const res = await quote([monthly, once]);
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('VALIDATION_ERROR');
  expect(JSON.stringify(res.body.errors)).toContain('recurring (subscription) and one-time product lines cannot be bought together');
});

test('given a recurring product paid with a saved card, when charged, then a processor subscription on that card is created and its next invoice renews the purchase (subscription and payment intent state from the patching proxy)', async () => {
  const connected = await call(app.baseUrl, '/platform-seller-invites/newConnect', {
    method: 'POST',
    key: agency.key,
    body: {
      buyer_first_name: 'Ari',
      buyer_last_name: 'Stone',
      buyer_email: `ari.${Date.now()}@example.com`,
      seller_slug: agency.slug,
      query_param: '',
    },
  });
  const buyer = { idp_accnt_uuid: connected.body.idp_accnt_uuid, access_token: connected.body.access_token };
  const monthly = { ...eventSelection(agency, { start: '2027-07-01', end: '2027-07-01' }), product_line_template_id: monthlyProductId };
  const checkout = await call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
    method: 'POST',
    key: agency.key,
    body: { ...buyer, save_payment_method: true, selected_product_lines_to_purchase: [monthly] },
  });
  expect(checkout.status).toBe(200);
  const purchaseId = checkout.body.purchase_id as number;
  const subscriptionId = `sub_saved_${purchaseId}`;
  const paymentIntent = `pi_saved_sub_${purchaseId}`;
  // stripe-mock keeps no subscription state: the proxy answers as the processor would for a card that pays.
  proxy.patchResponses({
    method: 'POST',
    pathPrefix: '/v1/subscriptions',
    patch: (body) => ({
      ...body,
      id: subscriptionId,
      status: 'active',
      latest_invoice: {
        id: `in_first_${purchaseId}`,
        object: 'invoice',
        payments: {
          object: 'list',
          data: [{ object: 'invoice_payment', payment: { type: 'payment_intent', payment_intent: paymentIntent } }],
        },
      },
    }),
  });
  proxy.patchResponses({
    method: 'GET',
    pathPrefix: `/v1/payment_intents/${paymentIntent}`,
    patch: (body) => ({ ...body, id: paymentIntent, status: 'succeeded' }),
  });

  const charged = await call(app.baseUrl, '/public-quote/processUserDirectPayprocPayment', {
    method: 'POST',
    key: agency.key,
    body: { ...buyer, purchase_id: purchaseId, payment_method_id: 'pm_card_visa' },
  });
  expect(charged.status).toBe(200);
  expect(charged.body).toEqual({ purchase_id: purchaseId, payment_intent: paymentIntent, status: 'succeeded' });

  // A subscription, not a one-off charge: monthly prices on the saved card, off-session, once.
  const created = proxy.requests.filter(
    (r) => r.method === 'POST' && r.path === '/v1/subscriptions' && r.params.get('metadata[purchase_id]') === String(purchaseId),
  );
  expect(created).toHaveLength(1);
  expect(created[0]!.idempotencyKey).toBe(`purchase-${purchaseId}-direct-charge`);
  expect(Object.fromEntries(created[0]!.params)).toMatchObject({
    default_payment_method: 'pm_card_visa',
    off_session: 'true',
    payment_behavior: 'error_if_incomplete',
    'items[0][price_data][recurring][interval]': 'month',
    'items[0][price_data][unit_amount]': String(checkout.body.line_items[0].amount),
  });
  expect(created[0]!.params.get('customer')).toMatch(/^cus_/);
  expect(
    proxy.requests.some(
      (r) => r.method === 'POST' && r.path === '/v1/payment_intents' && r.params.get('metadata[purchase_id]') === String(purchaseId),
    ),
  ).toBe(false);

  const first = await waitIssued(agency, paymentIntent);
  expect(first.certificates.map((c: any) => c.coverage_label)).toEqual(['2027-07-01']);
  expect((await app.container.db('purchases').where({ id: purchaseId }).first('payproc_subscription_id')).payproc_subscription_id).toBe(
    subscriptionId,
  );

  // The next billing cycle of that subscription (found by its id) renews the purchase.
  const invoiceId = `in_cycle_saved_${purchaseId}`;
  const cycle = subscriptionInvoicePaidEvent({ invoiceId, subscription: subscriptionId, paymentIntent: `pi_renew_saved_${purchaseId}` });
  expect((await deliverWebhook(app, cycle)).body).toMatchObject({ purchase_id: purchaseId, relayed: true });
  const second = await waitIssued(agency, `pi_renew_saved_${purchaseId}`);
  expect(second.certificates.map((c: any) => c.coverage_label)).toEqual(['2027-08-01']);
});

test('given a monthly vendor insured every day from today, when the next month is renewed, then it starts exactly where the first month ends (local midnight), not at the time the first month was paid', async () => {
  // Today in the unit's zone: the first day is under way at payment, so it starts at the payment.
  const zone = 'America/Chicago';
  const today = DateTime.now().setZone(zone).startOf('day');
  const lastDay = today.plus({ months: 1 }).minus({ days: 1 });
  const monthly = {
    ...eventSelection(agency, { start: today.toISODate()!, end: lastDay.toISODate()! }),
    product_line_template_id: monthlyProductId,
  };
  const checkout = await quote([monthly]);
  expect(checkout.status).toBe(200);
  const purchaseId = checkout.body.purchase_id as number;
  const subscription = `sub_vendor_${purchaseId}_${Date.now()}`;
  await payFirstPeriod(
    app,
    agency,
    { purchaseId, sessionId: checkout.body.id, eventId: `evt_vendor_paid_${purchaseId}`, subscription },
    150_000,
  );

  const api = (path: string, init: { method?: string } = {}) => call(app.baseUrl, `/api/v1${path}`, { key: agency.key, ...init });
  const unitsOf = async (id: number) =>
    ((await api(`/purchases/${id}`)).body.data.items[0].covered_units as { starts_at: string; ends_at: string; local_label: string }[])
      .slice()
      .sort((a, b) => a.starts_at.localeCompare(b.starts_at));
  const first = await unitsOf(purchaseId);
  expect(first).toHaveLength(Math.round(lastDay.diff(today, 'days').days) + 1);
  // The precondition of the gap: the first day starts at the payment, not at local midnight.
  expect(Date.parse(first[0]!.starts_at)).toBeGreaterThan(today.toMillis());

  // The next month, through the test helper (the processor's billing-cycle invoice).
  const renewed = await api(`/test_helpers/purchases/${purchaseId}/renew`, { method: 'POST' });
  expect(renewed.status).toBe(200);
  const renewal = await waitIssued(agency, renewed.body.data.payment_intent, 150_000);
  const second = await unitsOf(renewal.purchase_id as number);
  const nextMonth = today.plus({ months: 1 });
  const monthAfter = today.plus({ months: 2 });
  expect(second[0]!.starts_at).toBe(first.at(-1)!.ends_at);
  expect(second[0]!.starts_at).toBe(nextMonth.toUTC().toISO());
  expect(second.at(-1)!.ends_at).toBe(monthAfter.toUTC().toISO());
  expect(second).toHaveLength(Math.round(monthAfter.diff(nextMonth, 'days').days));
  second.forEach((u, i) => {
    expect(DateTime.fromISO(u.starts_at, { zone }).toFormat('HH:mm:ss')).toBe('00:00:00');
    if (i > 0) expect(u.starts_at).toBe(second[i - 1]!.ends_at);
  });
  // The certificates print the same windows.
  expect(renewal.certificates.map((c: any) => c.coverage_starts_at).sort()[0]).toBe(first.at(-1)!.ends_at);
});
