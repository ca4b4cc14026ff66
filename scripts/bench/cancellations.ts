/**
 * `npm run bench -- cancellations [--seconds S] [--rounds N] [--connections C] [--void-runs N] [--bulk N] [--setup-concurrency N] [--poll-ms MS] [--only preview,voided,bulk] [--quick]`
 *
 * Measures cancellations (issue 24, "Done when": the cancellation figure of `npm run bench`) on
 * the real API (container + Koa app in this process), a real worker (`src/worker.ts`, a child
 * process, refunds rate-capped at REFUND_RATE_LIMIT_PER_SECOND), Temporal, PostgreSQL and
 * stripe-mock behind the recording processor proxy of scripts/harness/processor-proxy.ts (in this
 * process; every request the API and the worker send to the processor, with its arrival time):
 *
 * 1. preview: `POST /api/v1/purchases/{id}/cancellation_quote` (every unstarted unit of a 2-day
 *    purchase) under a modest closed-loop autocannon load (C connections, default 2) in a worker
 *    thread, beside `GET /api/v1/purchases/{id}` of the same purchase in the same run: after a
 *    warm-up of each, `--rounds` rounds of S seconds of GET then S seconds of preview (short
 *    alternating rounds, so other load on the machine falls on both sides alike); p50/p95/p99 of
 *    every 2xx answer (ms). Figure: preview p99; baseline: GET p99; goal: ratio <= 3x, no error
 *    (the issue asks for the ratio; the bound is this bench's, as the catalog bench's).
 * 2. voided: for `--void-runs` 2-day purchases, one after another, `POST …/cancel` with the
 *    second day's covered unit, then `GET /api/v1/purchases/{id}` every `--poll-ms` until that
 *    unit's `certificate.voided_at` is set (the refund created at the processor through the
 *    rate-capped refunds queue, its status read back, the certificate voided). Figure: p95 from
 *    sending the cancel to the GET that shows it voided; baseline: p95 of the cancel call's own
 *    answer (the policy workflow accepting it); goal: p95 <= 2 s (the issue's, on the dev
 *    stack) with every cancellation voided.
 * 3. bulk: `POST /api/v1/bulk_cancellations` with `--bulk` (default 1 000) 1-day purchase ids;
 *    `GET /api/v1/bulk_cancellations/{id}` every second until `counts.refunded` = total. Wall
 *    time from the POST to the last cancellation completed (its `completed_at`), beside the time
 *    the cap alone takes (total / cap); goal: every purchase accepted and refunded, 0 lost
 *    (accepted cancellations not completed). Refunds per second from the processor's arrival
 *    times of `POST /v1/refunds` (each refund at its first request, by idempotency key): the
 *    rate from the POST to the last refund against the cap, with the goal that the refunds never
 *    outrun Temporal's bucket (cap per second, plus one second's worth at once when it is full:
 *    refunds <= cap × that time + cap), and the busiest 1-second window against 2 × cap (what the
 *    bucket lets one second see). Doubles = purchases with more than one refund at the processor
 *    (distinct idempotency keys) or more than one cancellation row: goal 0.
 *
 * Setup: every purchase is created through the public API at the start (a test-mode key,
 * `adminValidateBuyerResponses`, `POST /api/v1/test_helpers/purchases/{id}/pay`, then waiting
 * for `issued` in the database), `--setup-concurrency` at a time, so each has its real covered
 * units, certificate PDFs, payment intent and purchase workflow (slower than a SQL seed: about
 * 2–4 minutes for 1 000 on two cores, but nothing in it can drift from what the service writes).
 * Issuing runs before any measurement, so the worker's certificates queue is idle while measuring.
 *
 * Isolation: servers of their own, on ports nothing else here uses (Temporal dev server 7293,
 * UI 8293, metrics 9293, state var/bench-cancellations/temporal.db; stripe-mock 12191/12192;
 * fake-gcs-server 4493, objects in var/bench-cancellations/gcs), so neither `npm test` (which
 * reuses or stops the servers on the default ports) nor `npm run dev` meets them; started here
 * and stopped at the end with their state removed (a server left by an interrupted run is
 * reused, with a new namespace and bucket). Its own database `insurance_bench_cancellations`
 * (recreated; kept after the run for inspection) and namespace `cancellations-bench-<time>`.
 *
 * Prints a table, writes every figure to bench/results/cancellations.json and returns a
 * `BenchReport`. `--quick`: 10 voided runs, a bulk of 50, two rounds of 1 s per load side.
 * Exits 0 also when a goal is missed; exits 1 only when the benchmark cannot run.
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { call } from '../harness/fixtures';
import { createQuotingAccount } from '../harness/purchases';
import { startProcessorProxy, type ProcessorProxy, type RecordedRequest } from '../harness/processor-proxy';
import {
  accountApi,
  benchServiceEnv,
  startApiAndWorker,
  stopApiAndWorker,
  type ApiAndWorker,
  type QuotingBench,
  type WorkerProcess,
} from './certificates-worker';
import {
  latencyStats,
  REPO_ROOT,
  reportPercentiles,
  round2,
  runHttpLoad,
  writeResultsFile,
  type HttpLoadResult,
  type LatencyStats,
  startBenchRun,
  machineJson,
  ownBench,
  ownBenchStack,
  reportHead,
  resultsHead,
  rounded,
} from './lib';
import { parseBenchOptionsOrExit, type BenchOptions, benchOptions, benchEntry } from './options';
import { ratioOf, textTable, type BenchReport, type ScenarioReport } from './report';

/** Its own servers (Temporal 7293, stripe-mock 12191, fake-gcs 4493), database, state and worker log. */
const OWN = ownBench('cancellations', 9);
/** Goals: the issue's for cancel → voided; the preview's bound is this bench's (the issue asks for the ratio). */
const GOAL_VOIDED_P95_MS = 2000;
const GOAL_PREVIEW_RATIO = 3;
/** First covered day of every bench purchase (local dates in America/Chicago, far enough ahead that no unit has started). */
const COVERAGE_START = '2027-05-01';
const COVERAGE_SECOND_DAY = '2027-05-02';

