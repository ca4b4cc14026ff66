/**
 * Claims on the real stack (API, Temporal dev server and a worker, PostgreSQL, fake-gcs-server,
 * stripe-mock): a first notice of loss filed by the agency against the covered day the incident
 * falls in (naming that unit and its certificate), attachments uploaded straight to storage by
 * signed URL and checked against what was declared, every bad input answered with its code, the
 * claim's owner `claim-<id>` moving it through its states in order (each an update with a
 * validator), a denial, a reopen, comments in the history, the product's claim settings, an
 * approved claim paid once by a transfer to the claimant's connected account through a processor
 * failure, and another account's key answered 404. The buyer files one through the page of the
 * signed link in the proof-of-coverage email (Chromium, axe-core, the SMTP server in this process). The purchase bought is two days, 2027-05-01 and 2027-05-02
 * (America/Chicago); its test clock is moved to 2027-05-03 so the incidents are in the past.
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createKey } from '../helpers/fixtures';
import { cancellationCalls, createQuotingAccount, issuedPurchase, type QuotingAccount } from '../helpers/purchases';
import { eventually } from '../helpers/worker';
import { claimWorkflowId } from '../../workflows/claim-contracts';
import { claimWorkflow } from '../../workflows/claim';
import PostalMime from 'postal-mime';
import { axeViolations, launchBrowser } from '../helpers/browser';
import { signClaimToken } from '../../src/claims/buyer-link';
import { signWithdrawalToken } from '../../src/withdrawals/token';

jest.setTimeout(180_000);

const stack = useStack({ proxy: true, smtp: true, app: { RATE_LIMIT_PER_MINUTE: '100000', VERIFY_RATE_LIMIT_PER_MINUTE: '100000' } });
let app: TestApp;
let account: QuotingAccount;
let other: QuotingAccount;

const api = (path: string, init: { method?: string; body?: unknown; key?: string; headers?: Record<string, string> } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });

/** A claim body for an incident at `incidentAt` (defaults: the evening of the first covered day). */
const claimBody = (over: Record<string, unknown> = {}) => ({
  incident_at: '2027-05-01T19:30:00-05:00',
  claim_type: 'property_damage',
  description: 'A storm flooded the marquee; the sound system was ruined.',
  claimant: { name: 'Kim Park', email: 'kim@example.com', phone: '+1 608 555 0100' },
  amount_claimed: 125_000,
  ...over,
});
const fileClaim = (purchaseId: number, body: unknown, key = account.key, headers: Record<string, string> = {}) =>
  api(`/purchases/${purchaseId}/claims`, { method: 'POST', body, key, headers });
const act = (claimId: number, body: Record<string, unknown>, key = account.key) =>
  api(`/test_helpers/claims/${claimId}/actions`, { method: 'POST', body, key });

/** An issued purchase of `who` whose test clock reads 2027-05-03 (after both covered days). */
async function pastPurchase(who: QuotingAccount, before?: (id: number) => Promise<void>): Promise<number> {
  const id = await issuedPurchase(app, who);
  await before?.(id);
  const clock = await call(app.baseUrl, `/api/v1/test_helpers/purchases/${id}/test_clock`, {
    method: 'POST',
    key: who.key,
    body: { frozen_time: '2027-05-03T12:00:00Z' },
  });
  expect(clock.status).toBe(200);
  return id;
}

beforeAll(async () => {
  ({ app } = stack);
  account = await createQuotingAccount(app);
  other = await createQuotingAccount(app);
});

