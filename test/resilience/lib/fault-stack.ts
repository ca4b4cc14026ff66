/**
 * The fault suite's own stack: PostgreSQL, Temporal, stripe-mock, fake-gcs-server, and the
 * project's API and worker(s) as separate processes (the same entry points as production:
 * `src/server.ts`, `src/worker.ts`), each on a port nothing else uses, so stopping one never
 * disturbs `npm run dev` or another test run. Its shape (`StackShape`): Temporal is the CLI's
 * dev server (persistent SQLite file) or the cluster (temporal-server on this stack's
 * PostgreSQL, databases `temporal` and `temporal_visibility`, schema set up at boot with
 * temporal-sql-tool, config from scripts/temporal-cluster-config.cjs), with one or more workers.
 *
 * Ports below are slot 0's; a stack of slot k adds 100·k to each (`portsFor`), so the suites of
 * `npm run test:resilience` run at the same time, each on a stack of its own.
 *
 * | process         | port            | state                                   |
 * |-----------------|-----------------|-----------------------------------------|
 * | postgres        | 54331           | `<dir>/pg` (initdb'd fresh each run)    |
 * | temporal        | 7243 (UI 8243; cluster: history 7244, matching 7245, worker 7249, membership 6243–6249) | dev: `<dir>/temporal.db`; cluster: PostgreSQL (both kept across restarts) |
 * | stripe-mock     | 12121 (+12122)  | stateless                               |
 * | processor gate  | 12123           | in the suite's process, in front of stripe-mock: PAYPROC_API_BASE (test/helpers/processor-gate.ts) |
 * | fake-gcs-server | 4453            | `<dir>/gcs` (kept across restarts)      |
 * | api             | 3101 (metrics 3111) | —                                   |
 * | worker(s)       | metrics 3112 + 2i, SDK exporter 3113 + 2i (worker i from 0) | — |
 * | temporal metrics | 9243           | the server's own (dev: --metrics-port; cluster: its config) |
 * | postgres_exporter | 9287          | stateless (Debian's prometheus-postgres-exporter)           |
 * | prometheus      | 9290            | `<dir>/prometheus` (fresh each run): scrapes all of the above every second (the API and workers up to every 4 s on a slow machine: lib/machine.ts) and evaluates ops/prometheus/alerts.yml |
 * | mail sink       | 3120            | in the suite's process: accepts and counts every message (lib/mail-sink.ts); SMTP_URL |
 *
 * PostgreSQL is Debian's server binary (`/usr/lib/postgresql/<version>/bin`), run as the
 * `postgres` OS user when this process is root (PostgreSQL refuses root). Logs go to
 * `var/log/resilience-<name>.log` (slot k > 0: `resilience-s<k>-<name>.log`).
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import knexFactory from 'knex';
import { ManagedProcess } from './processes';
import { startProcessorGate, type ProcessorGate } from '../../helpers/processor-gate';
import { startMailSink, type MailSink } from './mail-sink';
import { machineSpeed, scrapeSecondsFor } from './machine';
import searchAttributes from '../../../workflows/search-attributes.json';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { clusterConfigYaml, CLUSTER_DYNAMIC_CONFIG, devServerArgs } = require('../../../scripts/temporal-cluster-config.cjs') as {
  clusterConfigYaml(o: object): string;
  CLUSTER_DYNAMIC_CONFIG: string;
  devServerArgs(o: { host: string; port: number; uiPort: number; metricsPort: number; dbFile: string }): string[];
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { WORKER_NODE_ARGS } = require('../../../scripts/worker-runtime.cjs') as { WORKER_NODE_ARGS: readonly string[] };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { localPrometheusConfig, MONITORING_BINS } = require('../../../scripts/prometheus-config.cjs') as {
  localPrometheusConfig(o: object): object;
  MONITORING_BINS: { prometheus: string; postgresExporter: string };
};

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');
const HOST = '127.0.0.1';
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const TOOLS = path.join(ROOT, '.tools', 'bin');
const LOG_DIR = path.join(ROOT, 'var', 'log');

/** The ports of a stack (slot 0's are in the table above). */
export interface StackPorts {
  postgres: number;
  temporal: number;
  temporalUi: number;
  stripeMock: number;
  processorGate: number;
  fakeGcs: number;
  api: number;
  apiMetrics: number;
  /** Worker i (from 0) serves its metrics on workerMetrics + 2i and the SDK's on workerMetrics + 2i + 1. */
  workerMetrics: number;
  temporalMetrics: number;
  postgresExporter: number;
  prometheus: number;
  /** The stack's SMTP server, in the suite's process (lib/mail-sink.ts). */
  mailSink: number;
}
const SLOT_0: StackPorts = Object.freeze({
  postgres: 54331,
  temporal: 7243,
  temporalUi: 8243,
  stripeMock: 12121,
  processorGate: 12123,
  fakeGcs: 4453,
  api: 3101,
  apiMetrics: 3111,
  workerMetrics: 3112,
  temporalMetrics: 9243,
  postgresExporter: 9287,
  prometheus: 9290,
  mailSink: 3120,
});
/** At most this many workers per stack (their metrics ports stay below the next slot's). */
const MAX_WORKERS = 4;
/** Slots 0–4: every port + 100·slot (the cluster's other ports follow its frontend's). @throws {Error} for another slot. */
export function portsFor(slot: number): StackPorts {
  if (!Number.isInteger(slot) || slot < 0 || slot > 4) throw new Error(`fault stack slot must be 0–4, got ${slot}`);
  return Object.freeze(Object.fromEntries(Object.entries(SLOT_0).map(([k, v]) => [k, v + 100 * slot])) as unknown as StackPorts);
}
export const WEBHOOK_SECRET = 'whsec_resilience_suite_secret';
const SEARCH_ATTRIBUTES: Record<string, string> = searchAttributes;

