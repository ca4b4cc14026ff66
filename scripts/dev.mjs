#!/usr/bin/env node
/**
 * `npm run dev`: the whole service on this machine, with real servers.
 *
 *   1. `npm ci` when node_modules is missing or older than package-lock.json
 *   2. pinned Go tools (scripts/tools.mjs), Chromium (apt-get when root)
 *   3. PostgreSQL, Temporal dev server, stripe-mock, fake-gcs-server, SMTP sink (scripts/stack.mjs;
 *      servers already running are reused and left running)
 *   4. migrations, seed (two accounts with live and test keys)
 *   5. the local identity provider (scripts/local-idp.mjs on :3100, LOCAL_IDP_PORT) with the seeded
 *      teammates and their passwords, for the agency portal at <API>/portal (unless
 *      PORTAL_OIDC_ISSUER names another provider), then the API (`[api]`) and the Temporal worker
 *      (`[worker]`), until Ctrl-C; their output is also written to var/log/<name>.log
 *   6. monitoring: Prometheus (:9090, the rules of ops/prometheus/alerts.yml, scraping every
 *      process above, the Temporal server, postgres_exporter :9187 and blackbox_exporter :9115,
 *      which probes the API's /healthz and /readyz) and Alertmanager (:9093),
 *      from Debian's packages (apt-get when root; `DEV_MONITORING=0` leaves them out)
 *
 * Writes var/dev-credentials.json (base URL, keys, webhook secret, service URLs, portal sign-ins).
 * Ctrl-C or SIGTERM stops what it started and exits 0; a failed step prints one line, stops
 * what was started and exits 1.
 *
 *   node scripts/dev.mjs --check    # (or DEV_EXIT_AFTER_READY=1) start, print the summary, stop
 *   node scripts/dev.mjs --cluster  # the real Temporal server on PostgreSQL (127.0.0.1:7633, UI
 *                                   # :8633) instead of the CLI's dev server
 *   node scripts/dev.mjs --api 2 --workers 2
 *                                   # two API processes (:3001, :3002; metrics :9470, :9471) behind
 *                                   # a round-robin front on PORT (scripts/balancer.mjs) sharing the
 *                                   # Redis rate limiter (REDIS_URL, default redis://127.0.0.1:6379),
 *                                   # and two workers on both task queues (metrics :9480, :9481,
 *                                   # SDK :9490, :9491)
 *
 * Needs nothing but Node to start: npm packages are loaded only after step 1. The project runs on
 * the exact Node of package.json's `node` dev dependency (node_modules/.bin/node, first on the
 * path of every npm script); started on another Node, this runs itself again on that one after
 * step 1, and its children find it first on their path.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ensureTools } from './tools.mjs';
import workerRuntime from './worker-runtime.cjs';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const VAR_DIR = path.join(REPO_ROOT, 'var');
const CHECK = process.argv.includes('--check') || process.env.DEV_EXIT_AFTER_READY === '1';
const CLUSTER = process.argv.includes('--cluster');
const MONITORING = process.env.DEV_MONITORING !== '0';

/** `--name N` (1–8), default 1. */
function countArg(name) {
  const i = process.argv.indexOf(name);
  if (i === -1) return 1;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 1 || n > 8) {
    process.stderr.write(`[dev] FAILED: ${name} takes a number from 1 to 8, got "${process.argv[i + 1] ?? ''}"\n`);
    process.exit(1);
  }
  return n;
}
const API_COUNT = countArg('--api');
const WORKER_COUNT = countArg('--workers');
const TTY = process.stdout.isTTY;
const color = (code, s) => (TTY ? `\x1b[${code}m${s}\x1b[0m` : s);
const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;

const say = (line) => process.stdout.write(`${color('1', '[dev]')} ${line}\n`);
const log = (line) => process.stdout.write(`${line}\n`);

class StepError extends Error {}

/** @type {null | typeof import('./stack.mjs')} */
let stack = null;
/** The load-balancing front when several API processes run. */
let balancer = null;
let stopping = false;
let signals = 0;

