/**
 * Subscriptions as a resource and their cancellation (issue "Policy lifecycle I", subscriptions)
 * against the real servers: the API, the policy workflow on the Temporal dev server, the worker,
 * PostgreSQL, and stripe-mock behind a recording proxy (the test reads the processor calls from
 * it). The processor's own events (the paid subscription checkout, a renewal invoice, the
 * subscription's deletion) are signed webhooks built here, since stripe-mock keeps no
 * subscription state and sends no events. The monthly product covers 2027-05-01 and -02
 * (America/Chicago), its renewal the same days of June: nothing has started, so "now" refunds
 * every unit of the current period.
 */
import type { TestApp } from '../helpers/app';
import { eventually } from '../helpers/worker';
import { call } from '../helpers/fixtures';
import { deliverWebhook, processorEvent, subscriptionInvoicePaidEvent, unitStatesAndVoided } from '../helpers/purchases';
import { eventSelection, quoteForNewBuyer, waitIssued, type Agency } from '../helpers/certificates';
import { payFirstPeriod, useMonthlyAgencyStack } from '../helpers/subscriptions';
import type { ProcessorProxy } from '../helpers/processor-proxy';

jest.setTimeout(180_000);

const stack = useMonthlyAgencyStack('EVM-SUB-2');
let proxy: ProcessorProxy;
let app: TestApp;
let agency: Agency;
let monthlyProductId: number;

beforeAll(async () => {
  ({ proxy, app, agency, monthlyProductId } = stack);
  await api(`/products/${monthlyProductId}/cancellation_terms`, { method: 'PATCH', body: { free_look_days: 0 } });
});

const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: agency.key, ...init });
/** The adminValidateBuyerResponses answer for a new buyer of one selection. */
const quote = async (selection: Record<string, unknown>) => (await quoteForNewBuyer(agency, [selection])).quote;
/** The monthly product for 2027-05-01 to `end`. */
const monthlySelection = (end: string) => ({
  ...eventSelection(agency, { start: '2027-05-01', end }),
  product_line_template_id: monthlyProductId,
});
const subscriptionEvents = async (firstPurchaseId: number) =>
  (
    await app.container.db('agency_events').where({ purchase_id: firstPurchaseId, type: 'subscription.cancelled' }).orderBy('created_at')
  ).map((e) => e.data.data.object);

/** A monthly subscription bought and paid (its first period issued); optionally its second period paid too. */
async function paidSubscription(renewed = false): Promise<{ purchaseId: number; subscription: string; renewalId: number | null }> {
  const checkout = await quote(monthlySelection('2027-05-02'));
  if (checkout.status !== 200) throw new Error(`quote: ${checkout.status} ${checkout.text}`);
  const purchaseId = checkout.body.purchase_id as number;
  const subscription = `sub_cancel_${purchaseId}_${Date.now()}`;
  await payFirstPeriod(app, agency, { purchaseId, sessionId: checkout.body.id, eventId: `evt_sub_paid_${purchaseId}`, subscription });
  if (!renewed) return { purchaseId, subscription, renewalId: null };
  const invoiceId = `in_cycle_${purchaseId}`;
  const cycle = subscriptionInvoicePaidEvent({
    invoiceId,
    subscription,
    paymentIntent: `pi_renew_${purchaseId}`,
    purchaseId,
    amountPaid: checkout.body.amount_total,
  });
  expect((await deliverWebhook(app, cycle)).status).toBe(200);
  const renewal = await waitIssued(agency, `pi_renew_${purchaseId}`);
  return { purchaseId, subscription, renewalId: renewal.purchase_id as number };
}

test('when a subscription is cancelled at period end, then the processor stops renewing it, the period stays covered, the agency hears of it once, and asking again changes nothing', async () => {
  const { purchaseId, subscription } = await paidSubscription();
  const listed = await api('/subscriptions?status=active&pageSize=100');
  expect(listed.status).toBe(200);
  expect(listed.body.data.map((s: { id: number }) => s.id)).toContain(purchaseId);
  expect((await api(`/subscriptions/${purchaseId}`)).body.data).toMatchObject({
    object: 'subscription',
    id: purchaseId,
    status: 'active',
    processor_subscription_id: subscription,
    cancel_at_period_end: false,
    current_period_purchase_id: purchaseId,
    periods: [{ period: 1, purchase_id: purchaseId, status: 'issued' }],
  });

  const res = await api(`/subscriptions/${purchaseId}/cancel`, { method: 'POST', body: { when: 'at_period_end' } });
  expect(res.status).toBe(200);
  // What will happen, not "cancelled": the month from 2027-05-01 ends on the 31st, active until then.
  expect(res.body.message).toBe('Subscription will end at the end of the current period on 2027-05-31');
  expect(res.body.data).toMatchObject({
    status: 'active',
    cancel_at_period_end: true,
    cancelled_by: 'agency',
    ended_at: null,
    cancellation: null,
  });
  const calls = () => proxy.requests.filter((r) => r.method === 'POST' && r.path === `/v1/subscriptions/${subscription}`);
  expect(calls()).toHaveLength(1);
  expect(calls()[0]!.params.get('cancel_at_period_end')).toBe('true');
  const purchase = (await api(`/purchases/${purchaseId}`)).body.data;
  expect(purchase.items[0].covered_units.map((u: { state: string }) => u.state)).toEqual(['active', 'active']);
  expect(await subscriptionEvents(purchaseId)).toEqual([
    expect.objectContaining({ object: 'subscription', id: purchaseId, cancel_at_period_end: true, ended_at: null }),
  ]);

  const again = await api(`/subscriptions/${purchaseId}/cancel`, { method: 'POST', body: {} });
  expect(again.body.data).toMatchObject({ cancel_at_period_end: true, cancellation: null });
  expect(again.body.message).toBe(res.body.message);
  expect(calls()).toHaveLength(1);
  expect(await subscriptionEvents(purchaseId)).toHaveLength(1);
});

