/**
 * Certificate holders of a purchase, on the real stack (API, Temporal dev server, worker with
 * Chromium, fake-gcs-server, stripe-mock, PostgreSQL): the buyer's answered holder is the first;
 * adding one issues it a certificate per covered unit still active (rendered and stored through the
 * same steps as issuance, grouped by holder in getCertificates and the zips, announced by
 * `certificate_holder.added`); removing one voids its certificates; the last holder stays while
 * units are active; bad input and other accounts' purchases change nothing; two changes sent at
 * once are applied one at a time. The purchase bought is two days, 2027-05-01 and 2027-05-02
 * (America/Chicago), holder "Lake House Inc" from the answers.
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createKey, createRootAccount } from '../helpers/fixtures';
import { checkout, createQuotingAccount, type QuotingAccount, issuedPurchase } from '../helpers/purchases';
import { eventually } from '../helpers/worker';
import { download, pdfText, readZip } from '../helpers/documents';
import type { TestSmtp } from '../helpers/smtp';
import PostalMime from 'postal-mime';
import { DateTime } from 'luxon';
import { CERTIFICATE_TEXT_LIMITS } from '../../src/pdf/certificate-template';
import { holderNoticesWorkflowId } from '../../workflows/contracts';

jest.setTimeout(180_000);

const stack = useStack({
  smtp: true,
  workerEnv: { MAIL_FROM: 'Certificates <certificates@agency.example>' },
  app: { RATE_LIMIT_PER_MINUTE: '100000' },
});
let smtp: TestSmtp;
let app: TestApp;
let account: QuotingAccount;

const api = (path: string, init: { method?: string; body?: unknown; key?: string; headers?: Record<string, string> } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });
const VENUE = {
  name: 'Riverside Hall LLC',
  address: { line1: '200 River Rd', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
  email: 'events@riversidehall.example',
  additional_insured: true,
  waiver_of_subrogation: true,
  description_of_operations: 'Spring gala, Riverside Hall, 2027-05-01 to 2027-05-02',
};
const addHolder = (purchaseId: number, body: unknown, headers: Record<string, string> = {}) =>
  api(`/purchases/${purchaseId}/certificate_holders`, { method: 'POST', body, headers });
const holders = async (purchaseId: number) =>
  (await api(`/purchases/${purchaseId}/certificate_holders`)).body.data as Array<{
    id: number;
    name: string;
    status: string;
    source: string;
    certificates: Array<{ certificate_number: string; status: string; covered_unit_id: number }>;
  }>;
const certificatesOf = async (purchaseId: number) => {
  const rootUuid = (await api('/account')).body.data.root_account.idp_root_account_uuid as string;
  const res = await call(app.baseUrl, '/platform-agency-root-certs/getCertificates', {
    method: 'POST',
    key: account.key,
    body: { purchase_id: purchaseId, idp_root_account_uuid: rootUuid },
  });
  return res.body;
};
/** Waits until every certificate of every active holder is issued (stored). */
const waitHoldersIssued = (purchaseId: number) =>
  eventually(async () => {
    const hs = await holders(purchaseId);
    return hs.every((h) => h.status === 'removed' || h.certificates.every((c) => c.status !== 'issuing')) ? hs : null;
  }, 90_000);

beforeAll(async () => {
  ({ app, smtp } = stack);
  account = await createQuotingAccount(app);
});

