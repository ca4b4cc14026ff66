/**
 * `npm run bench -- search [--seconds S] [--warmup S] [--connections C] [--purchases N] [--only a,b] [--quick]`
 *
 * Measures `searchTeammatePurchasedProducts` (spec §4.5; issue 7, goal p99 < 50 ms at
 * 1 000 000 purchases) over the data of scripts/bench/search-seed.ts, in its own database.
 *
 * For each scenario (a surface and a list of request bodies, sent round robin):
 *  - endpoint: the real API (container + Koa app, as `test/helpers/app.ts` starts it) on
 *    127.0.0.1, port 0, loaded by autocannon (C connections, S seconds after a warm-up) in a
 *    worker thread (load-worker.mjs, POSTing); latency of every 2xx response in ms;
 *  - direct: the SQL one request of each body issued, captured from knex's `query` event on the
 *    app's own knex instance (exactly the statements and bindings the repository built, the
 *    account scope lookup included), replayed through `pg` on a pool as large as the app's by C
 *    concurrent loops for S seconds, bodies round robin; statements the endpoint ran
 *    concurrently are replayed concurrently, a prepared statement under its name. The API-key lookup of the gateway is not replayed
 *    (it counts as endpoint overhead), nor are the search's cache refreshes (its table sample
 *    every 10 minutes, a scope's window edge every minute), which the endpoint side does pay;
 *  - EXPLAIN (ANALYZE, BUFFERS) of each statement of every body: on one line with planning and
 *    execution time (ms) in search.json, and as PostgreSQL prints it for the first and the
 *    costliest body of each scenario in bench/results/search-explain.md;
 *  - p50 / p95 / p99 of both sides, the ratio p99(endpoint) / p99(direct), and the goal:
 *    p99(endpoint) < 50 ms with no non-2xx response or socket error.
 *
 * Prints a table, writes it as JSON to bench/results/search.json (plans to search-explain.md) and returns it as a
 * `BenchReport` (figure: endpoint p99; baseline: direct p99). `--quick` seeds 20 000 purchases in
 * its own database (`insurance_bench_search_quick`, so the full seed is kept) and runs shorter.
 * Exits 0 also when a goal fails (it is a report); exits 1 only when the benchmark itself cannot
 * run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../src/db/knex';
import { seedSearch, type SearchSeedResult } from './search-seed';
import {
  machineJson,
  loadProblems,
  selectScenarios,
  explain,
  REPO_ROOT,
  RESULTS_DIR,
  round2,
  runDirectLoad,
  runHttpLoad,
  writeResultsFile,
  type ExplainSummary,
  type LatencyStats,
  type PgPool,
  type Statement,
  reportHead,
  resultsHead,
  rounded,
} from './lib';
import { benchOptions, benchEntry } from './options';
import { captureStatements, ENDPOINT_UNITS, goalLine, p99Row, printColumns, startEndpointBench, type Column } from './endpoint-bench';
import type { BenchReport } from './report';

const BENCH_DATABASE = 'insurance_bench_search';
/** What the log head says shares the machine's cores. */
const SHARING =
  'load generator, API and PostgreSQL share these cores, so absolute numbers are lower and noisier than on separate machines.';
/** Goal of issue 7: p99 of the endpoint under 50 ms. */
const GOAL_P99_MS = 50;
const TEAMMATE_PATH = '/platform-agency-certs/searchTeammatePurchasedProducts';
const ROOT_PATH = '/platform-agency-root-certs/searchTeammatePurchasedProducts';

/** The search bench's options (`--quick`: 20 000 purchases, 2 s per side). */
export const SEARCH_OPTIONS = benchOptions(
  { bench: 'search', onlyExample: 'list all,email' },
  {
    seconds: { default: 5, quick: 2, min: 1, max: 3600, metavar: 'S' },
    warmup: { default: 2, quick: 1, min: 0, max: 600, metavar: 'S' },
    connections: { default: 4, quick: 4, min: 1, max: 1000, metavar: 'C' },
    purchases: { default: 1_000_000, quick: 20_000, min: 1000, max: 20_000_000 },
    otherPurchases: { default: 20_000, quick: 1000, min: 100, max: 1_000_000 },
    buyers: { default: 300_000, quick: 6000, min: 100, max: 10_000_000 },
    products: { default: 200, quick: 20, min: 10, max: 100_000 },
  },
);

interface Scenario {
  name: string;
  surface: 'teammate' | 'root';
  bodies: Record<string, unknown>[];
}

