/**
 * Certificate issuance under faults (issue 6 "Done when"), against the real servers:
 * - a worker process (`tsx src/worker.ts`) SIGKILLed in the middle of rendering a 30-day
 *   purchase, then a fresh worker on the same task queue: exactly 30 certificates, 30 PDF
 *   objects and the zips, no gap and no duplicate, and the killed worker's Chromium is gone;
 * - object storage unreachable for a minute from the start of issuance (a TCP proxy in front of
 *   the shared fake-gcs-server resets every connection): issuance completes once it returns.
 */
import fs from 'node:fs';
import { startTestApp, type TestApp } from '../helpers/app';
import { startProcess } from '../helpers/run';
import { eventually, uniqueTaskQueue } from '../helpers/worker';
import { WEBHOOK_SECRET } from '../helpers/purchases';
import { buyAndPay, createAgency, eventSelection, waitIssued } from '../helpers/certificates';
import { useStorageOutageStack } from '../helpers/storage-outage';
import { download, readZip } from '../helpers/documents';
import { createObjectStore } from '../../src/storage/object-store';

jest.setTimeout(300_000);

/** Bundling the workflows in a fresh process on a loaded 2-core machine can take a minute or more. */
const WORKER_READY_MS = 120_000;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Pids of processes whose environment names `taskQueue` (tsx wrappers, workers and their Chromium). */
function processesWith(taskQueue: string, cmdlineIncludes?: string): number[] {
  const marker = `TEMPORAL_TASK_QUEUE=${taskQueue}\0`;
  const pids: number[] = [];
  for (const entry of fs.existsSync('/proc') ? fs.readdirSync('/proc') : []) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (!fs.readFileSync(`/proc/${entry}/environ`, 'latin1').includes(marker)) continue;
      if (cmdlineIncludes && !fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(cmdlineIncludes)) continue;
      pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

function killAll(taskQueue: string): void {
  for (const pid of processesWith(taskQueue)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

describe('given a worker process killed in the middle of rendering a 30-day purchase', () => {
  const taskQueue = uniqueTaskQueue();
  let app: TestApp | undefined;

  afterAll(async () => {
    killAll(taskQueue);
    await app?.close();
  });

  const startWorker = async () => {
    const started = await startProcess(
      'src/worker.ts',
      /"msg":"worker running"/,
      { TEMPORAL_TASK_QUEUE: taskQueue, TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE, LOG_LEVEL: 'info' },
      WORKER_READY_MS,
    );
    const pid = Number(/"pid":(\d+)[^\n]*"msg":"worker running"/.exec(started.output())?.[1]);
    if (!pid) throw new Error(`no pid in the worker's "worker running" line:\n${started.output()}`);
    return pid;
  };

  test('when a fresh worker takes over, then there are exactly 30 certificates, 30 objects and the zips, and the first numbers are kept', async () => {
    const first = await startWorker();
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' });
    const agency = await createAgency(app);
    const db = app.container.db;

    const paid = await buyAndPay(agency, eventSelection(agency, { start: '2027-09-01', end: '2027-09-30' }));
    // Kill once some, but not all, PDFs are stored.
    const storedBeforeKill = (await eventually(async () => {
      const rows = await db('certificates')
        .where({ purchase_id: paid.purchaseId })
        .whereNotNull('storage_key')
        .select('id', 'certificate_number', 'sha256');
      return rows.length >= 3 ? rows : null;
    }, 120_000))!;
    const chromium = processesWith(taskQueue, 'chromium');
    process.kill(first, 'SIGKILL');
    expect(storedBeforeKill.length).toBeLessThan(30);
    expect(chromium.length).toBeGreaterThan(0);
    // Chromium was launched with a pipe to the worker: it exits when the worker dies.
    await eventually(async () => chromium.every((pid) => !alive(pid)), 15_000);

    await startWorker();
    const body = await waitIssued(agency, paid.paymentIntent, 180_000);

    expect(body.certificate_count).toBe(30);
    const numbers: string[] = body.certificates.map((c: any) => c.certificate_number);
    expect(new Set(numbers).size).toBe(30);
    expect(body.certificates.map((c: any) => c.covered_unit_index)).toEqual([...Array(30).keys()]);
    for (const before of storedBeforeKill) {
      expect(body.certificates.find((c: any) => c.certificate_number === before.certificate_number)?.sha256).toBe(before.sha256);
    }
    expect(await db('certificates').where({ purchase_id: paid.purchaseId }).count({ n: '*' }).first()).toEqual({ n: '30' });

    const store = createObjectStore(app.container.config);
    const objects = await store.list(`purchases/${paid.purchaseId}/`);
    expect(objects.filter((k) => k.includes('/certificates/'))).toHaveLength(30);
    expect(objects.filter((k) => k.includes('/zips/'))).toHaveLength(2);
    const zip = await readZip(await download(body.product_zips[0].zip_url));
    expect([...zip.keys()].sort()).toEqual(['proof-of-coverage.png', ...numbers.map((n) => `${n}.pdf`)].sort());
  });
});

describe('given object storage unreachable for a minute when issuance starts', () => {
  const startStack = useStorageOutageStack({ PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' });

  test('when storage comes back, then issuance completes with every certificate stored once', async () => {
    const { app, proxy } = await startStack();
    const agency = await createAgency(app);
    const db = app.container.db;

    proxy.down();
    const paid = await buyAndPay(agency, eventSelection(agency, { start: '2027-10-01', end: '2027-10-03' }));
    const downSince = Date.now();
    await eventually(async () => proxy.refused > 0, 30_000);
    // A minute of outage in which the worker has tried storage again and again: nothing can be
    // stored, and the purchase is not marked issued.
    await eventually(async () => Date.now() - downSince >= 60_000 && proxy.refused >= 3, 120_000);
    expect(await db('certificates').where({ purchase_id: paid.purchaseId }).whereNotNull('storage_key').count({ n: '*' }).first()).toEqual({
      n: '0',
    });
    expect((await db('purchases').where({ id: paid.purchaseId }).first('status')).status).toBe('awaiting_certificates');
    proxy.up();

    const body = await waitIssued(agency, paid.paymentIntent, 120_000);
    expect(body.certificate_count).toBe(3);
    const objects = await createObjectStore(app.container.config).list(`purchases/${paid.purchaseId}/`);
    expect(objects.filter((k) => k.includes('/certificates/'))).toHaveLength(3);
    expect(objects.filter((k) => k.includes('/zips/'))).toHaveLength(2);
  });
});
