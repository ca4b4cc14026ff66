/**
 * A worker killed while a new certificate holder's certificates are being issued (certificate
 * holders, "Done when": every certificate exactly once), a scenario of faults.fault-suite.ts run
 * on its stack after the short faults, without their load:
 *
 * 1. one purchase of 30 covered days (the event product, 2027-06-01 … 2027-06-30, America/Chicago)
 *    is bought, paid through the test helper and issued: 30 certificates for the holder the buyer
 *    answered; their rows (numbers, storage keys, digests) are kept;
 * 2. a holder is added (`POST /api/v1/purchases/{id}/certificate_holders`, 201); the policy
 *    workflow renders its 30 certificates on the certificates task queue;
 * 3. once some but not all of them are stored (the database polled every POLL_MS), the worker
 *    process is killed with SIGKILL (its whole process group, Chromium included), then a fresh
 *    worker is started; the killed activities time out on their heartbeat and are retried there.
 *
 * Then: the new holder has exactly 30 certificates, one per covered unit, distinct numbers, all
 * stored, none superseded or voided, no row beyond them; the bucket holds exactly one PDF object
 * per certificate of the purchase (60) under its storage key and nothing else, each object's
 * SHA-256 the one recorded; the answered holder's 30 rows are as before the add (same numbers,
 * keys, digests; not superseded, not voided); the zips were rebuilt once (the first issuance's two
 * superseded, two current ones, one zip object per archive row) and the payment zip holds the 60
 * PDFs, 30 in the new holder's folder; getCertificates lists 60, the holders list shows both with
 * every certificate `issued`; `certificate_holder.added` was recorded exactly once, for the new
 * holder, with its 30 numbers.
 */
import { createHash } from 'node:crypto';
import { call } from '../../helpers/fixtures';
import { eventSelection } from '../../helpers/certificates';
import { download, readZip } from '../../helpers/documents';
import { sleep, type Scenario, type ScenarioContext } from './fault-suite';
import type { FaultStack } from './fault-stack';

const UNITS = 30;
const COVERAGE = { start: '2027-06-01', end: '2027-06-30' };
/** How often the database is asked how many of the new holder's certificates are stored. */
const POLL_MS = 20;
const ISSUED_MS = 3 * 60_000;
const RENDER_START_MS = 2 * 60_000;
/** From the fresh worker's start to `certificate_holder.added` (the heartbeat timeout is 15 s). */
const REISSUED_MS = 4 * 60_000;
const HOLDER = {
  name: 'Lakeside Pavilion LLC',
  address: { line1: '9 Shore Dr', city: 'Madison', region: 'WI', postal_code: '53703', country: 'US' },
  additional_insured: true,
  waiver_of_subrogation: true,
  description_of_operations: 'Summer market, Lakeside Pavilion, 2027-06-01 to 2027-06-30',
};