const log = (line: string) => console.log(line);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const fmt = (v: number, digits = 0) => (Number.isFinite(v) ? v.toFixed(digits) : '-');

export const CANCELLATIONS_OPTIONS = benchOptions(
  { bench: 'cancellations', onlyExample: 'preview,voided,bulk' },
  {
    seconds: { default: 2, quick: 1, min: 1, max: 600, metavar: 'S' },
    rounds: { default: 8, quick: 2, min: 1, max: 50 },
    connections: { default: 2, quick: 2, min: 1, max: 100, metavar: 'C' },
    voidRuns: { default: 50, quick: 10, min: 1, max: 1000 },
    bulk: { default: 1000, quick: 50, min: 1, max: 1000 },
    setupConcurrency: { default: 12, quick: 8, min: 1, max: 64 },
    pollMs: { default: 50, quick: 50, min: 5, max: 5000, metavar: 'MS' },
  },
);
type Options = BenchOptions<keyof typeof CANCELLATIONS_OPTIONS.ints>;

// ---------------------------------------------------------------------------------------------
// Issued purchases through the API

interface Bench extends QuotingBench {
  headers: Record<string, string>;
}

const api = accountApi;

/** One purchase of the account's event product covering `days` (1 or 2) days from COVERAGE_START, paid through the test helper. */
async function checkoutAndPay(b: Bench, days: 1 | 2, n: number): Promise<number> {
  const body = await b.account.quoteBody();
  const line = (body.selected_product_lines_to_purchase as Array<Record<string, any>>)[0]!;
  line.named_insured = { name: `Bench Insured ${n}` };
  line.coverage = { ...line.coverage, start_date: COVERAGE_START, end_date: days === 2 ? COVERAGE_SECOND_DAY : COVERAGE_START };
  const q = await call(b.app.baseUrl, '/public-quote/adminValidateBuyerResponses', { method: 'POST', key: b.account.key, body });
  if (q.status !== 200) throw new Error(`adminValidateBuyerResponses: ${q.status} ${q.text.slice(0, 300)}`);
  const purchaseId = q.body.purchase_id as number;
  const paid = await api(b, `/test_helpers/purchases/${purchaseId}/pay`, { method: 'POST' });
  if (paid.status !== 200) throw new Error(`pay ${purchaseId}: ${paid.status} ${paid.text.slice(0, 300)}`);
  return purchaseId;
}

/** Waits until the purchase's certificates are issued (status `issued` in the database). */
async function waitIssued(b: Bench, purchaseId: number, worker: WorkerProcess, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const row = (await b.container.db('purchases').where({ id: purchaseId }).first('status')) as { status: string } | undefined;
    if (row?.status === 'issued') return;
    if (worker.exitInfo)
      throw new Error(`the worker exited (code ${worker.exitInfo.code}, signal ${worker.exitInfo.signal}); see ${worker.logFile}`);
    if (Date.now() > end)
      throw new Error(`purchase ${purchaseId} not issued within ${timeoutMs / 1000} s (status ${row?.status ?? 'missing'})`);
    await sleep(250);
  }
}

interface SetupResult {
  preview: number[];
  voided: number[];
  bulk: number[];
  seconds: number;
  perSecond: number;
  retries: number;
}