test('when the agency files a claim with two attachments, then it names the covered day and its certificate, answers signed upload URLs, and the uploads are checked against what was declared', async () => {
  const id = await pastPurchase(account);
  const purchase = (await api(`/purchases/${id}`)).body.data;
  const [firstDay] = purchase.items[0].covered_units;

  const res = await fileClaim(
    id,
    claimBody({
      attachments: [
        { file_name: 'marquee.jpg', content_type: 'image/jpeg', size_bytes: 64 },
        { file_name: 'receipt.pdf', content_type: 'application/pdf', size_bytes: 16 },
      ],
    }),
  );
  expect(res.status).toBe(201);
  const claim = res.body.data;
  expect(claim).toMatchObject({
    object: 'claim',
    purchase_id: id,
    covered_unit_id: firstDay.id,
    covered_unit_label: '2027-05-01',
    certificate_number: firstDay.certificate.number,
    status: 'submitted',
    incident_at: '2027-05-02T00:30:00.000Z',
    incident_day: '2027-05-01',
    claim_type: 'property_damage',
    amount_claimed: 125_000,
    approved_amount: null,
    currency: 'usd',
    acknowledgement_overdue: false,
  });
  expect(claim.certificate_number).toEqual(expect.any(String));
  // Two business days from the filing.
  const due = Date.parse(claim.acknowledgement_due_at) - Date.parse(claim.created_at);
  expect(due).toBeGreaterThanOrEqual(2 * 86_400_000 - 1000);
  expect(due).toBeLessThanOrEqual(4 * 86_400_000 + 1000);
  expect(claim.history).toEqual([
    expect.objectContaining({ seq: 0, kind: 'submitted', to_status: 'submitted', actor: { type: 'api_key', id: expect.any(String) } }),
  ]);
  expect(claim.attachments.map((a: { status: string }) => a.status)).toEqual(['awaiting_upload', 'awaiting_upload']);

  // The bytes go straight to storage: the first as declared, the second larger than declared.
  const [photo, receipt] = claim.attachments;
  expect(photo.upload).toMatchObject({ method: 'PUT', headers: { 'Content-Type': 'image/jpeg', 'x-goog-content-length-range': '0,64' } });
  const put = (a: { upload: { url: string; headers: Record<string, string> } }, bytes: Buffer) =>
    fetch(a.upload.url, { method: 'PUT', headers: a.upload.headers, body: new Uint8Array(bytes) });
  expect((await put(photo, Buffer.alloc(64, 1))).ok).toBe(true);
  expect((await put(receipt, Buffer.alloc(40, 2))).ok).toBe(true);

  const read = (await api(`/claims/${claim.id}`)).body.data;
  expect(read.attachments).toEqual([
    expect.objectContaining({ file_name: 'marquee.jpg', status: 'received', size_bytes: 64, upload: null }),
    expect.objectContaining({
      file_name: 'receipt.pdf',
      status: 'rejected',
      size_bytes: 40,
      upload: null,
      rejection_reason: expect.stringMatching(/more than the 16 declared/),
    }),
  ]);

  // The purchase lists it; the workflow owns it.
  const list = await api(`/purchases/${id}/claims`);
  expect(list.status).toBe(200);
  expect(list.body.data.map((c: { id: number }) => c.id)).toEqual([claim.id]);
  expect(list.body.data[0].history).toBeUndefined();
  const described = await app.container.temporal.client.workflow.getHandle(claimWorkflowId(claim.id)).describe();
  expect(described.status.name).toBe('RUNNING');
});

