/**
 * `npm run bench -- certificates [--certs N] [--baseline-certs N] [--runs N] [--memory-first N] [--memory-certs N] [--memory-last N] [--poll-ms MS] [--quick]`
 *
 * Measures certificate issuance (issue 6, last bullet of "Done when") in one run:
 *
 * 1. Throughput: `--certs` (default 100) certificates of one purchase through the real
 *    `issueCertificates` activity (`createActivities(activityDepsFromConfig(config, { db, log }))`:
 *    the Chromium page pool, the certificate template, fake-gcs uploads, certificate rows), called
 *    in this process under `MockActivityEnvironment` the way the certificate workflow calls it
 *    (batches of CERTIFICATE_BATCH_SIZE, PARALLEL_BATCHES at once), after a warm-up batch that
 *    launches the pool's browser; beside the naive baseline of ./certificates-naive.ts (a fresh
 *    Chromium per PDF, same HTML, same upload) over `--baseline-certs` (default 10: each costs a
 *    browser launch, and the run must stay within a few minutes) of the same certificates. Goal: activity rate >= 10 x naive rate.
 * 2. Webhook-to-available latency: a real API (container + Koa app in this process) and a real
 *    worker (`src/worker.ts`, a child process); for a 1-day and a 30-day purchase, `--runs`
 *    (default 10) runs each, alternating: the time from sending the signed
 *    `checkout.session.completed` webhook to `getCertificates` answering `status: 'issued'`,
 *    polled every `--poll-ms` (default 50) ms. p50 and max per size; goal: 30-day max <= 5 s.
 * 3. Memory: the worker's VmRSS after its first `--memory-first` (default 100) certificates,
 *    after `--memory-certs` (default 1 000; the latency runs count towards it, the rest is bought
 *    as purchases of up to MAX_COVERED_UNITS days) and after `--memory-last` (default 10 000);
 *    goals (issue 28): each ratio, 1 000 vs 100 and 10 000 vs 1 000, <= 1.2. The worker runs with
 *    the flags every launcher gives it (scripts/worker-runtime.cjs: its heap cap). Then SIGTERM to
 *    the worker and a scan of /proc for any process carrying the worker's marker variable (its
 *    Chromium processes): goal none left.
 *
 * Isolation: the servers of `npm run dev` are reused (or started through scripts/stack.mjs and
 * stopped at the end); the benchmark recreates and migrates its own database
 * `insurance_bench_certificates`, and uses its own Temporal namespace (`certificates-bench-<time>`,
 * deleted at the end: purchase ids restart with the recreated database, so workflow ids
 * `purchase-<id>` must not meet an earlier run's), task queue and fake-gcs bucket (deleted at the
 * end), so it never touches dev data.
 *
 * Prints a table, writes the figures to bench/results/certificates.json and returns them as a
 * `BenchReport`. `--quick` runs 20 + 3 certificates, 2 latency runs, and 20, 100 and 200
 * certificates through the worker.
 * Exits 0 also when a goal is missed (MISSED is printed beside it); exits 1 only when the
 * benchmark cannot run.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { MockActivityEnvironment } from '@temporalio/testing';
import { loadConfig, type Config } from '../../src/config';
import { createContainer } from '../../src/container';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/logger';
import { createDb, migrateLatest, type Db } from '../../src/db/knex';
import { createCertificatesRepository } from '../../src/certificates/repository';
import { activityDepsFromConfig, createActivities } from '../../activities';
import { CERTIFICATE_BATCH_SIZE, PARALLEL_BATCHES } from '../../workflows/certificates';
import type { ApiHandle } from '../harness/api';
import { call, connectBuyer } from '../harness/fixtures';
import { createAgency, eventSelection, getCertificates, type Agency } from '../harness/certificates';
import { deliverWebhook, sessionCompletedEvent } from '../harness/purchases';
import { runNaiveBaseline, type NaiveResult } from './certificates-naive';
import { describeTimeline, runTimeline, type RunTimeline } from './certificates-timeline';
import {
  WORKER_NODE_ARGS,
  markedProcesses,
  processMemory,
  startCpuMeter,
  startWorker,
  stillPresent,
  stopWorker,
  type CpuUse,
  type ProcInfo,
  type WorkerProcess,
} from './certificates-worker';
import {
  startBenchRun,
  machineJson,
  percentile,
  REPO_ROOT,
  round2,
  stopBenchStack,
  writeResultsFile,
  loadStackLib,
  reportHead,
  resultsHead,
  rounded,
} from './lib';
import { parseBenchOptionsOrExit, type BenchOptions, benchOptions, benchEntry } from './options';
import { ratioOf, textTable, type BenchReport, type Percentiles } from './report';

const ROOT = REPO_ROOT;
const BENCH_DATABASE = 'insurance_bench_certificates';
const WORKER_LOG = path.join(ROOT, 'var', 'log', 'certificates-bench-worker.log');
/** Goals of issue 6. */
const GOAL_RATIO = 10;
const GOAL_30_DAY_MS = 5000;
const GOAL_RSS_RATIO = 1.2;
/** First day of every bench purchase (local dates in America/Chicago). */
const COVERAGE_START = '2027-03-01';

const log = (line: string) => console.log(line);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A dynamic import whose specifier TypeScript does not resolve (the .mjs modules have no types). */

/** The rules between the certificates bench's options; throws an `Error` with a one-line message when one is broken. */
function checkCertificatesOptions(o: Record<'certs' | 'baselineCerts' | 'memoryFirst' | 'memoryCerts' | 'memoryLast', number>): void {
  if (o.baselineCerts > o.certs)
    throw new Error('--baseline-certs must not exceed --certs (the baseline renders some of the same certificates)');
  if (o.memoryCerts <= o.memoryFirst) throw new Error('--memory-certs must exceed --memory-first');
  if (o.memoryLast <= o.memoryCerts) throw new Error('--memory-last must exceed --memory-certs');
}

