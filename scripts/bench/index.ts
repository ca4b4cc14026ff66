/**
 * `npm run bench [-- [names…] [options]]`: runs the benchmarks of `scripts/bench/` and writes
 * the report of the run.
 *
 *   npm run bench                        every benchmark (catalog, certificates, throughput, search, cancellations, holders, bordereaux), in turn
 *   npm run bench -- --quick             the same with small sizes: checks in a few minutes that they run
 *   npm run bench -- --list              lists the benchmarks
 *   npm run bench -- catalog search      these, in this order
 *   npm run bench -- certificates --runs 5    options after the names go to each named bench
 *   npm run bench -- catalog --help      a bench's options
 *
 * Each bench prints its own report and writes bench/results/<name>.json; then this writes, for
 * the benches of this run, bench/results/latest.json (machine, commit, load, durations and every
 * scenario: figure, same-run baseline, ratio, goal, latency percentiles), latest.md (one table
 * per bench) and latest-latency.png (+ .svg; p50/p95/p99 per scenario, figure beside baseline).
 *
 * Exits 0 also when goals fail (it is a report). Exits 1 when the arguments are wrong or a bench
 * could not run (the others still run, and the report says which one failed and why).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfigOrExit } from '../../src/config';
import { latencyChartSvg } from './chart';
import { REPO_ROOT, RESULTS_DIR, reportHead, round2 } from './lib';
import { parseBenchCommand, type BenchEntry } from './options';
import { isBenchReport, markdownReport, type BenchError, type BenchReport, type MachineInfo, type RunReport } from './report';

/**
 * Imports the bench `name` (scripts/bench/<name>.ts) only when it is used (each pulls in the
 * app, Temporal, Chromium…) and answers its usage, option parser and run (its `BENCH`).
 */
async function loadBench(name: string): Promise<BenchEntry> {
  return ((await import(`./${name}.js`)) as { BENCH: BenchEntry }).BENCH;
}

/** Every benchmark by name, in the order `npm run bench` runs them, and what it measures: a line each. */
const BENCHMARKS: Record<string, string> = Object.fromEntries(
  `
catalog GET /bundles (plain, filtered, searched, sorted, deep page) and GET /products (plain, isTestMode, deep page) under autocannon load beside the same SQL through pg; p50/p95/p99 ms, req/s, goal p99 <= 3x direct + 5 ms
certificates issueCertificates activity (page pool) vs a naive browser-per-PDF script in certificates/s (goal >= 10x); webhook -> getCertificates 'issued' p50/max for 1- and 30-day purchases through a real worker (goal 30-day <= 5 s); worker RSS after 100, 1 000 and 10 000 certificates (goal each ratio <= 1.2x) and no Chromium left after SIGTERM
throughput 1-day purchases at a constant arrival rate (1, 2, 4 … 16/s, 60 s each) through the real API, workers and Temporal, on the dev shape and the cluster shape with 1 and 2 workers: completed, webhook→issued p50/p95/p99, CPU-s per purchase by process, knee; goals 8/s with p95 <= 2 s, <= 0.25 CPU-s
search POST searchTeammatePurchasedProducts (teammate and root; list, names, email, product, certificate, no match, last page) over 1 000 000 seeded purchases under autocannon load beside the same SQL through pg; p50/p95/p99 ms and ratio, goal p99 < 50 ms
cancellations POST cancellation_quote p50/p95/p99 under autocannon load beside GET /purchases/{id} (ratio of p99s); cancel -> certificate voided p50/p95 through the real API, worker and Temporal (goal p95 <= 2 s); a bulk cancellation of 1 000 purchases: wall time, refunds/s at the processor against REFUND_RATE_LIMIT_PER_SECOND (busiest second <= 2x), 0 doubles, 0 lost
holders POST certificate_holders on a 30-day purchase -> the holder's 30 PDFs stored and certificate_holder.added p50/p95 through the real API, worker and Temporal, beside webhook -> issued of the same purchases (ratio of p95s); goal p95 <= 3 s, 30 PDFs in the bucket per holder
bordereaux a premium bordereau (CSV + XLSX into the bucket) of a seeded month of 100 000 transactions vs COPY of the same rows (goal <= 3x); peak RSS at 100 000 vs 10 000 rows (goal <= 1.2x)
`
    .trim()
    .split('\n')
    .map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]),
);

const USAGE = [
  'usage: npm run bench [-- [catalog|certificates|throughput|search|cancellations|holders|bordereaux …] [options]]',
  '  npm run bench                     every benchmark in turn, then bench/results/latest.{json,md} and latest-latency.png',
  '  npm run bench -- --quick          the same with small sizes (a few minutes; checks that they run, not figures)',
  '  npm run bench -- --list           the benchmarks',
  '  npm run bench -- catalog search   these only',
  '  npm run bench -- <name> --help    the options of one benchmark (given after the names, they go to each named one)',
].join('\n');