test('when a venue is added as an additional-insured holder, then it gets one certificate per covered day with its marks, grouped by holder in getCertificates and the zips, and certificate_holder.added names them', async () => {
  const id = await issuedPurchase(app, account);
  const before = await holders(id);
  expect(before).toHaveLength(1);
  expect(before[0]).toMatchObject({ source: 'answers', name: 'Lake House Inc', status: 'active' });
  expect(before[0]!.certificates.map((c) => c.status)).toEqual(['issued', 'issued']);

  const res = await addHolder(id, VENUE);
  expect(res.status).toBe(201);
  expect(res.body.data).toMatchObject({
    object: 'certificate_holder',
    source: 'api',
    name: VENUE.name,
    additional_insured: true,
    waiver_of_subrogation: true,
    status: 'active',
  });
  expect(res.body.data.certificates).toHaveLength(2);
  const holderId = res.body.data.id as number;

  // Announced once its certificates and the rebuilt zips are stored.
  const event = await eventually(async () => {
    const list = (await api('/events?type=certificate_holder.added')).body.data as Array<{
      data: { object: { id: number; certificate_numbers: string[] } };
    }>;
    return list.find((e) => e.data.object.id === holderId) ?? null;
  }, 90_000);
  const after = (await waitHoldersIssued(id))!;
  const venue = after.find((h) => h.id === holderId)!;
  expect(venue.certificates.map((c) => c.status)).toEqual(['issued', 'issued']);
  expect(venue.certificates.every((c) => c.certificate_number.includes(`-H${holderId}-`))).toBe(true);

  const set = await certificatesOf(id);
  expect(set.status).toBe('issued');
  expect(set.certificates).toHaveLength(4);
  const forVenue = set.certificates.filter((c: { certificate_holder: { id: number } | null }) => c.certificate_holder?.id === holderId);
  expect(forVenue).toHaveLength(2);
  // The venue's own certificate prints its name, address, marks and description.
  const text = pdfText(await download(forVenue[0].download_url));
  expect(text).toContain('Riverside Hall LLC');
  expect(text).toContain('200 River Rd');
  expect(text).toContain('Spring gala, Riverside Hall');
  // The answered holder's certificates are untouched; the zip puts each holder in a folder of its own.
  const zip = await readZip(await download(set.payment_zip_url));
  const names = [...zip.keys()].filter((n) => n.endsWith('.pdf')).sort();
  expect(names).toHaveLength(4);
  expect(names.filter((n) => n.includes(`/holder-${holderId}/`))).toHaveLength(2);
  expect(names.filter((n) => n.includes(`/holder-${before[0]!.id}/`))).toHaveLength(2);
  expect(event!.data.object.certificate_numbers.sort()).toEqual(venue.certificates.map((c) => c.certificate_number).sort());
});

test('when a holder is removed, then its certificates are voided and verification says so; the last holder cannot be removed while units are active', async () => {
  const id = await issuedPurchase(app, account);
  const [answered] = await holders(id);
  const added = (await addHolder(id, { ...VENUE, additional_insured: false, waiver_of_subrogation: false })).body.data;
  await waitHoldersIssued(id);

  const removed = await api(`/purchases/${id}/certificate_holders/${added.id}`, { method: 'DELETE' });
  expect(removed.status).toBe(200);
  expect(removed.body.data.status).toBe('removed');
  expect(removed.body.data.certificates.map((c: { status: string }) => c.status)).toEqual(['voided', 'voided']);
  const page = await call(app.baseUrl, `/verify/${removed.body.data.certificates[0].certificate_number}`, {
    headers: { accept: 'application/json' },
  });
  expect(page.body.state).toBe('voided');

  const again = await api(`/purchases/${id}/certificate_holders/${added.id}`, { method: 'DELETE' });
  expect(again.status).toBe(404);
  const last = await api(`/purchases/${id}/certificate_holders/${answered!.id}`, { method: 'DELETE' });
  expect(last.status).toBe(409);
  expect(last.body.error.code).toBe('LAST_CERTIFICATE_HOLDER');
  // The answered holder's certificates stay in force.
  expect((await holders(id))[0]!.certificates.map((c) => c.status)).toEqual(['issued', 'issued']);
  const event = await eventually(async () => {
    const list = (await api('/events?type=certificate_holder.removed')).body.data as Array<{
      data: { object: { id: number; certificate_numbers: string[] } };
    }>;
    return list.find((e) => e.data.object.id === added.id) ?? null;
  });
  expect(event!.data.object.certificate_numbers).toHaveLength(2);
});

