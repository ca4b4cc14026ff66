/**
 * Bulk cancellations on the real stack (API, Temporal dev server, worker, PostgreSQL, stripe-mock
 * behind a recording proxy): a product's purchases covering a date called off are cancelled as one
 * batch, each exactly once through its own policy workflow, with the refunds reaching the
 * processor no faster than the refunds queue's cap (set to 2/s here so the cap shows in a short
 * test); a batch by purchase ids skips what is not the key's or not in force, without telling
 * the two apart. Each purchase covers 2027-05-01 and -02 (America/Chicago).
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import {
  checkout,
  createQuotingAccount,
  createQuotingAccountWithoutFreeLook,
  issuedPurchase,
  payByTestHelper,
  type QuotingAccount,
} from '../helpers/purchases';
import { eventually } from '../helpers/worker';
import { createAgency, eventSelection, quoteForNewBuyer, tripSelection } from '../helpers/certificates';
import { purchaseWorkflowId } from '../../workflows/contracts';
import type { ProcessorProxy } from '../helpers/processor-proxy';

jest.setTimeout(180_000);

const CAP_PER_SECOND = 2;
const stack = useStack({
  proxy: true,
  workerEnv: { REFUND_RATE_LIMIT_PER_SECOND: String(CAP_PER_SECOND) },
  app: { RATE_LIMIT_PER_MINUTE: '100000' },
});
let proxy: ProcessorProxy;
let app: TestApp;
let account: QuotingAccount;
let other: QuotingAccount;

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });

beforeAll(async () => {
  ({ proxy, app } = stack);
  account = await createQuotingAccountWithoutFreeLook(app);
  other = await createQuotingAccount(app);
});

test('when an event day is called off, then every purchase of the product covering it has that day cancelled exactly once, the refunds reaching the processor within the cap', async () => {
  const ids: number[] = [];
  for (let i = 0; i < 6; i++) ids.push(await issuedPurchase(app, account));
  const unpaid = (await checkout(app, account)).purchaseId;

  const started = await api('/bulk_cancellations', {
    method: 'POST',
    body: { product_id: account.productId, coverage_date: '2027-05-02', reason: 'Second day called off' },
  });
  expect(started.status).toBe(202);
  expect(started.body.data).toMatchObject({
    object: 'bulk_cancellation',
    status: expect.any(String),
    selection: { product_id: account.productId, coverage_date: '2027-05-02' },
    requested_by: 'agency',
  });
  const bulkId = started.body.data.id as number;
  expect(started.body.data.items.map((i: { purchase_id: number }) => i.purchase_id)).toEqual(ids);
  expect(started.body.data.items.map((i: { purchase_id: number }) => i.purchase_id)).not.toContain(unpaid);

  const done = await eventually(async () => {
    const b = (await api(`/bulk_cancellations/${bulkId}`)).body.data;
    return b.status === 'completed' && b.counts.refunded === ids.length ? b : null;
  }, 60_000);
  expect(done.counts).toEqual({
    total: 6,
    pending: 0,
    accepted: 6,
    skipped: 0,
    failed: 0,
    refunded: 6,
    units: { total: 6, of_product: 6, of_other_products: 0 },
    purchases_with_other_products: 0,
  });
  expect(done.selection).toEqual({ product_id: account.productId, coverage_date: '2027-05-02', scope: 'product_units' });
  for (const item of done.items)
    expect(item).toMatchObject({ status: 'accepted', cancellation_status: 'completed', refund_total: 2000, error: null });

  // Each purchase: the second day cancelled and voided, the first still in force; one cancellation, one refund.
  for (const id of ids) {
    const p = (await api(`/purchases/${id}`)).body.data;
    expect(p.items[0].covered_units.map((u: { state: string }) => u.state)).toEqual(['active', 'cancelled']);
    expect(p.cancellations).toHaveLength(1);
  }
  const refunds = proxy.requests.filter(
    (r) => r.method === 'POST' && r.path === '/v1/refunds' && ids.includes(Number(r.params.get('metadata[purchase_id]'))),
  );
  expect(new Set(refunds.map((r) => r.idempotencyKey)).size).toBe(ids.length);
  expect(new Set(refunds.map((r) => r.params.get('metadata[purchase_id]'))).size).toBe(ids.length);
  // The cap: Temporal's bucket holds one second's worth, so a second may see up to twice the rate (a burst, then the rate), never more; then the rate holds.
  const times = refunds.map((r) => r.at).sort((a, b) => a - b);
  const busiest = Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 1000).length));
  expect(busiest).toBeLessThanOrEqual(2 * CAP_PER_SECOND);
  expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(((ids.length - CAP_PER_SECOND) / CAP_PER_SECOND - 0.5) * 1000);

  // The same day again: nothing left to cancel.
  const again = await api('/bulk_cancellations', { method: 'POST', body: { product_id: account.productId, coverage_date: '2027-05-02' } });
  expect([again.status, again.body.error.code]).toEqual([409, 'NOTHING_TO_CANCEL']);
});

test('when purchases are named, then the key’s own in force are cancelled and the rest skipped alike (another account’s, one that does not exist, one unpaid)', async () => {
  const mine = await issuedPurchase(app, account);
  const unpaid = (await checkout(app, account)).purchaseId;
  const theirs = await issuedPurchase(app, other);
  const started = await api('/bulk_cancellations', {
    method: 'POST',
    body: { purchase_ids: [mine, theirs, unpaid, 2_000_000_000], requested_by: 'insurer' },
  });
  expect(started.status).toBe(202);
  const done = await eventually(async () => {
    const b = (await api(`/bulk_cancellations/${started.body.data.id}`)).body.data;
    return b.status === 'completed' ? b : null;
  }, 60_000);
  const byId = new Map(done.items.map((i: { purchase_id: number }) => [i.purchase_id, i]));
  expect(byId.get(mine)).toMatchObject({ status: 'accepted', cancellation_id: expect.any(Number) });
  expect(byId.get(theirs)).toMatchObject({ status: 'skipped', error: { code: 'NOT_FOUND' } });
  expect(byId.get(2_000_000_000)).toMatchObject({ status: 'skipped', error: { code: 'NOT_FOUND' } });
  expect((byId.get(theirs) as { error: { message: string } }).error.message.replace(String(theirs), 'N')).toBe(
    (byId.get(2_000_000_000) as { error: { message: string } }).error.message.replace('2000000000', 'N'),
  );
  expect(byId.get(unpaid)).toMatchObject({ status: 'skipped', error: { code: 'PURCHASE_NOT_CANCELLABLE' } });
  expect((await call(app.baseUrl, `/api/v1/purchases/${theirs}`, { key: other.key })).body.data.cancellations).toEqual([]);
  expect((await api(`/purchases/${mine}`)).body.data.cancellations[0]).toMatchObject({ requested_by: 'insurer' });
  // Another account reads no batch of this one.
  const foreign = await call(app.baseUrl, `/api/v1/bulk_cancellations/${started.body.data.id}`, { key: other.key });
  expect([foreign.status, foreign.body.error.code]).toEqual([404, 'NOT_FOUND']);
});

test('when an event day is called off with scope purchase_date, then each purchase found loses every unit on that date, its other product’s too, and the counts say how many of each', async () => {
  const agency = await createAgency(app, 'Called Off Agency');
  /** A paid and issued purchase of the event product for 10–12 June 2027 (Chicago), with the trip product (first trip 10–14 June, Lisbon) when `withTrip`. */
  const buy = async (withTrip: boolean) => {
    const selections = [eventSelection(agency, { start: '2027-06-10', end: '2027-06-12' }), ...(withTrip ? [tripSelection(agency)] : [])];
    const { quote } = await quoteForNewBuyer(agency, selections);
    expect(quote.status).toBe(200);
    const id = quote.body.purchase_id as number;
    expect((await payByTestHelper(app, agency, id)).status).toBe(200);
    await app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(id)).result();
    return id;
  };
  const both = await buy(true);
  const eventOnly = await buy(false);
  const agencyApi = (path: string, init: { method?: string; body?: unknown } = {}) =>
    call(app.baseUrl, `/api/v1${path}`, { key: agency.key, ...init });

  const started = await agencyApi('/bulk_cancellations', {
    method: 'POST',
    body: { product_id: agency.eventProductId, coverage_date: '2027-06-11', scope: 'purchase_date', reason: 'Fair called off' },
  });
  expect(started.status).toBe(202);
  expect(started.body.data.selection).toEqual({ product_id: agency.eventProductId, coverage_date: '2027-06-11', scope: 'purchase_date' });
  const done = await eventually(async () => {
    const b = (await agencyApi(`/bulk_cancellations/${started.body.data.id}`)).body.data;
    return b.status === 'completed' && b.counts.refunded === 2 ? b : null;
  }, 60_000);
  expect(done.counts).toEqual({
    total: 2,
    pending: 0,
    accepted: 2,
    skipped: 0,
    failed: 0,
    refunded: 2,
    units: { total: 3, of_product: 2, of_other_products: 1 },
    purchases_with_other_products: 1,
  });

  // The purchase with both products: the event's 11 June and the trip over it cancelled in one cancellation; the rest in force.
  const p = (await agencyApi(`/purchases/${both}`)).body.data;
  expect(
    p.items.map((i: { product_id: number; covered_units: Array<{ state: string }> }) => [
      i.product_id,
      i.covered_units.map((u) => u.state),
    ]),
  ).toEqual([
    [agency.eventProductId, ['active', 'cancelled', 'active']],
    [agency.tripProductId, ['cancelled', 'active']],
  ]);
  expect(p.cancellations).toHaveLength(1);
  expect(p.status).toBe('partly_cancelled');
  const single = (await agencyApi(`/purchases/${eventOnly}`)).body.data;
  expect(single.items[0].covered_units.map((u: { state: string }) => u.state)).toEqual(['active', 'cancelled', 'active']);

  // Scope goes with a product and a date only.
  const named = await agencyApi('/bulk_cancellations', { method: 'POST', body: { purchase_ids: [both], scope: 'purchase_date' } });
  expect([named.status, named.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
});

test('when the selection is malformed, then it is a 400 and no batch is made', async () => {
  const before = await app.container.db('bulk_cancellations').count({ n: '*' }).first();
  for (const body of [
    {},
    { purchase_ids: [1, 1] },
    { purchase_ids: [1], product_id: 2, coverage_date: '2027-05-01' },
    { product_id: 2 },
    { product_id: 2, coverage_date: '2027-13-01' },
    { purchase_ids: [] },
    { product_id: 2, coverage_date: '2027-05-01', scope: 'everything' },
    { purchase_ids: [1], scope: 'product_units' },
  ]) {
    const res = await api('/bulk_cancellations', { method: 'POST', body });
    expect([JSON.stringify(body), res.status, res.body.error?.code]).toEqual([JSON.stringify(body), 400, 'VALIDATION_ERROR']);
  }
  expect(await app.container.db('bulk_cancellations').count({ n: '*' }).first()).toEqual(before);
});
