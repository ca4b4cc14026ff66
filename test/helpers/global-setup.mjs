/**
 * Jest globalSetup: brings up (or reuses) the real servers the suites talk to, then sets
 * process.env for the test workers (jest forks them after this runs, so they inherit it).
 *
 * - PostgreSQL: the server of DATABASE_URL (default postgres://postgres@127.0.0.1:5432), or the
 *   embedded fallback; the database is `insurance_test_<jest pid>`, created and migrated for this
 *   run and dropped by the teardown (databases of crashed runs are dropped here), so two runs on
 *   one server never share or clobber a database. Migrated with
 *   `tsx scripts/migrate.ts`. The dev database is never touched.
 * - Temporal dev server (127.0.0.1:7233; state var/temporal-test.db when started here), with a
 *   namespace of its own per run (`test-<time>-<pid>`, search attributes registered) and a task
 *   queue `insurance-test-<jest pid>`: purchase ids restart with each new database, so a
 *   shared namespace would hand `purchase-1` to a previous run's workflow.
 *   With TEMPORAL_MODE=cluster, the production-shaped cluster instead (the real Temporal server
 *   on PostgreSQL, 127.0.0.1:7633, UI :8633; scripts/stack.mjs `ensureTemporalCluster`), with the
 *   same per-run namespace.
 * - stripe-mock (127.0.0.1:12111), fake-gcs-server (127.0.0.1:4443, bucket `certificates-test-<jest pid>`, deleted in teardown).
 * - An SMTP sink (127.0.0.1:2526, messages in var/mail-test/): the default SMTP_URL of the suites'
 *   workers, so the email every issued purchase sends its buyer is delivered rather than retried.
 * - One workflow bundle for the run (TEMPORAL_WORKFLOW_BUNDLE), so no suite's worker bundles the
 *   workflow code again.
 *
 * Servers already running (e.g. under `npm run dev`) are reused and left running; what this
 * starts, global-teardown.mjs stops. Progress lines go to stderr; a failure throws one message
 * naming the server and its log under var/log/.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ensureTools } from '../../scripts/tools.mjs';
import * as stack from '../../scripts/stack.mjs';

const TEST_DATABASE_PREFIX = 'insurance_test_';
const TEST_DATABASE = `${TEST_DATABASE_PREFIX}${process.pid}`;
const log = (line) => process.stderr.write(`${line}\n`);

function testDatabaseUrl() {
  const url = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${TEST_DATABASE}`;
  return url.toString();
}

/** Runs `tsx <args>` in the repository (output kept for the error), for the migrations and the bundle. */
function tsx(args, env, what) {
  const bin = path.join(stack.REPO_ROOT, 'node_modules', '.bin', 'tsx');
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: stack.REPO_ROOT,
      env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(output.trim());
      else reject(new Error(`${what} failed (exit ${code}):\n${output.trim()}`));
    });
  });
}

function migrate(databaseUrl) {
  return tsx(['scripts/migrate.ts'], { DATABASE_URL: databaseUrl }, `migrations on ${TEST_DATABASE}`);
}

/**
 * One workflow bundle for the whole run (var/workflow-bundle-<jest pid>.js, deleted by the
 * teardown; those of runs no longer alive are deleted here): every suite's worker loads it
 * (TEMPORAL_WORKFLOW_BUNDLE) instead of bundling the same code again, seconds of CPU each.
 */