/** Which Temporal the stack runs, how many worker processes, and on which ports (`slot`, default 0). */
export interface StackShape {
  temporal: 'dev' | 'cluster';
  workers: number;
  slot?: number;
}

export interface FaultStack {
  shape: StackShape;
  ports: StackPorts;
  postgres: ManagedProcess;
  temporal: ManagedProcess;
  stripeMock: ManagedProcess;
  /** In front of stripe-mock: the processor as the API and the worker reach it (it can hang). Listening once booted. */
  processorGate: ProcessorGate;
  /** Starts the stack's SMTP server (lib/mail-sink.ts) unless it runs; stopAll closes it. */
  startMailSink(): Promise<void>;
  fakeGcs: ManagedProcess;
  api: ManagedProcess;
  /** postgres_exporter on the stack's PostgreSQL (`pg_up`, for PostgresDown). */
  postgresExporter: ManagedProcess;
  /** Prometheus with the service's rules, scraping every process of the stack each second; started last, stopped first. */
  prometheus: ManagedProcess;
  /** Its HTTP API's base URL (`/api/v1/query_range` for the ALERTS series). */
  prometheusUrl: string;
  /** The first worker (`workers[0]`). */
  worker: ManagedProcess;
  /** Every worker process, each on both task queues. */
  workers: ManagedProcess[];
  /** The `instance` label Prometheus gives each worker's metrics target (job coi-worker), in the order of `workers`. */
  workerInstances: string[];
  /** Environment the API and worker run with (also what a test-side Container loads). */
  env: Record<string, string>;
  apiUrl: string;
  databaseUrl: string;
  storageUrl: string;
  bucket: string;
  /** Every log file of the stack (to scan for secrets). */
  logFiles: string[];
  stopAll(): Promise<void>;
}

type LazyGate = ProcessorGate & { start(): Promise<void> };

