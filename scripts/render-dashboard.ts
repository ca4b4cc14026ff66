/**
 * `npm run dashboard:render`: draws the panels of `ops/grafana/dashboard.json` from a real
 * Prometheus scrape of the local stack into PNGs. Grafana cannot be installed on this machine (no
 * Docker engine, Grafana's packages unreachable), so this is not Grafana: the dashboard's own
 * PromQL runs through Prometheus' HTTP API and Chart.js draws the answers in headless Chromium,
 * laid out on the dashboard's 24-column grid (each panel's `gridPos`).
 *
 *  1. Stack: reuses the API when `RENDER_BASE_URL` (default http://127.0.0.1:3000) answers
 *     `/readyz`; otherwise starts `npm run dev` in its own process group (log
 *     `var/log/dashboard-render-dev.log`) and stops it at the end. Waits for the worker's
 *     `/readyz` on :9465 too.
 *  2. Prometheus: `PROMETHEUS_BIN` (default /usr/bin/prometheus, Debian's `prometheus` package)
 *     on a free loopback port, with a temporary config and storage directory: every 2 s it scrapes
 *     every job of `npm run dev`'s Prometheus (scripts/prometheus-config.cjs `localPrometheusConfig`):
 *     the API's metrics (127.0.0.1:`METRICS_PORT`, default 9464, job `coi-api`), the worker's
 *     (`WORKER_METRICS_PORT`, default 9465, job `coi-worker`), the worker's Temporal SDK exporter
 *     (9466, job `coi-worker-sdk`), the Temporal server's metrics (9233), postgres_exporter (9187)
 *     and the blackbox exporter's probes of `RENDER_BASE_URL` (9115, job `coi-probe`), the last three
 *     as `npm run dev` starts them; and it evaluates `ops/prometheus/alerts.yml` (no Alertmanager).
 *     Stopped and deleted at the end.
 *  3. Traffic for `RENDER_TRAFFIC_SECONDS` (default 240): `npm run demo` again and again at
 *     uneven pauses (products, bundle, buyer, quote, checkout, test-mode payment, certificates,
 *     agency events), bad input beside it (400, 403 and 404 answers, payment webhooks with a
 *     forged signature) and two bursts over the per-key rate limit with the second account's
 *     test key (429 answers).
 *  4. Every target of every panel through `/api/v1/query_range` over the window (step 5 s;
 *     Grafana's `$__rate_interval` becomes 30s, `$__interval` the step, `$__range` the window).
 *     Prints per panel how many series and points it got, and the alert rules' states.
 *  5. Writes `docs/screenshots/dashboard.png` (the whole dashboard) and one PNG per panel under
 *     `docs/screenshots/panels/` (`RENDER_OUTPUT_DIR` moves both), in Debian's Chromium
 *     (`CHROMIUM_PATH`, default /usr/bin/chromium) through puppeteer-core. A panel whose queries
 *     answered nothing says "No data".
 *
 * Exits 1 naming the step that failed; whatever it started is stopped either way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { freePort } from './harness/ports';

const ROOT = path.resolve(__dirname, '..');
const env = process.env;

const BASE_URL = env.RENDER_BASE_URL ?? 'http://127.0.0.1:3000';
const API_METRICS_PORT = Number(env.METRICS_PORT ?? 9464);
const WORKER_METRICS_PORT = Number(env.WORKER_METRICS_PORT ?? 9465);
const SDK_METRICS_PORT = 9466;
const TRAFFIC_SECONDS = Number(env.RENDER_TRAFFIC_SECONDS ?? 240);
const PROMETHEUS_BIN = env.PROMETHEUS_BIN ?? '/usr/bin/prometheus';
const CHROMIUM_PATH = env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUTPUT_DIR = path.resolve(ROOT, env.RENDER_OUTPUT_DIR ?? 'docs/screenshots');
const DASHBOARD_FILE = path.join(ROOT, 'ops/grafana/dashboard.json');
const ALERTS_FILE = path.join(ROOT, 'ops/prometheus/alerts.yml');

const SCRAPE_SECONDS = 2;
const STEP_SECONDS = 5;
const RATE_INTERVAL = '30s';
/** Pixels of one grid row (Grafana: 30) and of the gap between cells (Grafana: 8). */
const ROW_PX = 36;
const GAP_PX = 8;
const PAGE_WIDTH = 1920;
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

