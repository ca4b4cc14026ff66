/**
 * `npm run ops -- slo` against a real Prometheus (Debian's `/usr/bin/prometheus`, on a free port,
 * with the local stack's configuration of scripts/prometheus-config.cjs and every rule of
 * ops/prometheus/alerts.yml, scraping and evaluating every second). Its targets serve the API's
 * and the worker's own metric registries (src/metrics/registry.ts), into which the test observes
 * checkouts and paid-to-issued times of known durations in both modes, as the API's request
 * middleware and the issuance activity do: the recorded good and total rates are scraped and
 * evaluated by Prometheus, and the command's compliance and budget left must match the traffic.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createApiMetrics, createWorkerMetrics } from '../../src/metrics/registry';
import { freePort } from '../helpers/ports';
import { eventually } from '../helpers/worker';
import { runScript } from '../helpers/run';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { localPrometheusConfig } = require('../../scripts/prometheus-config.cjs') as {
  localPrometheusConfig: (t: Record<string, unknown>) => object;
};

jest.setTimeout(180_000);

const ROUTE = '/public-quote/adminValidateBuyerResponses';
const api = createApiMetrics();
const worker = createWorkerMetrics();
let servers: http.Server[] = [];
let prometheus: ChildProcess;
let dir: string;
let url: string;

const serve = (registry: typeof api.registry, port: number) =>
  new Promise<http.Server>((resolve) => {
    const s = http.createServer(async (_req, res) => {
      res.setHeader('content-type', registry.contentType);
      res.end(await registry.metrics());
    });
    s.listen(port, '127.0.0.1', () => resolve(s));
  });

type Dashboard = { panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
type Figures = { slo: string; mode: string; compliance: number | null; budget_left: number; budget_minutes: number; exhausted: boolean };
const ops = async (args: string[]) => {
  const r = await runScript('scripts/ops.ts', ['slo', ...args], { PROMETHEUS_URL: url });
  return { ...r, report: r.stdout.trim().startsWith('{') ? (JSON.parse(r.stdout) as { slos: Figures[] }) : null };
};
const query = async (expr: string) =>
  ((await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`)).json()) as { data: { result: unknown[] } }).data.result;

/** `n` checkouts of `seconds` each in `mode`, and `n` paid-to-issued times of `seconds`. */
const checkouts = (mode: string, n: number, seconds: number, status = '201') => {
  for (let i = 0; i < n; i++) api.httpDuration.observe({ method: 'POST', route: ROUTE, status, mode }, seconds);
};
const issued = (mode: string, n: number, seconds: number) => {
  for (let i = 0; i < n; i++) worker.paidToIssued.observe({ mode }, seconds);
};