test('when bad claims are filed, then each is answered with its code and nothing is filed; a second claim on the same day is refused naming the open one', async () => {
  const cancellations = cancellationCalls((path, init) => api(path, init ?? {}));
  const id = await pastPurchase(account, async (pid) => {
    // The second day is cancelled while it has not started yet.
    const [, second] = (await cancellations.purchase(pid)).items[0].covered_units;
    const q = await cancellations.quote(pid, { covered_unit_ids: [second.id] });
    expect((await cancellations.cancel(pid, { quote_id: q.id })).status).toBe(200);
    await eventually(async () => ((await cancellations.purchase(pid)).cancellations[0]?.status === 'completed' ? true : null), 60_000);
  });
  const cases: Array<[string, unknown, number, string]> = [
    ['before the cover', claimBody({ incident_at: '2027-04-30T12:00:00Z' }), 400, 'INCIDENT_NOT_COVERED'],
    ['after the cover', claimBody({ incident_at: '2027-05-03T06:00:00Z' }), 400, 'INCIDENT_NOT_COVERED'],
    ['in the future', claimBody({ incident_at: '2027-05-04T12:00:00Z' }), 400, 'VALIDATION_ERROR'],
    ['a cancelled day', claimBody({ incident_at: '2027-05-02T15:00:00-05:00' }), 409, 'COVERED_UNIT_CANCELLED'],
    ['a type the product does not offer', claimBody({ claim_type: 'pet_injury' }), 400, 'VALIDATION_ERROR'],
    ['no amount', claimBody({ amount_claimed: 0 }), 400, 'VALIDATION_ERROR'],
    ['another currency', claimBody({ currency: 'eur' }), 400, 'VALIDATION_ERROR'],
    [
      'a text attachment',
      claimBody({ attachments: [{ file_name: 'a.txt', content_type: 'text/plain', size_bytes: 5 }] }),
      400,
      'VALIDATION_ERROR',
    ],
    [
      'an attachment over 10 MiB',
      claimBody({ attachments: [{ file_name: 'a.pdf', content_type: 'application/pdf', size_bytes: 10 * 1024 * 1024 + 1 }] }),
      400,
      'VALIDATION_ERROR',
    ],
    ['no claimant', claimBody({ claimant: undefined }), 400, 'VALIDATION_ERROR'],
    ['an unknown field', claimBody({ adjuster: 'me' }), 400, 'VALIDATION_ERROR'],
    ['a unit of another purchase', claimBody({ covered_unit_id: 2_000_000_000 }), 400, 'VALIDATION_ERROR'],
  ];
  for (const [what, body, status, code] of cases) {
    const res = await fileClaim(id, body);
    expect({ what, status: res.status, code: res.body.error?.code, success: res.body.success }).toEqual({
      what,
      status,
      code,
      success: false,
    });
    expect(res.body.error.message).toEqual(expect.any(String));
  }
  expect((await api(`/purchases/${id}/claims`)).body.data).toEqual([]);
  expect((await api('/purchases/abc/claims', { method: 'POST', body: claimBody() })).body.error.code).toBe('VALIDATION_ERROR');

  const first = await fileClaim(id, claimBody());
  expect(first.status).toBe(201);
  const again = await fileClaim(id, claimBody({ incident_at: '2027-05-01T08:00:00-05:00', description: 'Same storm, morning.' }));
  expect(again.status).toBe(409);
  expect(again.body.error.code).toBe('DUPLICATE_CLAIM');
  expect(again.body.error.message).toContain(`Claim ${first.body.data.id} is already open`);

  // The same Idempotency-Key answers the same claim (200), however often it is sent.
  const keyed = { 'Idempotency-Key': `claim-${id}-retry` };
  const second = await pastPurchase(account);
  const once = await fileClaim(second, claimBody(), account.key, keyed);
  const twice = await fileClaim(second, claimBody(), account.key, keyed);
  expect(once.status).toBe(201);
  expect(twice.body.data.id).toBe(once.body.data.id);
});

test('when the claim is moved through its states, then each change is in order in its history with who made it; a move its status does not allow, or an approval above the amount claimed, is refused and changes nothing', async () => {
  const id = await pastPurchase(account);
  const claim = (await fileClaim(id, claimBody())).body.data;

  const early = await act(claim.id, { action: 'approve', amount: 1000, reason: 'too soon' });
  expect(early.status).toBe(409);
  expect(early.body.error.code).toBe('CLAIM_TRANSITION_NOT_ALLOWED');

  expect((await act(claim.id, { action: 'acknowledge' })).body.data.status).toBe('acknowledged');
  const comment = await api(`/claims/${claim.id}/comments`, { method: 'POST', body: { text: 'The venue’s invoice follows by post.' } });
  expect(comment.status).toBe(201);
  expect((await act(claim.id, { action: 'start_review' })).body.data.status).toBe('under_review');

  const tooMuch = await act(claim.id, { action: 'approve', amount: 125_001, reason: 'all of it' });
  expect(tooMuch.status).toBe(400);
  expect(tooMuch.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('more than the 125000 claimed') });
  const noReason = await act(claim.id, { action: 'approve', amount: 1000 });
  expect(noReason.body.error.code).toBe('VALIDATION_ERROR');

  const approved = await act(claim.id, { action: 'approve', amount: 90_000, reason: 'Sound system at its depreciated value' });
  expect(approved.body.data).toMatchObject({
    status: 'approved',
    approved_amount: 90_000,
    decision_reason: 'Sound system at its depreciated value',
  });
  const paid = await act(claim.id, { action: 'record_payment', reference: 'po_test_1' });
  expect(paid.body.data).toMatchObject({ status: 'paid', payment_reference: 'po_test_1', paid_at: expect.any(String) });
  const closed = await act(claim.id, { action: 'close' });
  expect(closed.body.data).toMatchObject({ status: 'closed', closed_at: expect.any(String) });
  expect(closed.body.data.attachments).toEqual([]);

  const history = (await api(`/claims/${claim.id}`)).body.data.history;
  expect(history.map((e: { seq: number; kind: string }) => [e.seq, e.kind])).toEqual([
    [0, 'submitted'],
    [1, 'acknowledged'],
    [2, 'comment'],
    [3, 'under_review'],
    [4, 'approved'],
    [5, 'paid'],
    [6, 'closed'],
  ]);
  expect(history[2]).toMatchObject({ actor: { type: 'api_key' }, note: 'The venue’s invoice follows by post.' });
  expect(history[4]).toMatchObject({
    from_status: 'under_review',
    to_status: 'approved',
    actor: { type: 'test_helper' },
    data: { amount: 90_000 },
  });

  // Once closed, a new claim on the same day may be filed.
  expect((await fileClaim(id, claimBody({ description: 'A second loss that evening.' }))).status).toBe(201);
});