async function bundleWorkflows() {
  const dir = path.join(stack.REPO_ROOT, 'var');
  fs.mkdirSync(dir, { recursive: true });
  for (const name of fs.readdirSync(dir)) {
    const pid = Number(/^workflow-bundle-(\d+)\.js$/.exec(name)?.[1]);
    if (!pid || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch {
      fs.rmSync(path.join(dir, name), { force: true });
    }
  }
  const file = path.join(dir, `workflow-bundle-${process.pid}.js`);
  await tsx(['scripts/bundle-workflows.ts', file], {}, 'the workflow bundle');
  return file;
}

export default async function globalSetup() {
  const started = Date.now();
  const mode = process.env.TEMPORAL_MODE || 'dev';
  if (mode !== 'dev' && mode !== 'cluster') throw new Error(`TEMPORAL_MODE must be dev or cluster, got "${mode}"`);
  // kubeconform too: test/unit/kubernetes-manifests.test.ts validates deploy/kubernetes with it.
  const tools = await ensureTools({ log, cluster: mode === 'cluster', k8s: true });
  let postgres;
  const results = await Promise.allSettled([
    (postgres = stack.ensurePostgres({ databaseUrl: testDatabaseUrl(), recreate: true, log }).then(async (url) => {
      await stack.dropTestDatabases({ databaseUrl: url, prefix: TEST_DATABASE_PREFIX, log });
      return { url, migrated: await migrate(url) };
    })),
    mode === 'cluster'
      ? postgres.then((db) => stack.ensureTemporalCluster({ databaseUrl: db.url, log }))
      : stack.ensureTemporal({ port: 7233, uiPort: 8233, dbFile: 'var/temporal-test.db', bin: tools.temporal, log }),
    stack.ensureStripeMock({ port: 12111, bin: tools.stripeMock, log }),
    // A bucket per run: purchase ids restart in every run's database, so object keys would meet.
    stack.ensureFakeGcs({ port: 4443, dir: 'var/gcs', bucket: `certificates-test-${process.pid}`, bin: tools.fakeGcs, log }),
    // Every issued purchase emails its buyer; a suite that reads mail starts its own SMTP server.
    stack.ensureMailSink({ port: 2526, dir: 'var/mail-test', log: (line) => line.startsWith('[mail]') || log(line) }),
    bundleWorkflows(),
  ]);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) {
    await stack.stopAll({ log });
    throw new Error(`test stack: ${failed.reason?.message ?? failed.reason}`);
  }
  const [db, temporal, stripeMock, storage, mailSink, workflowBundle] = results.map((r) => r.value);
  const namespace = `test-${Date.now()}-${process.pid}`;
  try {
    await stack.ensureTemporalNamespace({ bin: tools.temporal, address: temporal.address, namespace, log });
  } catch (err) {
    await stack.stopAll({ log });
    throw err;
  }

  Object.assign(process.env, {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: namespace,
    TEMPORAL_TASK_QUEUE: `insurance-test-${process.pid}`,
    TEMPORAL_CLI_PATH: tools.temporal,
    PAYPROC_API_BASE: stripeMock.url,
    PAYPROC_TEST_SECRET_KEY: 'sk_test_123',
    PAYPROC_LIVE_SECRET_KEY: 'sk_test_liveModeLocal', // stripe-mock accepts any sk_test_…
    STORAGE_API_ENDPOINT: storage.url,
    STORAGE_BUCKET: storage.bucket,
    SMTP_URL: mailSink.url,
    CHROMIUM_PATH: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    TEMPORAL_WORKFLOW_BUNDLE: workflowBundle,
  });
  globalThis.__INSURANCE_TEST_WORKFLOW_BUNDLE__ = workflowBundle;
  // globalTeardown runs in this same process and reads this to stop what was started here.
  globalThis.__INSURANCE_TEST_STACK__ = stack;
  globalThis.__INSURANCE_TEST_NAMESPACE__ = { bin: tools.temporal, address: temporal.address, namespace };
  globalThis.__INSURANCE_TEST_DATABASE__ = { databaseUrl: db.url, prefix: TEST_DATABASE_PREFIX };
  globalThis.__INSURANCE_TEST_BUCKET__ = { url: storage.url, bucket: storage.bucket };
  log(
    `[stack] test stack ready in ${((Date.now() - started) / 1000).toFixed(1)}s (Temporal ${mode === 'cluster' ? 'cluster' : 'dev server'} ${temporal.address}; ${db.url.replace(/\/\/[^@]*@/, '//')}; ${db.migrated})`,
  );
}
