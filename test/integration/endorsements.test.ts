/**
 * Endorsements (mid-term changes) and certificate versions, on the real stack (API, Temporal dev
 * server, worker with Chromium, fake-gcs-server, stripe-mock, PostgreSQL): a preview names the
 * certificates a change reissues and the premium difference; carrying it out replaces them by new
 * versions (`-R2`, rendered and stored after the answer, announced by `certificates.reissued`), the
 * old version's verification page says "superseded by … on …" with a link, and only the current
 * versions are listed, zipped or emailed. A stale or unknown quote, a started unit, an overlapping
 * move and another account's purchase are refused and change nothing; two endorsements sent at once
 * are applied one at a time. The purchase bought is two days, 2027-05-01 and 2027-05-02
 * (America/Chicago), holder "Lake House Inc", named insured "Kim Park".
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createKey, createRootAccount } from '../helpers/fixtures';
import { createQuotingAccount, type QuotingAccount, issuedPurchase } from '../helpers/purchases';
import { eventually } from '../helpers/worker';
import { download, pdfNamesInZip, pdfText } from '../helpers/documents';

jest.setTimeout(180_000);

/** Purchases whose next issuance is held until the test lets it go (by purchase id). */
const holds = new Map<number, { entered: () => void; released: Promise<void> }>();
const stack = useStack({
  app: { RATE_LIMIT_PER_MINUTE: '100000' },
  // Holds an issuance of a purchase the test named (once), then renders it as usual.
  activities: (real) => ({
    async issueCertificatesAndArchives(input) {
      const hold = holds.get(input.purchaseId);
      if (hold) {
        holds.delete(input.purchaseId);
        hold.entered();
        await hold.released;
      }
      return real.issueCertificatesAndArchives(input);
    },
  }),
});
let app: TestApp;
let account: QuotingAccount;

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });
const quote = (purchaseId: number, changes: unknown[]) =>
  api(`/purchases/${purchaseId}/endorsement_quote`, { method: 'POST', body: { changes } });
const endorse = (purchaseId: number, quoteId: string) =>
  api(`/purchases/${purchaseId}/endorse`, { method: 'POST', body: { quote_id: quoteId } });
const purchase = async (purchaseId: number) => (await api(`/purchases/${purchaseId}`)).body.data;
const verify = async (n: string) => (await call(app.baseUrl, `/verify/${n}`, { headers: { accept: 'application/json' } })).body;
const certificatesOf = async (purchaseId: number) => {
  const rootUuid = (await api('/account')).body.data.root_account.idp_root_account_uuid as string;
  return (
    await call(app.baseUrl, '/platform-agency-root-certs/getCertificates', {
      method: 'POST',
      key: account.key,
      body: { purchase_id: purchaseId, idp_root_account_uuid: rootUuid },
    })
  ).body;
};
/** Waits for the certificates.reissued event of endorsement `quoteId` (its new versions are stored). */
const reissuedEvent = (quoteId: string) =>
  eventually(async () => {
    const list = (await api('/events?type=certificates.reissued')).body.data as Array<{
      data: { object: { endorsement_id: string; certificates: Array<{ from: string; to: string }> } };
    }>;
    return list.find((e) => e.data.object.endorsement_id === quoteId) ?? null;
  }, 90_000);

beforeAll(async () => {
  app = stack.app;
  account = await createQuotingAccount(app);
});