interface SideResult {
  latency: LatencyStats;
  perSec: number;
  errors: number;
}

/** EXPLAIN (ANALYZE, BUFFERS) of one statement: the one-line summary, planning time (ms) and the plan as PostgreSQL prints it. */
interface StatementExplain {
  statement: string;
  summary: ExplainSummary;
  planningMs: number;
  text: string[];
}

/** The statements of one body, explained; `totalMs` is their planning plus execution time, ms. */
interface BodyExplain {
  searchText: string;
  totalMs: number;
  statements: StatementExplain[];
}

interface ScenarioResult {
  scenario: string;
  path: string;
  bodies: Record<string, unknown>[];
  /** total and page length of each body's captured response. */
  responses: Array<{ total: number; totalExact: boolean; items: number }>;
  statements: number;
  waves: number;
  /** EXPLAIN of every body's statements, in body order. */
  explain: BodyExplain[];
  endpoint: SideResult & { non2xx: number; timeouts: number };
  direct: SideResult;
  p99Ratio: number;
  pass: boolean;
}

/** Search values taken from the seeded data (bench account, live, paid). */
async function scenarios(db: Db, seed: SearchSeedResult): Promise<Scenario[]> {
  const main = seed.account.id;
  const sample = async (sql: string): Promise<string[]> => (await db.raw(sql, [main])).rows.map((r: { v: string }) => r.v);
  const buyers = (
    await db.raw(
      `select b.first_name || ' ' || b.last_name as name, b.email
         from purchase_search s join purchases p on p.id = s.purchase_id join buyers b on b.id = p.buyer_id
        where s.root_account_id = ? and s.mode = 'live' and s.purchase_id % 9973 = 11 order by s.purchase_id limit 10`,
      [main],
    )
  ).rows as { name: string; email: string }[];
  const certificates = await sample(
    `select c.certificate_number as v from certificates c join purchase_search s on s.purchase_id = c.purchase_id
      where s.root_account_id = ? and s.mode = 'live' and c.id % 10007 = 3 order by c.id limit 10`,
  );
  const products = await sample(
    `select customer_name as v from product_lines where root_account_id = ? and not is_test_mode order by id limit 10 offset 7`,
  );
  const lastNames = ['Smith', 'Nguyen', 'Patel', 'Kowalski', 'Rivera', 'Okafor', 'Brooks', 'Jenkins', 'Nakamura', 'Hughes'];
  const root = { idp_root_account_uuid: seed.account.idpRootAccountUuid };
  const teammate = { idp_teammate_uuid: seed.teammates[0]!.idpTeammateUuid };
  const each = (scope: Record<string, unknown>, texts: string[], extra: Record<string, unknown> = {}) =>
    texts.map((search_text) => ({ ...scope, search_text, ...extra }));
  return [
    { name: 'list all', surface: 'root', bodies: each(root, ['']) },
    { name: 'list all, teammate', surface: 'teammate', bodies: each(teammate, ['']) },
    { name: 'last name', surface: 'root', bodies: each(root, lastNames) },
    { name: 'last name, teammate', surface: 'teammate', bodies: each(teammate, lastNames) },
    {
      name: 'full name',
      surface: 'root',
      bodies: each(
        root,
        buyers.map((b) => b.name),
      ),
    },
    {
      name: 'email',
      surface: 'root',
      bodies: each(
        root,
        buyers.map((b) => b.email),
      ),
    },
    { name: 'product name', surface: 'root', bodies: each(root, products) },
    { name: 'common word', surface: 'root', bodies: each(root, ['liability', 'wedding', 'example.com']) },
    { name: 'certificate number', surface: 'root', bodies: each(root, certificates) },
    {
      name: 'certificate prefix',
      surface: 'root',
      bodies: each(
        root,
        certificates.map((c) => c.split('-').slice(0, 2).join('-').slice(0, 8)),
      ),
    },
    { name: 'two letters', surface: 'root', bodies: each(root, ['ki', 'jo', 'an', 'pa', 'ri']) },
    { name: 'no match', surface: 'root', bodies: each(root, ['zzyzx road', 'qwvbn', 'nobody@nowhere.test', 'COI-0-0-0-XXXXXXXXXX']) },
    { name: 'last page of window', surface: 'root', bodies: each(root, ['', 'liability'], { page_size: 100, page_index: 99 }) },
  ];
}