/** The processor gate, listening once `start()` is called (at boot, after the port check). */
function lazyGate(ports: StackPorts): LazyGate {
  let gate: ProcessorGate | null = null;
  const must = () => {
    if (!gate) throw new Error('the processor gate is not started');
    return gate;
  };
  return {
    url: `http://${HOST}:${ports.processorGate}`,
    async start() {
      gate ??= await startProcessorGate({ host: HOST, port: ports.processorGate, target: { host: HOST, port: ports.stripeMock } });
    },
    hang: () => must().hang(),
    open: () => must().open(),
    get held() {
      return gate?.held ?? 0;
    },
    get abandoned() {
      return gate?.abandoned ?? 0;
    },
    get requests() {
      return gate?.requests ?? [];
    },
    get unparsed() {
      return gate?.unparsed ?? 0;
    },
    async close() {
      await gate?.close();
      gate = null;
    },
  };
}

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: HOST });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function httpOk(url: string, init: RequestInit = {}): Promise<boolean> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * The newest Debian PostgreSQL server binaries directory.
 * @throws {Error} when no `/usr/lib/postgresql/<version>/bin/postgres` exists.
 */
export function postgresBinDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = fs.existsSync(base) ? fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'postgres'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error('the fault suite needs Debian PostgreSQL server binaries (/usr/lib/postgresql/<version>/bin/postgres)');
  return path.join(base, versions[0], 'bin');
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;
/** `cmd args` as the postgres OS user when root (PostgreSQL refuses to run as root). */
const asPostgres = (cmd: string, args: string[]): [string, string[]] =>
  isRoot() ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];

async function initPostgres(dataDir: string, logFile: string): Promise<void> {
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (isRoot()) await run('chown', ['postgres:postgres', dataDir]);
  const [cmd, args] = asPostgres(path.join(postgresBinDir(), 'initdb'), [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  const { stdout, stderr } = await run(cmd, args, { cwd: os.tmpdir() });
  fs.appendFileSync(logFile, stdout + stderr);
}

/** Runs the project's migrations (`tsx scripts/migrate.ts`) against `databaseUrl`. */
function migrate(databaseUrl: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(TSX, ['scripts/migrate.ts'], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`migrations failed (exit ${code}): ${out}`))));
  });
}

/** Runs one statement on the fault stack's PostgreSQL (database `postgres`) over a fresh connection. */
async function onPostgres(ports: StackPorts, sql: string): Promise<void> {
  const quiet = () => {}; // a refused probe is the expected answer while PostgreSQL is down
  const db = knexFactory({
    client: 'pg',
    connection: `postgres://postgres@${HOST}:${ports.postgres}/postgres`,
    pool: { min: 0, max: 1 },
    acquireConnectionTimeout: 2000,
    log: { warn: quiet, error: quiet, debug: quiet, deprecate: quiet },
  });
  try {
    await db.raw(sql);
  } finally {
    await db.destroy();
  }
}