test('when the named insured is corrected, then the preview names both certificates at no premium, and carrying it out issues revision 2 of each with the new name while the old versions say superseded', async () => {
  const id = await issuedPurchase(app, account);
  const before = (await certificatesOf(id)).certificates.map((c: { certificate_number: string }) => c.certificate_number).sort();
  expect(before).toHaveLength(2);

  const q = await quote(id, [{ type: 'named_insured', name: 'Kim Park Events LLC' }]);
  expect(q.status).toBe(201);
  expect(q.body.data).toMatchObject({
    object: 'endorsement_quote',
    status: 'quoted',
    premium_difference: 0,
    total_difference: 0,
    reissued: null,
  });
  expect(q.body.data.reissues.map((r: { certificate_number: string }) => r.certificate_number).sort()).toEqual(before);
  expect(q.body.data.id).toMatch(/^eq_[0-9a-f]{24}$/);

  const done = await endorse(id, q.body.data.id);
  expect(done.status).toBe(200);
  expect(done.body.data).toMatchObject({ object: 'endorsement', status: 'applied' });
  const pairs = done.body.data.reissued as Array<{ from: string; to: string }>;
  expect(pairs.map((p) => p.from).sort()).toEqual(before);
  for (const p of pairs) expect(p.to).toBe(`${p.from}-R2`);
  // Carrying the same quote out again answers the same endorsement.
  expect((await endorse(id, q.body.data.id)).body.data.reissued).toEqual(pairs);

  const event = await reissuedEvent(q.body.data.id);
  expect(event!.data.object.certificates).toEqual(pairs);
  const set = await certificatesOf(id);
  expect(set.certificates.map((c: { certificate_number: string }) => c.certificate_number).sort()).toEqual(pairs.map((p) => p.to).sort());
  expect(set.certificates.every((c: { revision: number }) => c.revision === 2)).toBe(true);
  const text = pdfText(await download(set.certificates[0].download_url));
  expect(text).toContain('Kim Park Events LLC');
  expect(text).toContain('Revision 2');
  // The zips hold the new versions only.
  expect(await pdfNamesInZip(set.payment_zip_url)).toEqual(pairs.map((p) => p.to).sort());

  const old = await verify(pairs[0]!.from);
  expect(old).toMatchObject({ state: 'superseded', superseded_by: pairs[0]!.to, revision: 1 });
  expect(old.superseded_at).toEqual(expect.any(String));
  const html = (await call(app.baseUrl, `/verify/${pairs[0]!.from}`, { headers: { accept: 'text/html' } })).text;
  expect(html).toContain(`Superseded by ${pairs[0]!.to} on ${old.superseded_at.slice(0, 10)}`);
  expect(html).toContain(`href="${pairs[0]!.to}"`);
  expect(await verify(pairs[0]!.to)).toMatchObject({
    state: 'not_yet_valid',
    superseded_by: null,
    revision: 2,
    named_insured_name: 'Kim Park Events LLC',
  });

  // The purchase shows each unit's current and past versions.
  const unit = (await purchase(id)).items[0].covered_units[0];
  expect(unit.certificates.map((c: { status: string; revision: number }) => [c.revision, c.status])).toEqual([
    [1, 'superseded'],
    [2, 'issued'],
  ]);
  expect(unit.certificate.number).toMatch(/-R2$/);
});

test('when an endorsement’s new versions are not stored yet, then getCertificates answers pending (never issued with part of the set) and the purchase reads awaiting_certificates, until every new version and zip is stored', async () => {
  const id = await issuedPurchase(app, account);
  expect((await certificatesOf(id)).status).toBe('issued');
  // The owner's next issuance (the endorsement's new versions) waits until the test releases it.
  let entered!: () => void;
  const issuing = new Promise<void>((r) => (entered = r));
  let release!: () => void;
  holds.set(id, { entered, released: new Promise<void>((r) => (release = r)) });

  const q = await quote(id, [{ type: 'named_insured', name: 'Kim Park Holdings LLC' }]);
  const done = await endorse(id, q.body.data.id);
  expect(done.body.data.status).toBe('applied');
  await issuing;
  // Old versions superseded, new ones planned but not stored: not an issued (empty or partial) set.
  const during = await certificatesOf(id);
  expect(during).toMatchObject({ status: 'pending', certificate_count: 0, certificates: [], payment_zip_url: null });
  const p = await purchase(id);
  expect(p.status).toBe('awaiting_certificates');
  expect(p.items[0].covered_units[0].certificates.map((c: { status: string }) => c.status)).toEqual(['superseded', 'issuing']);
  release();

  const pairs = done.body.data.reissued as Array<{ from: string; to: string }>;
  const after = await eventually(async () => {
    const r = await certificatesOf(id);
    return r.status === 'pending' ? null : r;
  }, 90_000);
  expect(after.status).toBe('issued');
  expect(after.certificates.map((c: { certificate_number: string }) => c.certificate_number).sort()).toEqual(pairs.map((x) => x.to).sort());
  expect(await pdfNamesInZip(after.payment_zip_url)).toEqual(pairs.map((x) => x.to).sort());
  expect((await purchase(id)).status).toBe('issued');
});