beforeAll(async () => {
  if (!fs.existsSync('/usr/bin/prometheus'))
    throw new Error("/usr/bin/prometheus is missing: apt-get install -y prometheus (Debian's package)");
  const [promPort, apiPort, workerPort, closed] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  servers = await Promise.all([serve(api.registry, apiPort), serve(worker.registry, workerPort)]);
  // One event of each kind first: the series exist before the traffic, so rate() sees all of it.
  for (const mode of ['live', 'test']) {
    checkouts(mode, 1, 0.1);
    issued(mode, 1, 5);
  }
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-slo-'));
  const config = localPrometheusConfig({
    api: [`127.0.0.1:${apiPort}`],
    workers: [`127.0.0.1:${workerPort}`],
    workerSdk: [`127.0.0.1:${closed}`],
    temporal: [`127.0.0.1:${closed}`],
    postgresExporter: `127.0.0.1:${closed}`,
    alertmanager: null,
    scrapeInterval: '1s',
  });
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), JSON.stringify(config));
  url = `http://127.0.0.1:${promPort}`;
  prometheus = spawn(
    '/usr/bin/prometheus',
    [`--config.file=${dir}/prometheus.yml`, `--storage.tsdb.path=${dir}/data`, `--web.listen-address=127.0.0.1:${promPort}`],
    { stdio: 'ignore' },
  );
  await eventually(async () => (await fetch(`${url}/-/ready`).catch(() => null))?.ok || null, 60_000);
  // Two scrapes of each target's first values, then the traffic.
  await eventually(async () => ((await query('count_over_time(up{job="coi-worker"}[1m]) >= 2')).length ? true : null), 60_000);
});

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('when traffic in both modes is scraped, then ops slo reports each objective’s compliance and budget left per mode (as the dashboard’s panels do), and exits 3 once a budget is spent', async () => {
  // Live: 1000 checkouts, 2 over 2 s (99.8 %, 40 % of the 0.5 % budget spent); 2000 certificates, 1 late (99.95 %, half the 0.1 %).
  checkouts('live', 998, 0.3);
  checkouts('live', 2, 3);
  checkouts('live', 50, 9, '400'); // refusals are no checkouts
  issued('live', 1999, 20);
  issued('live', 1, 120);
  // Test: 100 checkouts all fast; 100 certificates, 10 late (90 %: the budget spent 100 times over).
  checkouts('test', 100, 0.05);
  issued('test', 90, 30);
  issued('test', 10, 600);
  await eventually(
    async () => ((await query('coi:slo_events_total:rate5m{slo="certificates",mode="test"} > 0.3')).length ? true : null),
    60_000,
  );

  const live = await ops(['--json', '--days', '1']);
  expect(live.stderr).toBe('');
  expect(live.code).toBe(0);
  const bySlo = Object.fromEntries(live.report!.slos.map((s) => [s.slo, s]));
  expect(bySlo.checkout).toMatchObject({ mode: 'live', exhausted: false });
  expect(bySlo.checkout!.compliance).toBeCloseTo(0.998, 4);
  expect(bySlo.checkout!.budget_left).toBeCloseTo(0.6, 2);
  expect(bySlo.checkout!.budget_minutes).toBeCloseTo(7.2, 6); // 0.5 % of a day
  expect(bySlo.certificates!.compliance).toBeCloseTo(0.9995, 4);
  expect(bySlo.certificates!.budget_left).toBeCloseTo(0.5, 2);
  expect(bySlo.certificates!.budget_minutes).toBeCloseTo(1.44, 6);

  const test = await ops(['--mode', 'test', '--days', '1']);
  expect(test.code).toBe(3);
  // 90 % (rate() extrapolates a new series' first minutes towards zero, by its own value: within 0.2 %).
  const certificates = /^certificates +99\.9 % +\d+ +\d+ +(\d+\.\d{3}) % +(-\d+\.\d) % /m.exec(test.stdout);
  expect(Math.abs(Number(certificates?.[1]) - 90)).toBeLessThan(0.2);
  expect(Number(certificates?.[2])).toBeLessThan(-9700); // 1 - 10 % / 0.1 %: the budget spent 100 times
  expect(test.stdout).toMatch(/^checkout +99\.5 % +\d+ +\d+ +100\.000 % +100\.0 % +7\.2 +7\.2$/m);
  expect(test.stdout).toContain('error budget exhausted: certificates (exit 3)');

  // The dashboard's two SLO panels, asked of the same Prometheus (selector at "All"), agree with the command.
  const panels = (JSON.parse(fs.readFileSync(path.join(__dirname, '../../ops/grafana/dashboard.json'), 'utf8')) as Dashboard).panels;
  const panelValue = async (title: string, slo: string, mode: string) => {
    const expr = panels.find((p) => p.title.startsWith(title))!.targets[0]!.expr.replaceAll('$mode', 'live|test');
    const result = (await query(expr)) as Array<{ metric: Record<string, string>; value: [number, string] }>;
    return Number(result.find((r) => r.metric.slo === slo && r.metric.mode === mode)?.value[1]);
  };
  expect(await panelValue('SLO compliance', 'checkout', 'live')).toBeCloseTo(bySlo.checkout!.compliance!, 3);
  expect(await panelValue('SLO error budget left', 'certificates', 'live')).toBeCloseTo(bySlo.certificates!.budget_left, 1);
  expect(await panelValue('SLO error budget left', 'certificates', 'test')).toBeLessThan(-97);
});

test('when Prometheus does not answer, then ops slo fails with exit 1 saying so; a bad --days is a usage error', async () => {
  const days = await ops(['--days', '0']);
  expect(days.code).toBe(1);
  expect(days.stderr).toContain('--days must be a whole number of days from 1 to 365');
  const closed = await runScript('scripts/ops.ts', ['slo'], { PROMETHEUS_URL: `http://127.0.0.1:${await freePort()}` });
  expect(closed.code).toBe(1);
  expect(closed.stderr).toMatch(/Prometheus at http:\/\/127\.0\.0\.1:\d+ does not answer/);
});
