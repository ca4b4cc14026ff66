/**
 * Shared building blocks of the benchmarks in `scripts/bench/`: the `pg` driver, latency
 * statistics, the results folder (bench/results/), the HTTP load runner (autocannon in a worker
 * thread), the direct-SQL load loop, a one-line summary of an `EXPLAIN` plan, the integer
 * option parser (options.ts builds each bench's options on it), the machine a run's results
 * file records, and the servers of scripts/stack.mjs: typed, a bench's own started, and stopped.
 *
 * Units everywhere: latencies in milliseconds (ms, fractional), throughput in requests or
 * statement sets per second, durations given as seconds.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, loadConfigOrExit, type Config } from '../../src/config';
import { createContainer, type Container } from '../../src/container';
import { createDb, migrateLatest } from '../../src/db/knex';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/logger';
import type { Percentiles } from './report';

// ---------------------------------------------------------------------------------------------
// pg: the project has no @types/pg, so the few members used here are typed locally.

export interface PgResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<PgResult>;
  /** With `name`: a prepared statement, parsed once per connection. */
  query(config: { name: string; text: string; values: unknown[] }): Promise<PgResult>;
}
export interface PgPoolClient extends PgQueryable {
  release(): void;
}
export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}
interface PgModule {
  Pool: new (config: { connectionString: string; max?: number; idleTimeoutMillis?: number }) => PgPool;
}

/** The `pg` driver (the same copy knex uses). */
export const pg: PgModule = createRequire(__filename)('pg') as PgModule;

/** A pg pool of `max` connections; a broken idle connection is reported, not thrown. */
export function createPgPool(connectionString: string, max: number): PgPool {
  const pool = new pg.Pool({ connectionString, max, idleTimeoutMillis: 60_000 });
  pool.on('error', (err) => console.error(`pg pool: ${err.message}`));
  return pool;
}

/**
 * Returns the URL of database `name` on the server of `baseUrl`, creating the database when it
 * does not exist yet.
 */
export async function ensureDatabase(baseUrl: string, name: string): Promise<{ url: string; created: boolean }> {
  const target = new URL(baseUrl);
  target.pathname = `/${name}`;
  const admin = new URL(baseUrl);
  admin.pathname = '/postgres';
  const pool = createPgPool(admin.toString(), 1);
  try {
    const found = await pool.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rows.length > 0) return { url: target.toString(), created: false };
    await pool.query(`create database "${name.replace(/"/g, '""')}"`);
    return { url: target.toString(), created: true };
  } finally {
    await pool.end();
  }
}

/**
 * The database a seeded bench reads: `name` (`<name>_quick` for a --quick run) on the server of
 * `baseUrl`, created when missing and logged with its password hidden. Returns its URL.
 */
export async function openBenchDatabase(baseUrl: string, name: string, quick: boolean, log: (line: string) => void): Promise<string> {
  const db = await ensureDatabase(baseUrl, quick ? `${name}_quick` : name);
  const redacted = new URL(db.url);
  redacted.password = redacted.password ? '***' : '';
  log(`database: ${redacted.toString()}${db.created ? ' (created)' : ''}`);
  return db.url;
}

/**
 * The config and container of an API measured in this process against `databaseUrl`: silent,
 * no per-key rate limit to speak of, the in-memory limiter (nothing outside this process on the
 * request path), any port.
 */
export function benchApiContainer(databaseUrl: string): { config: Config; container: Container } {
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '100000000',
    REDIS_URL: '',
    PORT: '0',
  });
  return { config, container: createContainer(config, createLogger(config, 'api-bench')) };
}

/** Serves the API of `container` on a free port of 127.0.0.1; answers the server and its base URL once it listens. */
export async function listenApi(container: Container): Promise<{ server: Server; baseUrl: string }> {
  const server = createApp(container).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * The in-process side of a bench that measures an endpoint against the SQL it runs (the catalog
 * and search benches): the bench's database (see openBenchDatabase), the API's config and
 * container over it (see benchApiContainer) and a `pg` pool of the API's size for the direct
 * replays. `listen()` serves the API and answers its base URL and PostgreSQL's version;
 * `close()` (in a `finally`) closes the server, the pool and the container.
 */
export async function openEndpointBench(o: { baseUrl: string; database: string; quick: boolean; log: (line: string) => void }) {
  const dbUrl = await openBenchDatabase(o.baseUrl, o.database, o.quick, o.log);
  const { config, container } = benchApiContainer(dbUrl);
  const directPool = createPgPool(dbUrl, config.DATABASE_POOL_MAX);
  let server: Server | undefined;
  return {
    dbUrl,
    config,
    container,
    directPool,
    async listen(): Promise<{ baseUrl: string; pgVersion: string }> {
      const api = await listenApi(container);
      server = api.server;
      const pgVersion = String((await directPool.query('show server_version')).rows[0]?.server_version ?? '?');
      return { baseUrl: api.baseUrl, pgVersion };
    },
    async close(): Promise<void> {
      if (server) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server!.close(() => resolve()));
      }
      await directPool.end();
      await container.close();
    },
  };
}

