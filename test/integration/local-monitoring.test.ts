/**
 * The local monitoring of `npm run dev` (scripts/stack.mjs: `localPrometheusConfig`,
 * `ensurePrometheus`, `ensureAlertmanager`, `ensurePostgresExporter`, `ensureBlackboxExporter`) with the real servers from
 * Debian's packages: Prometheus loads every rule of ops/prometheus/alerts.yml, scrapes the jobs
 * the rules select, finds the Alertmanager running ops/alertmanager/alertmanager.yml, and
 * evaluates: postgres_exporter reaches the test PostgreSQL (`pg_up` 1), an API that does not
 * answer its scrape makes ApiDown pending, the blackbox exporter probes a public API's /healthz and
 * each check of its /readyz (an HTTP server here answering workers false: ReadinessCheckFailing
 * pending for that check alone), and the always-firing Watchdog reaches the dead-man's
 * switch (an HTTP receiver here, its URL given as DEADMANS_SWITCH_URL would be) through Alertmanager. Run in a child Node process (stack.mjs is an ES module),
 * on free ports, stopped at the end.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { freePort } from '../helpers/ports';
import { eventually } from '../helpers/worker';
import { ROOT } from '../helpers/run';

jest.setTimeout(120_000);

let child: ChildProcess | undefined;
let dir: string;
let urls: { prometheus: string; alertmanager: string; exporter: string };
/** The dead-man's switch: each notification Alertmanager POSTs to it. */
let deadmansSwitch: http.Server;
/** A public API as the probes see it: healthy, and not ready for want of a worker. */
let publicApi: http.Server;
const heartbeats: Array<{ receiver: string; alerts: Array<{ labels: Record<string, string> }> }> = [];