const ONE_LINE = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0]!;

/** `git rev-parse HEAD` and whether tracked files have uncommitted changes; `unknown` outside a checkout. */
function gitState(): { gitCommit: string; gitDirty: boolean } {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return { gitCommit: git('rev-parse', 'HEAD'), gitDirty: git('status', '--porcelain', '--untracked-files=no') !== '' };
  } catch {
    return { gitCommit: 'unknown', gitDirty: false };
  }
}

/** Writes latest.json, latest-latency.svg/.png and latest.md; a chart that cannot be drawn is reported, not fatal. */
async function writeReport(run: RunReport, chromiumPath: string): Promise<void> {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const rel = (f: string) => path.relative(process.cwd(), f);
  const jsonFile = path.join(RESULTS_DIR, 'latest.json');
  fs.writeFileSync(jsonFile, `${JSON.stringify(run, null, 2)}\n`);

  let chart: string | undefined;
  const drawn = latencyChartSvg(
    run.benches.filter(isBenchReport),
    `Latency percentiles (ms), ${run.startedAt}${run.quick ? ' (--quick run)' : ''}`,
  );
  if (drawn) {
    const svgFile = path.join(RESULTS_DIR, 'latest-latency.svg');
    const pngFile = path.join(RESULTS_DIR, 'latest-latency.png');
    fs.writeFileSync(svgFile, drawn.svg);
    try {
      const { svgToPng } = await import('./png.js');
      fs.writeFileSync(pngFile, await svgToPng(drawn.svg, drawn, chromiumPath));
      chart = path.basename(pngFile);
    } catch (err) {
      console.error(`latency chart: could not render the PNG (${ONE_LINE(err)}); the SVG is in ${rel(svgFile)}`);
      chart = path.basename(svgFile);
    }
  }
  const mdFile = path.join(RESULTS_DIR, 'latest.md');
  fs.writeFileSync(mdFile, markdownReport(run, chart));
  console.log(`report: ${rel(mdFile)}, ${rel(jsonFile)}${chart ? `, ${rel(path.join(RESULTS_DIR, chart))}` : ''}`);
}

async function main(): Promise<number> {
  const known = Object.keys(BENCHMARKS);
  const command = parseBenchCommand(process.argv.slice(2), known);
  if (command.kind === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (command.kind === 'list') {
    console.log('benchmarks (npm run bench runs them in this order):');
    for (const [n, description] of Object.entries(BENCHMARKS)) console.log(`  ${n.padEnd(13)} ${description}`);
    return 0;
  }

  // Every named bench's options are checked before the first one starts (a typo must not
  // surface twenty minutes into the run).
  const selected: { name: string; module: BenchEntry }[] = [];
  for (const name of command.names) selected.push({ name, module: await loadBench(name) });
  const parsed = selected.map((s) => s.module.parse(command.argv));
  if (parsed.some((p) => p === null)) {
    for (const s of selected) console.log(s.module.usage);
    return 0;
  }
  const quick = parsed.every((p) => p!.quick);

  const config = loadConfigOrExit();
  const cpus = os.cpus();
  const startedAt = new Date();
  const loadAverageAtStart = os.loadavg().map(round2);
  const benches: (BenchReport | BenchError)[] = [];
  for (const [i, s] of selected.entries()) {
    console.log(`\n=== ${s.name} (${i + 1} of ${selected.length}) ===\n`);
    const t0 = new Date();
    try {
      benches.push(await s.module.run(command.argv));
    } catch (err) {
      console.error(`${s.name} could not run: ${ONE_LINE(err)}`);
      benches.push({ ...reportHead(s.name, t0), error: ONE_LINE(err) });
    }
  }
  const machine: MachineInfo = {
    node: process.version,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverageAtStart,
    loadAverageAtEnd: os.loadavg().map(round2),
    ...gitState(),
  };
  const run: RunReport = {
    startedAt: startedAt.toISOString(),
    durationSeconds: round2((Date.now() - startedAt.getTime()) / 1000),
    quick,
    machine,
    benches,
  };
  console.log('');
  await writeReport(run, config.CHROMIUM_PATH);
  return benches.every(isBenchReport) ? 0 : 1;
}

main().then(
  // Lingering handles (lazy clients, keep-alive sockets) must not keep a finished run alive.
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench failed: ${ONE_LINE(err)}`);
    process.exit(1);
  },
);