test('when a renewed subscription is cancelled now, then it ends at the processor and the current period’s unstarted days are refunded and voided, the first period untouched', async () => {
  const { purchaseId, subscription, renewalId } = await paidSubscription(true);
  const res = await api(`/subscriptions/${purchaseId}/cancel`, { method: 'POST', body: { when: 'now', reason: 'Venue closed' } });
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({
    status: 'cancelled',
    ended_at: expect.any(String),
    cancelled_by: 'agency',
    current_period_purchase_id: renewalId,
  });
  expect(res.body.data.periods.map((p: { purchase_id: number }) => p.purchase_id)).toEqual([purchaseId, renewalId]);
  expect(res.body.data.cancellation).toMatchObject({
    purchase_id: renewalId,
    requested_by: 'agency',
    reason: 'Venue closed',
    refund: { total: expect.any(Number) },
  });
  expect(res.body.data.cancellation.refund.total).toBeGreaterThan(0);
  expect(proxy.requests.filter((r) => r.method === 'DELETE' && r.path === `/v1/subscriptions/${subscription}`)).toHaveLength(1);

  const renewal = await eventually(async () => {
    const p = (await api(`/purchases/${renewalId}`)).body.data;
    return p.cancellations[0]?.status === 'completed' ? p : null;
  });
  expect(unitStatesAndVoided(renewal)).toEqual([
    ['cancelled', true],
    ['cancelled', true],
  ]);
  expect(renewal.amount_refunded).toBe(res.body.data.cancellation.refund.total);
  const first = (await api(`/purchases/${purchaseId}`)).body.data;
  expect(first.items[0].covered_units.map((u: { state: string }) => u.state)).toEqual(['active', 'active']);
  expect(await subscriptionEvents(purchaseId)).toEqual([expect.objectContaining({ status: 'cancelled', cancelled_by: 'agency' })]);

  const twice = await api(`/subscriptions/${purchaseId}/cancel`, { method: 'POST', body: { when: 'now' } });
  expect([twice.status, twice.body.error.code]).toEqual([409, 'SUBSCRIPTION_ALREADY_CANCELLED']);
  expect(await app.container.db('policy_transactions').where({ purchase_id: renewalId }).count({ n: '*' }).first()).toEqual({ n: '1' });
});

test('when the processor ends a subscription by itself, then it is shown cancelled by the processor and the agency hears of it once, however often the event comes', async () => {
  const { purchaseId, subscription } = await paidSubscription();
  const endedAt = Math.floor(Date.now() / 1000);
  const deleted = processorEvent(
    'customer.subscription.deleted',
    {
      id: subscription,
      object: 'subscription',
      status: 'canceled',
      cancel_at_period_end: false,
      ended_at: endedAt,
      metadata: { purchase_id: String(purchaseId) },
    },
    `evt_sub_deleted_${purchaseId}`,
  );
  const deliveries = [await deliverWebhook(app, deleted), await deliverWebhook(app, deleted)];
  expect(deliveries.map((d) => [d.status, d.body.relayed, d.body.purchase_id])).toEqual([
    [200, true, purchaseId],
    [200, true, purchaseId],
  ]);
  const ended = await eventually(async () => {
    const s = (await api(`/subscriptions/${purchaseId}`)).body.data;
    return s.status === 'cancelled' ? s : null;
  });
  expect(ended).toMatchObject({ cancelled_by: 'processor', ended_at: new Date(endedAt * 1000).toISOString() });
  await eventually(async () => (await subscriptionEvents(purchaseId)).length === 1);
  expect((await subscriptionEvents(purchaseId))[0]).toMatchObject({ status: 'cancelled', cancelled_by: 'processor' });
  // No refund: the processor ending it does not cancel the paid period.
  expect((await api(`/purchases/${purchaseId}`)).body.data.cancellations).toEqual([]);
});

test('when a subscription is asked that is not one, or was never paid, then the answer is 404 or 409 and nothing is called at the processor', async () => {
  const before = proxy.requests.filter((r) => r.path.startsWith('/v1/subscriptions')).length;
  const oneTime = await quote(eventSelection(agency, { start: '2027-05-01', end: '2027-05-01' }));
  expect(oneTime.status).toBe(200);
  const notOne = await api(`/subscriptions/${oneTime.body.purchase_id}`);
  expect([notOne.status, notOne.body.error.code]).toEqual([404, 'NOT_FOUND']);
  const unpaid = await quote(monthlySelection('2027-05-01'));
  const refused = await api(`/subscriptions/${unpaid.body.purchase_id}/cancel`, { method: 'POST', body: { when: 'now' } });
  expect([refused.status, refused.body.error.code]).toEqual([409, 'SUBSCRIPTION_NOT_ACTIVE']);
  expect((await api(`/subscriptions/${unpaid.body.purchase_id}`)).body.data.status).toBe('incomplete');
  const bad = await api(`/subscriptions/${unpaid.body.purchase_id}/cancel`, { method: 'POST', body: { when: 'tomorrow' } });
  expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  expect(proxy.requests.filter((r) => r.path.startsWith('/v1/subscriptions')).length).toBe(before);
});