/**
 * The scenarios whose name contains one of `only` (all of them when `only` is empty). Throws
 * when that leaves none, so that a mistyped `--only` fails instead of measuring nothing.
 */
export function selectScenarios<T extends { name: string }>(all: readonly T[], only: readonly string[]): T[] {
  const selected = all.filter((sc) => only.length === 0 || only.some((o) => sc.name.includes(o)));
  if (selected.length === 0) throw new Error(`--only ${only.join(',')} matches no scenario`);
  return selected;
}

/**
 * What went wrong in one scenario of an endpoint-versus-direct bench, as short phrases for its
 * log line (`3 non-2xx`, `1 timeouts`, …); empty when nothing did.
 */
export function loadProblems(endpoint: { non2xx: number; errors: number; timeouts: number }, direct: { errors: number }): string[] {
  return [
    endpoint.non2xx ? `${endpoint.non2xx} non-2xx` : '',
    endpoint.errors ? `${endpoint.errors} errors` : '',
    endpoint.timeouts ? `${endpoint.timeouts} timeouts` : '',
    direct.errors ? `${direct.errors} direct errors` : '',
  ].filter(Boolean);
}

// ---------------------------------------------------------------------------------------------
// Statistics

/** Latency summary in milliseconds. */
export interface LatencyStats {
  samples: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile `q` (0..100) of ascending `sorted` values; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((q / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** p50/p90/p95/p99/max/mean of latency samples given in ms (NaN for each when there is none). */
export function latencyStats(samples: ArrayLike<number>): LatencyStats {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    samples: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/** Rounds for display and JSON: 2 decimals. */
export const round2 = (v: number): number => Math.round(v * 100) / 100;

/** `keys` of `o`, each rounded to 2 decimals, in that order: the figures a results file keeps. */
export function rounded<K extends string>(o: Record<K, number>, keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, round2(o[k])])) as Record<K, number>;
}

/** The p50/p95/p99 (ms, 2 decimals) and sample count of a latency summary, as the report keeps them. */
export function reportPercentiles(l: Pick<LatencyStats, 'p50' | 'p95' | 'p99' | 'samples'>): Percentiles {
  return { p50: round2(l.p50), p95: round2(l.p95), p99: round2(l.p99), samples: l.samples };
}

// ---------------------------------------------------------------------------------------------
// Results files

/** The repository root. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');
/** Where every bench writes its results (git-ignored). */
export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');

/**
 * Writes `json` (pretty-printed) to bench/results/<name>.json, creating the folder, and returns
 * the path relative to the repository root. Throws on a file-system error.
 */
export function writeResultsFile(name: string, json: unknown): string {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  return path.relative(REPO_ROOT, file);
}

/**
 * The start of a bench's run: the time it starts, the config of the environment (exits with the
 * config errors when it is invalid, see loadConfigOrExit), and the head of its log:
 * `<bench> bench — <start, ISO 8601>`; the machine (cores, CPU model, memory in GiB, Node's
 * version) followed by `sharing` (what shares these cores and which figure to read because of
 * it; may be empty); and the 1/5/15-minute load averages, with a warning when the 1-minute one
 * already exceeds the core count. `loadAtStart` holds those averages (2 decimals) for machineJson.
 */
export function startBenchRun(
  bench: string,
  sharing: string,
  log: (line: string) => void,
): { startedAt: Date; base: Config; loadAtStart: number[] } {
  const startedAt = new Date();
  const base = loadConfigOrExit();
  const cpus = os.cpus();
  const loadAtStart = os.loadavg().map(round2);
  log(`${bench} bench — ${startedAt.toISOString()}`);
  log(
    `machine: ${cpus.length} CPU core(s) (${cpus[0]?.model.trim() ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB; Node ${process.version}` +
      (sharing ? `; ${sharing}` : ''),
  );
  log(
    `load average at start (1/5/15 min): ${loadAtStart.join(' / ')}` +
      (loadAtStart[0]! > cpus.length ? ` — WARNING: other processes already use more than ${cpus.length} cores' worth; expect noise` : ''),
  );
  return { startedAt, base, loadAtStart };
}

/** The head of a bench's results file: its name, when it started and when it finished (ISO 8601, now). */
export function resultsHead(bench: string, startedAt: Date): { benchmark: string; startedAt: string; finishedAt: string } {
  return { benchmark: bench, startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString() };
}

/**
 * The head of a bench's report (BenchReport): its name, when it started (ISO 8601) and how long
 * it ran, in seconds with 2 decimals (`durationSeconds`, else from `startedAt` to now).
 */
export function reportHead(bench: string, startedAt: Date, durationSeconds = round2((Date.now() - startedAt.getTime()) / 1000)) {
  return { bench, startedAt: startedAt.toISOString(), durationSeconds };
}

/**
 * The machine a bench ran on, as its results file records it: cores, CPU model, memory (GiB),
 * Node's version, and the 1/5/15-minute load averages at the start and at the end of the run.
 */
export function machineJson(loadAverageAtStart: number[], loadAverageAtEnd: number[]) {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadAverageAtStart,
    loadAverageAtEnd,
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP load (autocannon)

export interface HttpLoadOptions {
  url: string;
  headers: Record<string, string>;
  connections: number;
  /** Length of the run, seconds. */
  seconds: number;
  /** POST these JSON bodies (round robin per connection) to `path` instead of GETting `url`. */
  post?: { path: string; bodies: string[] };
}

/** Outcome of one measured autocannon run. */
export interface HttpLoadResult {
  /** Latency of the 2xx responses, ms, from autocannon's per-response hrtime durations. */
  latency: LatencyStats;
  /** Those latencies one by one (ms), for other percentiles. */
  samples: Float64Array;
  /** 2xx responses per second over the run's wall time. */
  reqPerSec: number;
  /** Wall time of the run, seconds. */
  durationSeconds: number;
  responses2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** autocannon's own numbers (its histogram keeps whole ms), for reference. */
  autocannon: { p50: number; p99: number; responses2xx: number };
  /**
   * Share of wall time (0..1) the main thread's event loop was busy during the run: in the
   * catalog bench that thread runs the API, so ~1 means the API was CPU-bound.
   */
  apiEventLoopUtilization: number;
}

interface WorkerReply {
  ok: boolean;
  error?: string;
  samples?: Float64Array;
  durationSeconds?: number;
  non2xx?: number;
  errors?: number;
  timeouts?: number;
  autocannon?: { p50: number; p99: number; responses2xx: number };
}

/**
 * Runs autocannon against `url` in a worker thread, so the load generator has its own event
 * loop and does not steal the API's (the API runs in this process's main thread). Rejects when
 * the worker reports an error or exits before reporting; non-2xx answers and socket errors are
 * counted, not thrown.
 */
export function runHttpLoad(opts: HttpLoadOptions): Promise<HttpLoadResult> {
  const elu0 = performance.eventLoopUtilization();
  return new Promise((resolve, reject) => {
    const worker = new Worker(path.join(__dirname, 'load-worker.mjs'), { workerData: opts });
    let settled = false;
    worker.once('message', (reply: WorkerReply) => {
      settled = true;
      void worker.terminate();
      if (!reply.ok) {
        reject(new Error(`load worker: ${reply.error}`));
        return;
      }
      const samples = reply.samples!;
      const durationSeconds = reply.durationSeconds!;
      resolve({
        latency: latencyStats(samples),
        samples,
        reqPerSec: samples.length / durationSeconds,
        durationSeconds,
        responses2xx: samples.length,
        non2xx: reply.non2xx!,
        errors: reply.errors!,
        timeouts: reply.timeouts!,
        autocannon: reply.autocannon!,
        apiEventLoopUtilization: performance.eventLoopUtilization(elu0).utilization,
      });
    });
    worker.once('error', (err) => {
      if (!settled) reject(err);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`load worker exited with code ${code} before reporting`));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Direct SQL load

/** One SQL statement with positional (`$1`) bindings, as pg receives it. */
export interface Statement {
  sql: string;
  bindings: unknown[];
  /** The prepared statement's name, when the app ran it as one (replayed under the same name). */
  name?: string;
}

/**
 * Statements grouped as the endpoint issued them: the statements of one wave ran
 * concurrently (e.g. `Promise.all([page, count])`), the waves one after another.
 */
export type StatementWaves = Statement[][];

export interface DirectLoadResult {
  /** Latency of one execution of all waves, ms. */
  latency: LatencyStats;
  /** Executions of all waves per second (comparable to the endpoint's req/s). */
  perSec: number;
  durationSeconds: number;
  errors: number;
}

/** Executes the waves once on `pool`: each wave's statements concurrently, waves in order. */
export async function executeWaves(pool: PgPool, waves: StatementWaves): Promise<void> {
  for (const wave of waves) {
    await Promise.all(
      wave.map((s) => (s.name ? pool.query({ name: s.name, text: s.sql, values: s.bindings }) : pool.query(s.sql, s.bindings))),
    );
  }
}

/**
 * `loops` concurrent loops, each executing one of `sets` (round robin, loop i starting at set i)
 * back to back on `pool` for `seconds`, after an unmeasured warm-up of `warmupSeconds`. Each
 * sample is one execution of all waves of one set (one request's SQL). Throws after more than
 * 100 failed executions; fewer are counted in `errors` and the first is printed.
 */
export async function runDirectLoad(
  pool: PgPool,
  sets: StatementWaves[],
  opts: { loops: number; seconds: number; warmupSeconds: number },
): Promise<DirectLoadResult> {
  if (sets.length === 0) throw new Error('runDirectLoad: no statement set to run');
  const run = async (seconds: number, record: boolean) => {
    const samples: number[] = [];
    let errors = 0;
    let firstError: unknown;
    const started = performance.now();
    const end = started + seconds * 1000;
    const loop = async (offset: number) => {
      for (let i = offset; performance.now() < end; i++) {
        const t0 = performance.now();
        try {
          await executeWaves(pool, sets[i % sets.length]!);
          if (record) samples.push(performance.now() - t0);
        } catch (err) {
          errors += 1;
          firstError ??= err;
          if (errors > 100) throw err;
        }
      }
    };
    await Promise.all(Array.from({ length: opts.loops }, (_, i) => loop(i)));
    if (firstError && record) console.error(`direct query error: ${(firstError as Error).message}`);
    return { samples, errors, durationSeconds: (performance.now() - started) / 1000 };
  };
  if (opts.warmupSeconds > 0) await run(opts.warmupSeconds, false);
  const measured = await run(opts.seconds, true);
  return {
    latency: latencyStats(measured.samples),
    perSec: measured.samples.length / measured.durationSeconds,
    durationSeconds: measured.durationSeconds,
    errors: measured.errors,
  };
}

// ---------------------------------------------------------------------------------------------
// EXPLAIN

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  'Sort Method'?: string;
  'Heap Fetches'?: number;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** One plan node as text, e.g. `Index Scan Backward bundles_account_created_at_idx (rows 20)`. */
function describeNode(n: PlanNode): string {
  let s = n['Node Type'];
  if (n['Scan Direction'] === 'Backward') s += ' Backward';
  if (n['Index Name']) s += ` ${n['Index Name']}`;
  else if (n['Relation Name']) s += ` on ${n['Relation Name']}`;
  const extra: string[] = [];
  if (n['Sort Method']) extra.push(n['Sort Method']);
  if (n['Actual Rows'] !== undefined && n['Node Type'] !== 'Aggregate' && n['Node Type'] !== 'Limit') {
    extra.push(`rows ${n['Actual Rows']}${(n['Actual Loops'] ?? 1) > 1 ? `×${n['Actual Loops']}` : ''}`);
  }
  if (n['Rows Removed by Filter']) extra.push(`filtered out ${n['Rows Removed by Filter']}`);
  if (n['Heap Fetches'] !== undefined) extra.push(`heap fetches ${n['Heap Fetches']}`);
  return extra.length ? `${s} (${extra.join(', ')})` : s;
}

/** The plan tree on one line: `A > B > C`, siblings as `A > [B ; C]`. */
function describePlan(n: PlanNode): string {
  const head = describeNode(n);
  const kids = n.Plans ?? [];
  if (kids.length === 0) return head;
  if (kids.length === 1) return `${head} > ${describePlan(kids[0]!)}`;
  return `${head} > [${kids.map(describePlan).join(' ; ')}]`;
}

function collect(n: PlanNode, out: PlanNode[] = []): PlanNode[] {
  out.push(n);
  for (const k of n.Plans ?? []) collect(k, out);
  return out;
}

/** Summary of `EXPLAIN (ANALYZE, BUFFERS)` of one statement. */
export interface ExplainSummary {
  /** The plan on one line: node types, index names, actual rows. */
  plan: string;
  /** Server-side execution time of the EXPLAIN ANALYZE run, ms. */
  executionMs: number;
  /** Every index the plan reads. */
  indexes: string[];
  /** Tables read by a sequential scan (empty when every table is read through an index). */
  seqScans: string[];
  /** Shared buffers hit + read by the whole statement (8 kB pages). */
  buffers: number;
}

/** Runs `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` for `s` and summarizes it. */
export async function explain(db: PgQueryable, s: Statement): Promise<ExplainSummary> {
  const res = await db.query(`explain (analyze, buffers, format json) ${s.sql}`, s.bindings);
  const doc = res.rows[0]!['QUERY PLAN'] as [
    { Plan: PlanNode & { 'Shared Hit Blocks'?: number; 'Shared Read Blocks'?: number }; 'Execution Time': number },
  ];
  const root = doc[0].Plan;
  const nodes = collect(root);
  return {
    plan: describePlan(root),
    executionMs: doc[0]['Execution Time'],
    indexes: [...new Set(nodes.flatMap((n) => (n['Index Name'] ? [n['Index Name']] : [])))],
    seqScans: nodes.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name'] ?? '?'),
    buffers: (root['Shared Hit Blocks'] ?? 0) + (root['Shared Read Blocks'] ?? 0),
  };
}

/** Parses the integer command-line option `--name` (raw text) within `min`…`max`; throws a one-line error otherwise. */
export function intOption(name: string, raw: string, min: number, max: number): number {
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`--${name} must be an integer from ${min} to ${max}`);
  return v;
}

type StackLog = (line: string) => void;

/**
 * The parts of scripts/stack.mjs (the servers `npm run dev` and the tests start) that the benches
 * use, typed once: the module is untyped ESM. Omitted ports, directories and buckets take the
 * stack's defaults (the dev stack's); a bench in its own isolation passes its own.
 */
export interface StackLib {
  ensurePostgres(o: { databaseUrl: string; recreate?: boolean; log?: StackLog }): Promise<string>;
  ensureTemporal(o: {
    port?: number;
    uiPort?: number;
    metricsPort?: number;
    dbFile?: string;
    bin?: string;
    /** A server this call starts begins with empty state (a server already running is reused as it is). */
    fresh?: boolean;
    log?: StackLog;
  }): Promise<{ address: string; bin: string; started: boolean }>;
  ensureTemporalCluster(o: {
    databaseUrl: string;
    dbPrefix?: string;
    /** A cluster this call starts begins with its databases dropped and created again. */
    fresh?: boolean;
    log?: StackLog;
  }): Promise<{ address: string; bin: string }>;
  ensureStripeMock(o: { port?: number; bin?: string; log?: StackLog }): Promise<{ url: string; started: boolean }>;
  ensureFakeGcs(o: {
    port?: number;
    dir?: string;
    bucket?: string;
    bin?: string;
    log?: StackLog;
  }): Promise<{ url: string; bucket: string; started: boolean }>;
  ensureTemporalNamespace(o: { bin: string; address: string; namespace: string; log?: StackLog }): Promise<void>;
  deleteFakeGcsBucket(o: { url: string; bucket: string; log?: StackLog }): Promise<void>;
  tcpOpen(port: number): Promise<boolean>;
  startedNames(): string[];
  stopAll(o?: { log?: StackLog }): Promise<void>;
}

/** scripts/tools.mjs's `ensureTools`: the pinned Go tools' binaries, built once. */
export type EnsureTools = (o?: { log?: StackLog }) => Promise<{ temporal: string; stripeMock: string; fakeGcs: string }>;

/** Loads scripts/stack.mjs and scripts/tools.mjs (untyped ESM) with the types above. */
export async function loadStackLib(): Promise<{ stack: StackLib; ensureTools: EnsureTools }> {
  const importUntyped = (file: string): Promise<unknown> => import(pathToFileURL(file).href);
  const stack = (await importUntyped(path.join(REPO_ROOT, 'scripts', 'stack.mjs'))) as StackLib;
  const { ensureTools } = (await importUntyped(path.join(REPO_ROOT, 'scripts', 'tools.mjs'))) as { ensureTools: EnsureTools };
  return { stack, ensureTools };
}

/** Ports of a bench's own servers (apart from the dev stack's, the tests', the fault suites' and the other benches'). */
export interface OwnStackPorts {
  temporal: number;
  temporalUi: number;
  temporalMetrics: number;
  stripeMock: number;
  fakeGcs: number;
}

/** What a bench on servers of its own is named and where it keeps its things (see ownBench). */
export interface OwnBench {
  name: string;
  /** Its database on the PostgreSQL server of the config's DATABASE_URL (recreated each run). */
  database: string;
  /** Its servers' state directory, relative to the repository. */
  stateDir: string;
  /** Its worker's log file (absolute) and its API's logger name (see startApiAndWorker). */
  worker: { logFile: string; loggerName: string };
  ports: OwnStackPorts;
}

/**
 * A bench on servers of its own (the cancellations and holders benches): database
 * `insurance_bench_<name>`, state in `var/bench-<name>`, worker log
 * `var/log/<name>-bench-worker.log` (API logger `<name>-bench`), and the ports of its `slot` (0–9): Temporal 72<slot>3, its
 * UI 82<slot>3 and metrics 92<slot>3, stripe-mock 121<slot>1, fake-gcs 44<slot>3, apart from the
 * dev stack's, the tests' and the fault suites' (slots 0–4 of theirs).
 */
export function ownBench(name: string, slot: number): OwnBench {
  const at = (base: number) => base + 10 * slot;
  return {
    name,
    database: `insurance_bench_${name}`,
    stateDir: `var/bench-${name}`,
    worker: { logFile: path.join(REPO_ROOT, 'var', 'log', `${name}-bench-worker.log`), loggerName: `${name}-bench` },
    ports: { temporal: at(7203), temporalUi: at(8203), temporalMetrics: at(9203), stripeMock: at(12101), fakeGcs: at(4403) },
  };
}

/** A bench's own state directory and what its servers keep there (absolute paths). */
export interface OwnStackState {
  dir: string;
  /** The Temporal dev server's database (SQLite, with its `-shm` and `-wal` files). */
  temporalDb: string;
  /** fake-gcs's folder. */
  gcsDir: string;
}

/** The state paths of a bench's own servers in `stateDir` (relative to the repository, e.g. `var/bench-holders`). */
export function ownStackState(stateDir: string): OwnStackState {
  const dir = path.join(REPO_ROOT, stateDir);
  return { dir, temporalDb: path.join(dir, 'temporal.db'), gcsDir: path.join(dir, 'gcs') };
}

/** A bench's servers of its own, as `ownBenchStack` names them and `up()` reports them. */
export interface OwnBenchServers {
  /** The bench's database, recreated and migrated (`migrations`: how many migrations ran). */
  dbUrl: string;
  migrations: number;
  temporal: { address: string; started: boolean };
  stripeMock: { url: string; started: boolean };
  storage: { url: string; bucket: string; started: boolean };
}

/** What `ownBenchStack` returns: the run's names, then `up()` once and `down()` in a `finally`. */
export interface OwnBenchStack {
  /** `<name>-bench-<epoch ms>` (a fresh Temporal namespace per run). */
  readonly namespace: string;
  /** `<name>-bench-<pid>`. */
  readonly taskQueue: string;
  /**
   * Starts the servers on the bench's own ports with their state in its own directory (a server
   * of an interrupted run that still holds a port is reused): the PostgreSQL database recreated
   * and migrated, a Temporal dev server from empty state with the run's namespace, stripe-mock,
   * and fake-gcs with the bucket `<name>-bench-<pid>`. Throws when a server or a migration fails.
   */
  up(): Promise<OwnBenchServers>;
  /** Stops what `up()` started and removes its state (see stopBenchStack); safe after a failed `up()`. */
  down(): Promise<void>;
}

/**
 * A bench's own isolated stack (`bench`, see ownBench): loads scripts/stack.mjs and the pinned
 * tools, names the run's namespace, task queue and bucket after the bench, and keeps the
 * servers' state in its state directory and the data in its database on the PostgreSQL server
 * of `base.DATABASE_URL`. Throws when the tools cannot be built.
 */
export async function ownBenchStack(bench: OwnBench, base: Config, log: StackLog): Promise<OwnBenchStack> {
  const { ports } = bench;
  const { stack, ensureTools } = await loadStackLib();
  const tools = await ensureTools({ log });
  const namespace = `${bench.name}-bench-${Date.now()}`;
  const bucket = `${bench.name}-bench-${process.pid}`;
  const state = ownStackState(bench.stateDir);
  const dbTarget = new URL(base.DATABASE_URL);
  dbTarget.pathname = `/${bench.database}`;
  let temporal: OwnBenchServers['temporal'] | undefined;
  let storage: OwnBenchServers['storage'] | undefined;
  return {
    namespace,
    taskQueue: `${bench.name}-bench-${process.pid}`,
    async up() {
      fs.mkdirSync(state.dir, { recursive: true });
      const [dbUrl, t, stripeMock, s] = await Promise.all([
        stack.ensurePostgres({ databaseUrl: dbTarget.toString(), recreate: true, log }),
        stack.ensureTemporal({
          port: ports.temporal,
          uiPort: ports.temporalUi,
          metricsPort: ports.temporalMetrics,
          dbFile: path.relative(REPO_ROOT, state.temporalDb),
          bin: tools.temporal,
          // From empty state; a server of an interrupted run that still holds the port is reused.
          fresh: true,
          log,
        }),
        stack.ensureStripeMock({ port: ports.stripeMock, bin: tools.stripeMock, log }),
        stack.ensureFakeGcs({ port: ports.fakeGcs, dir: path.relative(REPO_ROOT, state.gcsDir), bucket, bin: tools.fakeGcs, log }),
      ]);
      temporal = t;
      storage = s;
      const db = createDb({ ...base, DATABASE_URL: dbUrl });
      try {
        const [migrations] = await Promise.all([
          migrateLatest(db),
          stack.ensureTemporalNamespace({ bin: tools.temporal, address: t.address, namespace, log }),
        ]);
        return { dbUrl, migrations: migrations.length, temporal: t, stripeMock, storage: s };
      } finally {
        await db.destroy();
      }
    },
    down: () => stopBenchStack({ stack, temporalBin: tools.temporal, namespace, temporal, storage, state, log }),
  };
}

/**
 * The end of a bench's run on the servers of scripts/stack.mjs: deletes its Temporal namespace
 * and fake-gcs bucket (not on a server this run started in the bench's own `state`: that state
 * goes as a whole), stops the servers this run started, then removes their state (a reused
 * server keeps its own) and the state directory once it is empty. A namespace that cannot be
 * deleted is logged, not thrown.
 */
export async function stopBenchStack(o: {
  stack: StackLib;
  temporalBin: string;
  namespace: string;
  /** The Temporal server the namespace is on (absent: none was reached). */
  temporal?: { address: string; started?: boolean };
  /** The fake-gcs server and the bench's bucket (absent: none was reached). */
  storage?: { url: string; bucket: string; started?: boolean };
  /** The bench's own state directory, when it ran on its own servers (`ensureOwnStack`). */
  state?: OwnStackState;
  log: StackLog;
}): Promise<void> {
  const { stack, temporal, storage, state, log } = o;
  const goesWithState = (server: { started?: boolean }) => state !== undefined && server.started === true;
  if (temporal && !goesWithState(temporal)) {
    await promisify(execFile)(o.temporalBin, [
      'operator',
      'namespace',
      'delete',
      '--namespace',
      o.namespace,
      '--yes',
      '--address',
      temporal.address,
    ]).catch((err: Error) => log(`could not delete Temporal namespace ${o.namespace}: ${err.message}`));
  }
  if (storage && !goesWithState(storage)) await stack.deleteFakeGcsBucket({ url: storage.url, bucket: storage.bucket, log });
  if (stack.startedNames().length > 0) log(`stopping what this run started: ${stack.startedNames().join(', ')}`);
  await stack.stopAll({ log });
  if (!state) return;
  // The state of servers started here goes with them (a reused server keeps its own).
  if (temporal?.started) for (const f of ['', '-shm', '-wal']) fs.rmSync(`${state.temporalDb}${f}`, { force: true });
  if (storage?.started) fs.rmSync(state.gcsDir, { recursive: true, force: true });
  if (fs.existsSync(state.dir) && fs.readdirSync(state.dir).length === 0) fs.rmdirSync(state.dir);
}