async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  if (balancer) await balancer.close();
  if (stack) {
    const names = stack.startedNames();
    if (names.length) say(`stopping ${names.join(', ')}…`);
    await stack.stopAll({ log });
  }
  if (code === 0) say('stopped');
  process.exit(code);
}

function onSignal(signal) {
  signals += 1;
  if (signals === 1) {
    process.stdout.write('\n');
    say(`${signal}: shutting down`);
    void shutdown(0);
  } else if (signals === 2) {
    say('still stopping (servers get SIGKILL after 5 s); press Ctrl-C again to abandon them');
  } else {
    process.exit(130);
  }
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

function fail(message) {
  if (stopping) return;
  process.stderr.write(`${color('31', '[dev] FAILED:')} ${message}\n`);
  void shutdown(1);
}

/** Runs a command to completion; its output lines are prefixed. Resolves to `{ code, stdout }`. */
function runCommand(prefix, cmd, args, { env = process.env, captureStdout = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    if (captureStdout) child.stdout.on('data', (d) => (stdout += d));
    else readline.createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (l) => log(`${prefix} ${l}`));
    readline.createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (l) => log(`${prefix} ${l}`));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout }));
  });
}

// ---------------------------------------------------------------------------------------------

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

async function ensureDependencies() {
  const lockFile = path.join(REPO_ROOT, 'package-lock.json');
  const nodeModules = path.join(REPO_ROOT, 'node_modules');
  const stamp = path.join(nodeModules, '.dev-lock-sha256');
  const lockHash = crypto.createHash('sha256').update(fs.readFileSync(lockFile)).digest('hex');
  const hidden = mtime(path.join(nodeModules, '.package-lock.json')); // written by every npm install
  const tsx = fs.existsSync(path.join(nodeModules, '.bin', 'tsx'));
  let stale = !tsx || hidden === null;
  if (!stale) {
    const stamped = fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8').trim() === lockHash;
    // npm writes node_modules/.package-lock.json a moment before package-lock.json
    stale = !stamped && hidden + 5000 < mtime(lockFile);
  }
  if (stale) {
    say(`installing dependencies: npm ci ${fs.existsSync(nodeModules) ? '(node_modules is older than package-lock.json)' : ''}`);
    const { code } = await runCommand('[npm]', 'npm', ['ci', '--no-audit', '--no-fund']);
    if (code !== 0) throw new StepError(`npm ci failed (exit ${code})`);
  }
  fs.writeFileSync(stamp, `${lockHash}\n`);
}

async function ensureChromium() {
  const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (fs.existsSync(chromium)) return chromium;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || chromium !== '/usr/bin/chromium') {
    say(
      color('33', `warning: no Chromium at ${chromium}; certificate PDFs will fail (install Debian's \`chromium\` or set CHROMIUM_PATH)`),
    );
    return chromium;
  }
  say('installing Chromium: apt-get install chromium');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'chromium']]) {
    const { code } = await runCommand('[apt]', 'apt-get', args, { env });
    if (code !== 0) throw new StepError(`apt-get ${args[0]} failed (exit ${code})`);
  }
  return chromium;
}

/**
 * Debian's Prometheus, Alertmanager and postgres_exporter for the local monitoring (step 6):
 * installed with apt-get when missing and this runs as root; otherwise a warning, and false
 * (the stack runs without them).
 */