/** Creates the `default` namespace (when missing) and the purchase search attributes on the cluster. */
async function setUpClusterNamespace(ports: StackPorts): Promise<void> {
  const cli = path.join(TOOLS, 'temporal');
  const address = ['--address', `${HOST}:${ports.temporal}`];
  try {
    await run(cli, ['operator', 'namespace', 'describe', '--namespace', 'default', ...address], { timeout: 10_000 });
  } catch {
    await run(cli, ['operator', 'namespace', 'create', '--namespace', 'default', '--retention', '72h', ...address], { timeout: 10_000 });
  }
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await run(cli, ['operator', 'namespace', 'describe', '--namespace', 'default', ...address], { timeout: 5000 });
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const args = ['operator', 'search-attribute', 'create', '--namespace', 'default', ...address];
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--name', name, '--type', type);
  // The namespace answers describe before every service's namespace cache knows it: retry.
  for (;;) {
    try {
      await run(cli, args, { timeout: 30_000 });
      return;
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr ?? '';
      if (/already exists/i.test(stderr)) return;
      if (!/not found/i.test(stderr) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Creates the cluster's databases on the stack's PostgreSQL and sets up their Temporal schema. */
async function setUpClusterSchema(ports: StackPorts, logFile: string): Promise<void> {
  // scripts/tools.mjs copies the server's SQL schema beside its binary (the link's target).
  const dir = path.join(path.dirname(fs.realpathSync(path.join(TOOLS, 'temporal-server'))), 'schema');
  for (const [db, kind] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    await onPostgres(ports, `create database ${db}`);
    const base = ['--plugin', 'postgres12', '--ep', HOST, '-p', String(ports.postgres), '-u', 'postgres', '--db', db];
    for (const step of [
      ['setup-schema', '-v', '0.0'],
      ['update-schema', '-d', path.join(dir, kind, 'versioned')],
    ]) {
      const { stdout, stderr } = await run(path.join(TOOLS, 'temporal-sql-tool'), [...base, ...step], { timeout: 120_000 });
      fs.appendFileSync(logFile, stdout + stderr);
    }
  }
}

async function temporalAnswers(ports: StackPorts): Promise<boolean> {
  if (!(await tcpOpen(ports.temporal))) return false;
  try {
    await run(
      path.join(TOOLS, 'temporal'),
      ['operator', 'namespace', 'describe', '--namespace', 'default', '--address', `${HOST}:${ports.temporal}`],
      { timeout: 5000 },
    );
    return true;
  } catch {
    return false;
  }
}

async function logSays(file: string, pattern: RegExp, fromByte: () => number): Promise<boolean> {
  const text = fs.readFileSync(file, 'utf8').slice(fromByte());
  return pattern.test(text);
}

/**
 * Creates the stack (nothing started yet) with state under `dir`.
 * `start`/`stop`/`kill` each process through its ManagedProcess; `startAll()` is `bootFaultStack`.
 */
export function createFaultStack(dir: string, shape: StackShape = { temporal: 'dev', workers: 1 }): FaultStack {
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const slot = shape.slot ?? 0;
  const ports = portsFor(slot);
  const logOf = (name: string) => path.join(LOG_DIR, `resilience-${slot ? `s${slot}-` : ''}${name}.log`);
  const bucket = 'certificates-resilience';
  const databaseUrl = `postgres://postgres@${HOST}:${ports.postgres}/insurance_resilience`;
  const apiUrl = `http://${HOST}:${ports.api}`;
  const storageUrl = `http://${HOST}:${ports.fakeGcs}`;
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    HOST,
    PORT: String(ports.api),
    PUBLIC_BASE_URL: apiUrl,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: `${HOST}:${ports.temporal}`,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: 'insurance-resilience',
    PAYPROC_API_BASE: `http://${HOST}:${ports.processorGate}`,
    PAYPROC_TEST_SECRET_KEY: 'sk_test_resilienceTestModeSecret',
    PAYPROC_LIVE_SECRET_KEY: 'sk_test_resilienceLiveModeSecret',
    PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET,
    // Production refuses the published development keys: keys of this suite's own.
    TEMPORAL_PAYLOAD_KEYS: `resilience-1:${Buffer.from('resilience-suite-payload-key-32b').toString('base64')}`,
    BUYER_EMAIL_HASH_KEY: 'resilience-suite-buyer-email-hash-key',
    WITHDRAWAL_LINK_KEY: 'resilience-suite-withdrawal-link-key-000',
    CERTIFICATE_SIGNING_KEYS: `resilience-cert-1:${Buffer.from('resilience-suite-certificate-key').toString('base64')}`,
    // A processor outage must answer quickly (503 CONNECTION_ERROR), not after the 20 s default.
    PAYPROC_TIMEOUT_MS: '5000',
    // Processor calls of a purchase workflow retry without an attempt limit; after a processor
    // outage (2 minutes, 10 in the full run) the next try comes within 30 s (the default cap is 300 s).
    PURCHASE_RETRY_MAX_INTERVAL_SECONDS: '30',
    STORAGE_API_ENDPOINT: storageUrl,
    STORAGE_BUCKET: bucket,
    // The load runs far above the spec's per-key rate (that limit has its own tests).
    RATE_LIMIT_PER_MINUTE: '1000000',
    BUYER_ACCESS_TOKEN_TTL_SECONDS: '86400',
    CHROMIUM_PATH: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    SMTP_URL: `smtp://${HOST}:${ports.mailSink}`,
    // The stack's own metrics ports (a dev stack may hold the defaults); each worker's are set below.
    METRICS_PORT: String(ports.apiMetrics),
    WORKER_METRICS_PORT: '0',
    WORKER_SDK_METRICS_ADDRESS: '',
  };
  if (shape.workers > MAX_WORKERS) throw new Error(`a fault stack runs at most ${MAX_WORKERS} workers, not ${shape.workers}`);
  const workerMetricsPort = (i: number) => ports.workerMetrics + 2 * i;
  const workerSdkAddress = (i: number) => `${HOST}:${ports.workerMetrics + 2 * i + 1}`;
  const childEnv = { ...process.env, ...env };
  const pgDir = path.join(dir, 'pg');

  const postgres = new ManagedProcess({
    name: 'postgres',
    ...(() => {
      const [cmd, args] = asPostgres(path.join(postgresBinDir(), 'postgres'), [
        '-D',
        pgDir,
        '-p',
        String(ports.postgres),
        '-k',
        pgDir,
        '-c',
        `listen_addresses=${HOST}`,
        '-c',
        'fsync=off',
        '-c',
        'max_connections=200',
      ]);
      return { cmd, args };
    })(),
    cwd: os.tmpdir(),
    logFile: logOf('postgres'),
    stopSignal: 'SIGINT', // fast shutdown: rolls back open transactions, closes connections
    ready: async () => {
      try {
        await onPostgres(ports, 'select 1');
        return true;
      } catch {
        return false;
      }
    },
  });
  // WAL and NORMAL sync: the dev server's default rollback journal syncs every history write,
  // which caps a loaded run at a few purchases per second on this disk.
  const temporalArgs = devServerArgs({
    host: HOST,
    port: ports.temporal,
    uiPort: ports.temporalUi,
    metricsPort: ports.temporalMetrics,
    dbFile: path.join(dir, 'temporal.db'),
  });
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) temporalArgs.push('--search-attribute', `${name}=${type}`);
  const clusterDir = path.join(dir, 'temporal-cluster');
  const temporal =
    shape.temporal === 'cluster'
      ? new ManagedProcess({
          name: 'temporal-server',
          cmd: path.join(TOOLS, 'temporal-server'),
          args: ['--config-file', path.join(clusterDir, 'config.yaml'), '--allow-no-auth', 'start'],
          cwd: clusterDir, // the dynamic config file is found in the working directory
          logFile: logOf('temporal-server'),
          // Ready once the frontend answers; the namespace is created at boot (setUpClusterNamespace).
          ready: async () => {
            if (!(await tcpOpen(ports.temporal))) return false;
            try {
              const { stdout } = await run(
                path.join(TOOLS, 'temporal'),
                ['operator', 'cluster', 'health', '--address', `${HOST}:${ports.temporal}`],
                { timeout: 5000 },
              );
              return stdout.includes('SERVING');
            } catch {
              return false;
            }
          },
        })
      : new ManagedProcess({
          name: 'temporal',
          cmd: path.join(TOOLS, 'temporal'),
          args: temporalArgs,
          logFile: logOf('temporal'),
          ready: () => temporalAnswers(ports),
        });
  if (shape.temporal === 'cluster') {
    fs.mkdirSync(clusterDir, { recursive: true });
    fs.writeFileSync(
      path.join(clusterDir, 'config.yaml'),
      clusterConfigYaml({
        pg: { host: HOST, port: ports.postgres, user: 'postgres', password: '' },
        databases: { main: 'temporal', visibility: 'temporal_visibility' },
        ports: {
          frontend: ports.temporal,
          frontendHttp: ports.temporal + 20,
          history: ports.temporal + 1,
          matching: ports.temporal + 2,
          worker: ports.temporal + 6,
          membership: ports.temporal - 1000,
          metrics: ports.temporalMetrics,
        },
        shards: 4,
      }),
    );
    fs.writeFileSync(path.join(clusterDir, 'dynamicconfig.yaml'), CLUSTER_DYNAMIC_CONFIG);
  }
  const stripeMock = new ManagedProcess({
    name: 'stripe-mock',
    cmd: path.join(TOOLS, 'stripe-mock'),
    args: ['-http-addr', `${HOST}:${ports.stripeMock}`, '-https-addr', `${HOST}:${ports.stripeMock + 1}`],
    logFile: logOf('stripe-mock'),
    ready: () => httpOk(`http://${HOST}:${ports.stripeMock}/v1/products?limit=1`, { headers: { Authorization: 'Bearer sk_test_123' } }),
  });
  const fakeGcs = new ManagedProcess({
    name: 'fake-gcs-server',
    cmd: path.join(TOOLS, 'fake-gcs-server'),
    args: [
      '-scheme',
      'http',
      '-host',
      HOST,
      '-port',
      String(ports.fakeGcs),
      '-backend',
      'filesystem',
      '-filesystem-root',
      path.join(dir, 'gcs'),
      '-public-host',
      `${HOST}:${ports.fakeGcs}`,
      '-external-url',
      storageUrl,
      '-log-level',
      'warn',
    ],
    logFile: logOf('fake-gcs-server'),
    ready: () => httpOk(`${storageUrl}/storage/v1/b`),
  });
  const api = new ManagedProcess({
    name: 'api',
    cmd: TSX,
    args: ['src/server.ts'],
    cwd: ROOT,
    env: childEnv,
    logFile: logOf('api'),
    ready: () => httpOk(`${apiUrl}/healthz`),
  }); // /readyz also waits for a polling worker, started beside it
  const workers = Array.from({ length: shape.workers }, (_, i) => {
    const name = shape.workers === 1 ? 'worker' : `worker-${i + 1}`;
    let logStart = 0;
    const worker = new ManagedProcess({
      name,
      cmd: TSX,
      args: [...WORKER_NODE_ARGS, 'src/worker.ts'],
      cwd: ROOT,
      env: { ...childEnv, WORKER_METRICS_PORT: String(workerMetricsPort(i)), WORKER_SDK_METRICS_ADDRESS: workerSdkAddress(i) },
      logFile: logOf(name),
      readyTimeoutMs: 180_000, // bundling the workflows takes a while on a loaded machine
      ready: async () => logSays(logOf(name), /"msg":"worker running"/, () => logStart),
    });
    const startWorker = worker.start.bind(worker);
    worker.start = async () => {
      logStart = fs.existsSync(logOf(name)) ? fs.statSync(logOf(name)).size : 0;
      await startWorker();
    };
    return worker;
  });

  const exporterDsn = `postgres://postgres@${HOST}:${ports.postgres}/postgres?sslmode=disable`;
  const postgresExporter = new ManagedProcess({
    name: 'postgres-exporter',
    cmd: MONITORING_BINS.postgresExporter,
    args: [`--web.listen-address=${HOST}:${ports.postgresExporter}`],
    env: { ...process.env, DATA_SOURCE_NAME: exporterDsn },
    logFile: logOf('postgres-exporter'),
    ready: () => httpOk(`http://${HOST}:${ports.postgresExporter}/metrics`),
  });
  const prometheusDir = path.join(dir, 'prometheus');
  const prometheusUrl = `http://${HOST}:${ports.prometheus}`;
  fs.rmSync(prometheusDir, { recursive: true, force: true });
  fs.mkdirSync(path.join(prometheusDir, 'data'), { recursive: true });
  const prometheusConfig = localPrometheusConfig({
    api: [`${HOST}:${ports.apiMetrics}`],
    workers: workers.map((_, i) => `${HOST}:${workerMetricsPort(i)}`),
    workerSdk: workers.map((_, i) => workerSdkAddress(i)),
    temporal: [`${HOST}:${ports.temporalMetrics}`],
    postgresExporter: `${HOST}:${ports.postgresExporter}`,
    alertmanager: null, // the suite reads the ALERTS series; nobody is notified
    scrapeInterval: '1s', // a 5 s outage is seen by several scrapes and evaluations
    // The API and workers: longer on a slow machine, where a busy process misses a one-second deadline (lib/machine.ts).
    serviceScrapeInterval: `${scrapeSecondsFor(machineSpeed())}s`,
  });
  fs.writeFileSync(path.join(prometheusDir, 'prometheus.yml'), `${JSON.stringify(prometheusConfig, null, 2)}\n`);
  const prometheus = new ManagedProcess({
    name: 'prometheus',
    cmd: MONITORING_BINS.prometheus,
    args: [
      `--config.file=${path.join(prometheusDir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(prometheusDir, 'data')}`,
      `--web.listen-address=${HOST}:${ports.prometheus}`,
    ],
    logFile: logOf('prometheus'),
    ready: () => httpOk(`${prometheusUrl}/-/ready`),
  });

  const processes = [prometheus, ...workers, api, fakeGcs, stripeMock, temporal, postgresExporter, postgres];
  const gate = lazyGate(ports);
  let mail: MailSink | null = null;
  return {
    shape,
    ports,
    postgres,
    temporal,
    stripeMock,
    processorGate: gate,
    fakeGcs,
    api,
    postgresExporter,
    prometheus,
    prometheusUrl,
    worker: workers[0]!,
    workers,
    workerInstances: workers.map((_, i) => `${HOST}:${workerMetricsPort(i)}`),
    env,
    apiUrl,
    databaseUrl,
    storageUrl,
    bucket,
    logFiles: processes.map((p) => p.spec.logFile),
    async stopAll() {
      for (const p of processes) await p.stop();
      await gate.close();
      await mail?.close();
      mail = null;
    },
    async startMailSink() {
      mail ??= await startMailSink({ host: HOST, port: ports.mailSink });
    },
  };
}

/**
 * Starts every server of `stack` from nothing (after checking that none of its ports answers): a fresh PostgreSQL cluster with the project's
 * migrations, Temporal (fresh SQLite file), stripe-mock, fake-gcs-server with the bucket, then
 * the API and the worker. Log files are truncated first.
 * @throws {Error} naming the process that did not come up.
 */
export async function bootFaultStack(stack: FaultStack, dir: string): Promise<void> {
  const taken = [];
  for (const [name, port] of Object.entries(stack.ports)) if (await tcpOpen(port)) taken.push(`${name} ${port}`);
  if (taken.length) throw new Error(`the fault stack's ports are taken (${taken.join(', ')}): is another fault suite running?`);
  try {
    await boot(stack, dir);
  } catch (err) {
    await stack.stopAll(); // nothing left running on the suite's ports
    throw err;
  }
}

async function boot(stack: FaultStack, dir: string): Promise<void> {
  for (const file of stack.logFiles) fs.writeFileSync(file, '');
  fs.rmSync(path.join(dir, 'temporal.db'), { force: true });
  fs.rmSync(path.join(dir, 'gcs'), { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'gcs'), { recursive: true });
  await initPostgres(path.join(dir, 'pg'), stack.postgres.spec.logFile);
  await (stack.processorGate as LazyGate).start();
  await stack.startMailSink();
  if (stack.shape.temporal === 'cluster') {
    // The cluster keeps its state in this stack's PostgreSQL: schema first, then the server.
    await Promise.all([stack.postgres.start(), stack.stripeMock.start(), stack.fakeGcs.start()]);
    await setUpClusterSchema(stack.ports, stack.temporal.spec.logFile);
    await stack.temporal.start();
    await setUpClusterNamespace(stack.ports);
  } else {
    await Promise.all([stack.postgres.start(), stack.temporal.start(), stack.stripeMock.start(), stack.fakeGcs.start()]);
  }
  await onPostgres(stack.ports, 'create database insurance_resilience');
  await migrate(stack.databaseUrl);
  const created = await fetch(`${stack.storageUrl}/storage/v1/b?project=local-project`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: stack.bucket }),
  });
  if (!created.ok) throw new Error(`bucket ${stack.bucket}: HTTP ${created.status}`);
  await Promise.all([stack.api.start(), ...stack.workers.map((w) => w.start()), stack.postgresExporter.start()]);
  await stack.prometheus.start();
}
