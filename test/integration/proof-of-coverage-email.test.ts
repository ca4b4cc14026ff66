/**
 * teamEmailProofofCoverage (issue 7) against the real servers: a purchase is issued through the
 * API and the worker (Chromium, fake-gcs, Temporal), then its proof of coverage is emailed
 * through a real SMTP server in this process (smtp-server) and each message is parsed back
 * (postal-mime): recipients, attachments, links that work, and send records in PostgreSQL.
 */
import PostalMime from 'postal-mime';
import { startTestApp, type TestApp } from '../helpers/app';
import { eventually, startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';
import { call, createKey, createRootAccount } from '../helpers/fixtures';
import { WEBHOOK_SECRET } from '../helpers/purchases';
import {
  buyAndPay,
  createAgency,
  eventSelection,
  quoteForNewBuyer,
  waitIssued,
  type Agency,
  type PaidPurchase,
} from '../helpers/certificates';
import { startSmtp, type TestSmtp } from '../helpers/smtp';
import { download } from '../helpers/documents';
import { proofEmailWorkflowId } from '../../workflows/contracts';
import { createBuyerEmailAfterPayment } from '../../src/proof-of-coverage/after-payment';
import { createProofOfCoverageEmailsRepository } from '../../src/proof-of-coverage/repository';

jest.setTimeout(180_000);

let smtp: TestSmtp;
let worker: TestWorker;
let app: TestApp;
let agency: Agency;
let paid: PaidPurchase;
let issued: any;

beforeAll(async () => {
  smtp = await startSmtp();
  const taskQueue = uniqueTaskQueue();
  worker = await startTestWorker(taskQueue, {}, { SMTP_URL: smtp.url, MAIL_FROM: 'Certificates <certificates@agency.example>' });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' });
  agency = await createAgency(app);
  paid = await buyAndPay(agency, eventSelection(agency, { start: '2027-05-01', end: '2027-05-02' }));
  issued = await waitIssued(agency, paid.paymentIntent);
});

afterAll(async () => {
  await app?.close();
  await worker?.shutdown();
  await smtp?.close();
});

const send = (body: Record<string, unknown>, surface = '/platform-agency-certs') =>
  call(app.baseUrl, `${surface}/teamEmailProofofCoverage`, {
    method: 'POST',
    key: agency.key,
    body: { payment_intent: paid.paymentIntent, ...body },
  });

async function messagesTo(address: string, count = 1) {
  const raws = await eventually(async () => {
    const found = smtp.messages.filter((m) => m.to.includes(address));
    return found.length >= count ? found : null;
  }, 60_000);
  return Promise.all(raws!.map((m) => PostalMime.parse(m.raw)));
}

/**
 * Waits until every proof-of-coverage email queued for `purchaseIds` is sent or failed (none is
 * left to send), and answers how many were queued: a refused request queues none.
 */
async function emailsSettled(purchaseIds: number[]): Promise<number> {
  const settled = await eventually(async () => {
    const rows: Array<{ status: string }> = await app.container
      .db('proof_of_coverage_emails')
      .whereIn('purchase_id', purchaseIds)
      .select('status');
    return rows.every((r) => r.status !== 'queued') ? { queued: rows.length } : null;
  }, 60_000);
  return settled!.queued;
}

/**
 * The buyer's own email after payment of purchase `purchaseId` (issue 48, item 9), once it is
 * settled (sent or failed): its row, or null when the purchase's run ended without queuing one.
 */
async function buyerEmailSettled(purchaseId: number): Promise<{ id: number; status: string; recipient: string } | null> {
  // The sale's run queues it when it marks the purchase issued, before it ends.
  await app.container.temporal.client.workflow.getHandle(`purchase-${purchaseId}`).result();
  const row = await eventually(async () => {
    const r = await app.container
      .db('proof_of_coverage_emails')
      .where({ purchase_id: purchaseId, after_payment: true })
      .first('id', 'status', 'recipient');
    return r === undefined ? { none: true as const } : r.status === 'queued' ? null : { none: false as const, ...r };
  }, 60_000);
  return row!.none ? null : { id: row!.id, status: row!.status, recipient: row!.recipient };
}

const buyerEmailOf = async (purchaseId: number): Promise<string> =>
  (await app.container.db('purchases').where({ id: purchaseId }).first('buyer_email')).buyer_email;

test('when a purchase is paid and issued, then its buyer is emailed the proof of coverage once, with the withdrawal link, without anyone asking', async () => {
  const buyer = await buyerEmailOf(paid.purchaseId);
  expect(buyer).toMatch(/@example\.com$/);
  const row = await buyerEmailSettled(paid.purchaseId);
  expect(row).toMatchObject({ status: 'sent', recipient: buyer });
  const [mail] = await messagesTo(buyer);
  expect(mail!.subject).toBe('Proof of coverage from Harbor & Pine Insurance Agency: Special Event Liability');
  for (const c of issued.certificates) expect(mail!.text).toContain(c.certificate_number);
  expect(mail!.text).toMatch(/Withdraw from contract here: http\S+/);
  // The agent can follow it up like any other email.
  const status = await call(app.baseUrl, `/api/v1/proof_of_coverage_emails/${row!.id}`, { key: agency.key });
  expect(status.body.data).toMatchObject({ purchase_id: paid.purchaseId, to: buyer, status: 'sent' });

  // Asked again (a retried or repeated issuance), it queues nothing and sends nothing more.
  const again = createBuyerEmailAfterPayment({
    emails: createProofOfCoverageEmailsRepository(app.container.db),
    startSending: (ids) => app.container.purchaseWorkflows.startProofOfCoverageEmail(ids),
  });
  expect(await again.send(paid.purchaseId)).toBe(row!.id);
  expect(await app.container.db('proof_of_coverage_emails').where({ purchase_id: paid.purchaseId, after_payment: true }).count()).toEqual([
    { count: '1' },
  ]);
  expect(smtp.messages.filter((m) => m.to.includes(buyer))).toHaveLength(1);
});

test('when the purchase is read by its account, then it carries the buyer’s checkout-complete page link with its token, which opens that purchase’s page', async () => {
  const res = await call(app.baseUrl, `/api/v1/purchases/${paid.purchaseId}`, { key: agency.key });
  expect(res.status).toBe(200);
  const url = new URL(res.body.data.buyer_page_url);
  expect(url.pathname).toBe('/checkout/complete');
  expect(url.searchParams.get('purchase')).toBe(String(paid.purchaseId));
  const stored = await app.container.db('purchases').where({ id: paid.purchaseId }).first('return_token');
  expect(url.searchParams.get('token')).toBe(stored.return_token);
  const page = await fetch(`${app.baseUrl}${url.pathname}${url.search}`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain(issued.certificates[0].certificate_number);
  // Another account reads no such purchase (and so no link).
  const other = await createAgency(app, 'Link Probe Agency');
  const theirs = await call(app.baseUrl, `/api/v1/purchases/${paid.purchaseId}`, { key: other.key });
  expect(theirs.status).toBe(404);
  expect(theirs.text).not.toContain(stored.return_token);
});

test('when sent to two addresses (one repeated in other case), then each gets one email with both PDFs attached and working links, recorded as sent', async () => {
  const res = await send({
    idp_teammate_uuid: agency.teammateUuid,
    email_addresses: ['venue@grandhall.example', 'jordan@example.com', 'VENUE@grandhall.example'],
    note: 'For the 1–2 May event.',
  });
  expect(res.status).toBe(200);
  expect(res.body.emails.map((e: any) => [e.to, e.status])).toEqual([
    ['venue@grandhall.example', 'queued'],
    ['jordan@example.com', 'queued'],
  ]);

  for (const address of ['venue@grandhall.example', 'jordan@example.com']) {
    const [mail] = await messagesTo(address);
    expect(mail!.from?.address).toBe('certificates@agency.example');
    expect(mail!.subject).toBe('Proof of coverage from Harbor & Pine Insurance Agency: Special Event Liability');
    expect(mail!.messageId).toMatch(/^<proof-of-coverage-\d+@agency\.example>$/);
    expect(mail!.text).toContain('For the 1–2 May event.');
    expect(mail!.text).toContain(issued.product_zips[0].proof_of_coverage_url);
    for (const c of issued.certificates) expect(mail!.text).toContain(`${c.certificate_number}: ${c.coverage_label} 00:00`);
    const attached = mail!.attachments.map((a) => a.filename).sort();
    expect(attached).toEqual(issued.certificates.map((c: any) => `${c.certificate_number}.pdf`).sort());
    for (const a of mail!.attachments) {
      const c = issued.certificates.find((x: any) => `${x.certificate_number}.pdf` === a.filename);
      expect(Buffer.from(a.content as ArrayBuffer).length).toBe(c.size_bytes);
    }
    const zipLink = /All certificates in one zip[^:]*: (\S+)/.exec(mail!.text ?? '')?.[1];
    expect((await download(zipLink!)).subarray(0, 2).toString()).toBe('PK');
  }
  expect(smtp.messages.filter((m) => m.to.some((t) => t.toLowerCase() === 'venue@grandhall.example'))).toHaveLength(1);

  const rows = await app.container.db('proof_of_coverage_emails').whereIn(
    'id',
    res.body.emails.map((e: any) => e.email_id),
  );
  await eventually(async () => {
    const now = await app.container.db('proof_of_coverage_emails').whereIn(
      'id',
      rows.map((r) => r.id),
    );
    return now.every((r) => r.status === 'sent');
  });
  const sent = await app.container.db('proof_of_coverage_emails').whereIn(
    'id',
    rows.map((r) => r.id),
  );
  expect(sent.map((r) => [r.status, r.delivery, r.attempts])).toEqual([
    ['sent', 'attachments', 1],
    ['sent', 'attachments', 1],
  ]);
});

test('when the relay refuses the first attempt, then the send is retried and the recipient gets exactly one email', async () => {
  smtp.failNext(1);
  const refusedBefore = smtp.refused;
  const res = await send({ idp_teammate_uuid: agency.teammateUuid, email_addresses: ['retry@grandhall.example'] });
  expect(res.status).toBe(200);
  await messagesTo('retry@grandhall.example');
  expect(smtp.refused).toBe(refusedBefore + 1);
  const row = await eventually(async () => {
    const r = await app.container.db('proof_of_coverage_emails').where({ id: res.body.emails[0].email_id }).first();
    return r.status === 'sent' ? r : null;
  });
  expect(row.attempts).toBe(2);
  // Its workflow has finished (no attempt is left to send a second one).
  const sending = app.container.temporal.client.workflow.getHandle(proofEmailWorkflowId(res.body.emails[0].email_id));
  await eventually(async () => (await sending.describe()).status.name === 'COMPLETED', 60_000);
  expect(smtp.messages.filter((m) => m.to.includes('retry@grandhall.example'))).toHaveLength(1);

  // The agency reads the email's progress back by its email_id.
  const emailId = res.body.emails[0].email_id as number;
  const read = await call(app.baseUrl, `/api/v1/proof_of_coverage_emails/${emailId}`, { key: agency.key });
  expect(read.status).toBe(200);
  expect(read.body.data).toEqual({
    object: 'proof_of_coverage_email',
    id: emailId,
    purchase_id: paid.purchaseId,
    to: 'retry@grandhall.example',
    status: 'sent',
    delivery: 'attachments',
    attempts: 2,
    certificate_holder_id: null,
    failure_reason: null,
    created_at: row.created_at.toISOString(),
    sent_at: row.sent_at.toISOString(),
  });
  // Nobody else reads it: another account, the same account's live key, an id that is not one.
  const rootAccountId = (await app.container.db('purchases').where({ id: paid.purchaseId }).first('root_account_id')).root_account_id;
  const other = await createRootAccount(app.container, 'Other Mailer');
  for (const key of [
    (await createKey(app.container, { rootAccountId: other.id, mode: 'test' })).key,
    (await createKey(app.container, { rootAccountId, mode: 'live' })).key,
  ]) {
    const theirs = await call(app.baseUrl, `/api/v1/proof_of_coverage_emails/${emailId}`, { key });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error).toEqual({ code: 'NOT_FOUND', message: `proof_of_coverage_email ${emailId} not found` });
  }
  expect((await call(app.baseUrl, '/api/v1/proof_of_coverage_emails/abc', { key: agency.key })).status).toBe(400);
});

test('when the PDFs exceed the attachment limit, then the email carries a download link per certificate instead', async () => {
  const { taskQueue } = worker;
  await worker.shutdown();
  worker = await startTestWorker(taskQueue, {}, { SMTP_URL: smtp.url, PROOF_EMAIL_ATTACHMENT_MAX_BYTES: '1000' });
  const res = await send(
    { idp_root_account_uuid: agency.rootUuid, email_addresses: ['links@grandhall.example'] },
    '/platform-agency-root-certs',
  );
  expect(res.status).toBe(200);
  const [mail] = await messagesTo('links@grandhall.example');
  expect(mail!.attachments).toHaveLength(0);
  expect(mail!.text).toContain('too large to attach');
  const links = [...(mail!.text ?? '').matchAll(/download: (\S+)/g)].map((m) => m[1]!);
  expect(links).toHaveLength(issued.certificates.length);
  for (const link of links) expect((await download(link)).subarray(0, 5).toString()).toBe('%PDF-');
});

test('when the request is out of scope or malformed, then nothing is sent and the error says why', async () => {
  const queuedBefore = await emailsSettled([paid.purchaseId]); // the earlier tests' emails are all sent
  const before = smtp.messages.length;
  const addresses = ['a@example.com'];
  expect(await send({ idp_teammate_uuid: agency.otherTeammateUuid, email_addresses: addresses })).toMatchObject({
    status: 404,
    body: { code: 'NOT_FOUND' },
  });
  expect(await send({ idp_teammate_uuid: agency.teammateUuid, email_addresses: addresses, payment_intent: 'pi_unknown' })).toMatchObject({
    status: 404,
    body: { code: 'NOT_FOUND' },
  });
  for (const email_addresses of [
    [],
    ['not-an-address'],
    Array.from({ length: 21 }, (_, i) => `r${i}@example.com`),
    ['a@example.com\r\nBcc: x@evil.example'],
  ]) {
    expect(await send({ idp_teammate_uuid: agency.teammateUuid, email_addresses })).toMatchObject({
      status: 400,
      body: { code: 'VALIDATION_ERROR' },
    });
  }
  expect(
    await send({
      idp_teammate_uuid: agency.teammateUuid,
      email_addresses: Array.from({ length: 20 }, (_, i) => `ok${i}@example.com`),
      note: 'x'.repeat(2001),
    }),
  ).toMatchObject({ status: 400 });

  // Until issuance has finished there is nothing to send.
  await app.container.db('purchases').where({ id: paid.purchaseId }).update({ certificates_issued_at: null });
  try {
    expect(await send({ idp_teammate_uuid: agency.teammateUuid, email_addresses: addresses })).toMatchObject({
      status: 400,
      body: { code: 'INVALID_REQUEST' },
    });
  } finally {
    await app.container.db('purchases').where({ id: paid.purchaseId }).update({ certificates_issued_at: app.container.db.fn.now() });
  }
  // The refused requests queued no email, and none queued earlier is left to send.
  expect(await emailsSettled([paid.purchaseId])).toBe(queuedBefore);
  expect(smtp.messages.length).toBe(before);
});

test("when another account's newer purchase holds the same payment intent, then the caller still emails its own certificates and the other account reaches only its own purchase", async () => {
  const other = await createAgency(app, 'Other Coast Agency');
  const { quote: quoted } = await quoteForNewBuyer(other, [eventSelection(other, { start: '2027-05-01', end: '2027-05-02' })]);
  expect(quoted.status).toBe(200);
  const theirs = quoted.body.purchase_id as number;
  expect(theirs).toBeGreaterThan(paid.purchaseId);
  // The same processor payment intent on two accounts' purchases (a replayed or misattributed event).
  await app.container.db('purchases').where({ id: theirs }).update({ payment_intent_id: paid.paymentIntent });

  const mine = await send({ idp_teammate_uuid: agency.teammateUuid, email_addresses: ['shared-pi@grandhall.example'] });
  expect(mine).toMatchObject({ status: 200, body: { purchase_id: paid.purchaseId, payment_intent: paid.paymentIntent } });
  const [mail] = await messagesTo('shared-pi@grandhall.example');
  // This account's certificates (linked, not attached: the worker runs with a 1000-byte attachment limit since the test above).
  for (const c of issued.certificates) expect(mail!.text).toContain(c.certificate_number);

  // The other account sees only its own purchase under that payment intent: not issued yet, nothing sent.
  const queuedBefore = await emailsSettled([paid.purchaseId, theirs]); // this account's email above is sent
  const before = smtp.messages.length;
  const otherView = await call(app.baseUrl, '/platform-agency-certs/teamEmailProofofCoverage', {
    method: 'POST',
    key: other.key,
    body: { idp_teammate_uuid: other.teammateUuid, payment_intent: paid.paymentIntent, email_addresses: ['other@example.com'] },
  });
  expect(otherView).toMatchObject({ status: 400, body: { code: 'INVALID_REQUEST' } });
  // The refused request queued no email, and none queued earlier is left to send.
  expect(await emailsSettled([paid.purchaseId, theirs])).toBe(queuedBefore);
  expect(smtp.messages.length).toBe(before);
});

test('when a cancellation voided one day, then the email carries only the certificate still in force and no zip (which holds both); once every day is voided nothing is sent', async () => {
  const bought = await buyAndPay(agency, eventSelection(agency, { start: '2027-05-01', end: '2027-05-02' }));
  const certs = (await waitIssued(agency, bought.paymentIntent)).certificates as Array<{ certificate_number: string }>;
  const purchase = async () => (await call(app.baseUrl, `/api/v1/purchases/${bought.purchaseId}`, { key: agency.key })).body.data;
  /** Cancels the purchase's unit `unitId` (its `n`th cancellation, from 0) and waits until that cancellation is completed. */
  const cancelUnit = async (unitId: number, n: number) => {
    const cancelled = await call(app.baseUrl, `/api/v1/purchases/${bought.purchaseId}/cancel`, {
      method: 'POST',
      key: agency.key,
      body: { covered_unit_ids: [unitId] },
    });
    expect(cancelled.status).toBe(200);
    await eventually(async () => (await purchase()).cancellations[n]?.status === 'completed');
  };
  /** Asks for the purchase's proof of coverage to be emailed to `address` by the agency's teammate. */
  const emailTo = (address: string) =>
    call(app.baseUrl, '/platform-agency-certs/teamEmailProofofCoverage', {
      method: 'POST',
      key: agency.key,
      body: { idp_teammate_uuid: agency.teammateUuid, purchase_id: bought.purchaseId, email_addresses: [address] },
    });
  const units = (await purchase()).items[0].covered_units;
  await cancelUnit(units[1].id, 0);

  const res = await emailTo('after-cancel@grandhall.example');
  expect(res.status).toBe(200);
  const [mail] = await messagesTo('after-cancel@grandhall.example');
  expect(mail!.text).toContain(certs[0]!.certificate_number);
  expect(mail!.text).not.toContain(certs[1]!.certificate_number);
  expect(mail!.text).not.toMatch(/All certificates in one zip/);
  expect(mail!.attachments.map((a) => a.filename)).not.toContain(`${certs[1]!.certificate_number}.pdf`);

  await cancelUnit(units[0].id, 1);
  const none = await emailTo('after-all@grandhall.example');
  expect([none.status, none.body.code]).toEqual([400, 'INVALID_REQUEST']);
  expect(none.body.message).toMatch(/voided/);
});

test('when an endorsement superseded the certificates, then the email carries the new versions only: a superseded certificate can no longer be emailed as proof', async () => {
  const bought = await buyAndPay(agency, eventSelection(agency, { start: '2027-05-01', end: '2027-05-02' }));
  const old = ((await waitIssued(agency, bought.paymentIntent)).certificates as Array<{ certificate_number: string }>).map(
    (c) => c.certificate_number,
  );
  const api = (path: string, body: unknown) => call(app.baseUrl, `/api/v1${path}`, { method: 'POST', key: agency.key, body });
  const q = await api(`/purchases/${bought.purchaseId}/endorsement_quote`, {
    changes: [{ type: 'named_insured', name: 'Jordan Lee Productions' }],
  });
  expect(q.status).toBe(201);
  const done = await api(`/purchases/${bought.purchaseId}/endorse`, { quote_id: q.body.data.id });
  expect(done.status).toBe(200);
  const next = (done.body.data.reissued as Array<{ to: string }>).map((r) => r.to);

  const res = await call(app.baseUrl, '/platform-agency-certs/teamEmailProofofCoverage', {
    method: 'POST',
    key: agency.key,
    body: { idp_teammate_uuid: agency.teammateUuid, purchase_id: bought.purchaseId, email_addresses: ['after-endorse@grandhall.example'] },
  });
  expect(res.status).toBe(200);
  const [mail] = await messagesTo('after-endorse@grandhall.example');
  for (const n of next) expect(mail!.text).toContain(n);
  for (const n of old) expect(mail!.text).not.toMatch(new RegExp(`${n}(?!-R)`)); // the old number only as the prefix of its new version's
  // Attached, or linked (an earlier test left the worker with a small attachment limit): either way only these.
  for (const a of mail!.attachments) expect(next.map((n) => `${n}.pdf`)).toContain(a.filename);
});

test('when a certificate holder is emailed its own set, then the email carries only that holder’s certificates and no zip; an unknown holder is refused and nothing is sent', async () => {
  const bought = await buyAndPay(agency, eventSelection(agency, { start: '2027-05-01', end: '2027-05-02' }));
  const answered = ((await waitIssued(agency, bought.paymentIntent)).certificates as Array<{ certificate_number: string }>).map(
    (c) => c.certificate_number,
  );
  const added = await call(app.baseUrl, `/api/v1/purchases/${bought.purchaseId}/certificate_holders`, {
    method: 'POST',
    key: agency.key,
    body: {
      name: 'Riverside Hall LLC',
      address: { line1: '200 River Rd', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
      email: 'events@riversidehall.example',
    },
  });
  expect(added.status).toBe(201);
  const mine = (added.body.data.certificates as Array<{ certificate_number: string }>).map((c) => c.certificate_number);
  const email = (body: Record<string, unknown>) =>
    call(app.baseUrl, '/platform-agency-certs/teamEmailProofofCoverage', {
      method: 'POST',
      key: agency.key,
      body: { idp_teammate_uuid: agency.teammateUuid, purchase_id: bought.purchaseId, ...body },
    });

  await buyerEmailSettled(bought.purchaseId); // the buyer's own email is out before messages are counted
  const before = smtp.messages.length;
  const unknown = await email({ email_addresses: ['nobody@riversidehall.example'], certificate_holder_id: 2_147_483_000 });
  expect([unknown.status, unknown.body.code]).toEqual([404, 'NOT_FOUND']);
  expect(smtp.messages.length).toBe(before);

  const res = await email({ email_addresses: ['events@riversidehall.example'], certificate_holder_id: added.body.data.id });
  expect(res.status).toBe(200);
  const [mail] = await messagesTo('events@riversidehall.example'); // sent once the holder's certificates are stored
  for (const n of mine) expect(mail!.text).toContain(n);
  for (const a of mail!.attachments) expect(mine.map((n) => `${n}.pdf`)).toContain(a.filename);
  for (const n of answered) expect(mail!.text).not.toContain(n);
  expect(mail!.text).not.toMatch(/All certificates in one zip/);
});

test('when the account turns the buyer email off, then GET and PATCH /api/v1/account say so and a new purchase’s buyer gets no email; turned on again, the next one does', async () => {
  const account = (body?: unknown) =>
    call(app.baseUrl, '/api/v1/account', body === undefined ? { key: agency.key } : { method: 'PATCH', key: agency.key, body });
  expect((await account()).body.data.settings).toEqual({
    send_buyer_email_after_payment: true,
    claims_notification_email: null,
    personal_data_retention_years: 7,
  });
  const off = await account({ settings: { send_buyer_email_after_payment: false } });
  expect(off.status).toBe(200);
  expect(off.body.data.settings).toEqual({
    send_buyer_email_after_payment: false,
    claims_notification_email: null,
    personal_data_retention_years: 7,
  });
  expect((await account()).body.data.settings).toEqual({
    send_buyer_email_after_payment: false,
    claims_notification_email: null,
    personal_data_retention_years: 7,
  });
  const unknown = await account({ settings: { send_everything: true } });
  expect([unknown.status, unknown.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);

  const quiet = await buyAndPay(agency, eventSelection(agency, { start: '2027-05-01', end: '2027-05-02' }));
  await waitIssued(agency, quiet.paymentIntent);
  expect(await buyerEmailSettled(quiet.purchaseId)).toBeNull();
  const quietBuyer = await buyerEmailOf(quiet.purchaseId);
  expect(smtp.messages.filter((m) => m.to.includes(quietBuyer))).toHaveLength(0);

  expect((await account({ settings: { send_buyer_email_after_payment: true } })).body.data.settings).toEqual({
    send_buyer_email_after_payment: true,
    claims_notification_email: null,
    personal_data_retention_years: 7,
  });
  const told = await buyAndPay(agency, eventSelection(agency, { start: '2027-05-01', end: '2027-05-02' }));
  await waitIssued(agency, told.paymentIntent);
  expect(await buyerEmailSettled(told.purchaseId)).toMatchObject({ status: 'sent', recipient: await buyerEmailOf(told.purchaseId) });
});
