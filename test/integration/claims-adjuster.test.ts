/**
 * Claims as the insurer and the agency's endpoints see them (issue 51, items 3 and 4's events), on
 * the real stack (API, Temporal dev server and a worker, PostgreSQL, stripe-mock, an SMTP sink):
 * the `claim.*` events recorded for the agency once per change, in the claim's order; the insurer
 * named on the product deciding through its own key (emailed of each new claim, listing and
 * reading the claims of its products, acknowledging, reviewing, approving part of the amount,
 * denying, closing; actor `adjuster`), the agency's key refused 403 CLAIM_DECISION_NOT_ALLOWED and
 * another insurer's key 404; a claim past its acknowledgement deadline in `ops stuck` and in the
 * worker's `claims_acknowledgement_overdue` gauge (the figure of a ticket alert). The
 * purchase bought is two days, 2027-05-01 and 2027-05-02 (America/Chicago); its test clock is
 * moved to 2027-05-03 so the incidents are in the past.
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createKey, createRootAccountOfKind } from '../helpers/fixtures';
import { createQuotingAccount, issuedPurchase, type QuotingAccount } from '../helpers/purchases';
import { eventually } from '../helpers/worker';
import { runScript } from '../helpers/run';

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

test('when the insurer named on the product decides through its own key, then it is emailed of the claim, lists and reads it, approves part of it and denies another as adjuster; the agency gets 403 and another insurer 404', async () => {
  const c = app.container;
  const insurer = await createRootAccountOfKind(c, 'insurer', 'Evergreen Mutual Insurance Co.', [account.accountId]);
  const stranger = await createRootAccountOfKind(c, 'insurer', 'Other Mutual', [account.accountId]);
  const insurerKey = (await createKey(c, { rootAccountId: insurer.id, mode: 'test' })).key;
  const strangerKey = (await createKey(c, { rootAccountId: stranger.id, mode: 'test' })).key;
  expect((await api(`/products/${account.productId}`, { method: 'PATCH', body: { insurerRootAccountID: insurer.id } })).status).toBe(200);
  const email = `adjusters.${insurer.id}@evergreen.example`;
  const settings = await api('/account', { method: 'PATCH', key: insurerKey, body: { settings: { claims_notification_email: email } } });
  expect(settings.status).toBe(200);
  expect(settings.body.data.settings.claims_notification_email).toBe(email);

  const id = await pastPurchase(account);
  const claim = (await api(`/purchases/${id}/claims`, { method: 'POST', body: claimBody() })).body.data;
  const mail = (await eventually(async () => stack.smtp.messages.find((m) => m.to.includes(email)) ?? null, 30_000))!;
  expect(mail.raw).toContain(`New claim ${claim.id}`);
  expect(mail.raw).toContain('1250.00 USD');

  // The insurer lists and reads the claims of its products; another insurer sees none of them.
  const listed = await api('/claims?status=submitted', { key: insurerKey });
  expect(listed.status).toBe(200);
  expect(listed.body.data.map((x: { id: number }) => x.id)).toContain(claim.id);
  expect((await api(`/claims/${claim.id}`, { key: insurerKey })).status).toBe(200);
  expect((await api('/claims', { key: strangerKey })).body.data).toEqual([]);
  expect((await api(`/claims/${claim.id}`, { key: strangerKey })).status).toBe(404);

  const decide = (claimId: number, body: Record<string, unknown>, key = insurerKey) =>
    api(`/claims/${claimId}/actions`, { method: 'POST', body, key });
  // The agency follows but does not decide; another insurer does not see the claim at all.
  const byAgency = await decide(claim.id, { action: 'acknowledge' }, account.key);
  expect(byAgency.status).toBe(403);
  expect(byAgency.body.error.code).toBe('CLAIM_DECISION_NOT_ALLOWED');
  const byStranger = await decide(claim.id, { action: 'acknowledge' }, strangerKey);
  expect(byStranger.status).toBe(404);
  expect(byStranger.body.error.code).toBe('NOT_FOUND');

  expect((await decide(claim.id, { action: 'acknowledge' })).status).toBe(200);
  expect((await decide(claim.id, { action: 'start_review' })).status).toBe(200);
  const tooMuch = await decide(claim.id, { action: 'approve', amount: 125_001, reason: 'All of it' });
  expect(tooMuch.status).toBe(400);
  expect(tooMuch.body.error.code).toBe('VALIDATION_ERROR');
  const approved = await decide(claim.id, { action: 'approve', amount: 90_000, reason: 'The invoice covers 900.00' });
  expect(approved.status).toBe(200);
  expect(approved.body.data).toMatchObject({ status: 'approved', approved_amount: 90_000, decision_reason: 'The invoice covers 900.00' });
  const adjuster = { type: 'adjuster', id: expect.any(String) };
  expect(approved.body.data.history.slice(1).map((e: { kind: string; actor: unknown }) => [e.kind, e.actor])).toEqual([
    ['acknowledged', adjuster],
    ['under_review', adjuster],
    ['approved', adjuster],
  ]);
  expect((await decide(claim.id, { action: 'record_payment' })).body.error.code).toBe('VALIDATION_ERROR');
  expect((await decide(claim.id, { action: 'record_payment', reference: 'chq-0042' })).status).toBe(200);
  const closed = await decide(claim.id, { action: 'close' });
  expect(closed.body.data.status).toBe('closed');
  // The agency still reads it and comments; the adjuster comments too.
  expect((await api(`/claims/${claim.id}/comments`, { method: 'POST', body: { text: 'Thanks.' } })).status).toBe(201);
  const commented = await api(`/claims/${claim.id}/comments`, { method: 'POST', key: insurerKey, body: { text: 'File closed.' } });
  expect(commented.body.data.history.at(-1)).toMatchObject({ kind: 'comment', actor: adjuster, note: 'File closed.' });

  const events = (await eventually(async () => {
    const list = await claimEvents(id);
    return list.length >= 6 ? list : null;
  }, 30_000))!;
  expect(events.map((e) => e.type)).toEqual(
    ['submitted', 'acknowledged', 'under_review', 'approved', 'paid', 'closed'].map((s) => `claim.${s}`),
  );
  expect(events[3]!.data.object).toMatchObject({ change: { actor: { type: 'adjuster' } } });

  // A denial needs its code and text.
  const second = await pastPurchase(account);
  const other = (await api(`/purchases/${second}/claims`, { method: 'POST', body: claimBody() })).body.data;
  expect((await decide(other.id, { action: 'acknowledge' })).status).toBe(200);
  expect((await decide(other.id, { action: 'start_review' })).status).toBe(200);
  expect((await decide(other.id, { action: 'deny', reason: 'no code' })).status).toBe(400);
  const denied = await decide(other.id, { action: 'deny', reason_code: 'excluded_peril', reason: 'Flood is excluded' });
  expect(denied.body.data).toMatchObject({ status: 'denied', denial_code: 'excluded_peril', decision_reason: 'Flood is excluded' });
});

test('when a claim is still submitted past its acknowledgement deadline, then ops stuck lists it under its agency and the worker counts it in claims_acknowledgement_overdue until it is acknowledged', async () => {
  const id = await pastPurchase(account);
  const claim = (await api(`/purchases/${id}/claims`, { method: 'POST', body: claimBody() })).body.data;
  const gauge = async () => {
    const text = await stack.worker.metrics.registry.metrics();
    return Number(/^claims_acknowledgement_overdue\{mode="test"\} (\d+)$/m.exec(text)?.[1] ?? NaN);
  };
  const before = await gauge();
  // Two business days stand in as passed: the deadline as stored is moved an hour back (a fixture, not the API).
  await app.container
    .db('claims')
    .where({ id: claim.id })
    .update({ acknowledgement_due_at: new Date(Date.now() - 3_600_000) });
  expect(await gauge()).toBe(before + 1);

  const run = await runScript('scripts/ops.ts', ['stuck', '--account', String(account.accountId), '--mode', 'test', '--json'], {
    LOG_LEVEL: 'silent',
  });
  expect(run.code).toBe(3);
  const [agency] = JSON.parse(run.stdout).agencies;
  expect(agency.purchases).toContainEqual(
    expect.objectContaining({ id, kind: 'claim_acknowledgement_overdue', claimId: claim.id, mode: 'test' }),
  );
  const human = await runScript('scripts/ops.ts', ['stuck', '--account', String(account.accountId), '--mode', 'test'], {
    LOG_LEVEL: 'silent',
  });
  expect(human.stdout).toContain(`purchase ${id} test claim_acknowledgement_overdue`);
  expect(human.stdout).toContain(`claim ${claim.id} not acknowledged by its deadline`);

  expect((await act(claim.id, { action: 'acknowledge' })).status).toBe(200);
  expect(await gauge()).toBe(before);
});