test('when a claim is denied, closed and reopened with a reason, then the denial keeps its code and text and the reopened claim goes back to review; a reopen without a reason, or while another claim is open on the day, is refused', async () => {
  const id = await pastPurchase(account);
  const claim = (await fileClaim(id, claimBody({ claim_type: 'liability' }))).body.data;
  for (const action of ['acknowledge', 'start_review']) expect((await act(claim.id, { action })).status).toBe(200);
  const noCode = await act(claim.id, { action: 'deny', reason: 'Not covered' });
  expect(noCode.body.error.code).toBe('VALIDATION_ERROR');
  const denied = await act(claim.id, { action: 'deny', reason_code: 'excluded_peril', reason: 'Flood is excluded by the policy wording' });
  expect(denied.body.data).toMatchObject({
    status: 'denied',
    denial_code: 'excluded_peril',
    decision_reason: 'Flood is excluded by the policy wording',
    approved_amount: null,
  });
  expect((await act(claim.id, { action: 'record_payment' })).body.error.code).toBe('CLAIM_TRANSITION_NOT_ALLOWED');
  expect((await act(claim.id, { action: 'close' })).body.data.status).toBe('closed');

  expect((await act(claim.id, { action: 'reopen' })).body.error.code).toBe('VALIDATION_ERROR');
  const reopened = await act(claim.id, {
    action: 'reopen',
    reason: 'The claimant sent the surveyor’s report: the damage was wind, not flood',
  });
  expect(reopened.body.data).toMatchObject({ status: 'reopened', closed_at: null });
  expect((await act(claim.id, { action: 'start_review' })).body.data.status).toBe('under_review');
  expect((await api(`/claims/${claim.id}`)).body.data.history.map((e: { kind: string }) => e.kind)).toEqual([
    'submitted',
    'acknowledged',
    'under_review',
    'denied',
    'closed',
    'reopened',
    'under_review',
  ]);

  // A second claim on another purchase: denied and closed, a new one filed, then the old one may not be reopened.
  const id2 = await pastPurchase(account);
  const old = (await fileClaim(id2, claimBody())).body.data;
  for (const body of [
    { action: 'acknowledge' },
    { action: 'start_review' },
    { action: 'deny', reason_code: 'late', reason: 'Late' },
    { action: 'close' },
  ])
    expect((await act(old.id, body)).status).toBe(200);
  const fresh = (await fileClaim(id2, claimBody())).body.data;
  const clash = await act(old.id, { action: 'reopen', reason: 'Try again' });
  expect(clash.status).toBe(409);
  expect(clash.body.error).toMatchObject({ code: 'DUPLICATE_CLAIM', message: expect.stringContaining(`claim ${fresh.id} is open`) });
  expect((await api(`/claims/${old.id}`)).body.data.status).toBe('closed');
});

