/**
 * Purchases as a resource (`GET /api/v1/purchases`, `GET /api/v1/purchases/{id}`) and the
 * cancellation quote (`POST /api/v1/purchases/{id}/cancellation_quote`) on the real stack: a
 * checkout through the API, paid with the test helper and issued by the worker (Temporal dev
 * server, stripe-mock, fake-gcs-server, Chromium, PostgreSQL). Covers the amounts, covered units
 * with their certificates, the timeline, filters and pages, tenancy (404 for another account, mode
 * or teammate), the quote's pricing by the terms bought with, and every refusal in the envelope.
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createKey } from '../helpers/fixtures';
import { checkout, createQuotingAccount, type QuotingAccount } from '../helpers/purchases';
import { purchaseWorkflowId } from '../../workflows/contracts';

jest.setTimeout(120_000);

const stack = useStack();
let app: TestApp;
let account: QuotingAccount;
let paid: number;
let unpaid: number;

const get = (path: string, key = account.key) => call(app.baseUrl, `/api/v1${path}`, { key });
const quote = (id: number, body: unknown, key = account.key) =>
  call(app.baseUrl, `/api/v1/purchases/${id}/cancellation_quote`, { method: 'POST', key, body });

async function payAndIssue(a: QuotingAccount, purchaseId: number): Promise<void> {
  const res = await call(app.baseUrl, `/api/v1/test_helpers/purchases/${purchaseId}/pay`, { method: 'POST', key: a.key });
  if (res.status !== 200) throw new Error(`pay: ${res.status} ${res.text}`);
  await app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).result();
}

beforeAll(async () => {
  app = stack.app;
  account = await createQuotingAccount(app);
  paid = (await checkout(app, account)).purchaseId;
  await payAndIssue(account, paid);
  unpaid = (await checkout(app, account)).purchaseId;
});

test('when a paid purchase is read, then its amounts, items, covered units with certificates and timeline are there', async () => {
  const res = await get(`/purchases/${paid}`);
  expect(res.status).toBe(200);
  const p = res.body.data;
  expect(p).toMatchObject({
    object: 'purchase',
    id: paid,
    status: 'issued',
    livemode: false,
    currency: 'usd',
    amount_refunded: 0,
    amount_outstanding: 0,
  });
  expect(p.amount_paid).toBe(p.amount_total);
  expect(p.amount_total).toBe(p.amount_subtotal + p.platform_fee);
  expect(p.items).toHaveLength(1);
  const [item] = p.items;
  expect(item).toMatchObject({
    product_id: account.productId,
    product_name: 'Event Liability',
    unit_price: 2000,
    amount: 4000,
    is_trip_excess: false,
  });
  expect(
    item.covered_units.map((u: { local_label: string; state: string; coverage_started: boolean; time_zone: string }) => [
      u.state,
      u.coverage_started,
      u.time_zone,
    ]),
  ).toEqual([
    ['active', false, 'America/Chicago'],
    ['active', false, 'America/Chicago'],
  ]);
  // Local midnight in Chicago (CDT, UTC−5) of 1 May 2027.
  expect(item.covered_units[0].starts_at).toBe('2027-05-01T05:00:00.000Z');
  const numbers = item.covered_units.map((u: { certificate: { number: string; verification_url: string } }) => u.certificate.number);
  const stored = await app.container.db('certificates').where({ purchase_id: paid }).pluck('certificate_number');
  expect([...numbers].sort()).toEqual([...stored].sort());
  expect(item.covered_units[0].certificate.verification_url).toMatch(/\/verify\//);
  expect(p.timeline.map((t: { type: string; by: string }) => [t.type, t.by])).toEqual([
    ['created', 'agency'],
    ['paid', 'buyer'],
    ['certificates_issued', 'service'],
  ]);
});

test('when an unpaid purchase is read, then its units are unpaid, it owes its total and it cannot be quoted for cancellation', async () => {
  const p = (await get(`/purchases/${unpaid}`)).body.data;
  expect(p).toMatchObject({ status: 'awaiting_payment', amount_paid: 0, paid_at: null });
  expect(p.amount_outstanding).toBe(p.amount_total);
  expect(
    p.items[0].covered_units.every((u: { state: string; certificate: unknown }) => u.state === 'unpaid' && u.certificate === null),
  ).toBe(true);
  const res = await quote(unpaid, {});
  expect(res.status).toBe(409);
  expect(res.body).toMatchObject({ success: false, error: { code: 'PURCHASE_NOT_CANCELLABLE' } });
});

test('when purchases are listed, then newest first with filters by status, buyer email and creation time, and pages', async () => {
  const all = await get('/purchases');
  expect(all.status).toBe(200);
  expect(all.body.data.map((p: { id: number }) => p.id)).toEqual([unpaid, paid]);
  expect(all.body.metadata).toMatchObject({ total: 2 });
  expect((await get('/purchases?status=issued')).body.data.map((p: { id: number }) => p.id)).toEqual([paid]);
  const email = (await get(`/purchases/${paid}`)).body.data.buyer_email as string;
  expect(
    (await get(`/purchases?buyer_email=${encodeURIComponent(email.toUpperCase())}`)).body.data.map((p: { id: number }) => p.id),
  ).toEqual([paid]);
  expect((await get(`/purchases?created_gte=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body.data).toEqual([]);
  const page = await get('/purchases?pageSize=1&pageIndex=1');
  expect(page.body.data.map((p: { id: number }) => p.id)).toEqual([paid]);
  expect(page.body.metadata).toMatchObject({ total: 2 });
  for (const bad of ['status=gone', 'buyer_email=nope', 'created_gte=yesterday', 'pageSize=0', 'colour=red']) {
    const res = await get(`/purchases?${bad}`);
    expect([bad, res.status, res.body.error?.code]).toEqual([bad, 400, 'QUERY_VALIDATION_ERROR']);
  }
});

test("when another account, a live key of the same account or a teammate's key asks, then 404, and lists stay their own", async () => {
  const other = await createQuotingAccount(app);
  expect((await get(`/purchases/${paid}`, other.key)).status).toBe(404);
  expect((await get('/purchases', other.key)).body.data).toEqual([]);
  expect((await quote(paid, {}, other.key)).status).toBe(404);
  const live = (await createKey(app.container, { rootAccountId: account.accountId, mode: 'live' })).key;
  expect((await get(`/purchases/${paid}`, live)).body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
  const [agent] = await app.container
    .db('agents')
    .insert({ root_account_id: account.accountId, name: 'Teammate', email: `mate.${account.accountId}@example.com` })
    .returning('id');
  const teammate = (await createKey(app.container, { rootAccountId: account.accountId, mode: 'test', agentId: agent.id })).key;
  expect((await get(`/purchases/${paid}`, teammate)).status).toBe(404);
  expect((await get('/purchases', teammate)).body.data).toEqual([]);
  expect((await get('/purchases/abc')).body.error.code).toBe('VALIDATION_ERROR');
  expect((await get('/purchases/2000000000')).status).toBe(404);
});

test('when a cancellation is quoted within free look, then everything comes back, the quote is stored, and nothing is cancelled', async () => {
  const detail = (await get(`/purchases/${paid}`)).body.data;
  const res = await quote(paid, { requested_by: 'buyer', reason: 'Wedding moved' });
  expect(res.status).toBe(201);
  const q = res.body.data;
  const units = detail.items[0].covered_units;
  expect(q).toMatchObject({
    object: 'cancellation_quote',
    purchase_id: paid,
    requested_by: 'buyer',
    reason: 'Wedding moved',
    method: 'free_look',
    ends_policy: true,
    currency: 'usd',
    refund: { premium: 4000, tax: 0, platform_fee: detail.platform_fee, total: detail.amount_total },
  });
  expect(q.id).toMatch(/^cq_[0-9a-f]{24}$/);
  expect(
    q.covered_units.map((u: { covered_unit_id: number; refundable: number; certificate_number: string }) => [
      u.covered_unit_id,
      u.refundable,
      u.certificate_number,
    ]),
  ).toEqual(units.map((u: { id: number; certificate: { number: string } }) => [u.id, 2000, u.certificate.number]));
  const ttl = Date.parse(q.expires_at) - Date.parse(q.created_at);
  expect(ttl).toBeGreaterThan(14 * 60_000);
  expect(ttl).toBeLessThanOrEqual(15 * 60_000);
  expect(await app.container.db('cancellation_quotes').where({ id: q.id }).first('total_minor', 'covered_unit_ids')).toEqual({
    total_minor: String(detail.amount_total),
    covered_unit_ids: units.map((u: { id: number }) => u.id),
  });
  expect((await get(`/purchases/${paid}`)).body.data).toMatchObject({ status: 'issued', amount_refunded: 0 });
});

test('when the terms bought with say no free look, short rate for the buyer and pro rata for the insurer, then one day of two gives back 90 % or all of its premium', async () => {
  const a = await createQuotingAccount(app);
  const terms = await call(app.baseUrl, `/api/v1/products/${a.productId}/cancellation_terms`, {
    method: 'PATCH',
    key: a.key,
    body: { free_look_days: 0, refund_method: 'short_rate', short_rate_penalty_bps: 1000, insurer_refund_method: 'pro_rata' },
  });
  expect(terms.status).toBe(200);
  const { purchaseId } = await checkout(app, a);
  await payAndIssue(a, purchaseId);
  const [, second] = (await get(`/purchases/${purchaseId}`, a.key)).body.data.items[0].covered_units;
  const buyer = (await quote(purchaseId, { covered_unit_ids: [second.id], requested_by: 'buyer' }, a.key)).body.data;
  expect(buyer).toMatchObject({
    method: 'short_rate',
    ends_policy: false,
    refund: { premium: 1800, tax: 0, platform_fee: 0, total: 1800 },
  });
  expect(buyer.covered_units).toEqual([
    expect.objectContaining({ covered_unit_id: second.id, premium: 2000, earned: 200, refundable: 1800 }),
  ]);
  const insurer = (await quote(purchaseId, { covered_unit_ids: [second.id], requested_by: 'insurer' }, a.key)).body.data;
  expect(insurer).toMatchObject({ method: 'pro_rata', refund: { total: 2000 } });
});

test('when the quote names bad units or times, then a clear error in the envelope and no quote is stored', async () => {
  const units = (await get(`/purchases/${paid}`)).body.data.items[0].covered_units as Array<{ id: number; starts_at: string }>;
  const before = await app.container.db('cancellation_quotes').where({ purchase_id: paid }).count({ n: '*' }).first();
  const afterFirstStart = new Date(Date.parse(units[0]!.starts_at) + 3_600_000).toISOString();
  const afterAll = new Date(Date.parse(units[1]!.starts_at) + 3_600_000).toISOString();
  const cases: Array<[string, unknown, number, string]> = [
    ['a unit of another purchase', { covered_unit_ids: [units[0]!.id + 100_000] }, 400, 'UNKNOWN_COVERED_UNIT'],
    ['the same unit twice', { covered_unit_ids: [units[0]!.id, units[0]!.id] }, 400, 'DUPLICATE_COVERED_UNIT'],
    ['an empty list', { covered_unit_ids: [] }, 400, 'VALIDATION_ERROR'],
    ['an unknown requester', { requested_by: 'broker' }, 400, 'VALIDATION_ERROR'],
    ['an unknown field', { units: [1] }, 400, 'VALIDATION_ERROR'],
    ['an effective time in the past', { effective_at: '2020-01-01T00:00:00Z' }, 400, 'VALIDATION_ERROR'],
    ['a unit that will have started', { covered_unit_ids: [units[0]!.id], effective_at: afterFirstStart }, 409, 'COVERED_UNIT_STARTED'],
    ['a time when every unit has started', { effective_at: afterAll }, 409, 'NOTHING_TO_CANCEL'],
  ];
  for (const [what, body, status, code] of cases) {
    const res = await quote(paid, body);
    expect([what, res.status, res.body.error?.code, res.body.success]).toEqual([what, status, code, false]);
  }
  expect(await app.container.db('cancellation_quotes').where({ purchase_id: paid }).count({ n: '*' }).first()).toEqual(before);
});

test('when the quote is dated after the first day started, then the remaining day is priced at that time', async () => {
  const units = (await get(`/purchases/${paid}`)).body.data.items[0].covered_units as Array<{ id: number; starts_at: string }>;
  const effective = new Date(Date.parse(units[0]!.starts_at) + 3_600_000).toISOString();
  const q = (await quote(paid, { effective_at: effective })).body.data;
  // Free look ended with the first day's start: the default pro rata gives back the second day.
  expect(q).toMatchObject({
    method: 'pro_rata',
    effective_at: effective,
    ends_policy: false,
    refund: { premium: 2000, platform_fee: 0, total: 2000 },
  });
  expect(q.covered_units.map((u: { covered_unit_id: number }) => u.covered_unit_id)).toEqual([units[1]!.id]);
});