interface CertificateRow {
  id: number;
  certificate_number: string;
  covered_unit_id: number;
  certificate_holder_id: number | null;
  storage_key: string | null;
  sha256: string | null;
  size_bytes: number | null;
  revision: number;
  superseded_at: Date | null;
  voided_at: Date | null;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Object names under `prefix` in the stack's bucket (the storage JSON API, paged). */
async function listObjects(stack: FaultStack, prefix: string): Promise<string[]> {
  const names: string[] = [];
  let pageToken: string | undefined;
  do {
    const url = new URL(`${stack.storageUrl}/storage/v1/b/${stack.bucket}/o`);
    url.searchParams.set('prefix', prefix);
    url.searchParams.set('maxResults', '1000');
    if (pageToken) url.searchParams.set('pageToken', pageToken);
    const res = await fetch(url);
    if (!res.ok) throw new Error(`listing ${prefix}: HTTP ${res.status}`);
    const page = (await res.json()) as { items?: { name: string }[]; nextPageToken?: string };
    names.push(...(page.items ?? []).map((i) => i.name));
    pageToken = page.nextPageToken;
  } while (pageToken);
  return names.sort();
}

/** The stored object's bytes, straight from fake-gcs-server. */
async function objectBytes(stack: FaultStack, key: string): Promise<Buffer> {
  return download(`${stack.storageUrl}/storage/v1/b/${stack.bucket}/o/${encodeURIComponent(key)}?alt=media`);
}

async function until<T>(what: string, timeoutMs: number, intervalMs: number, fn: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${secs(timeoutMs)}`);
    await sleep(intervalMs);
  }
}

async function run({ stack, container, agency, buyers, report }: ScenarioContext): Promise<void> {
  const db = container.db;
  const api = (path: string, init: { method?: string; body?: unknown } = {}) => call(stack.apiUrl, path, { key: agency.key, ...init });
  const certificateRows = (purchaseId: number): Promise<CertificateRow[]> =>
    db('certificates')
      .where({ purchase_id: purchaseId })
      .orderBy('id')
      .select(
        'id',
        'certificate_number',
        'covered_unit_id',
        'certificate_holder_id',
        'storage_key',
        'sha256',
        'size_bytes',
        'revision',
        'superseded_at',
        'voided_at',
      );
  // An earlier fault that failed may have left the worker down: this scenario needs it up to kill it.
  if (!stack.worker.running) await stack.worker.start();
  const t0 = Date.now();

  // 1. A 30-day purchase, paid and issued to the holder the buyer answered.
  const buyer = buyers[0]!;
  const quoted = await api('/public-quote/adminValidateBuyerResponses', {
    method: 'POST',
    body: { ...buyer, selected_product_lines_to_purchase: [eventSelection(agency, COVERAGE, 'Holder Reissue Insured')] },
  });
  if (quoted.status !== 200) throw new Error(`checkout answered ${quoted.status}: ${quoted.text.slice(0, 300)}`);
  const purchaseId = quoted.body.purchase_id as number;
  const paid = await api(`/api/v1/test_helpers/purchases/${purchaseId}/pay`, { method: 'POST', body: {} });
  if (paid.status !== 200) throw new Error(`pay answered ${paid.status}: ${paid.text.slice(0, 300)}`);
  await until(`purchase ${purchaseId} issued`, ISSUED_MS, 500, async () => {
    const p = await db('purchases').where({ id: purchaseId }).first('status', 'certificates_issued_at', 'failure_reason');
    if (p?.status === 'failed') throw new Error(`purchase ${purchaseId} failed: ${p.failure_reason}`);
    return p?.status === 'issued' && p.certificates_issued_at ? true : null;
  });
  const issuedMs = Date.now() - t0;
  const unitIds = ((await db('covered_units').where({ purchase_id: purchaseId }).orderBy('id').select('id')) as { id: number }[]).map(
    (u) => u.id,
  );
  expect(unitIds).toHaveLength(UNITS);
  const before = await certificateRows(purchaseId);
  expect(before).toHaveLength(UNITS);
  const answeredHolderId = before[0]!.certificate_holder_id;
  expect(answeredHolderId).not.toBeNull();
  expect(
    before.every((c) => c.certificate_holder_id === answeredHolderId && c.storage_key && c.sha256 && !c.superseded_at && !c.voided_at),
  ).toBe(true);
  const archivesBefore = (await db('certificate_archives').where({ purchase_id: purchaseId }).select('storage_key', 'superseded_at')) as {
    storage_key: string;
    superseded_at: Date | null;
  }[];
  expect(archivesBefore.filter((a) => !a.superseded_at)).toHaveLength(2);

  // 2. A new holder: answered at once, its 30 certificates planned and being issued.
  const addedAt = Date.now();
  const added = await api(`/api/v1/purchases/${purchaseId}/certificate_holders`, { method: 'POST', body: HOLDER });
  if (added.status !== 201) throw new Error(`adding the holder answered ${added.status}: ${added.text.slice(0, 300)}`);
  const holderId = added.body.data.id as number;
  expect(added.body.data.certificates).toHaveLength(UNITS);
  const answeredMs = Date.now() - addedAt;

  // 3. SIGKILL the worker once some, but not all, of them are stored; then a fresh worker.
  const storedOf = async () =>
    Number(
      (
        await db('certificates')
          .where({ certificate_holder_id: holderId })
          .whereNotNull('storage_key')
          .count<{ n: string }[]>({ n: '*' })
          .first()
      )?.n ?? 0,
    );
  let polls = 0;
  const storedAtKill = await until(`some of holder ${holderId}'s certificates stored`, RENDER_START_MS, POLL_MS, async () => {
    polls++;
    const n = await storedOf();
    if (n >= UNITS)
      throw new Error(
        `all ${UNITS} certificates of holder ${holderId} were stored before the kill could land (polled every ${POLL_MS} ms): no mid-issuance kill`,
      );
    return n > 0 ? n : null;
  });
  await stack.worker.kill();
  const killedMs = Date.now() - addedAt;
  const storedAfterKill = await storedOf();
  const restarted = Date.now();
  await stack.worker.start();
  const restartMs = Date.now() - restarted;
  // The kill landed mid-issuance: some stored, not all, and nothing announced yet.
  expect(storedAtKill).toBeGreaterThanOrEqual(1);
  expect(storedAfterKill).toBeLessThan(UNITS);
  const addedEvents = () =>
    db('agency_events').where({ purchase_id: purchaseId, type: 'certificate_holder.added' }).select('id', 'data') as Promise<
      { id: string; data: { data: { object: { id: number; certificate_numbers: string[] } } } }[]
    >;
  expect(await addedEvents()).toEqual([]);

  // Issued by the fresh worker: announced once its certificates and the rebuilt zips are stored.
  await until(`certificate_holder.added for holder ${holderId}`, REISSUED_MS, 500, async () =>
    (await addedEvents()).length > 0 ? true : null,
  );
  const reissuedMs = Date.now() - restarted - restartMs;

  // The new holder: exactly one current certificate per covered unit, all stored, no other row.
  const after = await certificateRows(purchaseId);
  const mine = after.filter((c) => c.certificate_holder_id === holderId);
  expect(mine).toHaveLength(UNITS);
  expect(mine.every((c) => c.storage_key && c.sha256 && c.size_bytes && !c.superseded_at && !c.voided_at && c.revision === 1)).toBe(true);
  expect([...new Set(mine.map((c) => c.covered_unit_id))].sort((a, b) => a - b)).toEqual(unitIds);
  expect(new Set(mine.map((c) => c.certificate_number)).size).toBe(UNITS);
  expect(after).toHaveLength(2 * UNITS);
  // The answered holder's certificates: untouched, in force, not superseded.
  const answered = after.filter((c) => c.certificate_holder_id === answeredHolderId);
  expect(answered).toEqual(before);

  // Storage: one PDF object per certificate, under its key, with the recorded digest; nothing else.
  const pdfs = await listObjects(stack, `purchases/${purchaseId}/certificates/`);
  expect(pdfs).toEqual(after.map((c) => c.storage_key!).sort());
  const digests = await Promise.all(after.map(async (c) => [c.storage_key!, sha256(await objectBytes(stack, c.storage_key!))] as const));
  expect(digests.filter(([key, digest]) => digest !== after.find((c) => c.storage_key === key)!.sha256)).toEqual([]);
  // Zips rebuilt once over the 60: the first issuance's two superseded, two current, one object per row.
  const archives = (await db('certificate_archives').where({ purchase_id: purchaseId }).select('storage_key', 'superseded_at')) as {
    storage_key: string;
    superseded_at: Date | null;
  }[];
  expect({ current: archives.filter((a) => !a.superseded_at).length, superseded: archives.filter((a) => a.superseded_at).length }).toEqual({
    current: 2,
    superseded: 2,
  });
  expect(
    archives
      .filter((a) => a.superseded_at)
      .map((a) => a.storage_key)
      .sort(),
  ).toEqual(archivesBefore.map((a) => a.storage_key).sort());
  expect(await listObjects(stack, `purchases/${purchaseId}/zips/`)).toEqual(archives.map((a) => a.storage_key).sort());

  // What the API shows: getCertificates lists 60 (30 per holder) and its zip holds them; the holders both issued.
  const set = await call(stack.apiUrl, '/platform-agency-root-certs/getCertificates', {
    method: 'POST',
    key: agency.key,
    body: { purchase_id: purchaseId, idp_root_account_uuid: agency.rootUuid },
  });
  expect(set.status).toBe(200);
  expect({ status: set.body.status, count: set.body.certificate_count }).toEqual({ status: 'issued', count: 2 * UNITS });
  const listed = set.body.certificates as {
    certificate_number: string;
    sha256: string;
    voided_at: string | null;
    certificate_holder: { id: number } | null;
  }[];
  expect(listed.map((c) => c.certificate_number).sort()).toEqual(after.map((c) => c.certificate_number).sort());
  expect(listed.filter((c) => c.certificate_holder?.id === holderId)).toHaveLength(UNITS);
  expect(
    listed.every((c) => c.voided_at === null && c.sha256 === after.find((r) => r.certificate_number === c.certificate_number)!.sha256),
  ).toBe(true);
  const zip = await readZip(await download(set.body.payment_zip_url as string));
  const zipped = [...zip.keys()].filter((n) => n.endsWith('.pdf'));
  expect(zipped).toHaveLength(2 * UNITS);
  expect(
    zipped
      .filter((n) => n.includes(`/holder-${holderId}/`))
      .map((n) => n.slice(n.lastIndexOf('/') + 1))
      .sort(),
  ).toEqual(mine.map((c) => `${c.certificate_number}.pdf`).sort());
  const holders = (await api(`/api/v1/purchases/${purchaseId}/certificate_holders`)).body.data as {
    id: number;
    status: string;
    certificates: { certificate_number: string; status: string }[];
  }[];
  expect(holders.map((h) => [h.id, h.status, h.certificates.length, [...new Set(h.certificates.map((c) => c.status))]])).toEqual([
    [answeredHolderId, 'active', UNITS, ['issued']],
    [holderId, 'active', UNITS, ['issued']],
  ]);

  // Announced exactly once, for the new holder, with its 30 numbers.
  const events = await addedEvents();
  expect(events).toHaveLength(1);
  expect(events[0]!.data.data.object.id).toBe(holderId);
  expect([...events[0]!.data.data.object.certificate_numbers].sort()).toEqual(mine.map((c) => c.certificate_number).sort());

  report(
    [
      `## ${SCENARIO.name}`,
      `purchase ${purchaseId} (${UNITS} days) issued ${secs(issuedMs)} after checkout; holder ${holderId} added (answered in ${answeredMs} ms); ` +
        `worker SIGKILLed ${secs(killedMs)} after the add with ${storedAtKill}/${UNITS} of its certificates stored (${storedAfterKill} once it was dead; ${polls} polls); ` +
        `fresh worker ready in ${secs(restartMs)}; certificate_holder.added ${secs(reissuedMs)} after that; ` +
        `${mine.length} certificates for the holder (${new Set(mine.map((c) => c.covered_unit_id)).size} units), ${pdfs.length} PDF objects for ${after.length} certificate rows, ` +
        `${archives.length} zip rows (${archives.filter((a) => a.superseded_at).length} superseded), ${events.length} certificate_holder.added; the answered holder's ${answered.length} certificates unchanged; scenario ${secs(Date.now() - t0)}`,
    ].join('\n\n'),
  );
}

export const SCENARIO: Scenario = {
  name: `when the worker is killed (SIGKILL) while a new certificate holder's ${UNITS} certificates of a ${UNITS}-day purchase are being stored, then a fresh worker issues each exactly once, one object each, and the answered holder's certificates stay untouched`,
  timeoutMs: ISSUED_MS + RENDER_START_MS + 180_000 + REISSUED_MS + 60_000,
  run,
};