/** The certificates bench's options (`--quick`: 20 + 3 certificates, 2 latency runs, the worker read after 20, 100 and 200 certificates). */
export const CERTIFICATES_OPTIONS = benchOptions(
  { bench: 'certificates', check: checkCertificatesOptions },
  {
    certs: { default: 100, quick: 20, min: 1, max: 366 },
    baselineCerts: { default: 10, quick: 3, min: 1, max: 366 },
    runs: { default: 10, quick: 2, min: 1, max: 1000 },
    memoryFirst: { default: 100, quick: 20, min: 1, max: 100_000 },
    memoryCerts: { default: 1000, quick: 100, min: 1, max: 100_000 },
    memoryLast: { default: 10_000, quick: 200, min: 1, max: 1_000_000 },
    pollMs: { default: 50, quick: 50, min: 1, max: 10_000, metavar: 'MS' },
  },
);
type Options = BenchOptions<keyof typeof CERTIFICATES_OPTIONS.ints>;

// ---------------------------------------------------------------------------------------------
// Purchases through the real API

/** `YYYY-MM-DD` plus `days` calendar days. */
function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

let buyerSeq = 0;

/**
 * A new buyer quotes the event product for `days` days (covered units) through the API; the
 * purchase workflow (on the bench worker) answers with its checkout session. Unpaid.
 */
async function quote(agency: Agency, days: number): Promise<{ purchaseId: number; sessionId: string; paymentIntent: string }> {
  const n = buyerSeq++;
  const email = `avery.bench${n}.${Date.now()}@example.com`;
  const buyer = await connectBuyer(agency.app.baseUrl, agency.key, {
    firstName: 'Avery',
    lastName: `Bench${n}`,
    email,
    sellerSlug: agency.slug,
  });
  const selection = eventSelection(agency, { start: COVERAGE_START, end: addDays(COVERAGE_START, days - 1) }, `Jordan Lee ${n}`);
  const quoted = await call(agency.app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
    method: 'POST',
    key: agency.key,
    body: { ...buyer, selected_product_lines_to_purchase: [selection] },
  });
  if (quoted.status !== 200) throw new Error(`adminValidateBuyerResponses (${days} days): ${quoted.status} ${quoted.text}`);
  const purchaseId = quoted.body.purchase_id as number;
  return { purchaseId, sessionId: quoted.body.id as string, paymentIntent: `pi_paid_${purchaseId}` };
}

/** Delivers the signed `checkout.session.completed` webhook of the purchase (as the processor would). */
async function pay(agency: Agency, secret: string, q: { purchaseId: number; sessionId: string }): Promise<void> {
  const res = await deliverWebhook(agency.app, sessionCompletedEvent(q.purchaseId, q.sessionId), secret);
  if (res.status !== 200) throw new Error(`webhook for purchase ${q.purchaseId}: ${res.status} ${res.text}`);
}

/**
 * Polls getCertificates every `pollMs` (measured from the start of one request to the start of
 * the next) until it answers `status: 'issued'`; 404 (payment not recorded yet) and `pending`
 * count as not yet. Returns the body. Throws on any other answer or after `timeoutMs`.
 */
async function waitIssued(agency: Agency, paymentIntent: string, pollMs: number, timeoutMs: number, worker?: WorkerProcess): Promise<any> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (worker?.exitInfo)
      throw new Error(
        `the worker exited (code ${worker.exitInfo.code}, signal ${worker.exitInfo.signal}) while ${paymentIntent} was issuing; see ${worker.logFile}`,
      );
    const t = performance.now();
    const res = await getCertificates(agency, paymentIntent);
    if (res.status === 200 && res.body?.status === 'issued') return res.body;
    if (res.status !== 200 && !(res.status === 404 && res.body?.code === 'NOT_FOUND')) {
      throw new Error(`getCertificates(${paymentIntent}): ${res.status} ${res.text.slice(0, 300)}`);
    }
    if (performance.now() > deadline)
      throw new Error(`${paymentIntent} not issued within ${timeoutMs} ms (last status ${res.body?.status ?? res.status})`);
    await sleep(Math.max(0, t + pollMs - performance.now()));
  }
}

// ---------------------------------------------------------------------------------------------
// Throughput through the activity

type Activities = ReturnType<typeof createActivities>;

/** Runs an activity function in its own mock activity context (heartbeats go nowhere). */
function inActivity<A, R>(fn: (input: A) => Promise<R>, input: A): Promise<R> {
  return new MockActivityEnvironment().run(fn, input);
}

/** Issues `ids` of the purchase as the certificate workflow does: batches, a few in flight. */
async function issueLikeWorkflow(
  acts: Activities,
  purchaseId: number,
  ids: readonly number[],
): Promise<{ rendered: number; alreadyStored: number }> {
  const batches: number[][] = [];
  for (let i = 0; i < ids.length; i += CERTIFICATE_BATCH_SIZE) batches.push(ids.slice(i, i + CERTIFICATE_BATCH_SIZE));
  let next = 0;
  const total = { rendered: 0, alreadyStored: 0 };
  const lane = async () => {
    while (next < batches.length) {
      const r = await inActivity(acts.issueCertificates, { purchaseId, certificateIds: batches[next++]! });
      total.rendered += r.rendered;
      total.alreadyStored += r.alreadyStored;
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_BATCHES, batches.length) }, lane));
  return total;
}

interface ThroughputResult {
  activity: {
    certificates: number;
    wallMs: number;
    perSecond: number;
    warmupCertificates: number;
    pages: number;
    pagesPerPrint: number;
    printsAtOnce: number;
    batchSize: number;
    parallelBatches: number;
    browserLaunches: number;
    meanBytes: number;
    cpu: CpuUse;
  };
  naive: NaiveResult & { meanBytes: number; cpu: CpuUse };
  ratio: number;
  pass: boolean;
}