interface GridPos {
  x: number;
  y: number;
  w: number;
  h: number;
}

interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  gridPos: GridPos;
  targets?: Array<{ refId?: string; expr?: string; legendFormat?: string }>;
  fieldConfig?: { defaults?: { unit?: string } };
}

interface Dashboard {
  title: string;
  timezone?: string;
  panels: DashboardPanel[];
}

interface Credentials {
  accounts: Array<{ slug: string; testApiKey: string }>;
}

interface PromAnswer<T> {
  status: 'success' | 'error';
  data: T;
  errorType?: string;
  error?: string;
}

type Matrix = { resultType: string; result: Array<{ metric: Record<string, string>; values: Array<[number, string]> }> };
type Rules = { groups: Array<{ name: string; rules: Array<{ name: string; type: string; state?: string; health?: string }> }> };
type Targets = { activeTargets: Array<{ labels: Record<string, string>; health: string; lastError: string }> };

/** What the page draws for one panel (times in ms, values null where Prometheus said NaN). */
interface RenderedPanel {
  id: number;
  type: string;
  title: string;
  unit: string;
  gridPos: GridPos;
  exprs: string[];
  series: Array<{ label: string; points: Array<[number, number | null]> }>;
  errors: string[];
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let currentStep = 'start';
const step = (name: string) => {
  currentStep = name;
  say(`\n▶ ${name}`);
};

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(3000) })).ok;
  } catch {
    return false;
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, isAlive: () => boolean = () => true): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive()) throw new Error(`${what}: the process exited`);
    if (await check()) return;
    await sleep(1000);
  }
  throw new Error(`${what}: not within ${Math.round(timeoutMs / 1000)} s`);
}

/** Waits (up to `ms`) for a child process to exit; true when it did. */
function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Starts `npm run dev` in its own process group and waits (up to 30 min on a cold machine) for the API. */
async function startDevStack(): Promise<ChildProcess> {
  const logFile = path.join(ROOT, 'var', 'log', 'dashboard-render-dev.log');
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const out = fs.openSync(logFile, 'w');
  const child = spawn('npm', ['run', 'dev'], { cwd: ROOT, stdio: ['ignore', out, out], detached: true });
  fs.closeSync(out);
  say(`  the API does not answer: started \`npm run dev\` (pid ${child.pid}, log ${path.relative(ROOT, logFile)})`);
  await waitFor(
    'npm run dev',
    async () => fs.existsSync(path.join(ROOT, 'var', 'dev-credentials.json')) && (await answers(`${BASE_URL}/readyz`)),
    30 * 60_000,
    () => child.exitCode === null,
  );
  return child;
}

async function stopGroup(child: ChildProcess, name: string, signal: NodeJS.Signals): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  say(`  stopping ${name} (pid ${child.pid})`);
  try {
    process.kill(-child.pid, signal);
  } catch {
    return; // already gone
  }
  if (!(await exited(child, 60_000))) process.kill(-child.pid, 'SIGKILL');
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { localPrometheusConfig } = require('./prometheus-config.cjs') as { localPrometheusConfig(o: object): object };