test('when another account’s key, or a live key, asks for a claim, then it is answered 404 and nothing changes', async () => {
  const id = await pastPurchase(account);
  const claim = (await fileClaim(id, claimBody())).body.data;
  const stranger = other.key;
  expect((await api(`/claims/${claim.id}`, { key: stranger })).status).toBe(404);
  expect((await api(`/purchases/${id}/claims`, { key: stranger })).status).toBe(404);
  expect((await fileClaim(id, claimBody(), stranger)).body.error.code).toBe('NOT_FOUND');
  expect((await api(`/claims/${claim.id}/comments`, { method: 'POST', key: stranger, body: { text: 'hi' } })).status).toBe(404);
  expect((await act(claim.id, { action: 'acknowledge' }, stranger)).status).toBe(404);
  const live = (await createKey(app.container, { rootAccountId: account.accountId, mode: 'live' })).key;
  const liveAct = await act(claim.id, { action: 'acknowledge' }, live);
  expect(liveAct.status).toBe(404);
  expect(liveAct.body.error.code).toBe('ROUTE_NOT_FOUND');
  expect((await api(`/claims/${claim.id}`, { key: live })).status).toBe(404);
  expect((await api(`/claims/${claim.id}`)).body.data).toMatchObject({
    status: 'submitted',
    history: [expect.objectContaining({ kind: 'submitted' })],
  });
});

test('when a product’s claim settings are changed, then claims name only its types and are due in its business days; another account’s product is 404', async () => {
  const own = await createQuotingAccount(app);
  const defaults = await api(`/products/${own.productId}/claim_settings`, { key: own.key });
  expect(defaults.body.data).toMatchObject({
    product_id: own.productId,
    acknowledgement_business_days: 2,
    claim_types: expect.arrayContaining(['property_damage', 'other']),
  });
  const changed = await api(`/products/${own.productId}/claim_settings`, {
    method: 'PATCH',
    key: own.key,
    body: { claim_types: ['rain_out'], acknowledgement_business_days: 5 },
  });
  expect(changed.body.data).toEqual({ product_id: own.productId, claim_types: ['rain_out'], acknowledgement_business_days: 5 });
  expect((await api(`/products/${own.productId}/claim_settings`, { method: 'PATCH', key: own.key, body: {} })).body.error.code).toBe(
    'VALIDATION_ERROR',
  );
  expect((await api(`/products/${own.productId}/claim_settings`, { key: other.key })).status).toBe(404);

  const id = await pastPurchase(own);
  expect((await fileClaim(id, claimBody(), own.key)).body.error.code).toBe('VALIDATION_ERROR');
  const filed = await fileClaim(id, claimBody({ claim_type: 'rain_out' }), own.key);
  expect(filed.status).toBe(201);
  const due = Date.parse(filed.body.data.acknowledgement_due_at) - Date.parse(filed.body.data.created_at);
  expect(due).toBeGreaterThanOrEqual(5 * 86_400_000 - 1000);
});

test('when an approved claim names the claimant’s connected account, then the workflow pays it by one transfer of the approved amount with the claim’s idempotency key, through a processor failure, and records it paid', async () => {
  const id = await pastPurchase(account);
  const claimant = { name: 'Kim Park', email: 'kim@example.com', payout_account: 'acct_1ClaimantPayout' };
  const claim = (await fileClaim(id, claimBody({ claimant }))).body.data;
  expect(claim).toMatchObject({ payout_account: 'acct_1ClaimantPayout', paid_amount: 0 });
  for (const action of ['acknowledge', 'start_review']) expect((await act(claim.id, { action })).status).toBe(200);
  stack.proxy.failNext({
    method: 'POST',
    pathPrefix: '/v1/transfers',
    status: 500,
    body: { error: { type: 'api_error', message: 'processor down' } },
  });
  const approved = await act(claim.id, { action: 'approve', amount: 90_000, reason: 'Depreciated value' });
  expect(approved.body.data.status).toBe('approved');

  const paid = await eventually(async () => {
    const c = (await api(`/claims/${claim.id}`)).body.data;
    return c.status === 'paid' ? c : null;
  }, 90_000);
  expect(paid).toMatchObject({ paid_amount: 90_000, payment_reference: expect.stringMatching(/^tr_/), payout_failure: null });
  expect(paid.history.at(-1)).toMatchObject({
    kind: 'paid',
    from_status: 'approved',
    actor: { type: 'system', id: null },
    data: { amount: 90_000 },
  });
  const transfers = stack.proxy.requests.filter(
    (r) => r.method === 'POST' && r.path === '/v1/transfers' && r.params.get('metadata[claim_id]') === String(claim.id),
  );
  expect(transfers.length).toBeGreaterThanOrEqual(2);
  expect([...new Set(transfers.map((t) => t.idempotencyKey))]).toEqual([`claim-${claim.id}-payment-3`]);
  expect(transfers.map((t) => [t.params.get('amount'), t.params.get('currency'), t.params.get('destination')])).toEqual(
    transfers.map(() => ['90000', 'usd', 'acct_1ClaimantPayout']),
  );
  // Paid by the workflow: a payment by hand is refused now.
  expect((await act(claim.id, { action: 'record_payment' })).body.error.code).toBe('CLAIM_TRANSITION_NOT_ALLOWED');
  expect((await act(claim.id, { action: 'close' })).body.data.status).toBe('closed');
});

