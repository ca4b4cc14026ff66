/**
 * The stored-documents sweep (issue 52, item 2) on the real stack (PostgreSQL, the Temporal dev
 * server, stripe-mock, fake-gcs-server): a certificate PDF deleted from storage, a byte flipped in
 * another and in a zip are found by `npm run ops -- sweep-documents` and repaired through the
 * purchase's certificate issuance (same key, number and revision; the record takes the new object's
 * digest); a second run finds nothing; the scheduled workflow repairs the same way; a repair that
 * cannot reach issuance exits 3 and the next run repairs it.
 */
import Stripe from 'stripe';
import { startQuotingStack, type QuotingStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import { eventually } from '../helpers/worker';
import { runScript } from '../helpers/run';
import { WEBHOOK_SECRET, sessionCompletedEvent } from '../helpers/purchases';
import { createObjectStore, type ObjectStore } from '../../src/storage/object-store';
import { hashStored, type SweepReport } from '../../src/certificates/document-sweep';
import { storedDocumentsSweepWorkflow } from '../../workflows/document-sweep';
import { DOCUMENT_SWEEP_SCHEDULE_ID, ensureDocumentSweepSchedule } from '../../src/certificates/sweep-schedule';

const stripe = new Stripe('sk_test_123');

let env: QuotingStack;
let store: ObjectStore;
let purchaseId: number;
let rootAccountId: number;

const db = () => env.app.container.db;
const certificates = () => db()('certificates').where({ purchase_id: purchaseId }).whereNull('superseded_at').orderBy('id');
const archives = () => db()('certificate_archives').where({ purchase_id: purchaseId }).whereNull('superseded_at').orderBy('id');

const sweep = (extraEnv: NodeJS.ProcessEnv = {}, json = true) =>
  runScript('scripts/ops.ts', ['sweep-documents', '--account', String(rootAccountId), ...(json ? ['--json'] : [])], {
    TEMPORAL_TASK_QUEUE: env.worker.taskQueue,
    LOG_LEVEL: 'silent',
    ...extraEnv,
  });

async function bytesOf(key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of store.openRead(key)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Replaces the object at `key` by its bytes with one byte flipped in the middle; returns the damaged bytes. */
async function flipAByte(key: string): Promise<Buffer> {
  const bytes = await bytesOf(key);
  bytes[bytes.length >> 1]! ^= 0x01;
  expect(await store.deletePrefix(key)).toBe(1);
  await store.putIfAbsent(key, bytes, { contentType: 'application/octet-stream' });
  return bytes;
}

/** Each record's object hashes to the recorded sha256 and size. */
async function expectAllMatch() {
  for (const row of [...(await certificates()), ...(await archives())]) {
    expect(await hashStored(store, row.storage_key)).toEqual({ size_bytes: row.size_bytes, sha256: row.sha256 });
  }
}

beforeAll(async () => {
  env = await startQuotingStack({ PURCHASE_RETRY_MAX_INTERVAL_SECONDS: '1', CHECKOUT_POLL_INTERVAL_SECONDS: '1' });
  store = createObjectStore(env.app.container.config);
  const res = await call(env.app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
    method: 'POST',
    key: env.key,
    body: await env.quoteBody(),
  });
  expect(res.status).toBe(200);
  purchaseId = res.body.purchase_id as number;
  const payload = sessionCompletedEvent(purchaseId, res.body.id);
  const signature = stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
  await call(env.app.baseUrl, '/webhooks/payproc', { method: 'POST', rawBody: payload, headers: { 'stripe-signature': signature } });
  const row = await eventually(async () => {
    const r = await db()('purchases').where({ id: purchaseId }).first();
    return r.status === 'issued' && r.certificates_issued_at ? r : null;
  }, 60_000);
  rootAccountId = row.root_account_id;
}, 90_000);
afterAll(() => env.close());

describe('the stored-documents sweep', () => {
  test('when a certificate PDF is deleted and a byte is flipped in another and in a zip, then ops sweep-documents finds the three, issues them again under the same key, number and revision, and exits 0; a second run finds nothing', async () => {
    const before = await certificates();
    const zips = await archives();
    expect(before.length).toBeGreaterThanOrEqual(2);
    expect(zips.length).toBeGreaterThanOrEqual(1);
    const [lost, damaged] = before;
    const zip = zips[0];
    expect(await store.deletePrefix(lost.storage_key)).toBe(1);
    const damagedBytes = await flipAByte(damaged.storage_key);
    await flipAByte(zip.storage_key);

    const run = await sweep();
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as SweepReport;
    expect(report).toMatchObject({
      checked: { certificates: before.length, archives: zips.length },
      found: 3,
      repaired: 3,
      not_repaired: 0,
    });
    const byKey = new Map(report.findings.map((f) => [f.storage_key, f]));
    expect(byKey.get(lost.storage_key)).toMatchObject({
      kind: 'certificate',
      problem: 'missing',
      certificate_number: lost.certificate_number,
      revision: lost.revision,
      outcome: 'repaired',
    });
    expect(byKey.get(damaged.storage_key)).toMatchObject({
      kind: 'certificate',
      problem: 'damaged',
      found: { size_bytes: damagedBytes.length, sha256: expect.not.stringMatching(damaged.sha256) },
      outcome: 'repaired',
    });
    expect(byKey.get(zip.storage_key)).toMatchObject({ kind: 'archive', problem: 'damaged', outcome: 'repaired' });
    // On the record: who ran it, on which agency, and what it found and issued again.
    const entry = await db()('operator_audit_log')
      .where({ id: (report as SweepReport & { audit_id: number }).audit_id })
      .first();
    expect(entry).toMatchObject({
      actor_kind: 'operator_cli',
      action: 'sweep-documents',
      target_kind: 'root_account',
      target_id: String(rootAccountId),
      root_account_id: rootAccountId,
      outcome: 'succeeded',
      reason: 'routine check of stored documents (no --reason given)',
      details: { found: 3, repaired: 3, not_repaired: 0, purchases: [purchaseId] },
    });

    // Same rows, keys, numbers and revisions; each record now names its new object's digest.
    const after = await certificates();
    expect(after.map((c) => [c.id, c.certificate_number, c.revision, c.storage_key])).toEqual(
      before.map((c) => [c.id, c.certificate_number, c.revision, c.storage_key]),
    );
    expect(after.slice(2).map((c) => c.sha256)).toEqual(before.slice(2).map((c) => c.sha256));
    for (const f of report.findings) expect(f.repaired).toMatchObject({ storage_key: f.storage_key });
    await expectAllMatch();
    // The damaged bytes are kept aside for inspection.
    const quarantined = byKey.get(damaged.storage_key)!.quarantine_key!;
    expect(quarantined).toMatch(/^quarantine\/purchases\//);
    expect((await bytesOf(quarantined)).equals(damagedBytes)).toBe(true);

    const second = await sweep();
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ found: 0, repaired: 0, not_repaired: 0, findings: [] });
  }, 180_000);

  test('when issuance cannot be reached, then the damaged certificate is reported not repaired and the sweep exits 3; the next run repairs it', async () => {
    const [first] = await certificates();
    await flipAByte(first.storage_key);
    const failed = await sweep({ TEMPORAL_NAMESPACE: `no-such-namespace-${process.pid}` });
    expect(failed.code).toBe(3);
    const report = JSON.parse(failed.stdout) as SweepReport;
    expect(report).toMatchObject({ found: 1, repaired: 0, not_repaired: 1 });
    expect(report.findings[0]).toMatchObject({
      storage_key: first.storage_key,
      problem: 'damaged',
      outcome: 'not_repaired',
      reason: expect.stringMatching(/no-such-namespace/),
    });
    // The damaged object was moved aside: the next run finds it missing and repairs it (told in lines).
    const again = await sweep({}, false);
    expect(again.code).toBe(0);
    const count = (await certificates()).length;
    expect(again.stdout.split('\n')).toEqual([
      `checked ${count} certificate(s) and ${(await archives()).length} zip(s) of root account ${rootAccountId}: 1 found missing or damaged, 1 repaired, 0 not repaired`,
      expect.stringMatching(
        new RegExp(
          `^  purchase ${purchaseId} \\(account ${rootAccountId}\\) certificate ${first.certificate_number} \\(revision 1\\) ${first.storage_key}: missing; repaired: ${first.storage_key} \\(\\d+ bytes, sha256 [0-9a-f]{12}…\\)$`,
        ),
      ),
      expect.stringMatching(/^audit entry \d+$/),
      '',
    ]);
    await expectAllMatch();
  }, 180_000);

  test('when the scheduled workflow runs after a byte flipped in a certificate, then it reports it found and repaired', async () => {
    const [, second] = await certificates();
    await flipAByte(second.storage_key);
    const report = await env.app.container.temporal.client.workflow.execute(storedDocumentsSweepWorkflow, {
      workflowId: `stored-documents-sweep-test-${purchaseId}`,
      taskQueue: env.worker.taskQueue,
      args: [{ rootAccountId, pageSize: 1 }],
    });
    expect(report).toMatchObject({ found: 1, repaired: 1, not_repaired: 0 });
    expect(report.findings[0]).toMatchObject({ storage_key: second.storage_key, problem: 'damaged', outcome: 'repaired' });
    // One certificate and one zip a page: every one checked once.
    expect(report.checked).toEqual({ certificates: (await certificates()).length, archives: (await archives()).length });
    await expectAllMatch();
  }, 180_000);

  test('when a worker ensures the schedule (twice), then one schedule starts the sweep workflow every day at 03:30 UTC on its task queue', async () => {
    const client = env.app.container.temporal.client;
    // An id of its own: the workers of other suites ensure the real one in this namespace too.
    const id = `${DOCUMENT_SWEEP_SCHEDULE_ID}-${env.worker.taskQueue}`;
    await ensureDocumentSweepSchedule(client, `${env.worker.taskQueue}-old`, id);
    await ensureDocumentSweepSchedule(client, env.worker.taskQueue, id);
    try {
      const d = await client.schedule.getHandle(id).describe();
      expect(d.spec.calendars).toEqual([
        expect.objectContaining({ hour: [{ start: 3, end: 3, step: 1 }], minute: [{ start: 30, end: 30, step: 1 }] }),
      ]);
      expect(d.spec.timezone).toBe('UTC');
      expect(d.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'storedDocumentsSweepWorkflow',
        taskQueue: env.worker.taskQueue,
      });
      expect(d.policies.overlap).toBe('SKIP');
    } finally {
      await client.schedule.getHandle(id).delete();
    }
  });
});