/** Creates and issues the purchases each selected scenario needs, `concurrency` at a time; retries a failed one twice. */
async function issuePurchases(
  b: Bench,
  worker: WorkerProcess,
  want: { preview: number; voided: number; bulk: number },
  concurrency: number,
): Promise<SetupResult> {
  const jobs: Array<{ kind: 'preview' | 'voided' | 'bulk'; days: 1 | 2 }> = [
    ...Array.from({ length: want.preview }, () => ({ kind: 'preview' as const, days: 2 as const })),
    ...Array.from({ length: want.voided }, () => ({ kind: 'voided' as const, days: 2 as const })),
    ...Array.from({ length: want.bulk }, () => ({ kind: 'bulk' as const, days: 1 as const })),
  ];
  const out: SetupResult = { preview: [], voided: [], bulk: [], seconds: 0, perSecond: 0, retries: 0 };
  const t0 = performance.now();
  let next = 0;
  let done = 0;
  let lastLog = t0;
  const lane = async () => {
    while (next < jobs.length) {
      const n = next++;
      const job = jobs[n]!;
      for (let attempt = 1; ; attempt++) {
        try {
          const id = await checkoutAndPay(b, job.days, n);
          await waitIssued(b, id, worker, 180_000);
          out[job.kind].push(id);
          break;
        } catch (err) {
          if (attempt >= 3 || worker.exitInfo) throw err;
          out.retries++;
          log(`  setup: purchase ${n} failed (${(err as Error).message.split('\n')[0]}); retrying`);
        }
      }
      done++;
      if (performance.now() - lastLog > 10_000 || done === jobs.length) {
        lastLog = performance.now();
        const s = (lastLog - t0) / 1000;
        log(`  setup: ${done}/${jobs.length} purchases issued in ${s.toFixed(0)} s (${(done / s).toFixed(1)}/s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, lane));
  out.seconds = (performance.now() - t0) / 1000;
  out.perSecond = jobs.length / Math.max(out.seconds, 1e-9);
  for (const k of ['preview', 'voided', 'bulk'] as const) out[k].sort((x, y) => x - y);
  return out;
}

// ---------------------------------------------------------------------------------------------
// 1. Preview vs GET

interface LoadSide {
  latency: LatencyStats;
  reqPerSec: number;
  responses2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

interface PreviewResult {
  purchaseId: number;
  get: LoadSide;
  preview: LoadSide;
  p99Ratio: number;
  quotesStored: number;
  pass: boolean;
}

function mergeLoads(runs: HttpLoadResult[]): LoadSide {
  const samples = runs.flatMap((r) => Array.from(r.samples));
  const seconds = runs.reduce((s, r) => s + r.durationSeconds, 0);
  return {
    latency: latencyStats(samples),
    reqPerSec: samples.length / Math.max(seconds, 1e-9),
    responses2xx: samples.length,
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    timeouts: runs.reduce((s, r) => s + r.timeouts, 0),
  };
}

async function measurePreview(b: Bench, purchaseId: number, opts: Options): Promise<PreviewResult> {
  const get = { url: `${b.app.baseUrl}/api/v1/purchases/${purchaseId}`, headers: b.headers, connections: opts.connections };
  const preview = {
    url: b.app.baseUrl,
    headers: b.headers,
    connections: opts.connections,
    post: { path: `/api/v1/purchases/${purchaseId}/cancellation_quote`, bodies: ['{}'] },
  };
  // Each answers 2xx before load (a wrong setup must not be measured as fast errors).
  const one = await api(b, `/purchases/${purchaseId}/cancellation_quote`, { method: 'POST', body: {} });
  if (one.status !== 201) throw new Error(`cancellation_quote of ${purchaseId}: ${one.status} ${one.text.slice(0, 300)}`);
  const quotesBefore = Number(
    ((await b.container.db('cancellation_quotes').where({ purchase_id: purchaseId }).count({ n: '*' }).first()) as { n: string }).n,
  );
  await runHttpLoad({ ...get, seconds: 1 });
  await runHttpLoad({ ...preview, seconds: 1 });
  const gets: HttpLoadResult[] = [];
  const previews: HttpLoadResult[] = [];
  for (let r = 0; r < opts.rounds; r++) {
    gets.push(await runHttpLoad({ ...get, seconds: opts.seconds }));
    previews.push(await runHttpLoad({ ...preview, seconds: opts.seconds }));
  }
  const g = mergeLoads(gets);
  const p = mergeLoads(previews);
  const quotesAfter = Number(
    ((await b.container.db('cancellation_quotes').where({ purchase_id: purchaseId }).count({ n: '*' }).first()) as { n: string }).n,
  );
  const p99Ratio = p.latency.p99 / g.latency.p99;
  const clean = (s: LoadSide) => s.non2xx === 0 && s.errors === 0 && s.timeouts === 0;
  return {
    purchaseId,
    get: g,
    preview: p,
    p99Ratio,
    quotesStored: quotesAfter - quotesBefore,
    pass: p99Ratio <= GOAL_PREVIEW_RATIO && clean(g) && clean(p),
  };
}

// ---------------------------------------------------------------------------------------------
// 2. Cancel → certificate voided

interface VoidRun {
  purchaseId: number;
  coveredUnitId: number;
  cancellationId: number | null;
  /** Cancel sent → its 200, ms. */
  answerMs: number;
  /** Cancel sent → the first GET showing the unit's certificate voided, ms; null when not within the timeout. */
  voidedMs: number | null;
  /** Cancel sent → the cancellation's completed_at in the database (same machine clock), ms. */
  completedMs: number | null;
  polls: number;
  status: string | null;
}

interface VoidResult {
  runs: VoidRun[];
  answer: LatencyStats;
  voided: LatencyStats;
  completed: LatencyStats;
  notVoided: number;
  pass: boolean;
}

async function measureVoided(b: Bench, ids: number[], pollMs: number): Promise<VoidResult> {
  const runs: VoidRun[] = [];
  for (const [i, purchaseId] of ids.entries()) {
    const before = await api(b, `/purchases/${purchaseId}`);
    if (before.status !== 200) throw new Error(`GET purchase ${purchaseId}: ${before.status} ${before.text.slice(0, 300)}`);
    const unit = (before.body.data.items[0].covered_units as Array<{ id: number }>).at(-1)!;
    const sentAt = Date.now();
    const t0 = performance.now();
    const res = await api(b, `/purchases/${purchaseId}/cancel`, {
      method: 'POST',
      body: { covered_unit_ids: [unit.id], reason: 'bench: last day called off' },
    });
    const answerMs = performance.now() - t0;
    if (res.status !== 200) throw new Error(`cancel ${purchaseId}: ${res.status} ${res.text.slice(0, 300)}`);
    const run: VoidRun = {
      purchaseId,
      coveredUnitId: unit.id,
      cancellationId: res.body.data.id ?? null,
      answerMs,
      voidedMs: null,
      completedMs: null,
      polls: 0,
      status: res.body.data.status ?? null,
    };
    const deadline = t0 + 60_000;
    while (performance.now() < deadline) {
      const t = performance.now();
      const got = await api(b, `/purchases/${purchaseId}`);
      run.polls++;
      if (got.status === 200) {
        const u = (got.body.data.items as Array<{ covered_units: Array<{ id: number; certificate: { voided_at: string | null } | null }> }>)
          .flatMap((it) => it.covered_units)
          .find((x) => x.id === unit.id);
        if (u?.certificate?.voided_at) {
          run.voidedMs = performance.now() - t0;
          run.status =
            (got.body.data.cancellations as Array<{ id: number; status: string }>).find((c) => c.id === run.cancellationId)?.status ?? null;
          break;
        }
      }
      await sleep(Math.max(0, t + pollMs - performance.now()));
    }
    if (run.cancellationId !== null) {
      const row = (await b.container.db('policy_transactions').where({ id: run.cancellationId }).first('completed_at')) as
        { completed_at: Date | null } | undefined;
      if (row?.completed_at) run.completedMs = new Date(row.completed_at).getTime() - sentAt;
    }
    runs.push(run);
    if ((i + 1) % 10 === 0 || i === ids.length - 1)
      log(
        `  voided: ${i + 1}/${ids.length} cancelled (last: answer ${fmt(answerMs)} ms, voided after ${run.voidedMs === null ? 'TIMEOUT' : `${fmt(run.voidedMs)} ms`})`,
      );
  }
  const ok = runs.filter((r) => r.voidedMs !== null);
  const voided = latencyStats(ok.map((r) => r.voidedMs!));
  const notVoided = runs.length - ok.length;
  return {
    runs,
    answer: latencyStats(runs.map((r) => r.answerMs)),
    voided,
    completed: latencyStats(runs.filter((r) => r.completedMs !== null).map((r) => r.completedMs!)),
    notVoided,
    pass: notVoided === 0 && voided.p95 <= GOAL_VOIDED_P95_MS,
  };
}

// ---------------------------------------------------------------------------------------------
// 3. Bulk cancellation

/** `counts` of GET /api/v1/bulk_cancellations/{id}. */
interface BulkCounts {
  total: number;
  pending: number;
  accepted: number;
  skipped: number;
  failed: number;
  refunded: number;
}

interface BulkResult {
  bulkId: number;
  total: number;
  counts: BulkCounts;
  /** POST → the last cancellation's completed_at, seconds; and → the GET that showed every refund, seconds. */
  wallSeconds: number;
  observedSeconds: number;
  postAnswerMs: number;
  /** POST → the first and the last refund at the processor, seconds. */
  firstRefundSeconds: number;
  lastRefundSeconds: number;
  cap: number;
  refunds: number;
  refundRequests: number;
  /** Refunds / (POST → last refund): the rate the batch got. */
  wallRate: number;
  /** (refunds − 1) / (first → last refund). */
  spanRate: number;
  /** Rate after the first second of refunds: (refunds after it − 1) / their span (informative: a lull lets the bucket fill again). */
  sustainedRate: number;
  /** Most refunds in any 1-second and any 10-second window. */
  busiestSecond: number;
  busiest10Seconds: number;
  /** Most refunds the cap allows from the POST to the last refund: cap × that time + one second's burst (cap). */
  allowed: number;
  /** Refunds started in each second after the first (index 0 = the first refund's second). */
  perSecond: number[];
  doubles: { processor: number; cancellations: number; purchases: number[] };
  lost: number;
  skipped: number;
  failed: number;
  passRate: boolean;
  passBusiest: boolean;
  passComplete: boolean;
}

const isRefund = (r: RecordedRequest) => r.method === 'POST' && r.path === '/v1/refunds';

async function measureBulk(b: Bench, proxy: ProcessorProxy, ids: number[], cap: number): Promise<BulkResult> {
  const mark = proxy.requests.length;
  const sentAt = Date.now();
  const t0 = performance.now();
  const started = await api(b, '/bulk_cancellations', { method: 'POST', body: { purchase_ids: ids, reason: 'bench: event called off' } });
  const postAnswerMs = performance.now() - t0;
  if (started.status !== 202) throw new Error(`bulk_cancellations: ${started.status} ${started.text.slice(0, 300)}`);
  const bulkId = started.body.data.id as number;
  const timeoutMs = ((ids.length / cap) * 3 + 120) * 1000;
  let last:
    | {
        status: string;
        counts: BulkCounts;
        items: Array<{ purchase_id: number; status: string; cancellation_id: number | null; cancellation_status: string | null }>;
      }
    | undefined;
  let observedSeconds = Number.NaN;
  let lastLog = t0;
  for (;;) {
    const got = await api(b, `/bulk_cancellations/${bulkId}`);
    if (got.status !== 200) throw new Error(`GET bulk_cancellations/${bulkId}: ${got.status} ${got.text.slice(0, 300)}`);
    last = got.body.data;
    const c = last!.counts;
    const settled = c.pending === 0 && last!.status === 'completed' && c.refunded >= c.accepted;
    if (c.refunded === c.total || settled) {
      observedSeconds = (performance.now() - t0) / 1000;
      break;
    }
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      log(`  bulk: ${((lastLog - t0) / 1000).toFixed(0)} s: ${JSON.stringify(c)}`);
    }
    if (performance.now() - t0 > timeoutMs) {
      log(`  bulk: not every refund succeeded within ${(timeoutMs / 1000).toFixed(0)} s: ${JSON.stringify(c)}`);
      break;
    }
    await sleep(1000);
  }
  // A late duplicate would arrive after the batch looks done: give it a moment.
  await sleep(3000);
  const counts = last!.counts;
  const ours = new Set(ids.map(String));
  const requests = proxy.requests.slice(mark).filter((r) => isRefund(r) && ours.has(r.params.get('metadata[purchase_id]') ?? ''));
  // One refund per idempotency key (a retried request with the same key is the same refund at the processor).
  const firstByKey = new Map<string, RecordedRequest>();
  for (const r of requests)
    if (!firstByKey.has(r.idempotencyKey ?? `none-${firstByKey.size}`)) firstByKey.set(r.idempotencyKey ?? `none-${firstByKey.size}`, r);
  const refunds = [...firstByKey.values()];
  const keysByPurchase = new Map<string, number>();
  for (const r of refunds) {
    const p = r.params.get('metadata[purchase_id]')!;
    keysByPurchase.set(p, (keysByPurchase.get(p) ?? 0) + 1);
  }
  const processorDoubles = [...keysByPurchase].filter(([, n]) => n > 1).map(([p]) => Number(p));
  const rows = (await b.container
    .db('policy_transactions')
    .whereIn('purchase_id', ids)
    .where({ kind: 'cancellation' })
    .groupBy('purchase_id')
    .select('purchase_id', b.container.db.raw('count(*)::int as n'), b.container.db.raw('max(completed_at) as completed'))) as Array<{
    purchase_id: number;
    n: number;
    completed: Date | null;
  }>;
  const cancellationDoubles = rows.filter((r) => r.n > 1).map((r) => r.purchase_id);
  const lastCompleted = Math.max(...rows.filter((r) => r.completed).map((r) => new Date(r.completed!).getTime()));
  const items = last!.items;
  const lost =
    items.filter((i) => i.status === 'accepted' && i.cancellation_status !== 'completed').length +
    items.filter((i) => i.status === 'pending').length;

  const times = refunds.map((r) => r.at).sort((x, y) => x - y);
  const busiest = (ms: number) => {
    let most = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
      while (j < times.length && times[j]! < times[i]! + ms) j++;
      most = Math.max(most, j - i);
    }
    return most;
  };
  const busiestSecond = busiest(1000);
  const first = times[0] ?? Number.NaN;
  const lastAt = times.at(-1) ?? Number.NaN;
  const after = times.filter((t) => t >= first + 1000);
  const sustainedRate = after.length >= 2 ? (after.length - 1) / ((after.at(-1)! - after[0]!) / 1000) : Number.NaN;
  const perSecond: number[] = [];
  for (const t of times) {
    const s = Math.floor((t - first) / 1000);
    while (perSecond.length <= s) perSecond.push(0);
    perSecond[s]!++;
  }
  // Temporal's bucket: the rate, plus one second's worth at once when it has been full (at the start, after a lull).
  const allowed = Math.floor(cap * ((lastAt - sentAt) / 1000) + cap);
  const complete = counts.total === ids.length && counts.accepted === ids.length && counts.refunded === ids.length && lost === 0;
  return {
    bulkId,
    total: ids.length,
    counts,
    wallSeconds: Number.isFinite(lastCompleted) ? (lastCompleted - sentAt) / 1000 : Number.NaN,
    observedSeconds,
    postAnswerMs,
    firstRefundSeconds: (first - sentAt) / 1000,
    lastRefundSeconds: (lastAt - sentAt) / 1000,
    cap,
    refunds: refunds.length,
    refundRequests: requests.length,
    wallRate: refunds.length / ((lastAt - sentAt) / 1000),
    spanRate: times.length >= 2 ? (times.length - 1) / ((lastAt - first) / 1000) : Number.NaN,
    sustainedRate,
    busiestSecond,
    busiest10Seconds: busiest(10_000),
    allowed,
    perSecond,
    doubles: {
      processor: processorDoubles.length,
      cancellations: cancellationDoubles.length,
      purchases: [...new Set([...processorDoubles, ...cancellationDoubles])],
    },
    lost,
    skipped: counts.skipped,
    failed: counts.failed,
    passRate: refunds.length <= allowed,
    passBusiest: busiestSecond <= 2 * cap,
    passComplete: complete,
  };
}

// ---------------------------------------------------------------------------------------------

/** Prints a table of string cells, each column padded to its widest cell. */
const printTable = (header: string[], rows: string[][]) => log(textTable(header, rows));

const stats = (l: LatencyStats) => ({ samples: l.samples, ...rounded(l, ['p50', 'p95', 'p99', 'max', 'mean']) });
const side = (s: LoadSide) => ({
  ...stats(s.latency),
  reqPerSec: round2(s.reqPerSec),
  non2xx: s.non2xx,
  errors: s.errors,
  timeouts: s.timeouts,
});
const verdict = (pass: boolean) => (pass ? 'PASS' : 'MISSED');

/**
 * Runs the cancellations benchmark with the command-line `argv` (after the benchmark name; see
 * CANCELLATIONS_OPTIONS): brings up its own servers, database, namespace, API, processor proxy
 * and worker, issues the purchases, measures the selected scenarios, prints the report, writes
 * bench/results/cancellations.json, stops what it started and returns the report (latencies in
 * ms, durations in s, rates in refunds/s). `--help` prints the usage and exits 0. Throws when an
 * option is invalid, `--only` selects nothing, or a step cannot run (a server, the worker, a
 * purchase not issued in time, an API call answering an error).
 */
export async function runCancellationsBench(argv: string[]): Promise<BenchReport> {
  const opts: Options = parseBenchOptionsOrExit(CANCELLATIONS_OPTIONS, argv);
  const selected = (name: string) => opts.only.length === 0 || opts.only.some((o) => name.includes(o));
  const run = { preview: selected('preview'), voided: selected('voided'), bulk: selected('bulk') };
  if (!run.preview && !run.voided && !run.bulk)
    throw new Error(`--only ${opts.only.join(',')} selects no scenario (preview, voided, bulk)`);
  const { startedAt, base, loadAtStart } = startBenchRun('cancellations', '', log);

  const own = await ownBenchStack(OWN, base, log);
  const { namespace, taskQueue } = own;
  const cap = base.REFUND_RATE_LIMIT_PER_SECOND;

  let proxy: ProcessorProxy | undefined;
  const services: ApiAndWorker = {};
  try {
    const { dbUrl, migrations, temporal: t, stripeMock, storage: s } = await own.up();
    proxy = await startProcessorProxy(stripeMock.url);
    log(
      `database ${OWN.database} recreated (${migrations} migrations); Temporal ${t.address} namespace ${namespace}, task queue ${taskQueue}; stripe-mock ${stripeMock.url} behind the recording proxy ${proxy.url}`,
    );

    const env = benchServiceEnv(
      { databaseUrl: dbUrl, temporalAddress: t.address, namespace, taskQueue, processorUrl: proxy.url, storage: s },
      { REFUND_RATE_LIMIT_PER_SECOND: String(cap) },
    );
    const setup0 = performance.now();
    const { app, workerReady } = await startApiAndWorker(services, { repoRoot: REPO_ROOT, env, ...OWN.worker });
    const { baseUrl, container } = app;
    const account = await createQuotingAccount(app);
    const b: Bench = { app, container, account, headers: { 'x-api-key': account.key } };
    const worker = await workerReady;
    log(
      `API on ${baseUrl} (in this process); worker pid ${worker.pid} (log ${path.relative(process.cwd(), OWN.worker.logFile)}), REFUND_RATE_LIMIT_PER_SECOND=${cap}; ` +
        `ready ${((performance.now() - setup0) / 1000).toFixed(1)} s after start-up began`,
    );

    const want = { preview: run.preview ? 1 : 0, voided: run.voided ? opts.voidRuns : 0, bulk: run.bulk ? opts.bulk : 0 };
    log(
      `— setup: ${want.preview + want.voided + want.bulk} purchases through the API (2-day: ${want.preview + want.voided}, 1-day: ${want.bulk}), ${opts.setupConcurrency} at a time`,
    );
    const setup = await issuePurchases(b, worker, want, opts.setupConcurrency);
    log(`  setup: ${setup.perSecond.toFixed(1)} purchases/s issued${setup.retries ? `, ${setup.retries} retried` : ''}`);
    log('');

    let preview: PreviewResult | undefined;
    if (run.preview) {
      log(
        `— preview: POST cancellation_quote vs GET purchase, ${opts.connections} connections, ${opts.rounds} round(s) of ${opts.seconds} s each side`,
      );
      preview = await measurePreview(b, setup.preview[0]!, opts);
      log(
        `  GET p50/p95/p99 ${fmt(preview.get.latency.p50, 1)}/${fmt(preview.get.latency.p95, 1)}/${fmt(preview.get.latency.p99, 1)} ms (${fmt(preview.get.reqPerSec)} req/s); ` +
          `preview ${fmt(preview.preview.latency.p50, 1)}/${fmt(preview.preview.latency.p95, 1)}/${fmt(preview.preview.latency.p99, 1)} ms (${fmt(preview.preview.reqPerSec)} req/s, ${preview.quotesStored} quotes stored); ` +
          `p99 ratio ${fmt(preview.p99Ratio, 2)}x; errors ${preview.get.non2xx + preview.get.errors + preview.preview.non2xx + preview.preview.errors}`,
      );
      log('');
    }

    let voided: VoidResult | undefined;
    if (run.voided) {
      log(
        `— voided: cancel the second day of ${opts.voidRuns} purchases one after another, GET every ${opts.pollMs} ms until its certificate is voided`,
      );
      voided = await measureVoided(b, setup.voided, opts.pollMs);
      log(
        `  cancel answered p50/p95 ${fmt(voided.answer.p50)}/${fmt(voided.answer.p95)} ms; voided p50/p95/max ${fmt(voided.voided.p50)}/${fmt(voided.voided.p95)}/${fmt(voided.voided.max)} ms ` +
          `(completed_at p50/p95 ${fmt(voided.completed.p50)}/${fmt(voided.completed.p95)} ms); not voided within 60 s: ${voided.notVoided}`,
      );
      log('');
    }

    let bulk: BulkResult | undefined;
    if (run.bulk) {
      log(`— bulk: POST /api/v1/bulk_cancellations with ${setup.bulk.length} purchase ids; refunds capped at ${cap}/s`);
      bulk = await measureBulk(b, proxy, setup.bulk, cap);
      log(
        `  all refunded after ${fmt(bulk.wallSeconds, 1)} s (seen by GET after ${fmt(bulk.observedSeconds, 1)} s; POST answered in ${fmt(bulk.postAnswerMs)} ms); counts ${JSON.stringify(bulk.counts)}; ` +
          `refunds at the processor ${bulk.refunds} (${bulk.refundRequests} requests) from ${fmt(bulk.firstRefundSeconds, 1)} s to ${fmt(bulk.lastRefundSeconds, 1)} s: ` +
          `${fmt(bulk.wallRate, 2)}/s from the POST (the cap allows ${bulk.allowed} in that time), ${fmt(bulk.sustainedRate, 2)}/s after the first second, ` +
          `busiest second ${bulk.busiestSecond}, busiest 10 s ${bulk.busiest10Seconds}; ` +
          `doubles ${bulk.doubles.purchases.length} (processor ${bulk.doubles.processor}, cancellation rows ${bulk.doubles.cancellations}); lost ${bulk.lost}`,
      );
      log('');
    }

    // ----------------------------------------------------------------------------------------
    // Report
    const scenarios: ScenarioReport[] = [];
    const rows: string[][] = [];
    if (preview) {
      scenarios.push({
        scenario: 'preview: POST cancellation_quote vs GET purchase',
        figure: { label: 'p99', value: round2(preview.preview.latency.p99), unit: 'ms' },
        baseline: { label: 'GET p99', value: round2(preview.get.latency.p99), unit: 'ms' },
        ratio: ratioOf(preview.preview.latency.p99, preview.get.latency.p99),
        goal: {
          text: `p99 <= ${GOAL_PREVIEW_RATIO}x GET p99 (${fmt(GOAL_PREVIEW_RATIO * preview.get.latency.p99, 1)} ms), no error`,
          pass: preview.pass,
        },
        latency: {
          figure: reportPercentiles(preview.preview.latency),
          baseline: reportPercentiles(preview.get.latency),
          labels: { figure: 'cancellation_quote', baseline: 'GET purchase' },
        },
      });
      rows.push([
        'preview p50/p95/p99 vs GET',
        `${fmt(preview.preview.latency.p50, 1)}/${fmt(preview.preview.latency.p95, 1)}/${fmt(preview.preview.latency.p99, 1)} ms vs ${fmt(preview.get.latency.p50, 1)}/${fmt(preview.get.latency.p95, 1)}/${fmt(preview.get.latency.p99, 1)} ms`,
        `${fmt(preview.p99Ratio, 2)}x`,
        `<= ${GOAL_PREVIEW_RATIO}x`,
        verdict(preview.pass),
      ]);
    }
    if (voided) {
      scenarios.push({
        scenario: `cancel -> certificate voided (${voided.runs.length} purchases, one day each)`,
        figure: { label: 'p95', value: round2(voided.voided.p95), unit: 'ms' },
        baseline: { label: 'cancel answered p95', value: round2(voided.answer.p95), unit: 'ms' },
        ratio: ratioOf(voided.voided.p95, voided.answer.p95),
        goal: {
          text: `p95 <= ${GOAL_VOIDED_P95_MS} ms, every one voided (${voided.runs.length - voided.notVoided}/${voided.runs.length})`,
          pass: voided.pass,
        },
        latency: {
          figure: reportPercentiles(voided.voided),
          baseline: reportPercentiles(voided.answer),
          labels: { figure: 'cancel -> voided', baseline: 'cancel answered' },
        },
      });
      rows.push([
        'cancel -> voided p50/p95 vs cancel answered',
        `${fmt(voided.voided.p50)}/${fmt(voided.voided.p95)} ms vs ${fmt(voided.answer.p50)}/${fmt(voided.answer.p95)} ms`,
        `${fmt(voided.voided.p95 / voided.answer.p95, 2)}x`,
        `p95 <= ${GOAL_VOIDED_P95_MS} ms`,
        verdict(voided.pass),
      ]);
    }
    if (bulk) {
      const atCap = bulk.total / cap;
      scenarios.push(
        {
          scenario: `bulk ${bulk.total}: POST -> every refund succeeded`,
          figure: { label: 'wall', value: round2(bulk.wallSeconds), unit: 's' },
          baseline: { label: `${bulk.total} refunds at ${cap}/s`, value: round2(atCap), unit: 's' },
          ratio: ratioOf(bulk.wallSeconds, atCap),
          goal: {
            text: `every purchase accepted and refunded, 0 lost (${bulk.counts.refunded}/${bulk.total} refunded, ${bulk.lost} lost)`,
            pass: bulk.passComplete,
          },
        },
        {
          scenario: `bulk ${bulk.total}: refunds per second at the processor, POST -> last refund`,
          figure: { value: round2(bulk.wallRate), unit: 'refunds/s' },
          baseline: { label: 'cap', value: cap, unit: 'refunds/s' },
          ratio: ratioOf(bulk.wallRate, cap),
          goal: {
            text: `never above the cap: ${bulk.refunds} <= ${cap}/s × ${fmt(bulk.lastRefundSeconds, 1)} s + one second's burst (${bulk.allowed})`,
            pass: bulk.passRate,
          },
        },
        {
          scenario: `bulk ${bulk.total}: busiest 1-second window at the processor`,
          figure: { value: bulk.busiestSecond, unit: 'refunds', decimals: 0 },
          baseline: { label: 'cap', value: cap, unit: 'refunds', decimals: 0 },
          ratio: ratioOf(bulk.busiestSecond, cap),
          goal: { text: `<= 2x cap (${2 * cap}): the bucket's one-second burst on top of the rate`, pass: bulk.passBusiest },
        },
        {
          scenario: `bulk ${bulk.total}: doubles (purchases refunded or cancelled more than once)`,
          figure: { value: bulk.doubles.purchases.length, unit: 'purchases', decimals: 0 },
          baseline: null,
          ratio: null,
          goal: { text: '0', pass: bulk.doubles.purchases.length === 0 },
        },
      );
      rows.push(
        [
          `bulk ${bulk.total}: POST -> all refunded`,
          `${fmt(bulk.wallSeconds, 1)} s (${fmt(bulk.wallRate, 2)} refunds/s from the POST)`,
          `${fmt(bulk.wallSeconds / atCap, 2)}x of ${fmt(atCap, 1)} s`,
          '0 lost',
          verdict(bulk.passComplete),
        ],
        [
          `bulk ${bulk.total}: refunds/s, POST -> last refund`,
          `${fmt(bulk.wallRate, 2)}/s (${fmt(bulk.sustainedRate, 2)}/s after the first second)`,
          `${fmt(bulk.wallRate / cap, 2)}x of ${cap}/s`,
          `${bulk.refunds} <= ${bulk.allowed}`,
          verdict(bulk.passRate),
        ],
        [
          `bulk ${bulk.total}: busiest second`,
          `${bulk.busiestSecond} refunds`,
          `${fmt(bulk.busiestSecond / cap, 2)}x of ${cap}`,
          `<= ${2 * cap}`,
          verdict(bulk.passBusiest),
        ],
        [
          `bulk ${bulk.total}: doubles / lost`,
          `${bulk.doubles.purchases.length} / ${bulk.lost}`,
          '',
          '0 / 0',
          verdict(bulk.doubles.purchases.length === 0 && bulk.lost === 0),
        ],
      );
    }
    printTable(['measure', 'figure', 'ratio', 'goal', 'result'], rows);
    const loadAtEnd = os.loadavg().map(round2);
    log(`load average at end (1/5/15 min): ${loadAtEnd.join(' / ')}`);

    const durationSeconds = round2((Date.now() - startedAt.getTime()) / 1000);
    const json = {
      ...resultsHead('cancellations', startedAt),
      durationSeconds,
      units: { latency: 'ms', durations: 's', rates: 'refunds/s' },
      machine: machineJson(loadAtStart, loadAtEnd),
      options: opts,
      setup: {
        method:
          'API: adminValidateBuyerResponses + POST /api/v1/test_helpers/purchases/{id}/pay, waiting for issued (certificates rendered by the worker)',
        database: OWN.database,
        namespace,
        taskQueue,
        temporal: t.address,
        processor: `stripe-mock ${stripeMock.url} behind the recording proxy`,
        refundRateLimitPerSecond: cap,
        purchases: { preview: setup.preview.length, voided: setup.voided.length, bulk: setup.bulk.length },
        seconds: round2(setup.seconds),
        perSecond: round2(setup.perSecond),
        retries: setup.retries,
      },
      preview: preview && {
        purchaseId: preview.purchaseId,
        get: side(preview.get),
        preview: side(preview.preview),
        p99Ratio: round2(preview.p99Ratio),
        quotesStored: preview.quotesStored,
        goal: `p99 <= ${GOAL_PREVIEW_RATIO}x GET p99, no error`,
        pass: preview.pass,
      },
      voided: voided && {
        answer: stats(voided.answer),
        voided: stats(voided.voided),
        completedAt: stats(voided.completed),
        notVoided: voided.notVoided,
        goal: `p95 <= ${GOAL_VOIDED_P95_MS} ms`,
        pass: voided.pass,
        runs: voided.runs.map((r) => ({
          ...r,
          answerMs: round2(r.answerMs),
          voidedMs: r.voidedMs === null ? null : round2(r.voidedMs),
          completedMs: r.completedMs,
        })),
      },
      bulk: bulk && {
        ...bulk,
        wallSeconds: round2(bulk.wallSeconds),
        observedSeconds: round2(bulk.observedSeconds),
        postAnswerMs: round2(bulk.postAnswerMs),
        firstRefundSeconds: round2(bulk.firstRefundSeconds),
        lastRefundSeconds: round2(bulk.lastRefundSeconds),
        wallRate: round2(bulk.wallRate),
        spanRate: round2(bulk.spanRate),
        sustainedRate: round2(bulk.sustainedRate),
      },
    };
    const resultsFile = writeResultsFile('cancellations', json);
    log(`figures written to ${resultsFile}`);
    return {
      ...reportHead('cancellations', startedAt, durationSeconds),
      options: { ...opts, refundRateLimitPerSecond: cap },
      figureDescription:
        'per row: cancellation_quote under autocannon load; cancel → the GET showing the certificate voided; a bulk cancellation by purchase ids (real API, worker, Temporal; stripe-mock behind a recording proxy)',
      baselineDescription:
        'per row: GET /api/v1/purchases/{id} of the same purchase, same load; the cancel call’s own answer; the refunds cap (REFUND_RATE_LIMIT_PER_SECOND)',
      resultsFile,
      scenarios,
    };
  } finally {
    const cleanup0 = performance.now();
    await stopApiAndWorker(services);
    await proxy?.close();
    await own.down();
    log(
      `cleanup ${((performance.now() - cleanup0) / 1000).toFixed(1)} s; whole run ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s`,
    );
  }
}

/** The cancellations bench as `npm run bench` loads it. */
export const BENCH = benchEntry(CANCELLATIONS_OPTIONS, runCancellationsBench);
