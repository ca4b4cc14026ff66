/**
 * Cancellations dated in the future and the test clock, on the real stack (API, Temporal dev
 * server, worker, stripe-mock, PostgreSQL): a quote effective later is carried out `scheduled`
 * (its unit held and still covered), can be rescinded until then (unit active again, nothing
 * refunded), and happens by itself at its time: on the real clock through the policy workflow's
 * durable timer, on a test purchase's test clock when the test helper moves that clock past it.
 * The purchase bought is two days, 2027-05-01 and 2027-05-02 in America/Chicago (local midnight:
 * 05:00Z).
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import {
  cancellationCalls,
  checkout,
  createQuotingAccount,
  createQuotingAccountWithoutFreeLook,
  type QuotingAccount,
  issuedPurchase,
} from '../helpers/purchases';
import { eventually } from '../helpers/worker';

jest.setTimeout(120_000);

// Polling a purchase until its cancellation completes makes more calls than the default per-key limit.
const stack = useStack({ app: { RATE_LIMIT_PER_MINUTE: '100000' } });
let app: TestApp;
let account: QuotingAccount;

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });
const { quote, cancel, purchase } = cancellationCalls(api);
const rescind = (purchaseId: number, cancellationId: number) =>
  api(`/purchases/${purchaseId}/cancellations/${cancellationId}/rescind`, { method: 'POST', body: {} });
const advance = (purchaseId: number, frozenTime: string) =>
  api(`/test_helpers/purchases/${purchaseId}/test_clock`, { method: 'POST', body: { frozen_time: frozenTime } });
const states = (p: { items: Array<{ covered_units: Array<{ state: string }> }> }) => p.items[0]!.covered_units.map((u) => u.state);

beforeAll(async () => {
  app = stack.app;
  account = await createQuotingAccountWithoutFreeLook(app);
});

test('when a cancellation is dated in the future, then it is scheduled with its unit held and covered, and rescinding it gives the unit back with nothing refunded', async () => {
  const id = await issuedPurchase(app, account);
  const [, second] = (await purchase(id)).items[0].covered_units;
  const q = await quote(id, {
    covered_unit_ids: [second.id],
    effective_at: '2027-05-01T12:00:00Z',
    reason: 'Second day may be called off',
  });
  const res = await cancel(id, { quote_id: q.id });
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({
    status: 'scheduled',
    effective_at: '2027-05-01T12:00:00.000Z',
    refund: { id: null, total: 2000 },
    rescinded_at: null,
  });
  const scheduled = await purchase(id);
  expect(states(scheduled)).toEqual(['active', 'cancellation_scheduled']);
  expect(scheduled.items[0].covered_units[1].certificate.voided_at).toBeNull();
  expect(scheduled.timeline.map((t: { type: string }) => t.type)).toContain('cancellation_scheduled');
  // The unit is held: another cancellation of it is refused.
  const other = await cancel(id, { covered_unit_ids: [second.id] });
  expect(other.status).toBe(409);
  expect(other.body.error.code).toBe('COVERED_UNIT_ALREADY_CANCELLED');

  const undone = await rescind(id, res.body.data.id);
  expect(undone.status).toBe(200);
  expect(undone.body.data).toMatchObject({
    id: res.body.data.id,
    status: 'rescinded',
    rescinded_at: expect.any(String),
    refund: { id: null },
  });
  expect((await rescind(id, res.body.data.id)).body.data).toMatchObject({
    status: 'rescinded',
    rescinded_at: undone.body.data.rescinded_at,
  });
  const after = await purchase(id);
  expect(states(after)).toEqual(['active', 'active']);
  expect(after.amount_refunded).toBe(0);
  expect(after.timeline.map((t: { type: string }) => t.type)).toEqual(
    expect.arrayContaining(['cancellation_scheduled', 'cancellation_rescinded']),
  );
  // Free again: the same day can now be cancelled at once, priced in full (nothing went back before).
  const now = await cancel(id, { covered_unit_ids: [second.id] });
  expect(now.status).toBe(200);
  expect(now.body.data.refund.total).toBe(2000);
  await eventually(async () => (await purchase(id)).cancellations[1]?.status === 'completed');
  // A cancellation that took effect cannot be rescinded; one that does not exist is 404.
  expect((await rescind(id, now.body.data.id)).body.error.code).toBe('CANCELLATION_NOT_RESCINDABLE');
  const unknown = await rescind(id, 2_000_000_000);
  expect([unknown.status, unknown.body.error.code]).toEqual([404, 'CANCELLATION_NOT_FOUND']);
  expect((await app.container.db('policy_transactions').where({ purchase_id: id }).whereNotNull('refund_id')).length).toBe(1);
});

test('when a scheduled cancellation’s time comes on the real clock, then the policy workflow carries it out by itself', async () => {
  const id = await issuedPurchase(app, account);
  const at = new Date(Date.now() + 3000).toISOString();
  const q = await quote(id, { effective_at: at });
  const res = await cancel(id, { quote_id: q.id });
  expect(res.body.data.status).toBe('scheduled');
  const done = await eventually(async () => {
    const p = await purchase(id);
    return p.cancellations[0]?.status === 'completed' ? p : null;
  });
  expect(states(done)).toEqual(['cancelled', 'cancelled']);
  expect(new Date(done.cancellations[0].completed_at).getTime()).toBeGreaterThanOrEqual(new Date(at).getTime());
  expect(done.cancellations[0].refund.id).toMatch(/^re_/);
});

test('when a test purchase’s test clock moves, then its units start by that clock, and a cancellation scheduled before it is carried out', async () => {
  const id = await issuedPurchase(app, account);
  // Before either day: nothing started.
  const first = await advance(id, '2027-04-30T00:00:00Z');
  expect(first.status).toBe(200);
  expect(first.body.data).toEqual({ purchase_id: id, test_clock: '2027-04-30T00:00:00.000Z', policy_notified: false });
  const before = await purchase(id);
  expect(before.test_clock).toBe('2027-04-30T00:00:00.000Z');
  expect(before.items[0].covered_units.map((u: { coverage_started: boolean }) => u.coverage_started)).toEqual([false, false]);

  const [day1, day2] = before.items[0].covered_units;
  const res = await cancel(id, { quote_id: (await quote(id, { covered_unit_ids: [day2.id], effective_at: '2027-05-01T12:00:00Z' })).id });
  expect(res.body.data.status).toBe('scheduled');

  // The clock only moves forward.
  const back = await advance(id, '2027-04-29T00:00:00Z');
  expect([back.status, back.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);

  // Past the first day's start and the cancellation's effective time.
  const moved = await advance(id, '2027-05-01T13:00:00Z');
  expect(moved.body.data.policy_notified).toBe(true);
  const done = await eventually(async () => {
    const p = await purchase(id);
    return p.cancellations[0]?.status === 'completed' ? p : null;
  });
  expect(done.items[0].covered_units.map((u: { coverage_started: boolean }) => u.coverage_started)).toEqual([true, false]);
  expect(states(done)).toEqual(['active', 'cancelled']);
  expect(done.items[0].covered_units[1].certificate.voided_at).toBe('2027-05-01T12:00:00.000Z');
  // The first day started by the test clock: earned, not cancellable; nothing else is left.
  const started = await api(`/purchases/${id}/cancellation_quote`, { method: 'POST', body: { covered_unit_ids: [day1.id] } });
  expect([started.status, started.body.error.code]).toEqual([409, 'COVERED_UNIT_STARTED']);
  const nothing = await api(`/purchases/${id}/cancellation_quote`, { method: 'POST', body: {} });
  expect(nothing.body.error.code).toBe('NOTHING_TO_CANCEL');
});

test('when the test clock is asked of a purchase that is not the key’s test purchase, then it is 404 and the clock stays unset', async () => {
  const other = await createQuotingAccount(app);
  const { purchaseId } = await checkout(app, other);
  const res = await advance(purchaseId, '2027-04-30T00:00:00Z');
  expect([res.status, res.body.error.code]).toEqual([404, 'NOT_FOUND']);
  expect((await app.container.db('purchases').where({ id: purchaseId }).first('test_clock_at')).test_clock_at).toBeNull();
  const own = await checkout(app, account);
  const bad = await advance(own.purchaseId, 'tomorrow');
  expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
});