async function ensureMonitoringPackages(bins) {
  const missing = Object.entries({
    prometheus: bins.prometheus,
    'prometheus-alertmanager': bins.alertmanager,
    'prometheus-postgres-exporter': bins.postgresExporter,
    'prometheus-blackbox-exporter': bins.blackboxExporter,
  })
    .filter(([, file]) => !fs.existsSync(file))
    .map(([pkg]) => pkg);
  if (missing.length === 0) return true;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    say(color('33', `warning: no local monitoring (missing Debian packages: ${missing.join(' ')}; install them as root)`));
    return false;
  }
  say(`installing monitoring: apt-get install ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...missing]]) {
    const { code } = await runCommand('[apt]', 'apt-get', args, { env });
    if (code !== 0) throw new StepError(`apt-get ${args[0]} failed (exit ${code})`);
  }
  return true;
}

function webhookSecret() {
  if (process.env.PAYPROC_WEBHOOK_SECRET) return process.env.PAYPROC_WEBHOOK_SECRET;
  const file = path.join(VAR_DIR, 'webhook-secret');
  try {
    const value = fs.readFileSync(file, 'utf8').trim();
    if (value.startsWith('whsec_')) return value;
  } catch {
    /* first run */
  }
  const value = `whsec_${crypto.randomBytes(24).toString('hex')}`;
  fs.writeFileSync(file, `${value}\n`, { mode: 0o600 });
  return value;
}

/**
 * The operators' codec secrets of the local stack, kept in var/codec-secrets.json so that a
 * Temporal server left running (whose UI was started with the UI key in its codec endpoint) and
 * commands copied from an earlier banner keep working: `token` (TEMPORAL_CODEC_TOKEN, the CLI's
 * bearer token) and `uiKey` (TEMPORAL_CODEC_UI_KEY, in the UI's codec endpoint URL). Values set
 * in the environment win.
 */
function codecSecrets() {
  const file = path.join(VAR_DIR, 'codec-secrets.json');
  let saved = {};
  try {
    saved = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    /* first run */
  }
  const fresh = () => crypto.randomBytes(24).toString('base64url');
  const valid = (v) => typeof v === 'string' && /^[A-Za-z0-9_-]{24,}$/.test(v);
  const secrets = {
    token: process.env.TEMPORAL_CODEC_TOKEN || (valid(saved.token) ? saved.token : fresh()),
    uiKey: process.env.TEMPORAL_CODEC_UI_KEY || (valid(saved.uiKey) ? saved.uiKey : fresh()),
  };
  if (secrets.token !== saved.token || secrets.uiKey !== saved.uiKey)
    fs.writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}

/**
 * The portal's secrets for the local stack, kept in var/portal-secrets.json so sessions and the
 * teammates' passwords survive a restart: the client secret shared with the local identity
 * provider, the session cookie's key, and one password per teammate (by idp_teammate_uuid).
 */
function portalSecrets(teammates) {
  const file = path.join(VAR_DIR, 'portal-secrets.json');
  let saved = {};
  try {
    saved = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    /* first run */
  }
  const fresh = (n) => crypto.randomBytes(n).toString('base64url');
  const secrets = {
    clientSecret: typeof saved.clientSecret === 'string' && saved.clientSecret.length >= 24 ? saved.clientSecret : fresh(24),
    sessionKey: typeof saved.sessionKey === 'string' && saved.sessionKey.length >= 32 ? saved.sessionKey : fresh(32),
    passwords: { ...(saved.passwords ?? {}) },
  };
  for (const t of teammates) secrets.passwords[t.idpTeammateUuid] ??= `${t.email.split('@')[0]}-${fresh(6)}`;
  fs.writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  return secrets;
}

/**
 * Starts the local OpenID Provider for the portal with the seeded teammates (unless
 * PORTAL_OIDC_ISSUER names another provider) and returns what the API needs, or null.
 */
async function startPortalIdentityProvider(seed, baseUrl, host) {
  if (process.env.PORTAL_OIDC_ISSUER) return null;
  const teammates = seed.accounts.flatMap((a) => (a.teammates ?? []).map((t) => ({ ...t, slug: a.slug })));
  const secrets = portalSecrets(teammates);
  const idpPort = Number(process.env.LOCAL_IDP_PORT || 3100);
  if (!(await portFree(idpPort, host))) {
    throw new StepError(`port ${idpPort} (local identity provider) is already in use; stop what uses it or set LOCAL_IDP_PORT`);
  }
  const usersFile = path.join(VAR_DIR, 'local-idp-users.json');
  const users = teammates.map((t) => ({
    sub: t.idpTeammateUuid,
    email: t.email,
    name: t.name,
    password: secrets.passwords[t.idpTeammateUuid],
  }));
  fs.writeFileSync(usersFile, `${JSON.stringify(users, null, 2)}\n`, { mode: 0o600 });
  const issuer = `http://${host}:${idpPort}`;
  const entry = stack.spawnTracked(
    'local-idp',
    process.execPath,
    [
      path.join(REPO_ROOT, 'scripts', 'local-idp.mjs'),
      '--host',
      host,
      '--port',
      String(idpPort),
      '--users',
      usersFile,
      '--client-secret',
      secrets.clientSecret,
      '--redirect-uri',
      `${baseUrl}/portal/callback`,
      '--post-logout-redirect-uri',
      `${baseUrl}/portal/signed-out`,
    ],
    { tier: 1 },
  );
  await stack.waitReady(
    'local identity provider',
    async () => (await stack.httpGet(`${issuer}/.well-known/openid-configuration`))?.status === 200,
    {
      timeoutMs: 30_000,
      entry,
    },
  );
  return {
    issuer,
    url: `${baseUrl}/portal`,
    env: { PORTAL_OIDC_ISSUER: issuer, PORTAL_OIDC_CLIENT_SECRET: secrets.clientSecret, PORTAL_SESSION_KEYS: secrets.sessionKey },
    teammates: teammates.map((t) => ({
      account: t.slug,
      email: t.email,
      password: secrets.passwords[t.idpTeammateUuid],
      role: t.portalRole,
    })),
  };
}