test('when an unstarted day is moved, then the unit covers the new day and only its certificate is reissued; a move onto the other day, of a started unit, or to the same day is refused', async () => {
  const id = await issuedPurchase(app, account);
  const [first, second] = (await purchase(id)).items[0].covered_units;
  expect((await quote(id, [{ type: 'move_covered_unit', covered_unit_id: second.id, start_date: '2027-05-01' }])).body.error.code).toBe(
    'VALIDATION_ERROR',
  );
  expect((await quote(id, [{ type: 'move_covered_unit', covered_unit_id: second.id, start_date: '2027-05-02' }])).body.error.code).toBe(
    'NOTHING_TO_ENDORSE',
  );
  expect((await quote(id, [{ type: 'move_covered_unit', covered_unit_id: second.id, start_date: '2020-05-02' }])).body.error.code).toBe(
    'VALIDATION_ERROR',
  );
  expect(
    (
      await quote(id, [
        { type: 'move_covered_unit', covered_unit_id: second.id, trip: { start: '2027-05-09T08:00', end: '2027-05-09T18:00' } },
      ])
    ).body.error.code,
  ).toBe('VALIDATION_ERROR');
  expect((await quote(id, [{ type: 'move_covered_unit', covered_unit_id: 999999999, start_date: '2027-05-09' }])).body.error.code).toBe(
    'UNKNOWN_COVERED_UNIT',
  );

  const q = await quote(id, [{ type: 'move_covered_unit', covered_unit_id: second.id, start_date: '2027-05-09' }]);
  expect(q.status).toBe(201);
  // The preview shows each reissued certificate's window now and after (local offsets, Chicago in May: -05:00).
  expect(q.body.data.reissues).toEqual([
    {
      certificate_number: second.certificate.number,
      covered_unit_id: second.id,
      certificate_holder_id: expect.any(Number),
      current_window: {
        starts_at: '2027-05-02T00:00:00.000-05:00',
        ends_at: '2027-05-03T00:00:00.000-05:00',
        time_zone: 'America/Chicago',
        local_label: '2027-05-02',
      },
      new_window: {
        starts_at: '2027-05-09T00:00:00.000-05:00',
        ends_at: '2027-05-10T00:00:00.000-05:00',
        time_zone: 'America/Chicago',
        local_label: '2027-05-09',
      },
    },
  ]);
  expect(q.body.data.total_difference).toBe(0);
  const done = await endorse(id, q.body.data.id);
  expect(done.status).toBe(200);
  await reissuedEvent(q.body.data.id);
  // The old version's page shows the day it certified (2027-05-02), then the version that replaced it, with a link.
  const [pair] = done.body.data.reissued as Array<{ from: string; to: string }>;
  expect(await verify(pair!.from)).toMatchObject({
    state: 'superseded',
    superseded_by: pair!.to,
    coverage: [expect.objectContaining({ starts_at: '2027-05-02T05:00:00.000Z', ends_at: '2027-05-03T05:00:00.000Z' })],
  });
  const oldPage = (await call(app.baseUrl, `/verify/${pair!.from}`, { headers: { accept: 'text/html' } })).text;
  expect(oldPage).toContain('2027-05-02 00:00');
  expect(oldPage).not.toContain('2027-05-09');
  expect(oldPage).toMatch(new RegExp(`Superseded by <a href="${pair!.to}">${pair!.to}</a>`));
  expect(oldPage.indexOf('id="superseded-by"')).toBeGreaterThan(oldPage.indexOf('</table>'));
  const newPage = (await call(app.baseUrl, `/verify/${pair!.to}`, { headers: { accept: 'text/html' } })).text;
  expect(newPage).toContain('2027-05-09 00:00');
  expect(newPage).not.toContain('2027-05-02');
  expect(newPage).not.toContain('id="superseded-by"');
  const after = (await purchase(id)).items[0].covered_units;
  expect(after[1]).toMatchObject({
    id: second.id,
    local_label: '2027-05-09',
    starts_at: '2027-05-09T05:00:00.000Z',
    ends_at: '2027-05-10T05:00:00.000Z',
  });
  expect(after[0].certificate.number).toBe(first.certificate.number); // the other day's certificate is untouched
  expect(await verify(after[1].certificate.number)).toMatchObject({
    coverage: [expect.objectContaining({ starts_at: '2027-05-09T05:00:00.000Z' })],
  });

  // On the purchase's test clock the first day has started: it cannot move any more.
  expect(
    (await api(`/test_helpers/purchases/${id}/test_clock`, { method: 'POST', body: { frozen_time: '2027-05-01T12:00:00Z' } })).status,
  ).toBe(200);
  const started = await quote(id, [{ type: 'move_covered_unit', covered_unit_id: first.id, start_date: '2027-05-20' }]);
  expect(started.status).toBe(409);
  expect(started.body.error.code).toBe('COVERED_UNIT_STARTED');
});