const api = async <T>(path_: string): Promise<T> => ((await (await fetch(`${urls.prometheus}${path_}`)).json()) as { data: T }).data;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitoring-'));
  deadmansSwitch = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      heartbeats.push(JSON.parse(body));
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => deadmansSwitch.listen(0, '127.0.0.1', resolve));
  const deadmansSwitchUrl = `http://127.0.0.1:${(deadmansSwitch.address() as AddressInfo).port}/ping/coi`;
  publicApi = http.createServer((req, res) => {
    const ready = req.url === '/healthz';
    res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ready ? { status: 'ok' } : { status: 'not_ready', checks: { database: true, temporal: true, workers: false } }));
  });
  await new Promise<void>((resolve) => publicApi.listen(0, '127.0.0.1', resolve));
  const publicApiUrl = `http://127.0.0.1:${(publicApi.address() as AddressInfo).port}`;
  const [prometheusPort, alertmanagerPort, exporterPort, closedPort, blackboxPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const script = `
    const s = await import(${JSON.stringify(path.join(ROOT, 'scripts', 'stack.mjs'))});
    const env = process.env;
    const log = (line) => process.stderr.write(line + '\\n');
    const [alertmanager, exporter] = await Promise.all([
      s.ensureAlertmanager({ port: Number(env.AM_PORT), dir: env.DIR + '/alertmanager', deadmansSwitchUrl: env.DEADMANS_SWITCH_URL, log }),
      s.ensurePostgresExporter({ databaseUrl: env.DATABASE_URL, port: Number(env.EXPORTER_PORT), log }),
      s.ensureBlackboxExporter({ port: Number(env.BLACKBOX_PORT), log }),
    ]);
    const closed = '127.0.0.1:' + env.CLOSED_PORT;
    const config = s.localPrometheusConfig({
      api: [closed], workers: [closed], workerSdk: [closed], temporal: [closed],
      postgresExporter: '127.0.0.1:' + env.EXPORTER_PORT, alertmanager: '127.0.0.1:' + env.AM_PORT, scrapeInterval: '1s',
      blackbox: '127.0.0.1:' + env.BLACKBOX_PORT, publicApis: [env.PUBLIC_API_URL],
    });
    const prometheus = await s.ensurePrometheus({ port: Number(env.PROM_PORT), config, dir: env.DIR + '/prometheus', log });
    process.stdout.write(JSON.stringify({ prometheus: prometheus.url, alertmanager: alertmanager.url, exporter: exporter.url }) + '\\n');
    process.on('SIGTERM', async () => { await s.stopAll({ log }); process.exit(0); });
    setInterval(() => {}, 1 << 30);
  `;
  child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: {
      ...process.env,
      DIR: dir,
      PROM_PORT: String(prometheusPort),
      AM_PORT: String(alertmanagerPort),
      EXPORTER_PORT: String(exporterPort),
      CLOSED_PORT: String(closedPort),
      BLACKBOX_PORT: String(blackboxPort),
      PUBLIC_API_URL: publicApiUrl,
      DEADMANS_SWITCH_URL: deadmansSwitchUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child!.stdout! }).once('line', resolve);
    child!.once('exit', (code) => reject(new Error(`monitoring did not start (exit ${code}): ${stderr}`)));
  });
  urls = JSON.parse(line);
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await new Promise((resolve) => deadmansSwitch.close(resolve));
  await new Promise((resolve) => publicApi.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('when the local Prometheus starts, then it has loaded every alert and recording rule of ops/prometheus/alerts.yml', async () => {
  const { groups } = await api<{ groups: Array<{ name: string; rules: Array<{ name: string; type: string }> }> }>('/api/v1/rules');
  const rules = groups.flatMap((g) => g.rules);
  expect(rules.filter((r) => r.type === 'alerting').map((r) => r.name)).toEqual(
    expect.arrayContaining(['ApiDown', 'PostgresDown', 'TemporalDown', 'PaidPurchaseWithoutCertificates', 'CertificatesSloBurnFast']),
  );
  // Every rule the file holds (24 alerts and 20 recorded series today), counted from the file.
  const inFile = fs.readFileSync(path.join(ROOT, 'ops/prometheus/alerts.yml'), 'utf8').match(/^\s*- (?:alert|record): /gm) ?? [];
  expect(inFile.length).toBeGreaterThan(40);
  expect(rules).toHaveLength(inFile.length);
});

test('when it scrapes, then postgres_exporter reports the real PostgreSQL up, and every job the rules select is a target', async () => {
  const pgUp = await eventually(async () => {
    const { result } = await api<{ result: Array<{ value: [number, string] }> }>('/api/v1/query?query=pg_up%7Bjob%3D%22postgres%22%7D');
    return result[0]?.value[1];
  }, 60_000);
  expect(pgUp).toBe('1');
  const { activeTargets } = await api<{ activeTargets: Array<{ labels: { job: string } }> }>('/api/v1/targets');
  expect([...new Set(activeTargets.map((t) => t.labels.job))].sort()).toEqual([
    'coi-api',
    'coi-probe',
    'coi-worker',
    'coi-worker-sdk',
    'postgres',
    'temporal',
  ]);
});

test('when the API does not answer its scrape, then ApiDown is pending, and Prometheus sends to the running Alertmanager', async () => {
  const state = await eventually(async () => {
    const { alerts } = await api<{ alerts: Array<{ labels: { alertname: string }; state: string }> }>('/api/v1/alerts');
    return alerts.find((a) => a.labels.alertname === 'ApiDown')?.state;
  }, 60_000);
  expect(state).toBe('pending'); // `for: 2m`: firing would take two minutes
  const { activeAlertmanagers } = await api<{ activeAlertmanagers: Array<{ url: string }> }>('/api/v1/alertmanagers');
  expect(activeAlertmanagers.map((a) => new URL(a.url).origin)).toEqual([urls.alertmanager]);
  expect((await fetch(`${urls.alertmanager}/-/ready`)).status).toBe(200);
});

test('when the blackbox exporter probes a public API that is healthy but has no worker, then each check reads on its own and only ReadinessCheckFailing{check="workers"} is pending', async () => {
  const byCheck = await eventually(async () => {
    const { result } = await api<{ result: Array<{ metric: { check: string }; value: [number, string] }> }>(
      `/api/v1/query?query=${encodeURIComponent('probe_success{job="coi-probe"}')}`,
    );
    return result.length === 4 ? Object.fromEntries(result.map((r) => [r.metric.check, r.value[1]])) : null;
  }, 60_000);
  expect(byCheck).toEqual({ live: '1', database: '1', temporal: '1', workers: '0' });
  const probeAlerts = await eventually(async () => {
    const { alerts } = await api<{ alerts: Array<{ labels: Record<string, string>; state: string }> }>('/api/v1/alerts');
    const seen = alerts.filter((a) => ['ReadinessCheckFailing', 'ApiHealthCheckFailing', 'ProbesMissing'].includes(a.labels.alertname!));
    // ProbesMissing is pending from the rules' evaluation before the first probe was scraped until
    // the next one: the probe alerts are read once that evaluation has seen the probes.
    if (!seen.length || seen.some((a) => a.labels.alertname === 'ProbesMissing')) return null;
    return seen.map((a) => `${a.labels.alertname}{check="${a.labels.check}"} ${a.state}`);
  }, 60_000);
  expect(probeAlerts).toEqual(['ReadinessCheckFailing{check="workers"} pending']); // `for: 2m`
});

test('when amtool checks the Alertmanager configuration, then it is valid, with a route for pages and one for tickets', () => {
  const run = spawnSync('amtool', ['check-config', path.join(ROOT, 'ops', 'alertmanager', 'alertmanager.yml')], { encoding: 'utf8' });
  expect(`${run.stdout}${run.stderr}`).toContain('SUCCESS');
  expect(run.stdout).toContain('3 receivers');
  const routed = spawnSync(
    'amtool',
    ['config', 'routes', 'test', '--config.file', path.join(ROOT, 'ops', 'alertmanager', 'alertmanager.yml'), 'severity=page'],
    { encoding: 'utf8' },
  );
  expect(routed.stdout.trim()).toBe('page');
  const ticket = spawnSync(
    'amtool',
    ['config', 'routes', 'test', '--config.file', path.join(ROOT, 'ops', 'alertmanager', 'alertmanager.yml'), 'severity=ticket'],
    { encoding: 'utf8' },
  );
  expect(ticket.stdout.trim()).toBe('ticket');
});

test('when Prometheus evaluates the Watchdog, then Alertmanager sends it to the dead-man’s switch at DEADMANS_SWITCH_URL (the heartbeat whose silence pages)', async () => {
  // Prometheus fires it at its first evaluation, but that first send is lost while its notifier has
  // not yet discovered the Alertmanager; it is sent again after
  // --rules.alert.resend-delay (1 minute): about 60 s after Prometheus starts (measured 61-65 s).
  const heartbeat = (await eventually(
    async () => heartbeats.find((h) => h.alerts.some((a) => a.labels.alertname === 'Watchdog')) ?? null,
    100_000,
  ))!;
  expect(heartbeat.receiver).toBe('deadmans-switch');
  expect(heartbeat.alerts.map((a) => a.labels.alertname)).toEqual(['Watchdog']);
  expect(heartbeat.alerts[0]!.labels).toMatchObject({ severity: 'heartbeat' });
  // Nothing else reaches it: ApiDown (pending, then firing) goes to page.
  expect(heartbeats.flatMap((h) => h.alerts.map((a) => a.labels.alertname))).not.toContain('ApiDown');
}, 110_000);