/**
 * Statements a search request runs that are not replayed: the gateway’s key lookup is endpoint
 * overhead; the table sample and the window edges are cache refreshes (every 10 minutes, every
 * minute per scope and window), not per request.
 */
const notReplayed = (sql: string) => /api_key|tablesample|\/\* window edge \*\//.test(sql);

/** POSTs `body` to `url` and answers the total, whether it is exact, and the number of purchases. Throws when it does not answer 200. */
async function postSearch(url: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { total?: number; total_exact?: boolean; purchases?: unknown[] };
  if (res.status !== 200) throw new Error(`POST ${url} answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
  return { total: json.total ?? -1, totalExact: json.total_exact ?? false, items: json.purchases?.length ?? 0 };
}

/** The endpoint side: lib's autocannon worker POSTing `bodies` round robin per connection. */
async function runEndpointLoad(opts: {
  url: string;
  path: string;
  headers: Record<string, string>;
  bodies: string[];
  connections: number;
  seconds: number;
}) {
  const r = await runHttpLoad({
    url: opts.url,
    headers: opts.headers,
    connections: opts.connections,
    seconds: opts.seconds,
    post: { path: opts.path, bodies: opts.bodies },
  });
  return { latency: r.latency, perSec: r.reqPerSec, errors: r.errors, non2xx: r.non2xx, timeouts: r.timeouts };
}

const firstLine = (s: Statement) => s.sql.replace(/\s+/g, ' ').slice(0, 60);

/** Explains each statement of one body twice (JSON for the summary, text for the plan as printed); planning time from the text. */
async function explainBody(pool: PgPool, searchText: string, statements: Statement[]): Promise<BodyExplain> {
  const out: StatementExplain[] = [];
  for (const s of statements) {
    const summary = await explain(pool, s);
    const res = await pool.query(`explain (analyze, buffers, summary) ${s.sql}`, s.bindings);
    const text = res.rows.map((r) => String(r['QUERY PLAN']));
    const planning = text.map((l) => /^Planning Time: ([\d.]+) ms/.exec(l)).find(Boolean);
    out.push({ statement: firstLine(s), summary, planningMs: planning ? Number(planning[1]) : NaN, text });
  }
  const totalMs = out.reduce((t, e) => t + (Number.isFinite(e.planningMs) ? e.planningMs : 0) + e.summary.executionMs, 0);
  return { searchText, totalMs, statements: out };
}

/** The body whose statements took longest to plan and run. */
const costliest = (bodies: BodyExplain[]): BodyExplain => bodies.reduce((a, b) => (b.totalMs > a.totalMs ? b : a));

/** p50 / p95 / p99 of a side, ms. */
const threePercentiles = (l: LatencyStats) => `${fmt(l.p50)} / ${fmt(l.p95)} / ${fmt(l.p99)}`;

/** The report table's columns. */
const COLUMNS: Column<ScenarioResult>[] = [
  ['scenario', (r) => r.scenario],
  ['total (first body)', (r) => `${r.responses[0]!.total}${r.responses[0]!.totalExact ? '' : '+'}`],
  ['endpoint p50 / p95 / p99 ms', (r) => threePercentiles(r.endpoint.latency)],
  ['req/s', (r) => fmt(r.endpoint.perSec, 0)],
  ['direct p50 / p95 / p99 ms', (r) => threePercentiles(r.direct.latency)],
  ['p99 ratio', (r) => `${fmt(r.p99Ratio)}x`],
  [`goal p99 < ${GOAL_P99_MS} ms`, (r) => (r.pass ? 'PASS' : 'FAIL')],
];

/**
 * Writes bench/results/search-explain.md: per scenario, every body's total planning + execution
 * time (ms), and the full EXPLAIN (ANALYZE, BUFFERS) text of the first and the costliest body.
 */
function writeExplainFile(startedAt: string, results: ScenarioResult[]): string {
  const out = [
    `# Purchase search: EXPLAIN (ANALYZE, BUFFERS) — ${startedAt}`,
    '',
    'One run per statement, after the load of its scenario; times are the server’s (planning + execution), in ms.',
  ];
  for (const r of results) {
    out.push('', `## ${r.scenario}`, '', r.explain.map((b) => `\`${JSON.stringify(b.searchText)}\` ${fmt(b.totalMs)} ms`).join(' · '));
    const shown = [...new Set([r.explain[0]!, costliest(r.explain)])];
    for (const b of shown) {
      out.push('', `### ${JSON.stringify(b.searchText)} (${fmt(b.totalMs)} ms)`);
      for (const e of b.statements) out.push('', `\`${e.statement} …\``, '', '```', ...e.text, '```');
    }
  }
  const file = path.join(RESULTS_DIR, 'search-explain.md');
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(file, `${out.join('\n')}\n`);
  return path.relative(REPO_ROOT, file);
}
const fmt = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '-');

