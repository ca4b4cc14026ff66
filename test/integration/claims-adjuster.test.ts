/**
 * Claims as the insurer and the agency's endpoints see them (issue 51, items 3 and 4's events), on
 * the real stack (API, Temporal dev server and a worker, PostgreSQL, stripe-mock, an SMTP sink):
 * the `claim.*` events recorded for the agency once per change, in the claim's order. The
 * purchase bought is two days, 2027-05-01 and 2027-05-02 (America/Chicago); its test clock is
 * moved to 2027-05-03 so the incidents are in the past.
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import { createQuotingAccount, issuedPurchase, type QuotingAccount } from '../helpers/purchases';
import { eventually } from '../helpers/worker';

jest.setTimeout(180_000);

const stack = useStack({ proxy: true, smtp: true, app: { RATE_LIMIT_PER_MINUTE: '100000' } });
let app: TestApp;
let account: QuotingAccount;

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });

const claimBody = (over: Record<string, unknown> = {}) => ({
  incident_at: '2027-05-01T19:30:00-05:00',
  claim_type: 'property_damage',
  description: 'A storm flooded the marquee; the sound system was ruined.',
  claimant: { name: 'Kim Park', email: 'kim@example.com' },
  amount_claimed: 125_000,
  ...over,
});
const act = (claimId: number, body: Record<string, unknown>, key = account.key) =>
  api(`/test_helpers/claims/${claimId}/actions`, { method: 'POST', body, key });

/** An issued purchase of `who` whose test clock reads 2027-05-03 (after both covered days). */
async function pastPurchase(who: QuotingAccount): Promise<number> {
  const id = await issuedPurchase(app, who);
  const clock = await call(app.baseUrl, `/api/v1/test_helpers/purchases/${id}/test_clock`, {
    method: 'POST',
    key: who.key,
    body: { frozen_time: '2027-05-03T12:00:00Z' },
  });
  expect(clock.status).toBe(200);
  return id;
}

/** The `claim.*` events of purchase `purchaseId` as the events list answers them, in the claim's change order. */
async function claimEvents(purchaseId: number) {
  const res = await api(`/events?purchase_id=${purchaseId}&pageSize=100`);
  expect(res.status).toBe(200);
  return (res.body.data as Array<{ id: string; type: string; data: { object: { change: { seq: number }; status: string } } }>)
    .filter((e) => e.type.startsWith('claim.'))
    .sort((a, b) => a.data.object.change.seq - b.data.object.change.seq);
}

beforeAll(async () => {
  ({ app } = stack);
  account = await createQuotingAccount(app);
});

test('when a claim goes from filing to closed and is reopened, then the agency gets one claim.* event per status reached, in order, with the change and no contact data; a comment gets none', async () => {
  const id = await pastPurchase(account);
  const claim = (await api(`/purchases/${id}/claims`, { method: 'POST', body: claimBody() })).body.data;
  await eventually(async () => ((await claimEvents(id)).length === 1 ? true : null), 30_000);

  for (const body of [
    { action: 'acknowledge' },
    { action: 'start_review' },
    { action: 'approve', amount: 100_000, reason: 'Receipts cover 1,000.00' },
    { action: 'record_payment', reference: 'wire-2027-0042' },
    { action: 'close' },
    { action: 'reopen', reason: 'A second invoice arrived' },
  ])
    expect((await act(claim.id, body)).status).toBe(200);
  expect((await api(`/claims/${claim.id}/comments`, { method: 'POST', body: { text: 'Invoice attached.' } })).status).toBe(201);

  const types = ['submitted', 'acknowledged', 'under_review', 'approved', 'paid', 'closed', 'reopened'].map((s) => `claim.${s}`);
  const events = (await eventually(async () => {
    const list = await claimEvents(id);
    return list.length >= types.length ? list : null;
  }, 30_000))!;
  expect(events.map((e) => e.type)).toEqual(types);
  expect(new Set(events.map((e) => e.id)).size).toBe(types.length);
  expect(events.map((e) => e.data.object.change.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  const approved = events[3]!.data.object;
  expect(approved).toMatchObject({
    object: 'claim',
    id: claim.id,
    purchase_id: id,
    status: 'approved',
    amount_claimed: 125_000,
    approved_amount: 100_000,
    decision_reason: 'Receipts cover 1,000.00',
    change: { seq: 3, from_status: 'under_review', to_status: 'approved', actor: { type: 'test_helper' } },
  });
  expect(approved).not.toHaveProperty('claimant');
  expect(approved).not.toHaveProperty('description');
  expect(events[4]!.data.object).toMatchObject({ status: 'paid', payment_reference: 'wire-2027-0042', paid_amount: 100_000 });

  // Read by id, as an endpoint would get it.
  const one = await api(`/events/${events[6]!.id}`);
  expect(one.status).toBe(200);
  expect(one.body.data.event ?? one.body.data).toMatchObject({ type: 'claim.reopened' });
});