test('when a claim is still submitted at its acknowledgement deadline, then the service records the breach once in its history and the claim reads overdue; acknowledging it afterwards still works', async () => {
  const id = await pastPurchase(account);
  const claim = (await fileClaim(id, claimBody())).body.data;
  // The deadline is an input of the claim's run: a run of the same claim due in 2 s stands in for two business days.
  const client = app.container.temporal.client;
  await client.workflow.getHandle(claimWorkflowId(claim.id)).terminate('a run with a short deadline replaces it');
  await client.workflow.start(claimWorkflow, {
    workflowId: claimWorkflowId(claim.id),
    taskQueue: stack.taskQueue,
    args: [
      {
        claimId: claim.id,
        status: 'submitted',
        seq: 0,
        amountClaimedMinor: claim.amount_claimed,
        acknowledgementDueAt: new Date(Date.now() + 2000).toISOString(),
        acknowledgementOverdueRecorded: false,
      },
    ],
  });
  const overdue = await eventually(async () => {
    const c = (await api(`/claims/${claim.id}`)).body.data;
    return c.acknowledgement_overdue ? c : null;
  }, 30_000);
  expect(overdue.status).toBe('submitted');
  expect(overdue.history.map((e: { kind: string; actor: { type: string } }) => [e.kind, e.actor.type])).toEqual([
    ['submitted', 'api_key'],
    ['acknowledgement_overdue', 'system'],
  ]);
  const acknowledged = await act(claim.id, { action: 'acknowledge' });
  expect(acknowledged.body.data).toMatchObject({ status: 'acknowledged', acknowledgement_overdue: true });
  expect(acknowledged.body.data.history.map((e: { seq: number; kind: string }) => [e.seq, e.kind])).toEqual([
    [0, 'submitted'],
    [1, 'acknowledgement_overdue'],
    [2, 'acknowledged'],
  ]);
});