/**
 * Runs the search benchmark with the command-line `argv` (after the benchmark name; see
 * SEARCH_OPTIONS): seeds (or reuses) the bench database, starts the API, runs every scenario,
 * prints the report, writes bench/results/search.json and returns the report (latencies in
 * ms). `--help` prints the usage and exits 0. Throws when an option is invalid, `--only`
 * matches no scenario, or the database, the seed or a request fails.
 */
export async function runSearchBench(argv: string[]): Promise<BenchReport> {
  const { opts, log, startedAt, loadAtStart, bench } = await startEndpointBench(SEARCH_OPTIONS, argv, BENCH_DATABASE, SHARING);
  const { dbUrl, config, container, directPool } = bench;
  try {
    const seed = await seedSearch(
      container.db,
      dbUrl,
      config,
      { purchases: opts.purchases, otherPurchases: opts.otherPurchases, buyers: opts.buyers, products: opts.products },
      log,
    );
    log(
      `data: ${JSON.stringify(seed.counts)}; busiest teammate ${seed.teammates[0]!.purchases} live purchases; ` +
        `purchase_search ${Math.round(seed.sizes.purchase_search! / 2 ** 20)} MiB, trigram index ${Math.round(seed.sizes.purchase_search_key_trgm_idx! / 2 ** 20)} MiB ` +
        `(vacuum analyze ${seed.analyzeSeconds.toFixed(1)} s)`,
    );

    const { baseUrl, pgVersion } = await bench.listen();
    const headers = { 'x-api-key': seed.apiKey };
    log(
      `API on ${baseUrl} (LOG_LEVEL=silent, DATABASE_POOL_MAX=${config.DATABASE_POOL_MAX}); PostgreSQL ${pgVersion}; Node ${process.version}`,
    );
    log(
      `load: ${opts.connections} connections / loops, ${opts.warmup} s warm-up + ${opts.seconds} s measured per side and scenario; bodies round robin`,
    );
    log('');

    const all = await scenarios(container.db, seed);
    const selected = selectScenarios(all, opts.only);
    const results: ScenarioResult[] = [];
    for (const sc of selected) {
      const apiPath = sc.surface === 'root' ? ROOT_PATH : TEAMMATE_PATH;
      const url = `${baseUrl}${apiPath}`;
      const caps = [];
      for (const body of sc.bodies)
        caps.push(await captureStatements(container.db, notReplayed, () => postSearch(url, headers, body), `POST ${url}`));
      const explained: BodyExplain[] = [];
      for (const [i, c] of caps.entries())
        explained.push(await explainBody(directPool, String(sc.bodies[i]!.search_text ?? ''), c.waves.flat()));

      const load = { url: baseUrl, path: apiPath, headers, bodies: sc.bodies.map((b) => JSON.stringify(b)), connections: opts.connections };
      if (opts.warmup > 0) await runEndpointLoad({ ...load, seconds: opts.warmup });
      const endpoint = await runEndpointLoad({ ...load, seconds: opts.seconds });
      const direct = await runDirectLoad(
        directPool,
        caps.map((c) => c.waves),
        { loops: opts.connections, seconds: opts.seconds, warmupSeconds: opts.warmup },
      );
      const r: ScenarioResult = {
        scenario: sc.name,
        path: apiPath,
        bodies: sc.bodies,
        responses: caps.map((c) => ({ total: c.total, totalExact: c.totalExact, items: c.items })),
        statements: caps[0]!.waves.flat().length,
        waves: caps[0]!.waves.length,
        explain: explained,
        endpoint,
        direct,
        p99Ratio: endpoint.latency.p99 / direct.latency.p99,
        pass: endpoint.latency.p99 < GOAL_P99_MS && endpoint.non2xx === 0 && endpoint.errors === 0,
      };
      results.push(r);
      const problems = loadProblems(endpoint, direct);
      log(
        `${sc.name.padEnd(22)} ${sc.bodies.length} bodies, totals ${r.responses.map((x) => `${x.total}${x.totalExact ? '' : '+'}`).join('/')}, ` +
          `${r.statements} statements in ${r.waves} waves | endpoint p99 ${fmt(endpoint.latency.p99)} ms, ${fmt(endpoint.perSec, 0)} req/s | ` +
          `direct p99 ${fmt(direct.latency.p99)} ms | ${r.pass ? 'PASS' : 'FAIL'}${problems.length ? ` | ${problems.join(', ')}` : ''}`,
      );
    }

    log('');
    printColumns(results, COLUMNS);
    log('');
    log(
      'EXPLAIN (ANALYZE, BUFFERS) of the costliest body of each scenario (server-side planning + execution time, one run; every body in search.json, full plans in search-explain.md):',
    );
    for (const r of results) {
      const b = costliest(r.explain);
      log(`  ${r.scenario} ("${b.searchText}", ${fmt(b.totalMs)} ms):`);
      for (const e of b.statements) {
        const seq = e.summary.seqScans.length ? ` SEQ SCAN on ${e.summary.seqScans.join(', ')}` : '';
        log(
          `    ${e.statement} … → ${e.summary.plan} [plan ${fmt(e.planningMs)} + run ${fmt(e.summary.executionMs)} ms, ${e.summary.buffers} buffers]${seq}`,
        );
      }
    }
    log('');
    log(goalLine(`p99_endpoint < ${GOAL_P99_MS} ms`, results));
    log(
      `load average at end (1/5/15 min): ${os.loadavg().map(round2).join(' / ')}; seeding: ` +
        (seed.reused
          ? 'reused the existing data'
          : `${seed.seedSeconds.toFixed(1)} s load + ${seed.indexSeconds.toFixed(1)} s search table and indexes`),
    );

    const side = (s: SideResult) => ({
      ...rounded(s.latency, ['p50', 'p95', 'p99', 'max']),
      perSec: round2(s.perSec),
      samples: s.latency.samples,
      errors: s.errors,
    });
    const json = {
      ...resultsHead('search', startedAt),
      units: ENDPOINT_UNITS,
      machine: { ...machineJson(loadAtStart, os.loadavg().map(round2)), postgres: pgVersion },
      options: { ...opts, databasePoolMax: config.DATABASE_POOL_MAX },
      goal: `p99_endpoint < ${GOAL_P99_MS} ms`,
      seeding: {
        reused: seed.reused,
        seedSeconds: round2(seed.seedSeconds),
        indexSeconds: round2(seed.indexSeconds),
        analyzeSeconds: round2(seed.analyzeSeconds),
        counts: seed.counts,
        sizes: seed.sizes,
        teammates: seed.teammates.length,
      },
      scenarios: results.map((r) => ({
        scenario: r.scenario,
        path: r.path,
        bodies: r.bodies,
        responses: r.responses,
        endpoint: { ...side(r.endpoint), non2xx: r.endpoint.non2xx, timeouts: r.endpoint.timeouts },
        direct: side(r.direct),
        p99Ratio: round2(r.p99Ratio),
        pass: r.pass,
        explain: r.explain.map((b) => ({
          searchText: b.searchText,
          totalMs: round2(b.totalMs),
          statements: b.statements.map((e) => ({
            statement: e.statement,
            ...e.summary,
            planningMs: round2(e.planningMs),
            executionMs: round2(e.summary.executionMs),
          })),
        })),
      })),
    };
    const resultsFile = writeResultsFile('search', json);
    const explainFile = writeExplainFile(json.startedAt, results);
    log(`report written to ${resultsFile}, plans to ${explainFile}`);
    return {
      ...reportHead('search', startedAt),
      options: json.options,
      figureDescription:
        `the endpoint under autocannon load (${opts.connections} connections, ${opts.seconds} s, bodies round robin) over ${opts.purchases} purchases ` +
        `(EXPLAIN ANALYZE of every statement: ${explainFile})`,
      baselineDescription: 'the SQL of one request per body, replayed through pg by as many loops (API-key lookup excluded)',
      resultsFile,
      scenarios: results.map((r) =>
        p99Row(r.scenario, r.endpoint.latency, r.direct.latency, { text: `p99 < ${GOAL_P99_MS} ms, no error`, pass: r.pass }),
      ),
    };
  } finally {
    await bench.close();
  }
}

/** The search bench as `npm run bench` loads it. */
export const BENCH = benchEntry(SEARCH_OPTIONS, runSearchBench);
