/**
 * A purchase's status tells its life after issuance (issue 48 item 6), on the real stack (API,
 * Temporal dev server, worker, PostgreSQL, stripe-mock): one day of two cancelled makes it
 * `partly_cancelled`, the other `cancelled`; `GET /api/v1/purchases?status=` finds it by either;
 * its owner publishes the status as the PurchaseStatus search attribute, so Temporal's search
 * agrees with the API; and `GET /api/v1/events?purchase_id=` lists its events only, never
 * another account's, with a 400 for an id that is not an integer >= 1.
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import { cancellationCalls, createQuotingAccount, issuedPurchase, type QuotingAccount } from '../helpers/purchases';
import { eventually } from '../helpers/worker';
import { policyWorkflowId } from '../../workflows/contracts';

jest.setTimeout(180_000);

const stack = useStack({ app: { RATE_LIMIT_PER_MINUTE: '100000' } });
let app: TestApp;
let account: QuotingAccount;
let other: QuotingAccount;

const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });
const { quote, cancel, purchase } = cancellationCalls(api);

beforeAll(async () => {
  app = stack.app;
  account = await createQuotingAccount(app);
  other = await createQuotingAccount(app);
});

/** The ids of the account's purchases listed with `?status=<status>` (one page of 100). */
const listed = async (status: string): Promise<number[]> => {
  const res = await api(`/purchases?status=${status}&pageSize=100`);
  expect([status, res.status]).toEqual([status, 200]);
  return (res.body.data as Array<{ id: number; status: string }>).map((p) => {
    expect(p.status).toBe(status);
    return p.id;
  });
};

/** Cancels the units `unitIds` of purchase `id` and waits until the purchase reads `status`. */
async function cancelUnits(id: number, unitIds: number[], status: string) {
  const q = await quote(id, { covered_unit_ids: unitIds });
  expect((await cancel(id, { quote_id: q.id })).status).toBe(200);
  return eventually(async () => {
    const p = await purchase(id);
    return p.status === status ? p : null;
  }, 60_000);
}

/** The PurchaseStatus Temporal's search holds for the purchase's owner run(s), once it reads `status`. */
async function searchedStatus(purchaseId: number, status: string): Promise<string[] | null> {
  return eventually(async () => {
    const ids: string[] = [];
    for await (const w of app.container.temporal.client.workflow.list({
      query: `PurchaseId = "${purchaseId}" AND PurchaseStatus = "${status}"`,
    }))
      ids.push(w.workflowId);
    return ids.length > 0 ? ids : null;
  }, 30_000);
}

test('when one day of two is cancelled and then the other, then the purchase reads partly_cancelled, then cancelled, is listed by either status, and Temporal’s search agrees', async () => {
  const id = await issuedPurchase(app, account);
  const units = (await purchase(id)).items[0].covered_units as Array<{ id: number }>;
  expect(units).toHaveLength(2);
  expect((await purchase(id)).status).toBe('issued');

  const partly = await cancelUnits(id, [units[1]!.id], 'partly_cancelled');
  expect(partly.items[0].covered_units.map((u: { state: string }) => u.state)).toEqual(['active', 'cancelled']);
  expect(await listed('partly_cancelled')).toContain(id);
  expect(await listed('issued')).not.toContain(id);
  expect(await searchedStatus(id, 'partly_cancelled')).toEqual([policyWorkflowId(id)]);

  const whole = await cancelUnits(id, [units[0]!.id], 'cancelled');
  expect(whole.items[0].covered_units.map((u: { state: string }) => u.state)).toEqual(['cancelled', 'cancelled']);
  expect(await listed('cancelled')).toContain(id);
  expect(await listed('partly_cancelled')).not.toContain(id);
  expect(await searchedStatus(id, 'cancelled')).toEqual([policyWorkflowId(id)]);

  // Nothing is left to cancel, and the API says why.
  const again = await api(`/purchases/${id}/cancellation_quote`, { method: 'POST', body: {} });
  expect([again.status, again.body.error.code]).toEqual([409, 'NOTHING_TO_CANCEL']);
  // The `purchase.cancelled` event of the last cancellation shows the purchase as it now is.
  const events = await eventually(async () => {
    const res = await api(`/events?purchase_id=${id}&type=purchase.cancelled`);
    return res.body.data.length === 2 ? res.body.data : null;
  }, 30_000);
  // Matched by the units each cancelled, not by the list's order (newest `created` first, to the
  // second), which two cancellations recorded in the same second do not settle.
  type CancelledEvent = { data: { object: { status: string; cancellation: { covered_unit_ids: number[] } } } };
  const statusAfter = (unitId: number) =>
    (events as CancelledEvent[]).find((e) => e.data.object.cancellation.covered_unit_ids.includes(unitId))?.data.object.status;
  expect([statusAfter(units[1]!.id), statusAfter(units[0]!.id)]).toEqual(['partly_cancelled', 'cancelled']);
});

test('when events are listed by purchase, then only that purchase’s are, another account’s purchase lists none, and a bad id is a 400', async () => {
  const mine = await issuedPurchase(app, account);
  const second = await issuedPurchase(app, account);
  const theirs = await issuedPurchase(app, other);
  const stored = await eventually(async () => {
    const rows = await app.container.db('agency_events').where({ purchase_id: mine }).orderBy('created_at', 'desc').select('id');
    return rows.length > 0 ? rows.map((r) => r.id as string) : null;
  }, 30_000);

  const res = await api(`/events?purchase_id=${mine}&pageSize=100`);
  expect(res.status).toBe(200);
  expect(res.body.metadata.total).toBeGreaterThan(0);
  expect(new Set(res.body.data.map((e: { id: string }) => e.id))).toEqual(new Set(stored));
  const secondIds = (await app.container.db('agency_events').where({ purchase_id: second }).select('id')).map((r) => r.id as string);
  expect(secondIds.length).toBeGreaterThan(0);
  for (const e of res.body.data as Array<{ id: string }>) expect(secondIds).not.toContain(e.id);

  // Another account's purchase: nothing, exactly like a purchase that does not exist.
  const foreign = await api(`/events?purchase_id=${theirs}`);
  const missing = await api('/events?purchase_id=2000000000');
  expect([foreign.status, foreign.body.data, foreign.body.metadata.total]).toEqual([200, [], 0]);
  expect([missing.status, missing.body.data, missing.body.metadata.total]).toEqual([200, [], 0]);
  // Its own account sees them.
  const own = await call(app.baseUrl, `/api/v1/events?purchase_id=${theirs}`, { key: other.key });
  expect(own.body.metadata.total).toBeGreaterThan(0);

  for (const bad of ['0', '-3', 'abc', '1.5', '2147483648']) {
    const r = await api(`/events?purchase_id=${bad}`);
    expect([bad, r.status]).toEqual([bad, 400]);
    expect(JSON.stringify(r.body)).toContain('purchase_id');
  }
});

test('when the purchase list is filtered by a status that is not one, then it is a 400 naming the statuses', async () => {
  const res = await api('/purchases?status=withdrawn');
  expect(res.status).toBe(400);
  expect(JSON.stringify(res.body)).toContain('partly_cancelled');
});