test('when the buyer opens the claim link of the proof-of-coverage email and files a claim in a browser, then mistakes are summarised, the claim goes through the same rules and owner as the API, and a form sent twice files one claim', async () => {
  const id = await pastPurchase(account);
  const purchase = (await api(`/purchases/${id}`)).body.data;
  const [firstDay] = purchase.items[0].covered_units;
  // The email sent to the buyer after payment carries the signed link.
  const link = await eventually(async () => {
    for (const m of stack.smtp.messages.filter((x) => x.to.some((t) => t.toLowerCase() === String(purchase.buyer_email).toLowerCase()))) {
      const found = /Make a claim here: (\S+)/.exec((await PostalMime.parse(m.raw)).text ?? '')?.[1];
      if (found?.includes(`/claim/c1.${id}.`)) return found;
    }
    return null;
  }, 60_000);
  const path = new URL(link!).pathname;
  expect(path).toBe(`/claim/${signClaimToken(app.container.config.WITHDRAWAL_LINK_KEY, id)}`);

  const browser = await launchBrowser(app.container.config.CHROMIUM_PATH);
  let claimId: number;
  try {
    const tab = await browser.newPage();
    expect((await tab.goto(`${app.baseUrl}${path}`))!.status()).toBe(200);
    expect(await axeViolations(tab)).toEqual([]);
    // Sent empty: 400, the error summary links each mistake to its field.
    const [empty] = await Promise.all([tab.waitForNavigation(), tab.click('#submit')]);
    expect(empty!.status()).toBe(400);
    expect(await tab.$eval('#error-summary h2', (e) => e.textContent)).toBe('There is a problem');
    expect(await tab.$$eval('#error-summary a', (as) => as.map((a) => a.getAttribute('href')))).toEqual([
      '#covered-unit',
      '#incident-date',
      '#incident-time',
      '#claim-type',
      '#description',
      '#name',
      '#email',
      '#amount',
    ]);
    expect(await axeViolations(tab)).toEqual([]);
    await tab.select('#covered-unit', String(firstDay.id));
    await tab.$eval('#incident-date', (e) => ((e as unknown as { value: string }).value = '2027-05-01'));
    await tab.$eval('#incident-time', (e) => ((e as unknown as { value: string }).value = '19:30'));
    await tab.select('#claim-type', 'property_damage');
    await tab.type('#description', 'A storm flooded the marquee.');
    await tab.type('#amount', '1250.00');
    await tab.type('#name', 'Kim Park');
    await tab.type('#email', 'kim@example.com');
    const [filed] = await Promise.all([tab.waitForNavigation(), tab.click('#submit')]);
    expect(filed!.status()).toBe(200);
    expect(await tab.$eval('h1', (e) => e.textContent)).toBe('Claim received');
    expect(await axeViolations(tab)).toEqual([]);
    claimId = Number(await tab.$eval('#state', (e) => e.getAttribute('data-claim')));
  } finally {
    await browser.close();
  }
  // The same claim as the API files: the unit in its time zone, minor units, its owner running.
  const claim = (await api(`/claims/${claimId}`)).body.data;
  expect(claim).toMatchObject({
    purchase_id: id,
    covered_unit_id: firstDay.id,
    incident_at: '2027-05-02T00:30:00.000Z',
    amount_claimed: 125_000,
    claimant: { name: 'Kim Park', email: 'kim@example.com' },
    status: 'submitted',
    history: [expect.objectContaining({ kind: 'submitted', actor: { type: 'buyer', id: null } })],
  });
  expect((await act(claimId, { action: 'acknowledge' })).body.data.status).toBe('acknowledged');

  // Without a browser: the same form twice files one claim; a second claim on the day is refused (409);
  // an incident outside the cover is the date's mistake (400); another site's form, a forged link, a withdrawal token.
  const send = (form: Record<string, string>, p = path, headers: Record<string, string> = {}) =>
    call(app.baseUrl, p, {
      method: 'POST',
      rawBody: new URLSearchParams(form).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
  const form = {
    covered_unit: String(purchase.items[0].covered_units[1].id),
    incident_date: '2027-05-02',
    incident_time: '10:00',
    claim_type: 'equipment_damage',
    description: 'The projector fell.',
    amount: '80',
    name: 'Kim Park',
    email: 'kim@example.com',
    submission: 'a'.repeat(32),
  };
  const first = await send(form);
  const again = await send(form);
  expect([first.status, again.status, again.text.includes('already received')]).toEqual([200, 200, true]);
  const dup = await send({ ...form, submission: 'b'.repeat(32) });
  expect([dup.status, dup.text.includes('already open')]).toEqual([409, true]);
  const outside = await send({ ...form, incident_date: '2027-05-03', incident_time: '05:00', submission: 'c'.repeat(32) });
  expect([outside.status, outside.text.includes('must be within the cover you chose')]).toEqual([400, true]);
  expect((await send(form, path, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
  expect((await send(form, `/claim/c1.${id}.${'A'.repeat(43)}`)).status).toBe(404);
  expect((await call(app.baseUrl, `/claim/${signWithdrawalToken(app.container.config.WITHDRAWAL_LINK_KEY, id)}`)).status).toBe(404);
  expect((await api(`/purchases/${id}/claims`)).body.data.map((c: { amount_claimed: number }) => c.amount_claimed)).toEqual([
    8000, 125_000,
  ]);
});