test('when two holders are added at once, and one request is sent twice with its Idempotency-Key, then each is added once with exactly one certificate per unit', async () => {
  const id = await issuedPurchase(app, account);
  const key = `holder-${id}-city`;
  const [a, b, c] = await Promise.all([
    addHolder(id, { ...VENUE, name: 'City of Springfield' }, { 'Idempotency-Key': key }),
    addHolder(id, { ...VENUE, name: 'City of Springfield' }, { 'Idempotency-Key': key }),
    addHolder(id, { ...VENUE, name: 'Springfield Parks District' }),
  ]);
  for (const r of [a, b, c]) expect([201, 409]).toContain(r.status); // the twin may find its key still in progress
  const all = (await waitHoldersIssued(id))!;
  expect(all.map((h) => h.name).sort()).toEqual(['City of Springfield', 'Lake House Inc', 'Springfield Parks District']);
  const numbers = all.flatMap((h) => h.certificates.map((x) => x.certificate_number));
  expect(new Set(numbers).size).toBe(6);
  for (const h of all) expect(new Set(h.certificates.map((x) => x.covered_unit_id)).size).toBe(2);
  const set = await eventually(async () => {
    const body = await certificatesOf(id);
    return body.certificates.length === 6 ? body : null;
  });
  expect(set!.certificates.map((x: { certificate_number: string }) => x.certificate_number).sort()).toEqual([...numbers].sort());
});