/** Prometheus' config for the run (JSON is YAML): `npm run dev`'s scrape jobs (scripts/prometheus-config.cjs) every SCRAPE_SECONDS, without an Alertmanager. */
function prometheusConfig(): string {
  const local = localPrometheusConfig({
    api: [`127.0.0.1:${API_METRICS_PORT}`],
    workers: [`127.0.0.1:${WORKER_METRICS_PORT}`],
    workerSdk: [`127.0.0.1:${SDK_METRICS_PORT}`],
    temporal: ['127.0.0.1:9233'],
    postgresExporter: '127.0.0.1:9187',
    blackbox: '127.0.0.1:9115',
    publicApis: [BASE_URL.replace(/\/+$/, '')],
    alertmanager: null,
    rulesFile: ALERTS_FILE,
    scrapeInterval: `${SCRAPE_SECONDS}s`,
  });
  return JSON.stringify(local, null, 2);
}

class Prometheus {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    readonly logFile: string,
  ) {}

  static async start(workDir: string): Promise<Prometheus> {
    if (!fs.existsSync(PROMETHEUS_BIN)) throw new Error(`${PROMETHEUS_BIN} is missing: apt-get install -y prometheus`);
    const port = await freePort();
    const configFile = path.join(workDir, 'prometheus.yml');
    fs.writeFileSync(configFile, prometheusConfig());
    const logFile = path.join(workDir, 'prometheus.log');
    const out = fs.openSync(logFile, 'w');
    const child = spawn(
      PROMETHEUS_BIN,
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${path.join(workDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', out, out] },
    );
    fs.closeSync(out);
    const prometheus = new Prometheus(`http://127.0.0.1:${port}`, child, logFile);
    try {
      await waitFor(
        'Prometheus /-/ready',
        () => answers(`${prometheus.url}/-/ready`),
        60_000,
        () => child.exitCode === null,
      );
    } catch (err) {
      await prometheus.stop();
      throw new Error(`${(err as Error).message}; its log: ${fs.readFileSync(logFile, 'utf8').trim().split('\n').slice(-5).join(' | ')}`);
    }
    return prometheus;
  }

  async api<T>(endpoint: string, params?: Record<string, string>): Promise<T> {
    const res = await fetch(`${this.url}/api/v1/${endpoint}`, {
      method: params ? 'POST' : 'GET',
      body: params ? new URLSearchParams(params) : undefined,
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await res.json()) as PromAnswer<T>;
    if (body.status !== 'success') throw new Error(`${body.errorType ?? 'error'}: ${body.error ?? res.status}`);
    return body.data;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    if (!(await exited(this.child, 15_000))) this.child.kill('SIGKILL');
  }
}

/**
 * Runs `npm run demo` until the deadline: busy minutes (11–14 s pauses) and quiet ones (25–40 s)
 * in turn, so the rates move. A run makes about 18 requests with the first account's test key;
 * busy minutes stay under its rate limit (RATE_LIMIT_PER_MINUTE, default 100).
 */
async function demoLoop(deadline: number, outputDir: string, tally: { runs: number; failed: number; purchases: number }): Promise<void> {
  const begun = Date.now();
  while (Date.now() < deadline) {
    const child = spawn('npm', ['run', '--silent', 'demo'], {
      cwd: ROOT,
      env: { ...env, DEMO_OUTPUT_DIR: outputDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    tally.runs += 1;
    tally.purchases += (output.match(/^▶ test payment:/gm) ?? []).length;
    if (code !== 0) {
      tally.failed += 1;
      say(`  demo run ${tally.runs} failed (exit ${code}): ${output.trim().split('\n').slice(-3).join(' | ')}`);
    }
    const busy = Math.floor((Date.now() - begun) / 60_000) % 2 === 0;
    await sleep(busy ? 11_000 + Math.random() * 3000 : 25_000 + Math.random() * 15_000);
  }
}

/** Bad input beside the demo, so the 4xx and webhook-outcome series move. */
async function badInputLoop(deadline: number, apiKey: string, statuses: Map<string, number>): Promise<void> {
  const requests: Array<() => Promise<Response>> = [
    () => fetch(`${BASE_URL}/api/v1/products/999999999`, { headers: { 'x-api-key': apiKey } }),
    () =>
      fetch(`${BASE_URL}/api/v1/products`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: '{"customerName":""}',
      }),
    () => fetch(`${BASE_URL}/api/v1/products`, { headers: { 'x-api-key': 'ik_test_not_a_key' } }),
    () =>
      fetch(`${BASE_URL}/public-quote/adminValidateBuyerResponses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }),
    () =>
      fetch(`${BASE_URL}/webhooks/payproc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
        body: JSON.stringify({ id: `evt_forged_${Date.now()}`, object: 'event', type: 'checkout.session.completed' }),
      }),
  ];
  while (Date.now() < deadline) {
    const res = await requests[Math.floor(Math.random() * requests.length)]!().catch(() => undefined);
    const key = res ? String(res.status) : 'network error';
    statuses.set(key, (statuses.get(key) ?? 0) + 1);
    await res?.body?.cancel();
    await sleep(1500 + Math.random() * 3000);
  }
}

/**
 * A burst past the per-key limit (RATE_LIMIT_PER_MINUTE, default 100) with another account's key.
 * Run it twice: a counter's series is born at its first 429s, and rate() sees only later increases.
 */
async function rateLimitBurst(startAt: number, apiKey: string, statuses: Map<string, number>): Promise<void> {
  await sleep(Math.max(0, startAt - Date.now()));
  for (let batch = 0; batch < 13; batch += 1) {
    const answered = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(`${BASE_URL}/api/v1/products`, { headers: { 'x-api-key': apiKey } }).then(
          async (r) => {
            await r.body?.cancel();
            return String(r.status);
          },
          () => 'network error',
        ),
      ),
    );
    for (const key of answered) statuses.set(`burst ${key}`, (statuses.get(`burst ${key}`) ?? 0) + 1);
  }
}

/**
 * Grafana's built-in interval variables as literals for this window, and the dashboard's own
 * selectors at "All" (`$mode` → `live|test`, `$instance` → `.*`).
 */
function withLiterals(expr: string, rangeSeconds: number): string {
  const literal: Record<string, string> = {
    mode: 'live|test',
    instance: '.*',
    __rate_interval: RATE_INTERVAL,
    __interval: `${STEP_SECONDS}s`,
    __interval_ms: String(STEP_SECONDS * 1000),
    __range: `${rangeSeconds}s`,
    __range_s: String(rangeSeconds),
    __range_ms: String(rangeSeconds * 1000),
  };
  return expr.replace(/\$\{?(__[a-z_]+|mode|instance)\}?/g, (whole, name: string) => literal[name] ?? whole);
}

/** A series' legend as Grafana writes it: the legendFormat with {{label}}s, else `{a="x", b="y"}`, else the query. */
function legendOf(metric: Record<string, string>, legendFormat: string | undefined, expr: string): string {
  if (legendFormat && legendFormat !== '__auto')
    return legendFormat.replace(/\{\{\s*([a-zA-Z_]\w*)\s*\}\}/g, (_, label: string) => metric[label] ?? '');
  const { __name__: name, ...labels } = metric;
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  if (pairs.length === 0) return name ?? expr;
  return `${name ?? ''}{${pairs.join(', ')}}`;
}

async function queryPanels(prometheus: Prometheus, dashboard: Dashboard, start: number, end: number): Promise<RenderedPanel[]> {
  const rangeSeconds = Math.round(end - start);
  const panels: RenderedPanel[] = [];
  for (const panel of dashboard.panels) {
    const rendered: RenderedPanel = {
      id: panel.id,
      type: panel.type,
      title: panel.title,
      unit: panel.fieldConfig?.defaults?.unit ?? 'short',
      gridPos: panel.gridPos,
      exprs: [],
      series: [],
      errors: [],
    };
    const perTarget: string[] = [];
    for (const target of panel.targets ?? []) {
      if (!target.expr) continue;
      const expr = withLiterals(target.expr, rangeSeconds);
      rendered.exprs.push(expr);
      try {
        const matrix = await prometheus.api<Matrix>('query_range', {
          query: expr,
          start: String(start),
          end: String(end),
          step: `${STEP_SECONDS}s`,
        });
        for (const s of matrix.result) {
          rendered.series.push({
            label: legendOf(s.metric, target.legendFormat, expr),
            points: s.values.map(([t, v]) => {
              const n = Number(v);
              return [Math.round(t * 1000), Number.isFinite(n) ? n : null];
            }),
          });
        }
        perTarget.push(`${target.refId ?? '?'}: ${matrix.result.length} series`);
      } catch (err) {
        rendered.errors.push(`${target.refId ?? '?'}: ${(err as Error).message}`);
        perTarget.push(`${target.refId ?? '?'}: error`);
      }
    }
    const points = rendered.series.reduce((n, s) => n + s.points.filter(([, v]) => v !== null).length, 0);
    const verdict = points === 0 ? 'NO DATA' : `${rendered.series.length} series, ${points} points`;
    say(
      `  #${String(panel.id).padStart(2)} ${panel.title.padEnd(46)} ${panel.type.padEnd(10)} ${verdict.padEnd(24)} (${perTarget.join('; ')})${rendered.errors.length ? `  errors: ${rendered.errors.join('; ')}` : ''}`,
    );
    panels.push(rendered);
  }
  return panels;
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/**
 * The page's own script (runs in Chromium, beside Chart.js' UMD bundle): one chart per panel from
 * `window.DASHBOARD`, then `window.renderDone = true`.
 */
const PAGE_SCRIPT = String.raw`
const COLORS = ['#7eb26d', '#eab839', '#6ed0e0', '#ef843c', '#e24d42', '#1f78c1', '#ba43a9', '#705da0', '#508642', '#cca300'];
const short = (v) => {
  const a = Math.abs(v);
  if (a >= 1e6) return (v / 1e6).toPrecision(3) + ' M';
  if (a >= 1e3) return (v / 1e3).toPrecision(3) + ' K';
  if (a === 0 || a >= 100) return String(Math.round(v));
  return String(Number(v.toPrecision(3)));
};
const FORMAT = {
  short,
  s: (v) => (v === 0 ? '0 s' : Math.abs(v) < 1 ? short(v * 1000) + ' ms' : short(v) + ' s'),
  percentunit: (v) => Number((v * 100).toPrecision(3)) + '%',
};
const hhmm = (ms) => new Date(ms).toISOString().slice(11, 19);
const MINUTES = [];
for (let t = Math.ceil(window.DASHBOARD.start / 60000) * 60000; t <= window.DASHBOARD.end; t += 60000) MINUTES.push(t);
Chart.defaults.color = '#ccccdc';
Chart.defaults.borderColor = 'rgba(204, 204, 220, 0.12)';
Chart.defaults.font.family = 'Inter, Helvetica, Arial, sans-serif';
Chart.defaults.font.size = 12;
Chart.defaults.animation = false;

for (const panel of window.DASHBOARD.panels) {
  const body = document.getElementById('body-' + panel.id);
  const fmt = FORMAT[panel.unit] || short;
  const withData = panel.series.filter((s) => s.points.some((p) => p[1] !== null));
  if (withData.length === 0) {
    body.innerHTML = '<div class="nodata">No data</div>' +
      (panel.errors.length ? '<div class="error">' + panel.errors.join('<br>') + '</div>' : '');
    continue;
  }
  const datasets = withData.map((s, i) => ({
    label: s.label,
    data: s.points.map((p) => ({ x: p[0], y: p[1] })),
    borderColor: COLORS[i % COLORS.length],
    backgroundColor: COLORS[i % COLORS.length] + '22',
    borderWidth: 1.5, pointRadius: 0, fill: panel.type === 'stat', spanGaps: false, tension: 0,
  }));
  const xAxis = { type: 'linear', min: window.DASHBOARD.start, max: window.DASHBOARD.end,
    afterBuildTicks: (axis) => { axis.ticks = MINUTES.map((value) => ({ value })); },
    ticks: { callback: (v) => hhmm(v).slice(0, 5), maxRotation: 0, autoSkip: true }, grid: { display: panel.type !== 'stat' } };
  if (panel.type === 'stat') {
    const values = document.createElement('div');
    values.className = 'stat-values';
    for (const [i, s] of withData.entries()) {
      const last = [...s.points].reverse().find((p) => p[1] !== null)[1];
      values.insertAdjacentHTML('beforeend', '<div class="stat"><div class="stat-value" style="color:' + COLORS[i % COLORS.length] + '">' + fmt(last) + '</div>' +
        (withData.length > 1 ? '<div class="stat-label"></div>' : '') + '</div>');
      if (withData.length > 1) values.lastElementChild.querySelector('.stat-label').textContent = s.label;
    }
    body.appendChild(values);
    const spark = document.createElement('div');
    spark.className = 'spark';
    spark.appendChild(document.createElement('canvas'));
    body.appendChild(spark);
    new Chart(spark.firstChild, { type: 'line', data: { datasets },
      options: { maintainAspectRatio: false, plugins: { legend: { display: false } },
        scales: { x: { ...xAxis, display: false }, y: { display: false, beginAtZero: true } } } });
    continue;
  }
  const canvas = document.createElement('canvas');
  body.appendChild(canvas);
  new Chart(canvas, { type: 'line', data: { datasets },
    options: { maintainAspectRatio: false,
      plugins: { legend: { position: 'bottom', align: 'start', labels: { boxWidth: 14, boxHeight: 3, padding: 8 } } },
      scales: { x: xAxis, y: { beginAtZero: true, ticks: { callback: (v) => fmt(v), maxTicksLimit: 6 } } } } });
}
window.renderDone = true;
`;

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

function pageHtml(
  dashboard: Dashboard,
  panels: RenderedPanel[],
  range: { start: number; end: number },
  notes: string[],
  chartJs: string,
): string {
  const rows = Math.max(...panels.map((p) => p.gridPos.y + p.gridPos.h));
  const data = JSON.stringify({ start: range.start * 1000, end: range.end * 1000, panels }).replace(/</g, '\\u003c');
  const cells = panels
    .map(
      (
        p,
      ) => `<section class="panel" id="panel-${p.id}" style="grid-column:${p.gridPos.x + 1} / span ${p.gridPos.w};grid-row:${p.gridPos.y + 1} / span ${p.gridPos.h}">
  <header>${escapeHtml(p.title)}${p.unit !== 'short' ? ` <span class="unit">[${escapeHtml(p.unit)}]</span>` : ''}</header>
  <div class="body${p.type === 'stat' ? ' stat-body' : ''}" id="body-${p.id}"></div>
  <footer>${p.exprs.map(escapeHtml).join('<br>')}</footer>
</section>`,
    )
    .join('\n');
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(dashboard.title)}</title>
<style>
  body { margin: 0; padding: 16px; background: #111217; color: #ccccdc; font: 13px Inter, Helvetica, Arial, sans-serif; width: ${PAGE_WIDTH - 32}px; }
  h1 { font-size: 20px; font-weight: 500; margin: 0 0 4px; }
  .notes { color: #9fa1b0; font-size: 12px; margin-bottom: 12px; line-height: 1.5; }
  .grid { display: grid; grid-template-columns: repeat(24, 1fr); grid-template-rows: repeat(${rows}, ${ROW_PX}px); gap: ${GAP_PX}px; }
  .panel { background: #181b1f; border: 1px solid #2c3235; border-radius: 2px; display: flex; flex-direction: column; min-width: 0; overflow: hidden; }
  .panel header { padding: 6px 10px 2px; font-weight: 500; font-size: 14px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  .panel .unit { color: #9fa1b0; font-weight: 400; font-size: 12px; }
  .panel .body { flex: 1; position: relative; min-height: 0; padding: 4px 8px; display: flex; flex-direction: column; }
  .panel .body > canvas { flex: 1; min-height: 0; }
  .panel footer { padding: 2px 10px 6px; font: 10px 'DejaVu Sans Mono', monospace; color: #7b7f8e; overflow-wrap: anywhere; }
  .nodata { margin: auto; font-size: 18px; color: #9fa1b0; }
  .error { color: #f2495c; font-size: 11px; text-align: center; }
  .stat-values { flex: 1; display: flex; flex-wrap: wrap; align-items: center; justify-content: center; gap: 4px 24px; }
  .stat { text-align: center; }
  .stat-value { font-size: 44px; font-weight: 500; line-height: 1.1; }
  .stat-label { font-size: 12px; color: #9fa1b0; }
  .spark { height: 56px; position: relative; }
</style></head>
<body>
<h1>${escapeHtml(dashboard.title)}</h1>
<div class="notes">${notes.map(escapeHtml).join('<br>')}</div>
<div class="grid">
${cells}
</div>
<script>${chartJs}</script>
<script>window.DASHBOARD = ${data};</script>
<script>${PAGE_SCRIPT}</script>
</body></html>`;
}

async function renderPngs(html: string, panels: RenderedPanel[], workDir: string): Promise<string[]> {
  fs.writeFileSync(path.join(workDir, 'dashboard.html'), html);
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    pipe: true,
    userDataDir: path.join(workDir, 'chromium'),
    args: CHROMIUM_ARGS,
  });
  try {
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err instanceof Error ? err.message : String(err)));
    await page.setViewport({ width: PAGE_WIDTH, height: 1000, deviceScaleFactor: 1 });
    await page.setContent(html, { waitUntil: 'load' });
    await page.waitForFunction('window.renderDone === true', { timeout: 30_000 }).catch(() => {
      throw new Error(`the page did not finish drawing${pageErrors.length ? `: ${pageErrors.join('; ')}` : ''}`);
    });
    if (pageErrors.length) throw new Error(`the page failed: ${pageErrors.join('; ')}`);
    const written: string[] = [];
    fs.mkdirSync(OUTPUT_DIR, { recursive: true });
    const whole = path.join(OUTPUT_DIR, 'dashboard.png');
    await page.screenshot({ path: whole as `${string}.png`, fullPage: true });
    written.push(whole);
    const panelDir = path.join(OUTPUT_DIR, 'panels');
    fs.rmSync(panelDir, { recursive: true, force: true });
    fs.mkdirSync(panelDir, { recursive: true });
    for (const p of panels) {
      const element = await page.$(`#panel-${p.id}`);
      if (!element) throw new Error(`panel ${p.id} is not on the page`);
      const file = path.join(panelDir, `${String(p.id).padStart(2, '0')}-${slug(p.title)}.png`);
      await element.screenshot({ path: file as `${string}.png` });
      written.push(file);
    }
    return written;
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const dashboard = JSON.parse(fs.readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-render-'));
  let dev: ChildProcess | undefined;
  let prometheus: Prometheus | undefined;
  try {
    step('stack');
    if (await answers(`${BASE_URL}/readyz`)) say(`  reusing the API at ${BASE_URL}`);
    else dev = await startDevStack();
    await waitFor(`worker /readyz on :${WORKER_METRICS_PORT}`, () => answers(`http://127.0.0.1:${WORKER_METRICS_PORT}/readyz`), 120_000);
    const creds = JSON.parse(fs.readFileSync(path.join(ROOT, 'var', 'dev-credentials.json'), 'utf8')) as Credentials;
    const [first, second] = creds.accounts;
    if (!first || !second) throw new Error('var/dev-credentials.json lists fewer than two accounts (run npm run seed)');

    step('prometheus');
    prometheus = await Prometheus.start(workDir);
    const build = await prometheus.api<{ version: string }>('status/buildinfo');
    say(`  Prometheus ${build.version} at ${prometheus.url} (config and data in ${workDir}), scraping every ${SCRAPE_SECONDS} s`);
    const p = prometheus;
    await waitFor(
      'coi-api and coi-worker scraped up',
      async () => {
        const targets = await p.api<Targets>('targets');
        return ['coi-api', 'coi-worker'].every((job) => targets.activeTargets.some((t) => t.labels.job === job && t.health === 'up'));
      },
      60_000,
    );
    const rules = await prometheus.api<Rules>('rules');
    say(
      `  targets coi-api and coi-worker up; ${rules.groups.reduce((n, g) => n + g.rules.length, 0)} alert rules loaded from ${path.relative(ROOT, ALERTS_FILE)}`,
    );
    const start = Date.now() / 1000;
    await sleep(10_000); // a baseline before the traffic

    step(`traffic for ${TRAFFIC_SECONDS} s`);
    const deadline = Date.now() + TRAFFIC_SECONDS * 1000;
    const demos = { runs: 0, failed: 0, purchases: 0 };
    const statuses = new Map<string, number>();
    await Promise.all([
      demoLoop(deadline, path.join(workDir, 'demo-output'), demos),
      badInputLoop(deadline, first.testApiKey, statuses),
      rateLimitBurst(Date.now() + TRAFFIC_SECONDS * 250, second.testApiKey, statuses).then(() =>
        rateLimitBurst(Date.now() + Math.max(61, TRAFFIC_SECONDS * 0.4) * 1000, second.testApiKey, statuses),
      ),
    ]);
    const badInput = [...statuses.entries()]
      .sort()
      .map(([k, n]) => `${k}×${n}`)
      .join(', ');
    say(`  npm run demo ${demos.runs}× (${demos.failed} failed, ${demos.purchases} purchases paid); other requests by answer: ${badInput}`);
    await sleep(15_000); // let the last certificates, deliveries and scrapes land
    const end = Date.now() / 1000;

    step('query the panels');
    const panels = await queryPanels(prometheus, dashboard, start, end);
    const alertStates = (await prometheus.api<Rules>('rules')).groups.flatMap((g) =>
      g.rules.map((r) => `${r.name}=${r.state ?? r.health ?? '?'}`),
    );
    say(`  alert rules at the end: ${alertStates.join(', ')}`);

    step('render');
    const when = (s: number) => new Date(s * 1000).toISOString().replace('T', ' ').slice(0, 19);
    const notes = [
      `Not Grafana (not installable on this machine): ${path.relative(ROOT, DASHBOARD_FILE)} drawn by \`npm run dashboard:render\` (scripts/render-dashboard.ts) with Chart.js in headless Chromium, each panel's PromQL run through Prometheus' query_range.`,
      `Prometheus ${build.version} scraping a local \`npm run dev\` stack every ${SCRAPE_SECONDS} s (coi-api 127.0.0.1:${API_METRICS_PORT}, coi-worker 127.0.0.1:${WORKER_METRICS_PORT}, its SDK exporter, Temporal, postgres_exporter, the blackbox probes of ${BASE_URL}); window ${when(start)} – ${when(end)} UTC, step ${STEP_SECONDS} s.`,
      `Traffic: npm run demo ${demos.runs}× (${demos.purchases} purchases paid through the test helper, ${demos.failed} runs failed); bad input and two bursts over the per-key rate limit beside it: ${badInput}.`,
    ];
    const chartJs = fs.readFileSync(path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js'), 'utf8');
    const written = await renderPngs(pageHtml(dashboard, panels, { start, end }, notes, chartJs), panels, workDir);
    for (const file of written) say(`  ${path.relative(ROOT, file)}`);
    say(
      `\n✔ ${panels.length} panels, ${panels.filter((x) => !x.series.some((s) => s.points.some(([, v]) => v !== null))).length} without data`,
    );
  } finally {
    if (prometheus) {
      say('  stopping Prometheus');
      await prometheus.stop();
    }
    if (dev) await stopGroup(dev, 'the `npm run dev` this script started', 'SIGINT');
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`\n✘ dashboard render failed at step "${currentStep}": ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
