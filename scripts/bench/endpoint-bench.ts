/**
 * What the benches that measure an endpoint against the SQL it runs (catalog.ts, search.ts)
 * share: the start of a run (options, log head, the in-process API over the bench database), the
 * capture of the SQL one request issues, the goal's summary line, the units of their results files and the p99 row of their reports.
 * Latencies in ms.
 */
import type { Db } from '../../src/db/knex';
import { openEndpointBench, reportPercentiles, round2, startBenchRun, type LatencyStats, type StatementWaves } from './lib';
import { parseBenchOptionsOrExit, type BenchOptions, type BenchOptionsSpec } from './options';
import { ratioOf, textTable, type ScenarioReport } from './report';

/** The units of an endpoint bench's results file. */
export const ENDPOINT_UNITS = {
  latency: 'ms',
  endpointThroughput: 'requests/s (2xx)',
  directThroughput: 'statement sets/s (one set = the SQL of one request)',
} as const;

/**
 * The start of an endpoint bench's run: parses `argv` against `spec` (`--help` prints the usage
 * and exits 0), prints the log head (see startBenchRun; `sharing` says what shares the cores) and
 * opens the bench's `database` and the API over it (see openEndpointBench; close `bench` in a
 * `finally`). Throws on an invalid option or when the database cannot be opened.
 */
export async function startEndpointBench<K extends string>(spec: BenchOptionsSpec<K>, argv: string[], database: string, sharing: string) {
  const opts: BenchOptions<K> = parseBenchOptionsOrExit(spec, argv);
  const log = (s: string) => console.log(s);
  const run = startBenchRun(spec.bench, sharing, log);
  const bench = await openEndpointBench({ baseUrl: run.base.DATABASE_URL, database, quick: opts.quick, log });
  return { opts, log, ...run, bench };
}

/** The goal's summary line: `goal <goal>: PASS for all N scenarios`, or which of them failed it. */
export function goalLine(goal: string, results: readonly { scenario: string; pass: boolean }[]): string {
  const failed = results.filter((r) => !r.pass);
  return failed.length === 0
    ? `goal ${goal}: PASS for all ${results.length} scenarios`
    : `goal ${goal}: FAIL for ${failed.length} of ${results.length}: ${failed.map((r) => r.scenario).join(', ')}`;
}

/** A report row comparing the endpoint's p99 with the direct replay's (ms), with its goal. */
export function p99Row(
  scenario: string,
  endpoint: LatencyStats,
  direct: LatencyStats,
  goal: { text: string; pass: boolean },
): ScenarioReport {
  return {
    scenario,
    figure: { label: 'p99', value: round2(endpoint.p99), unit: 'ms' },
    baseline: { label: 'p99', value: round2(direct.p99), unit: 'ms' },
    ratio: ratioOf(endpoint.p99, direct.p99),
    goal,
    latency: { figure: reportPercentiles(endpoint), baseline: reportPercentiles(direct) },
  };
}

/** A statement as knex's `query` / `query-response` / `query-error` events carry it. */
interface KnexQueryEvent {
  __knexQueryUid?: string;
  sql: string;
  bindings?: unknown[];
  /** Options given to the query (`name`: a prepared statement's). */
  options?: { name?: string };
}

/** What a request answered, with the statements it issued in waves and those left out. */
type Capture<T> = T & { waves: StatementWaves; skipped: string[] };

/**
 * Runs `request` once while recording, through knex's `query` / `query-response` /
 * `query-error` events on `db`, the statements it issued, grouped into waves of statements that
 * were in flight together (one that starts while none is in flight opens a wave); statements
 * whose SQL `skip` matches are left out of the waves and listed in `skipped`. Answers them with
 * what `request` answered. Throws what `request` throws.
 */
async function captureOnce<T extends object>(db: Db, skip: (sql: string) => boolean, request: () => Promise<T>): Promise<Capture<T>> {
  const waves: StatementWaves = [];
  const skipped: string[] = [];
  const inFlight = new Set<string>();
  const onQuery = (q: KnexQueryEvent) => {
    if (skip(q.sql)) {
      skipped.push(q.sql);
      return;
    }
    if (inFlight.size === 0) waves.push([]);
    if (q.__knexQueryUid) inFlight.add(q.__knexQueryUid);
    const name = q.options?.name;
    waves[waves.length - 1]!.push({ sql: q.sql, bindings: [...(q.bindings ?? [])], ...(name ? { name } : {}) });
  };
  const onDone = (_res: unknown, q: KnexQueryEvent) => {
    if (q.__knexQueryUid) inFlight.delete(q.__knexQueryUid);
  };
  db.on('query', onQuery);
  db.on('query-response', onDone);
  db.on('query-error', onDone);
  try {
    return { ...(await request()), waves, skipped };
  } finally {
    db.off('query', onQuery);
    db.off('query-response', onDone);
    db.off('query-error', onDone);
  }
}

/**
 * The SQL one request issues (see captureOnce). Waves are seen by timing (a statement that starts
 * after the previous one finished opens a new wave), so after one request that warms the pool,
 * three requests are captured and the one with the fewest waves (the most concurrency) is
 * answered. Throws `<what>: the captured SQL differs between requests` when the three did not
 * issue the same statements, and what `request` throws.
 */
export async function captureStatements<T extends object>(db: Db, skip: (sql: string) => boolean, request: () => Promise<T>, what: string) {
  await captureOnce(db, skip, request);
  const captures: Capture<T>[] = [];
  for (let i = 0; i < 3; i++) captures.push(await captureOnce(db, skip, request));
  const key = (c: (typeof captures)[number]): string => JSON.stringify(c.waves.flat());
  if (captures.some((c) => key(c) !== key(captures[0]!))) throw new Error(`${what}: the captured SQL differs between requests`);
  return captures.reduce((best, c) => (c.waves.length < best.waves.length ? c : best));
}

/** One column of an endpoint bench's table: its header and its cell for a result. */
export type Column<R> = readonly [header: string, cell: (r: R) => string];

/** Prints `rows` as a table of `columns`, the second to the sixth (the figures) right-aligned. */
export function printColumns<R>(rows: readonly R[], columns: readonly Column<R>[]): void {
  const body = rows.map((r) => columns.map(([, cell]) => cell(r)));
  console.log(
    textTable(
      columns.map(([header]) => header),
      body,
      (i) => i > 0 && i < 6,
    ),
  );
}