function portFree(port, host) {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(500, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

function parseSeed(stdout) {
  const text = stdout.trim();
  const candidates = [
    text,
    ...text
      .split('\n')
      .reverse()
      .filter((l) => l.trim().startsWith('{')),
  ];
  for (const candidate of candidates) {
    try {
      const parsed = JSON.parse(candidate);
      if (Array.isArray(parsed?.accounts)) return parsed;
    } catch {
      /* next */
    }
  }
  throw new StepError(`scripts/seed.ts printed no { "accounts": [...] } JSON on stdout (got: ${text.slice(0, 200) || 'nothing'})`);
}

function requireFile(rel) {
  if (!fs.existsSync(path.join(REPO_ROOT, rel))) throw new StepError(`${rel} does not exist`);
}

/** The Node the project runs on: package.json's exact `node` dev dependency (npm ci puts it in node_modules/.bin). */
const PINNED_NODE = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).devDependencies.node;
const NODE_BIN = path.join(REPO_ROOT, 'node_modules', '.bin');

/**
 * Started on another Node (a fresh clone: `npm run dev` finds no node_modules/.bin/node yet and
 * runs this on the system's Node; or `node scripts/dev.mjs` from a shell), runs this script again
 * on the pinned Node once npm ci has installed it, and exits with its code. The child has a
 * process group of its own, so a Ctrl-C reaches it once, through this process.
 */
function rerunOnPinnedNode() {
  const node = path.join(NODE_BIN, 'node');
  if (process.versions.node === PINNED_NODE || process.env.DEV_PINNED_NODE_RERUN === '1' || !fs.existsSync(node)) return false;
  say(`Node ${process.versions.node}: running again on the pinned Node ${PINNED_NODE} (node_modules/.bin/node)`);
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    detached: true,
    env: { ...process.env, DEV_PINNED_NODE_RERUN: '1', PATH: `${NODE_BIN}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => fail(`could not start ${node}: ${err.message}`));
  child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' || signal === 'SIGTERM' ? 0 : 1)));
  return true;
}

async function main() {
  fs.mkdirSync(VAR_DIR, { recursive: true });

  await ensureDependencies();
  if (rerunOnPinnedNode()) return;
  if (process.versions.node !== PINNED_NODE) {
    say(
      color(
        '33',
        `warning: Node ${process.versions.node}; this project runs on Node ${PINNED_NODE} (npm ci installs it into node_modules/.bin)`,
      ),
    );
  }
  // The API, the worker and the scripts run through tsx (`#!/usr/bin/env node`): the pinned Node first on the path.
  if (!(process.env.PATH ?? '').startsWith(`${NODE_BIN}${path.delimiter}`))
    process.env.PATH = `${NODE_BIN}${path.delimiter}${process.env.PATH ?? ''}`;
  const tools = await ensureTools({ log: (l) => log(l), cluster: CLUSTER });
  const chromium = await ensureChromium();
  stack = await import('./stack.mjs');

  const host = process.env.HOST || '127.0.0.1';
  const port = Number(process.env.PORT || 3000);
  const baseUrl = `http://${host}:${port}`;
  if (!(await portFree(port, host))) {
    throw new StepError(`port ${port} is already in use (another \`npm run dev\`?); stop it or set PORT`);
  }
  const secret = webhookSecret();
  const codec = codecSecrets();
  // The Temporal UI of either shape decodes through the API's UI mount of the codec endpoint.
  const uiCodecEndpoint = `${baseUrl}/codec/ui/${codec.uiKey}`;

  say(
    `starting PostgreSQL, Temporal ${CLUSTER ? 'cluster (server on PostgreSQL)' : 'dev server'}, stripe-mock, fake-gcs-server, mail sink…`,
  );
  const postgres = stack.ensurePostgres({ databaseUrl: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/insurance', log });
  const results = await Promise.allSettled([
    postgres,
    CLUSTER
      ? postgres.then((url) => stack.ensureTemporalCluster({ databaseUrl: url, codecEndpoint: uiCodecEndpoint, log }))
      : stack.ensureTemporal({ port: 7233, uiPort: 8233, dbFile: 'var/temporal.db', bin: tools.temporal, uiCodecEndpoint, log }),
    stack.ensureStripeMock({ port: 12111, bin: tools.stripeMock, log }),
    stack.ensureFakeGcs({ port: 4443, dir: 'var/gcs', bucket: process.env.STORAGE_BUCKET || 'certificates', bin: tools.fakeGcs, log }),
    stack.ensureMailSink({ port: 2525, dir: 'var/mail', log }),
  ]);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw new StepError(failed.reason?.message ?? String(failed.reason));
  const [databaseUrl, temporal, stripeMock, storage, mail] = results.map((r) => r.value);
  say(`stack ready (${elapsed()})`);

  const tsx = path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
  const env = {
    ...process.env,
    NODE_ENV: process.env.NODE_ENV || 'development',
    HOST: host,
    PORT: String(port),
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL || baseUrl,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    PAYPROC_API_BASE: stripeMock.url,
    PAYPROC_WEBHOOK_SECRET: secret,
    STORAGE_API_ENDPOINT: storage.url,
    STORAGE_BUCKET: storage.bucket,
    SMTP_URL: mail.url,
    CHROMIUM_PATH: chromium,
    // The operators' codec endpoint, on for the local stack: the CLI's bearer token, the UI's
    // mount, and the local UI's origin (both spellings of the host) allowed by CORS.
    TEMPORAL_CODEC_TOKEN: codec.token,
    TEMPORAL_CODEC_UI_KEY: codec.uiKey,
    TEMPORAL_CODEC_CORS_ORIGINS:
      process.env.TEMPORAL_CODEC_CORS_ORIGINS || [temporal.uiUrl, temporal.uiUrl.replace('127.0.0.1', 'localhost')].join(','),
  };
  const metricsHost = env.METRICS_HOST || '127.0.0.1';

  requireFile('scripts/migrate.ts');
  const migrate = await runCommand('[migrate]', tsx, ['scripts/migrate.ts'], { env });
  if (migrate.code !== 0) throw new StepError(`migrations failed (exit ${migrate.code}); see [migrate] lines above`);

  requireFile('scripts/seed.ts');
  const seedRun = await runCommand('[seed]', tsx, ['scripts/seed.ts'], { env, captureStdout: true });
  if (seedRun.code !== 0) throw new StepError(`seed failed (exit ${seedRun.code}); see [seed] lines above`);
  const seed = parseSeed(seedRun.stdout);

  // The agency portal signs staff in through an OpenID Provider: a local one unless configured.
  const portal = await startPortalIdentityProvider(seed, env.PUBLIC_BASE_URL, host);
  if (portal) Object.assign(env, portal.env);

  requireFile('src/server.ts');
  requireFile('src/worker.ts');
  // One API and one worker on the default ports; with --api/--workers each process gets its own.
  const multiApi = API_COUNT > 1;
  const multiWorker = WORKER_COUNT > 1;
  if (multiApi) env.REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379'; // one rate limit for all API processes
  const processes = [
    ...Array.from({ length: API_COUNT }, (_, i) => ({
      name: multiApi ? `api-${i + 1}` : 'api',
      entry: 'src/server.ts',
      c: '36',
      env: multiApi ? { PORT: String(port + 1 + i), METRICS_PORT: String(9470 + i) } : {},
    })),
    ...Array.from({ length: WORKER_COUNT }, (_, i) => ({
      name: multiWorker ? `worker-${i + 1}` : 'worker',
      entry: 'src/worker.ts',
      nodeArgs: workerRuntime.WORKER_NODE_ARGS,
      c: '35',
      env: multiWorker ? { WORKER_METRICS_PORT: String(9480 + i), WORKER_SDK_METRICS_ADDRESS: `127.0.0.1:${9490 + i}` } : {},
    })),
  ];
  fs.mkdirSync(path.join(VAR_DIR, 'log'), { recursive: true });
  const apps = processes.map(({ name, entry, nodeArgs = [], c, env: own }) => {
    const prefix = color(c, `[${name}]`);
    // The terminal shows every process's lines; var/log/<name>.log keeps them (for grep, the runbook).
    const logFile = fs.createWriteStream(path.join(VAR_DIR, 'log', `${name}.log`), { flags: 'w' });
    const child = stack.spawnTracked(name, tsx, [...nodeArgs, entry], {
      env: { ...env, ...own },
      tier: 1,
      onLine: (line) => {
        logFile.write(`${line}\n`);
        log(`${prefix} ${line}`);
      },
    });
    child.exited.then(() => logFile.end());
    child.exited.then(({ code, signal, error }) => {
      if (!stopping) fail(`${name} (${entry}) ${error ? `could not start: ${error.message}` : `exited (${signal ?? `code ${code}`})`}`);
    });
    return child;
  });
  const apiUrls = multiApi ? processes.filter((p) => p.entry === 'src/server.ts').map((p) => `http://${host}:${p.env.PORT}`) : [baseUrl];
  if (multiApi) {
    const { startBalancer } = await import('./balancer.mjs');
    balancer = await startBalancer({ host, port, targets: apiUrls });
  }
  for (const [i, url] of apiUrls.entries()) {
    await stack.waitReady(`API ${url}`, async () => (await stack.httpGet(`${url}/healthz`))?.status === 200, {
      timeoutMs: 120_000,
      entry: apps[i],
    });
  }

  // Step 6: Prometheus scrapes every process of this run (and Temporal, PostgreSQL) with the
  // service's alert rules; Alertmanager receives what fires.
  let monitoring = null;
  if (MONITORING && (await ensureMonitoringPackages(stack.MONITORING_BINS))) {
    monitoring = await startMonitoring().catch((err) => {
      // The service runs without it: say why, once.
      say(color('33', `warning: no local monitoring: ${err.message}`));
      return null;
    });
  }
  async function startMonitoring() {
    const metricsOf = (p, key, fallback) => p.env[key] || env[key] || fallback;
    const apis = processes.filter((p) => p.entry === 'src/server.ts');
    const workers = processes.filter((p) => p.entry === 'src/worker.ts');
    const [exporter, alertmanager] = await Promise.all([
      stack.ensurePostgresExporter({ databaseUrl, log }),
      stack.ensureAlertmanager({ log }),
      stack.ensureBlackboxExporter({ log }),
    ]);
    const config = stack.localPrometheusConfig({
      api: apis.map((p) => `${metricsHost}:${metricsOf(p, 'METRICS_PORT', 9464)}`),
      workers: workers.map((p) => `${metricsHost}:${metricsOf(p, 'WORKER_METRICS_PORT', 9465)}`),
      workerSdk: workers.map((p) => (p.env.WORKER_SDK_METRICS_ADDRESS ?? env.WORKER_SDK_METRICS_ADDRESS) || '127.0.0.1:9466'),
      temporal: [temporal.metricsAddress],
      // The blackbox exporter probes /healthz and /readyz where clients reach the API.
      publicApis: [baseUrl],
    });
    const prometheus = await stack.ensurePrometheus({ config, log });
    return {
      prometheusUrl: prometheus.url,
      alertmanagerUrl: alertmanager.url,
      postgresExporterUrl: exporter.url,
      prometheusConfig: path.relative(REPO_ROOT, prometheus.configFile),
    };
  }

  const credentials = {
    baseUrl,
    temporalUiUrl: temporal.uiUrl,
    webhookSecret: secret,
    // The operators' codec endpoint: the CLI sends `Authorization: Bearer <token>` to `endpoint`;
    // the Temporal UI is configured with `uiEndpoint` (its key is in the path).
    codec: {
      endpoint: `${baseUrl}/codec`,
      token: codec.token,
      authorizationHeader: `Bearer ${codec.token}`,
      uiEndpoint: uiCodecEndpoint,
    },
    accounts: seed.accounts.map((a) => ({
      rootAccountId: a.rootAccountId,
      slug: a.slug,
      liveApiKey: a.liveApiKey,
      testApiKey: a.testApiKey,
      // beyond the documented four: what the quote and buyer surfaces need
      name: a.name,
      idpRootAccountUuid: a.idpRootAccountUuid,
      agentId: a.agentId,
      idpTeammateUuid: a.idpTeammateUuid,
    })),
    databaseUrl,
    // Local Prometheus (alerts at <prometheusUrl>/alerts) and Alertmanager; null without them.
    monitoring,
    stripeMockUrl: stripeMock.url,
    storageUrl: storage.url,
    smtpUrl: mail.url,
    // The agency portal and who can sign in to it at the local identity provider (null: PORTAL_OIDC_ISSUER's provider).
    portal: portal ? { url: portal.url, identityProvider: portal.issuer, teammates: portal.teammates } : null,
  };
  const credentialsFile = path.join(VAR_DIR, 'dev-credentials.json');
  fs.writeFileSync(credentialsFile, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });

  const row = (k, v) => `  ${k.padEnd(16)} ${v}`;
  const lines = [
    '',
    color('1;32', `Local stack ready in ${elapsed()}`),
    row('API', multiApi ? `${baseUrl}  (round-robin front over ${apiUrls.join(', ')})` : baseUrl),
    row(
      'workers',
      `${WORKER_COUNT} process${WORKER_COUNT > 1 ? 'es' : ''} on task queues ${env.TEMPORAL_TASK_QUEUE || 'insurance'} and ${env.TEMPORAL_TASK_QUEUE || 'insurance'}-certificates`,
    ),
    row('Node', `${process.version} (node_modules/.bin/node: this command, the API, the worker, the scripts)`),
    row('API docs', `${baseUrl}/docs   (OpenAPI: ${baseUrl}/openapi.json)`),
    row(
      'portal',
      portal
        ? `${portal.url}   (sign in at the local identity provider ${portal.issuer} as a teammate below)`
        : `${baseUrl}/portal   (sign in at ${process.env.PORTAL_OIDC_ISSUER})`,
    ),
    row('Temporal', `${temporal.address}  ${CLUSTER ? '(cluster: temporal-server 1.30.4 on PostgreSQL)' : '(dev server)'}`),
    row('Temporal UI', temporal.uiUrl),
    row('PostgreSQL', databaseUrl),
    row('stripe-mock', stripeMock.url),
    row('storage (GCS)', `${storage.url}  bucket ${storage.bucket}`),
    row('mail (SMTP)', `${mail.url}  → ${path.relative(REPO_ROOT, mail.dir)}/`),
    row('webhook secret', secret),
    ...processes.map((p) =>
      p.entry === 'src/server.ts'
        ? row(`${p.name} metrics`, `http://${metricsHost}:${p.env.METRICS_PORT || env.METRICS_PORT || 9464}/metrics`)
        : row(
            `${p.name} metrics`,
            `http://${metricsHost}:${p.env.WORKER_METRICS_PORT || env.WORKER_METRICS_PORT || 9465}/metrics  (health: /healthz, /readyz; SDK: ${(p.env.WORKER_SDK_METRICS_ADDRESS ?? env.WORKER_SDK_METRICS_ADDRESS) === '' ? 'off' : `http://${p.env.WORKER_SDK_METRICS_ADDRESS || env.WORKER_SDK_METRICS_ADDRESS || '127.0.0.1:9466'}/metrics`})`,
          ),
    ),
    ...(monitoring
      ? [
          row(
            'Prometheus',
            `${monitoring.prometheusUrl}  (alerts: ${monitoring.prometheusUrl}/classic/alerts; rules ops/prometheus/alerts.yml)`,
          ),
          row('Alertmanager', `${monitoring.alertmanagerUrl}  (pages and tickets; PostgreSQL exporter ${monitoring.postgresExporterUrl})`),
        ]
      : [row('Prometheus', 'off (DEV_MONITORING=0, its packages are missing, or it could not start: see above)')]),
    row('codec endpoint', `${baseUrl}/codec  (Authorization: Bearer ${codec.token})`),
    row(
      '  decoded',
      `.tools/bin/temporal workflow show -w purchase-1 --codec-endpoint ${baseUrl}/codec --codec-auth 'Bearer ${codec.token}'`,
    ),
    row(
      '  in the UI',
      `${temporal.uiUrl} decodes through ${baseUrl}/codec/ui/<key in var/dev-credentials.json>${temporal.started ? '' : '  (server reused: as configured when it started)'}`,
    ),
    '',
    ...seed.accounts.flatMap((a) => [
      row(`account ${a.rootAccountId}`, `${a.slug}${a.name ? `  (${a.name})` : ''}`),
      row('  live key', a.liveApiKey),
      row('  test key', a.testApiKey),
      ...(portal?.teammates ?? [])
        .filter((t) => t.account === a.slug)
        .map((t) => row(`  portal ${t.role}`, `${t.email}  password ${t.password}`)),
    ]),
    // The seeded insurer and MGA, appointed by each agency: GET /api/v1/parties lists them.
    ...(seed.parties ?? []).map((p) =>
      row(`${p.kind} ${p.rootAccountId}`, `${p.name}  (${p.kind === 'insurer' ? 'NAIC' : 'register no.'} ${p.registerNumber})`),
    ),
    '',
    `  Try:  curl -s -H 'x-api-key: ${seed.accounts[0]?.testApiKey ?? 'ik_test_…'}' ${baseUrl}/api/v1/products`,
    `  Keys and URLs: ${path.relative(REPO_ROOT, credentialsFile)}.  Logs of the servers, the API and the worker: var/log/.`,
    CHECK ? '' : '  Ctrl-C stops everything this command started.',
    '',
  ];
  log(lines.join('\n'));

  if (CHECK) {
    say('--check: shutting down');
    await shutdown(0);
  }
}

main().catch((err) => {
  // one line for expected failures; the stack too for bugs in this script (or with DEV_DEBUG=1)
  const verbose = !(err instanceof StepError) && (process.env.DEV_DEBUG === '1' || !(err instanceof Error) || err.name !== 'Error');
  fail(verbose ? (err?.stack ?? String(err)) : err.message);
});