async function measureThroughput(
  opts: Options,
  config: Config,
  db: Db,
  agency: Agency,
  runId: string,
  workerPid: number,
): Promise<ThroughputResult> {
  const deps = activityDepsFromConfig(config, { db, log: createLogger({ LOG_LEVEL: 'silent' }, 'bench-activities') });
  const acts = createActivities(deps);
  const repo = createCertificatesRepository(db);
  try {
    const warmupCount = config.PDF_PAGE_POOL_SIZE * 2;
    const warm = await quote(agency, warmupCount);
    const measured = await quote(agency, opts.certs);
    const warmPlan = await inActivity(acts.planCertificates, { purchaseId: warm.purchaseId });
    const plan = await inActivity(acts.planCertificates, { purchaseId: measured.purchaseId });
    if (plan.pendingIds.length !== opts.certs) throw new Error(`planned ${plan.pendingIds.length} certificates, expected ${opts.certs}`);
    // The naive baseline renders the same certificates: their template data, read before issuing.
    const baselineRows = await repo.pendingForIssue(measured.purchaseId, plan.pendingIds.slice(0, opts.baselineCerts));

    // Warm-up: the pool launches its browser and opens its pages (a worker does this once).
    await issueLikeWorkflow(acts, warm.purchaseId, warmPlan.pendingIds);

    const cpuMeter = startCpuMeter(workerPid);
    const t0 = performance.now();
    const done = await issueLikeWorkflow(acts, measured.purchaseId, plan.pendingIds);
    const wallMs = performance.now() - t0;
    const cpu = cpuMeter();
    if (done.rendered !== opts.certs)
      throw new Error(`the activity rendered ${done.rendered} of ${opts.certs} certificates (${done.alreadyStored} already stored)`);
    const sizes = (await db('certificates')
      .where({ purchase_id: measured.purchaseId })
      .whereNotNull('storage_key')
      .first(db.raw('count(*)::int as n'), db.raw('coalesce(sum(size_bytes), 0)::bigint as bytes'))) as
      { n: number; bytes: string } | undefined;
    const stored = Number(sizes?.n ?? 0);
    if (stored !== opts.certs) throw new Error(`${stored} of ${opts.certs} certificate rows are stored`);
    const activity = {
      certificates: opts.certs,
      wallMs,
      perSecond: opts.certs / (wallMs / 1000),
      warmupCertificates: warmupCount,
      pages: config.PDF_PAGE_POOL_SIZE,
      pagesPerPrint: config.PDF_PAGES_PER_PRINT,
      printsAtOnce: deps.printer.printsAtOnce,
      batchSize: CERTIFICATE_BATCH_SIZE,
      parallelBatches: PARALLEL_BATCHES,
      browserLaunches: deps.pdf.launches,
      meanBytes: Number(sizes?.bytes ?? 0) / opts.certs,
      cpu,
    };
    log(
      `activity path: ${opts.certs} certificates in ${(wallMs / 1000).toFixed(2)} s = ${activity.perSecond.toFixed(2)}/s ` +
        `(pool of ${activity.pages} pages, ${activity.printsAtOnce} prints at once of up to ${activity.pagesPerPrint} pages, batches of ${CERTIFICATE_BATCH_SIZE} x ${PARALLEL_BATCHES} in flight; ` +
        `warm-up ${warmupCount} certificates, ${deps.pdf.launches} browser launch(es)); CPU ${describeCpu(cpu, 'this process + its Chromium')}`,
    );
    await deps.pdf.close(); // the baseline gets the machine to itself

    const naiveMeter = startCpuMeter(workerPid);
    const naive = await runNaiveBaseline({
      rows: baselineRows,
      executablePath: config.CHROMIUM_PATH,
      publicBaseUrl: config.PUBLIC_BASE_URL,
      format: config.PDF_PAGE_FORMAT,
      store: deps.store,
      keyPrefix: `bench-naive/${runId}`,
    });
    const naiveCpu = naiveMeter();
    log(
      `naive baseline: ${naive.certificates} certificates in ${(naive.wallMs / 1000).toFixed(2)} s = ${naive.perSecond.toFixed(2)}/s ` +
        `(mean per certificate: launch ${naive.meanMs.launch.toFixed(0)} ms, page + PDF ${naive.meanMs.render.toFixed(0)} ms, ` +
        `close ${naive.meanMs.close.toFixed(0)} ms, upload ${naive.meanMs.upload.toFixed(0)} ms); CPU ${describeCpu(naiveCpu, 'this process + its Chromium')}`,
    );
    const ratio = activity.perSecond / naive.perSecond;
    return { activity, naive: { ...naive, meanBytes: naive.bytes / naive.certificates, cpu: naiveCpu }, ratio, pass: ratio >= GOAL_RATIO };
  } finally {
    await deps.pdf.close();
    await deps.temporal.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Worker: latency and memory

interface LatencyRun {
  days: number;
  purchaseId: number;
  /** Wall clock (ms since the epoch) when the webhook was sent. */
  sentAt: number;
  /** Webhook sent → 200 from the webhook endpoint, ms. */
  webhookAckMs: number;
  /** Webhook sent → getCertificates answered `issued`, ms. */
  availableMs: number;
  certificates: number;
  cpu: CpuUse;
}

interface MemorySnapshot {
  /** Certificates the worker had issued when the snapshot was taken. */
  certificates: number;
  rssKiB: number;
  /** Peak RSS of the worker so far (VmHWM), KiB. */
  hwmKiB: number;
  /** The worker's Chromium processes at that moment (sum of their VmRSS: shared pages count once per process). */
  chromium: { processes: number; rssKiB: number };
}

function snapshot(worker: WorkerProcess, marker: string, certificates: number): MemorySnapshot {
  const mem = processMemory(worker.pid);
  if (!mem) throw new Error(`the worker (pid ${worker.pid}) is gone; see ${worker.logFile}`);
  const chromium = markedProcesses(marker, worker.pid).filter(isChromium);
  return {
    certificates,
    rssKiB: mem.rssKiB,
    hwmKiB: mem.hwmKiB,
    chromium: { processes: chromium.length, rssKiB: chromium.reduce((s, p) => s + p.rssKiB, 0) },
  };
}

const isChromium = (p: ProcInfo) => /chrom/i.test(p.cmdline) || p.cmdline.includes('coi-chromium-');
const mib = (kib: number) => kib / 1024;

/** How long to wait, after the worker exited, for its processes to disappear (orphaned zombies wait for PID 1 to reap them). */
const SHUTDOWN_WAIT_MS = 10_000;

interface ShutdownResult {
  /** Processes carrying the marker just before SIGTERM (the worker excluded). */
  before: ProcInfo[];
  chromiumBefore: number;
  exit: { code: number | null; signal: string | null; ms: number; killed: boolean };
  /** Right after the worker exited: marked or previously seen processes still running (not zombies): a leak. */
  aliveAtExit: ProcInfo[];
  /** Right after the worker exited: zombies among them (exited, not reaped yet). */
  zombiesAtExit: ProcInfo[];
  /** ms after the exit when nothing of them was left in any state; null when something was still there after SHUTDOWN_WAIT_MS. */
  goneAfterMs: number | null;
  /** What was left at the end of the wait (any state). */
  left: ProcInfo[];
  pass: boolean;
}

/**
 * Stops the worker with SIGTERM and checks that none of its processes outlive it: every process
 * carrying the marker, plus every process seen with it before the stop (a zombie's environment
 * cannot be read), looked up right after the exit and then every 100 ms for up to SHUTDOWN_WAIT_MS.
 * Passes when nothing was running right after the exit and everything was gone by the end.
 */
async function stopAndCheck(worker: WorkerProcess, marker: string): Promise<ShutdownResult> {
  const before = markedProcesses(marker, worker.pid);
  const exit = await stopWorker(worker, 30_000);
  const look = () => {
    const byPid = new Map<number, ProcInfo>();
    for (const p of [...markedProcesses(marker), ...stillPresent(before)]) byPid.set(p.pid, p);
    return [...byPid.values()];
  };
  const exitedAt = performance.now();
  const atExit = look();
  let left = atExit;
  let goneAfterMs: number | null = null;
  for (;;) {
    if (left.length === 0) {
      goneAfterMs = Math.round(performance.now() - exitedAt);
      break;
    }
    if (performance.now() - exitedAt > SHUTDOWN_WAIT_MS) break;
    await sleep(100);
    left = look();
  }
  const aliveAtExit = atExit.filter((p) => p.state !== 'Z');
  return {
    before,
    chromiumBefore: before.filter(isChromium).length,
    exit,
    aliveAtExit,
    zombiesAtExit: atExit.filter((p) => p.state === 'Z'),
    goneAfterMs,
    left,
    pass: before.some(isChromium) && aliveAtExit.length === 0 && goneAfterMs !== null,
  };
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '-');

/** CPU use in cores: the machine, the measured side (`whose`), and the rest (servers and other people's processes). */
function describeCpu(c: CpuUse, whose: string): string {
  const ours = whose.startsWith('worker') ? c.worker : c.bench;
  return `(cores busy of ${c.cores}): machine ${fmt(c.machine, 1)}, ${whose} ${fmt(ours, 1)}, rest ${fmt(Math.max(0, c.machine - c.worker - c.bench), 1)}`;
}

/** Mean of CPU figures over several intervals. */
function meanCpu(list: CpuUse[]): CpuUse {
  const avg = (k: 'machine' | 'worker' | 'bench') => list.reduce((s, c) => s + c[k], 0) / Math.max(1, list.length);
  return { machine: avg('machine'), worker: avg('worker'), bench: avg('bench'), cores: list[0]?.cores ?? os.cpus().length };
}
const cpuJson = (c: CpuUse) => ({ machine: round2(c.machine), worker: round2(c.worker), bench: round2(c.bench), cores: c.cores });
const verdict = (pass: boolean) => (pass ? 'PASS' : 'MISSED');

/** A worker's memory reading: how many certificates it had issued and its VmRSS (KiB). */
type RssReading = { certificates: number; rssKiB: number };
/** The report row of the worker's VmRSS after `at.certificates` certificates, with the CPU cell of the fill before it. */
const rssRow = (at: RssReading, cpu: string) => [
  `worker VmRSS after ${at.certificates} certificates`,
  `${fmt(mib(at.rssKiB), 1)} MiB`,
  cpu,
  '',
  '',
];
/** The report row of the RSS ratio `later` / `earlier` against its goal. */
const rssRatioRow = (later: RssReading, earlier: RssReading, ratio: number, pass: boolean) => [
  `worker RSS ratio ${later.certificates} / ${earlier.certificates}`,
  `${fmt(ratio)}x`,
  '',
  `<= ${GOAL_RSS_RATIO}x`,
  verdict(pass),
];

/** Prints a table of string cells, each column padded to its widest cell. */
const printTable = (header: string[], rows: string[][]) => log(textTable(header, rows));

function latencyStats(runs: LatencyRun[]) {
  const sorted = runs.map((r) => r.availableMs).sort((a, b) => a - b);
  const acks = runs.map((r) => r.webhookAckMs).sort((a, b) => a - b);
  return {
    runs: runs.length,
    p50: percentile(sorted, 50),
    // Nearest rank over `runs` samples: with 10 runs, p95 and p99 are the maximum.
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    min: sorted[0] ?? Number.NaN,
    webhookAckP50: percentile(acks, 50),
    cpu: meanCpu(runs.map((r) => r.cpu)),
  };
}

// ---------------------------------------------------------------------------------------------

/**
 * Runs the certificates benchmark with the command-line `argv` (after the benchmark name; see
 * CERTIFICATES_OPTIONS): brings up (or reuses) the stack, its own database, namespace, task
 * queue and bucket, the API and the worker, measures the three parts, prints the report, writes
 * bench/results/certificates.json, removes what it created (the database is kept) and returns
 * the report (rates in certificates/s, latencies in ms, memory in MiB). `--help` prints the
 * usage and exits 0. Throws when an option is invalid or a step cannot run (a server, the
 * worker, an API call, a certificate not issued in time).
 */
export async function runCertificatesBench(argv: string[]): Promise<BenchReport> {
  const opts: Options = parseBenchOptionsOrExit(CERTIFICATES_OPTIONS, argv);
  const { startedAt, base, loadAtStart } = startBenchRun(
    'certificates',
    'Chromium, the worker, this process (API + activity path), PostgreSQL, Temporal and fake-gcs share these cores.',
    log,
  );

  const { stack, ensureTools } = await loadStackLib();
  const tools = await ensureTools({ log });

  const runId = `${Date.now()}-${process.pid}`;
  const namespace = `certificates-bench-${Date.now()}`;
  const taskQueue = `certificates-bench-${process.pid}`;
  const bucket = `certificates-bench-${process.pid}`;
  const marker = randomUUID();
  const dbTarget = new URL(base.DATABASE_URL);
  dbTarget.pathname = `/${BENCH_DATABASE}`;

  let temporalAddress: string | undefined;
  let storageUrl: string | undefined;
  let db: Db | undefined;
  let container: ReturnType<typeof createContainer> | undefined;
  let server: Server | undefined;
  let worker: WorkerProcess | undefined;
  try {
    const [dbUrl, temporal, stripeMock, storage] = await Promise.all([
      stack.ensurePostgres({ databaseUrl: dbTarget.toString(), recreate: true, log }),
      stack.ensureTemporal({ bin: tools.temporal, log }),
      stack.ensureStripeMock({ bin: tools.stripeMock, log }),
      stack.ensureFakeGcs({ bucket, bin: tools.fakeGcs, log }),
    ]);
    temporalAddress = temporal.address;
    storageUrl = storage.url;
    const env = {
      DATABASE_URL: dbUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      PAYPROC_API_BASE: stripeMock.url,
      STORAGE_API_ENDPOINT: storage.url,
      STORAGE_BUCKET: storage.bucket,
      RATE_LIMIT_PER_MINUTE: '100000000',
      REDIS_URL: '', // in-memory limiter
    };
    const config = loadConfig({ ...process.env, ...env, LOG_LEVEL: 'silent', PORT: '0' });
    db = createDb(config);
    const setup0 = performance.now();
    const [migrations] = await Promise.all([
      migrateLatest(db),
      stack.ensureTemporalNamespace({ bin: tools.temporal, address: temporal.address, namespace, log }),
    ]);
    const redacted = new URL(dbUrl);
    redacted.password = redacted.password ? '***' : '';
    log(
      `database ${redacted.toString()} recreated and migrated (${migrations.length} migrations); Temporal namespace ${namespace}, task queue ${taskQueue}; bucket ${bucket}`,
    );

    // The worker bundles its workflows (slow) while the API starts and the agency is created.
    const workerStarting = startWorker({
      repoRoot: ROOT,
      env: { ...process.env, ...env, LOG_LEVEL: 'info' },
      marker,
      logFile: WORKER_LOG,
      timeoutMs: 180_000,
    });
    workerStarting.catch(() => undefined);
    container = createContainer(config, createLogger(config, 'api-bench'));
    server = createApp(container).listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server!.once('listening', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const app: ApiHandle = { baseUrl, container };
    const agency = await createAgency(app, 'Bench Certificates Agency');
    worker = await workerStarting;
    log(
      `API on ${baseUrl} (in this process, RATE_LIMIT_PER_MINUTE=${config.RATE_LIMIT_PER_MINUTE}); worker pid ${worker.pid} ` +
        `(node --import tsx src/worker.ts, log ${path.relative(process.cwd(), WORKER_LOG)}); ready ${((performance.now() - setup0) / 1000).toFixed(1)} s after setup began; ` +
        `PDF_PAGE_POOL_SIZE=${config.PDF_PAGE_POOL_SIZE}, PDF_RENDERS_PER_BROWSER=${config.PDF_RENDERS_PER_BROWSER}, PDF_PAGE_FORMAT=${config.PDF_PAGE_FORMAT}`,
    );
    log('');

    // 1. Throughput (in this process; the worker is idle meanwhile: no payment is made).
    log(
      `— throughput: ${opts.certs} certificates through issueCertificates (MockActivityEnvironment, in this process) vs ${opts.baselineCerts} through the naive script`,
    );
    const throughput = await measureThroughput(opts, config, db, agency, runId, worker.pid);
    log('');

    // 2 + 3. Through the worker.
    let issued = 0;
    const maxUnits = config.MAX_COVERED_UNITS;
    /** Buys and pays purchases of up to MAX_COVERED_UNITS days until `count` more certificates are issued. */
    const issueThroughWorker = async (count: number) => {
      for (let left = count; left > 0;) {
        const days = Math.min(left, maxUnits);
        const q = await quote(agency, days);
        const t0 = performance.now();
        await pay(agency, config.PAYPROC_WEBHOOK_SECRET, q);
        const body = await waitIssued(agency, q.paymentIntent, 200, 120_000 + days * 1000, worker);
        if (body.certificate_count !== days)
          throw new Error(`purchase ${q.purchaseId}: ${body.certificate_count} certificates issued, expected ${days}`);
        const seconds = (performance.now() - t0) / 1000;
        issued += days;
        left -= days;
        const rss = processMemory(worker!.pid)?.rssKiB ?? Number.NaN;
        trail.push({ certificates: issued, rssMiB: round2(mib(rss)) });
        log(
          `  purchase ${q.purchaseId}: ${days} days issued in ${seconds.toFixed(2)} s (${(days / seconds).toFixed(1)}/s); worker total ${issued}, VmRSS ${fmt(mib(rss), 1)} MiB`,
        );
      }
    };
    /** Worker VmRSS right after each purchase issued through `issueThroughWorker` and after the latency runs. */
    const trail: { certificates: number; rssMiB: number }[] = [];
    const idle = snapshot(worker, marker, 0);
    log(`— memory: worker VmRSS ${fmt(mib(idle.rssKiB), 1)} MiB after start, before any certificate`);
    await issueThroughWorker(opts.memoryFirst);
    await sleep(1000);
    const first = snapshot(worker, marker, issued);
    log(
      `  worker VmRSS after ${issued} certificates: ${fmt(mib(first.rssKiB), 1)} MiB (Chromium: ${first.chromium.processes} processes, ${fmt(mib(first.chromium.rssKiB), 1)} MiB)`,
    );
    log('');

    log(
      `— latency: webhook → getCertificates 'issued', ${opts.runs} runs each of 1 and 30 days, alternating, poll every ${opts.pollMs} ms`,
    );
    const runs: LatencyRun[] = [];
    for (let i = 0; i < opts.runs; i++) {
      for (const days of [1, 30]) {
        const q = await quote(agency, days);
        const cpuMeter = startCpuMeter(worker.pid);
        const sentAt = Date.now();
        const t0 = performance.now();
        await pay(agency, config.PAYPROC_WEBHOOK_SECRET, q);
        const webhookAckMs = performance.now() - t0;
        const body = await waitIssued(agency, q.paymentIntent, opts.pollMs, 120_000, worker);
        const availableMs = performance.now() - t0;
        const cpu = cpuMeter();
        if (body.certificate_count !== days)
          throw new Error(`purchase ${q.purchaseId}: ${body.certificate_count} certificates issued, expected ${days}`);
        issued += days;
        runs.push({ days, purchaseId: q.purchaseId, sentAt, webhookAckMs, availableMs, certificates: body.certificate_count, cpu });
        log(
          `  run ${i + 1} ${String(days).padStart(2)} day(s): purchase ${q.purchaseId}, webhook 200 in ${webhookAckMs.toFixed(0)} ms, issued after ${availableMs.toFixed(0)} ms; CPU ${describeCpu(cpu, 'worker + Chromium')}`,
        );
      }
    }
    trail.push({ certificates: issued, rssMiB: round2(mib(processMemory(worker.pid)?.rssKiB ?? Number.NaN)) });
    const oneDay = latencyStats(runs.filter((r) => r.days === 1));
    const thirtyDay = latencyStats(runs.filter((r) => r.days === 30));
    const latencyPass = thirtyDay.max <= GOAL_30_DAY_MS;
    // Where the time went (from the workflow histories, read after the runs so as not to disturb them).
    const timelines = new Map<number, RunTimeline>();
    for (const r of runs) timelines.set(r.purchaseId, await runTimeline(container.temporal.client, r.purchaseId, r.sentAt));
    for (const days of [1, 30]) {
      const slowest = runs.filter((r) => r.days === days).reduce((a, b) => (b.availableMs > a.availableMs ? b : a));
      log(`  slowest ${days}-day run (purchase ${slowest.purchaseId}, ${slowest.availableMs.toFixed(0)} ms), from the workflow histories:`);
      for (const line of describeTimeline(timelines.get(slowest.purchaseId)!)) log(`    ${line}`);
    }
    log('');

    log(`— memory: issuing up to ${opts.memoryCerts} certificates through the worker (now at ${issued})`);
    let fill: CpuUse | undefined;
    if (issued < opts.memoryCerts) {
      const fillMeter = startCpuMeter(worker.pid);
      await issueThroughWorker(opts.memoryCerts - issued);
      fill = fillMeter();
    }
    await sleep(1000);
    const middle = snapshot(worker, marker, issued);
    const rssRatio = middle.rssKiB / first.rssKiB;
    log(
      `  worker VmRSS after ${issued} certificates: ${fmt(mib(middle.rssKiB), 1)} MiB (Chromium: ${middle.chromium.processes} processes, ${fmt(mib(middle.chromium.rssKiB), 1)} MiB)`,
    );
    log(`— memory: issuing up to ${opts.memoryLast} certificates through the worker (now at ${issued})`);
    const lastMeter = startCpuMeter(worker.pid);
    const lastStarted = performance.now();
    await issueThroughWorker(opts.memoryLast - issued);
    const lastFill = { cpu: lastMeter(), seconds: (performance.now() - lastStarted) / 1000 };
    await sleep(1000);
    const last = snapshot(worker, marker, issued);
    const lastRatio = last.rssKiB / middle.rssKiB;
    log(
      `  worker VmRSS after ${issued} certificates: ${fmt(mib(last.rssKiB), 1)} MiB (Chromium: ${last.chromium.processes} processes, ${fmt(mib(last.chromium.rssKiB), 1)} MiB); ` +
        `${last.certificates - middle.certificates} certificates in ${fmt(lastFill.seconds, 0)} s`,
    );

    // Shutdown: SIGTERM, the worker closes its pool; nothing carrying the marker may remain.
    const shutdown = await stopAndCheck(worker, marker);
    log(
      `  SIGTERM: worker exited with ${shutdown.exit.signal ?? `code ${shutdown.exit.code}`} after ${shutdown.exit.ms} ms${shutdown.exit.killed ? ' (SIGKILL after the grace time)' : ''}; ` +
        `marked processes before: ${shutdown.before.length} (${shutdown.chromiumBefore} Chromium); right after the exit: ${shutdown.aliveAtExit.length} running, ` +
        `${shutdown.zombiesAtExit.length} zombie(s)${shutdown.zombiesAtExit.length ? ` (parent pid ${[...new Set(shutdown.zombiesAtExit.map((p) => p.ppid))].join(', ')})` : ''}; ` +
        (shutdown.goneAfterMs === null
          ? `still present after ${SHUTDOWN_WAIT_MS} ms: ${shutdown.left.length}`
          : `none left ${shutdown.goneAfterMs} ms after the exit`),
    );
    for (const p of [...shutdown.aliveAtExit, ...shutdown.left]) log(`    pid ${p.pid} (parent ${p.ppid}) state ${p.state} ${p.cmdline}`);
    log('');

    // Report
    const rssPass = rssRatio <= GOAL_RSS_RATIO;
    const lastPass = lastRatio <= GOAL_RSS_RATIO;
    const cpuCell = (c: CpuUse, side: 'worker' | 'bench') =>
      `${fmt(c.machine, 1)} / ${fmt(side === 'worker' ? c.worker : c.bench, 1)} / ${fmt(Math.max(0, c.machine - c.worker - c.bench), 1)}`;
    printTable(
      ['measure', 'value', `CPU cores busy of ${os.cpus().length}: machine / measured side / rest`, 'goal', 'result'],
      [
        [
          `activity path, ${throughput.activity.certificates} certificates (pool warm)`,
          `${fmt(throughput.activity.perSecond)} certificates/s (${fmt(throughput.activity.wallMs / 1000)} s)`,
          cpuCell(throughput.activity.cpu, 'bench'),
          '',
          '',
        ],
        [
          `naive browser per PDF, ${throughput.naive.certificates} certificates`,
          `${fmt(throughput.naive.perSecond)} certificates/s (${fmt(throughput.naive.wallMs / 1000)} s)`,
          cpuCell(throughput.naive.cpu, 'bench'),
          '',
          '',
        ],
        ['throughput ratio activity / naive', `${fmt(throughput.ratio, 1)}x`, '', `>= ${GOAL_RATIO}x`, verdict(throughput.pass)],
        [
          `webhook -> issued, 1 day (${oneDay.runs} runs)`,
          `p50 ${fmt(oneDay.p50, 0)} ms, max ${fmt(oneDay.max, 0)} ms`,
          cpuCell(oneDay.cpu, 'worker'),
          '',
          '',
        ],
        [
          `webhook -> issued, 30 days (${thirtyDay.runs} runs)`,
          `p50 ${fmt(thirtyDay.p50, 0)} ms, max ${fmt(thirtyDay.max, 0)} ms`,
          cpuCell(thirtyDay.cpu, 'worker'),
          `max <= ${GOAL_30_DAY_MS} ms`,
          verdict(latencyPass),
        ],
        rssRow(first, ''),
        rssRow(middle, fill ? cpuCell(fill, 'worker') : ''),
        rssRatioRow(middle, first, rssRatio, rssPass),
        rssRow(last, cpuCell(lastFill.cpu, 'worker')),
        rssRatioRow(last, middle, lastRatio, lastPass),
        [
          'worker processes left after SIGTERM',
          `${shutdown.aliveAtExit.length} running at exit (of ${shutdown.before.length}, ${shutdown.chromiumBefore} Chromium, before); ` +
            (shutdown.goneAfterMs === null
              ? `${shutdown.left.length} still there after ${SHUTDOWN_WAIT_MS / 1000} s`
              : `${shutdown.zombiesAtExit.length} zombie(s) reaped, all gone ${shutdown.goneAfterMs} ms after exit`),
          '',
          '0 running, none left',
          verdict(shutdown.pass),
        ],
      ],
    );
    log(
      'CPU: cores busy over each interval (mean over the runs for latency): the whole machine; the measured side (this process and its Chromium for the ' +
        "throughput rows, the worker and its Chromium otherwise); the rest = machine - worker - this process (PostgreSQL, Temporal, fake-gcs, other people's processes).",
    );
    // Load-independent view of the same comparison: CPU time per certificate on each side.
    const activityCoreSeconds = (throughput.activity.cpu.bench * throughput.activity.wallMs) / 1000 / throughput.activity.certificates;
    const naiveCoreSeconds = (throughput.naive.cpu.bench * throughput.naive.wallMs) / 1000 / throughput.naive.certificates;
    log(
      `CPU per certificate (this process + its Chromium): activity path ${fmt(activityCoreSeconds)} core-s, naive ${fmt(naiveCoreSeconds)} core-s ` +
        `(${fmt(naiveCoreSeconds / activityCoreSeconds, 1)}x); the naive loop is serial (about one core), the pool can use every core, so other load on the ` +
        'machine lowers the throughput ratio.',
    );
    const loadAtEnd = os.loadavg().map(round2);
    log(`load average at end (1/5/15 min): ${loadAtEnd.join(' / ')}`);

    const json = {
      ...resultsHead('certificates', startedAt),
      units: { rate: 'certificates/s', latency: 'ms', memory: 'MiB (VmRSS from /proc/<pid>/status)' },
      machine: machineJson(loadAtStart, loadAtEnd),
      options: opts,
      setup: {
        database: BENCH_DATABASE,
        namespace,
        taskQueue,
        bucket,
        api: 'in process (createContainer + createApp)',
        worker: `child process: node ${WORKER_NODE_ARGS.join(' ')} --import tsx src/worker.ts`,
        activityPath:
          'issueCertificates of createActivities(activityDepsFromConfig(config, { db, log })) under MockActivityEnvironment, in the bench process',
        pdfPagePoolSize: config.PDF_PAGE_POOL_SIZE,
        pdfRendersPerBrowser: config.PDF_RENDERS_PER_BROWSER,
        pdfPageFormat: config.PDF_PAGE_FORMAT,
      },
      throughput: {
        activity: {
          ...throughput.activity,
          wallMs: round2(throughput.activity.wallMs),
          perSecond: round2(throughput.activity.perSecond),
          meanBytes: Math.round(throughput.activity.meanBytes),
          cpu: cpuJson(throughput.activity.cpu),
        },
        naive: {
          certificates: throughput.naive.certificates,
          wallMs: round2(throughput.naive.wallMs),
          perSecond: round2(throughput.naive.perSecond),
          meanMs: Object.fromEntries(Object.entries(throughput.naive.meanMs).map(([k, v]) => [k, round2(v)])),
          meanBytes: Math.round(throughput.naive.meanBytes),
          cpu: cpuJson(throughput.naive.cpu),
        },
        ratio: round2(throughput.ratio),
        coreSecondsPerCertificate: { activity: round2(activityCoreSeconds), naive: round2(naiveCoreSeconds) },
        goal: `ratio >= ${GOAL_RATIO}`,
        pass: throughput.pass,
      },
      latency: {
        pollMs: opts.pollMs,
        oneDay: { ...rounded(oneDay, ['p50', 'p95', 'p99', 'max', 'min', 'webhookAckP50']), cpu: cpuJson(oneDay.cpu) },
        thirtyDay: { ...rounded(thirtyDay, ['p50', 'p95', 'p99', 'max', 'min', 'webhookAckP50']), cpu: cpuJson(thirtyDay.cpu) },
        goal: `30-day max <= ${GOAL_30_DAY_MS} ms`,
        pass: latencyPass,
        runs: runs.map((r) => ({
          ...r,
          webhookAckMs: round2(r.webhookAckMs),
          availableMs: round2(r.availableMs),
          cpu: cpuJson(r.cpu),
          timeline: timelines.get(r.purchaseId),
        })),
      },
      memory: {
        idle: memJson(idle),
        first: memJson(first),
        middle: memJson(middle),
        last: memJson(last),
        ratio: round2(rssRatio),
        lastRatio: round2(lastRatio),
        trail,
        fillCpu: fill ? cpuJson(fill) : null,
        lastFill: { seconds: round2(lastFill.seconds), cpu: cpuJson(lastFill.cpu) },
        goal: `each ratio <= ${GOAL_RSS_RATIO}`,
        pass: rssPass && lastPass,
      },
      shutdown: { ...shutdown, waitMs: SHUTDOWN_WAIT_MS },
    };
    const resultsFile = writeResultsFile('certificates', json);
    log(`figures written to ${resultsFile}`);
    const percentiles = (l: typeof oneDay): Percentiles => ({
      p50: round2(l.p50),
      p95: round2(l.p95),
      p99: round2(l.p99),
      samples: l.runs,
    });
    return {
      ...reportHead('certificates', startedAt),
      options: { ...opts },
      figureDescription: `per row: the issueCertificates activity (page pool); a 30-day purchase; the worker after ${middle.certificates}, then ${last.certificates} certificates; processes after SIGTERM`,
      baselineDescription: `per row: a naive browser per PDF; a 1-day purchase; the worker after its first ${first.certificates}, then ${middle.certificates} certificates; its processes before SIGTERM`,
      resultsFile,
      scenarios: [
        {
          scenario: `throughput, ${throughput.activity.certificates} certificates (baseline ${throughput.naive.certificates})`,
          figure: { label: 'activity path', value: round2(throughput.activity.perSecond), unit: 'certificates/s' },
          baseline: { label: 'naive browser per PDF', value: round2(throughput.naive.perSecond), unit: 'certificates/s' },
          ratio: ratioOf(throughput.activity.perSecond, throughput.naive.perSecond),
          goal: { text: `ratio >= ${GOAL_RATIO}x`, pass: throughput.pass },
        },
        {
          scenario: `webhook -> getCertificates 'issued': 30-day vs 1-day purchase (${thirtyDay.runs} runs each)`,
          figure: { label: '30 days: max', value: round2(thirtyDay.max), unit: 'ms' },
          baseline: { label: '1 day: max', value: round2(oneDay.max), unit: 'ms' },
          ratio: ratioOf(thirtyDay.max, oneDay.max),
          goal: { text: `30-day max <= ${GOAL_30_DAY_MS} ms`, pass: latencyPass },
          latency: {
            figure: percentiles(thirtyDay),
            baseline: percentiles(oneDay),
            labels: { figure: 'webhook -> issued, 30 days', baseline: '1-day purchase' },
          },
        },
        {
          scenario: `worker VmRSS after ${middle.certificates} vs after ${first.certificates} certificates`,
          figure: { label: `after ${middle.certificates}`, value: round2(mib(middle.rssKiB)), unit: 'MiB' },
          baseline: { label: `after ${first.certificates}`, value: round2(mib(first.rssKiB)), unit: 'MiB' },
          ratio: ratioOf(middle.rssKiB, first.rssKiB),
          goal: { text: `ratio <= ${GOAL_RSS_RATIO}x`, pass: rssPass },
        },
        {
          scenario: `worker VmRSS after ${last.certificates} vs after ${middle.certificates} certificates`,
          figure: { label: `after ${last.certificates}`, value: round2(mib(last.rssKiB)), unit: 'MiB' },
          baseline: { label: `after ${middle.certificates}`, value: round2(mib(middle.rssKiB)), unit: 'MiB' },
          ratio: ratioOf(last.rssKiB, middle.rssKiB),
          goal: { text: `ratio <= ${GOAL_RSS_RATIO}x`, pass: lastPass },
        },
        {
          scenario: 'worker processes after SIGTERM',
          figure: { label: 'running at exit', value: shutdown.aliveAtExit.length, unit: 'processes', decimals: 0 },
          baseline: {
            label: `before SIGTERM (${shutdown.chromiumBefore} Chromium)`,
            value: shutdown.before.length,
            unit: 'processes',
            decimals: 0,
          },
          ratio: null,
          goal: { text: `0 running at exit, none left after ${SHUTDOWN_WAIT_MS / 1000} s`, pass: shutdown.pass },
        },
      ],
    };
  } finally {
    const cleanup0 = performance.now();
    const startedHere = stack.startedNames().length > 0;
    if (worker && !worker.exitInfo) await stopWorker(worker, 10_000);
    // Anything of the worker's still alive (only after a failure): it is ours, so end it.
    for (const p of markedProcesses(marker)) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    }
    await container?.close();
    await db?.destroy();
    await stopBenchStack({
      stack,
      temporalBin: tools.temporal,
      namespace,
      temporal: temporalAddress ? { address: temporalAddress } : undefined,
      storage: storageUrl ? { url: storageUrl, bucket } : undefined,
      log,
    });
    log(
      `cleanup (worker, namespace, bucket${startedHere ? ', servers' : ''}) ${((performance.now() - cleanup0) / 1000).toFixed(1)} s; whole run ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s`,
    );
  }
}

function memJson(s: MemorySnapshot) {
  return {
    certificates: s.certificates,
    rssMiB: round2(mib(s.rssKiB)),
    hwmMiB: round2(mib(s.hwmKiB)),
    chromium: { processes: s.chromium.processes, rssMiB: round2(mib(s.chromium.rssKiB)) },
  };
}

/** The certificates bench as `npm run bench` loads it. */
export const BENCH = benchEntry(CERTIFICATES_OPTIONS, runCertificatesBench);