test('when a holder is added with bad input, to an unpaid purchase, to another account’s purchase, or after every unit ended, then it is refused in the envelope and nothing changes', async () => {
  const id = await issuedPurchase(app, account);
  const L = CERTIFICATE_TEXT_LIMITS;
  const bad: Array<[unknown, string]> = [
    [{ ...VENUE, name: 'x'.repeat(L.holderName + 1) }, 'name'],
    [{ ...VENUE, address: { ...VENUE.address, line1: 'a\nb' } }, 'address.line1'],
    [{ ...VENUE, address: { ...VENUE.address, line1: 'y'.repeat(L.holderAddressLineLength + 1) } }, 'address.line1'],
    [{ ...VENUE, address: { ...VENUE.address, country: 'USA' } }, 'address.country'],
    [{ ...VENUE, description_of_operations: 'z'.repeat(L.descriptionOfOperations + 1) }, 'description_of_operations'],
    [{ ...VENUE, email: undefined, notify_on_cancellation: true }, 'email'],
    [{ ...VENUE, premium: 5 }, ''],
    [{ name: 'No address' }, 'address'],
  ];
  for (const [body, path] of bad) {
    const res = await addHolder(id, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    if (path) expect(JSON.stringify(res.body.error.details)).toContain(path);
  }
  expect((await api(`/purchases/abc/certificate_holders`)).status).toBe(400);
  expect((await api(`/purchases/${id}/certificate_holders/0`, { method: 'DELETE' })).status).toBe(400);

  const { purchaseId: unpaid } = await checkout(app, account);
  const notPaid = await addHolder(unpaid, VENUE);
  expect(notPaid.status).toBe(409);
  expect(notPaid.body.error.code).toBe('PURCHASE_NOT_CHANGEABLE');

  const other = await createRootAccount(app.container, 'Other Agency');
  const otherKey = (await createKey(app.container, { rootAccountId: other.id, mode: 'test' })).key;
  const foreign = await call(app.baseUrl, `/api/v1/purchases/${id}/certificate_holders`, { method: 'POST', key: otherKey, body: VENUE });
  expect(foreign.status).toBe(404);
  expect((await call(app.baseUrl, `/api/v1/purchases/${id}/certificate_holders`, { key: otherKey })).status).toBe(404);

  // The purchase's test clock moved past both days: no unit is active, so no holder can be added.
  expect(
    (await api(`/test_helpers/purchases/${id}/test_clock`, { method: 'POST', body: { frozen_time: '2027-05-04T00:00:00Z' } })).status,
  ).toBe(200);
  const ended = await addHolder(id, VENUE);
  expect(ended.status).toBe(409);
  expect(ended.body.error.code).toBe('NO_ACTIVE_COVERED_UNITS');
  expect(await holders(id)).toHaveLength(1);
});

test('when a cancellation voids certificates of a holder that asked to be told, then that holder gets one notice naming them, and a holder that did not ask gets none', async () => {
  const id = await issuedPurchase(app, account);
  const told = (
    await addHolder(id, { ...VENUE, name: 'City of Springfield', email: 'permits@springfield.example', notify_on_cancellation: true })
  ).body.data;
  await addHolder(id, { ...VENUE, name: 'Quiet Venue LLC', email: 'quiet@venue.example' });
  await waitHoldersIssued(id);
  const second = (await api(`/purchases/${id}`)).body.data.items[0].covered_units[1];
  expect((await api(`/purchases/${id}/cancel`, { method: 'POST', body: { covered_unit_ids: [second.id] } })).status).toBe(200);

  const notice = await eventually(async () => smtp.messages.find((m) => m.to.includes('permits@springfield.example')) ?? null, 60_000);
  const voided = (await holders(id)).find((h) => h.id === told.id)!.certificates.filter((c) => c.covered_unit_id === second.id);
  expect(voided).toHaveLength(1);
  expect(voided[0]!.status).toBe('voided');
  const text = (await PostalMime.parse(notice!.raw)).text ?? '';
  expect(text).toContain(voided[0]!.certificate_number);
  // The effective date reads as a local date in the unit's zone, not a UTC timestamp.
  const effectiveAt = ((await api(`/purchases/${id}`)).body.data.cancellations as Array<{ effective_at: string }>)[0]!.effective_at;
  const local = DateTime.fromISO(effectiveAt).setZone('America/Chicago').setLocale('en-GB');
  expect(text).toContain(`Effective: ${local.toFormat('cccc d LLLL yyyy, HH:mm')} (America/Chicago)`);
  expect(text).not.toContain(effectiveAt);
  const kept = (await holders(id)).find((h) => h.id === told.id)!.certificates.find((c) => c.covered_unit_id !== second.id)!;
  expect(text).not.toContain(kept.certificate_number);
  // Exactly one notice, and none to the holder that did not ask, once this cancellation's notices
  // workflow has finished (every notice it was started with is sent or failed: no more can come).
  const { cancellation_id: cancellationId } = await app.container
    .db('certificate_holder_notices')
    .where({ certificate_holder_id: told.id })
    .first('cancellation_id');
  const notices = app.container.temporal.client.workflow.getHandle(holderNoticesWorkflowId(cancellationId));
  await eventually(async () => (await notices.describe()).status.name === 'COMPLETED', 60_000);
  expect(smtp.messages.filter((m) => m.to.includes('permits@springfield.example'))).toHaveLength(1);
  expect(smtp.messages.filter((m) => m.to.includes('quiet@venue.example'))).toHaveLength(0);
});

test('when the product does not allow a waiver of subrogation, then a holder asking for one is refused with ENDORSEMENT_NOT_ALLOWED and nothing changes, while additional insured alone is still allowed', async () => {
  const id = await issuedPurchase(app, account);
  expect((await api(`/products/${account.productId}/endorsement_terms`)).body.data).toMatchObject({
    allows_additional_insured: true,
    allows_waiver_of_subrogation: true,
    is_default: true,
  });
  const patched = await api(`/products/${account.productId}/endorsement_terms`, {
    method: 'PATCH',
    body: { allows_waiver_of_subrogation: false },
  });
  expect(patched.body.data).toMatchObject({ allows_additional_insured: true, allows_waiver_of_subrogation: false, is_default: false });
  try {
    const refused = await addHolder(id, { ...VENUE, additional_insured: true, waiver_of_subrogation: true });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('ENDORSEMENT_NOT_ALLOWED');
    expect(await holders(id)).toHaveLength(1);
    const allowed = await addHolder(id, { ...VENUE, additional_insured: true, waiver_of_subrogation: false });
    expect(allowed.status).toBe(201);
    expect(
      (await api(`/products/${account.productId}/endorsement_terms`, { method: 'PATCH', body: { allows_everything: true } })).status,
    ).toBe(400);
  } finally {
    await api(`/products/${account.productId}/endorsement_terms`, { method: 'PATCH', body: { allows_waiver_of_subrogation: true } });
  }
});