test('when a holder’s description of operations changes, then only that holder’s certificates are reissued, and the new PDF prints it', async () => {
  const id = await issuedPurchase(app, account);
  const added = (
    await api(`/purchases/${id}/certificate_holders`, {
      method: 'POST',
      body: {
        name: 'Riverside Hall LLC',
        address: { line1: '200 River Rd', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
      },
    })
  ).body.data;
  await eventually(
    async () =>
      ((await api(`/purchases/${id}/certificate_holders`)).body.data as Array<{ id: number; certificates: Array<{ status: string }> }>)
        .find((h) => h.id === added.id)!
        .certificates.every((c) => c.status === 'issued'),
    90_000,
  );
  const [answered] = (await api(`/purchases/${id}/certificate_holders`)).body.data;
  const q = await eventually(async () => {
    const r = await quote(id, [
      { type: 'description_of_operations', certificate_holder_id: added.id, description: 'Spring gala\nRiverside Hall, main ballroom' },
    ]);
    return r.status === 201 ? r : null; // the holder's zips may still be being rebuilt (the quote waits for a settled purchase)
  });
  expect(q!.body.data.reissues.map((r: { certificate_holder_id: number }) => r.certificate_holder_id)).toEqual([added.id, added.id]);
  await endorse(id, q!.body.data.id);
  await reissuedEvent(q!.body.data.id);
  const holders = (await api(`/purchases/${id}/certificate_holders`)).body.data as Array<{
    id: number;
    description_of_operations: string | null;
    certificates: Array<{ certificate_number: string; revision: number }>;
  }>;
  const venue = holders.find((h) => h.id === added.id)!;
  expect(venue.description_of_operations).toBe('Spring gala\nRiverside Hall, main ballroom');
  expect(venue.certificates.map((c) => c.revision)).toEqual([2, 2]);
  expect(holders.find((h) => h.id === answered.id)!.certificates.map((c) => c.revision)).toEqual([1, 1]);
  const set = await certificatesOf(id);
  const mine = set.certificates.find(
    (c: { certificate_number: string }) => c.certificate_number === venue.certificates[0]!.certificate_number,
  );
  expect(pdfText(await download(mine.download_url))).toContain('Riverside Hall, main ballroom');
});

test('when two endorsements quoted on the same purchase are carried out at once, then one is applied and the other is stale; an unknown quote, bad bodies and another account are refused and nothing changes', async () => {
  const id = await issuedPurchase(app, account);
  const a = (await quote(id, [{ type: 'named_insured', name: 'First Correction' }])).body.data;
  const b = (await quote(id, [{ type: 'named_insured', name: 'Second Correction' }])).body.data;
  const [ra, rb] = await Promise.all([endorse(id, a.id), endorse(id, b.id)]);
  expect([ra.status, rb.status].sort()).toEqual([200, 409]);
  const refused = ra.status === 409 ? ra : rb;
  expect(refused.body.error.code).toBe('ENDORSEMENT_QUOTE_STALE');
  const winner = ra.status === 200 ? a : b;
  await reissuedEvent(winner.id);
  const set = await certificatesOf(id);
  expect(set.certificates.map((c: { revision: number }) => c.revision)).toEqual([2, 2]);

  expect((await endorse(id, 'eq_000000000000000000000000')).body.error.code).toBe('ENDORSEMENT_QUOTE_NOT_FOUND');
  expect((await endorse(id, 'cq_000000000000000000000000')).body.error.code).toBe('VALIDATION_ERROR');
  for (const changes of [
    [],
    [{ type: 'named_insured', name: 'x'.repeat(121) }],
    [{ type: 'named_insured', name: 'a\nb' }],
    [{ type: 'rename' }],
    [{ type: 'move_covered_unit', covered_unit_id: 1 }],
    [
      { type: 'named_insured', name: 'A' },
      { type: 'named_insured', name: 'B' },
    ],
  ]) {
    const r = await quote(id, changes);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
  }
  expect((await quote(id, [{ type: 'description_of_operations', certificate_holder_id: 999999999, description: 'x' }])).status).toBe(404);

  const other = await createRootAccount(app.container, 'Other Agency');
  const otherKey = (await createKey(app.container, { rootAccountId: other.id, mode: 'test' })).key;
  expect(
    (
      await call(app.baseUrl, `/api/v1/purchases/${id}/endorsement_quote`, {
        method: 'POST',
        key: otherKey,
        body: { changes: [{ type: 'named_insured', name: 'Mine' }] },
      })
    ).status,
  ).toBe(404);
  expect(
    (await call(app.baseUrl, `/api/v1/purchases/${id}/endorse`, { method: 'POST', key: otherKey, body: { quote_id: winner.id } })).status,
  ).toBe(404);
  expect((await certificatesOf(id)).certificates.map((c: { revision: number }) => c.revision)).toEqual([2, 2]);
});
