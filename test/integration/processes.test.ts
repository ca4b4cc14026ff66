/**
 * The entry points as real processes: the key-management CLI (the portal's operations,
 * spec §3/§5), start-up with a bad config, and the worker's start and clean SIGTERM shutdown.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createRootAccount } from '../helpers/fixtures';
import { ROOT, runScript, startProcess, type RunResult } from '../helpers/run';
import { uniqueTaskQueue } from '../helpers/worker';
import { freePort } from '../helpers/ports';

/** package.json's exact `node` dev dependency (test/integration/node-runtime.test.ts). */
const PINNED_NODE: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).devDependencies.node;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** `npm run keys -- create` of a test-mode key for `accountId` with `options`: it must exit 0; answers the key it prints. */
async function createKeyByCli(accountId: number, options: string[]) {
  const created = await runScript('scripts/keys.ts', ['create', '--account', String(accountId), '--mode', 'test', ...options, '--json']);
  expect(created.code).toBe(0);
  return JSON.parse(created.stdout);
}

/** The lines a script wrote to stderr, npm's own warnings left out. */
const stderrLines = (res: RunResult) =>
  res.stderr
    .trim()
    .split('\n')
    .filter((l) => !l.includes('npm warn'));

describe('npm run keys', () => {
  test('when a key goes through create, list, rotate, freeze, unfreeze and delete, then each step takes effect at the gateway', async () => {
    const account = await createRootAccount(app.container);
    const k = await createKeyByCli(account.id, ['--name', 'cli key', '--description', 'from test', '--platform-fee-bps', '250']);
    expect(k).toMatchObject({ id: expect.any(Number), rootAccountId: account.id, mode: 'test', platformFeeBps: 250, status: 'active' });
    expect(k.key).toMatch(/^ik_test_/);
    expect((await call(app.baseUrl, '/api/v1/x', { key: k.key })).status).toBe(404);

    const listed = await runScript('scripts/keys.ts', ['list', '--account', String(account.id), '--json']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(k.key);
    expect(JSON.parse(listed.stdout).keys).toEqual([
      expect.objectContaining({
        id: k.id,
        status: 'active',
        values: [expect.objectContaining({ state: 'current', displayPrefix: k.key.slice(0, 12) })],
      }),
    ]);

    const rotated = JSON.parse((await runScript('scripts/keys.ts', ['rotate', String(k.id), '--grace-hours', '1', '--json'])).stdout);
    expect(rotated.id).toBe(k.id);
    expect(rotated.key).not.toBe(k.key);
    expect((await call(app.baseUrl, '/api/v1/x', { key: k.key })).status).toBe(404);
    expect((await call(app.baseUrl, '/api/v1/x', { key: rotated.key })).status).toBe(404);

    expect(JSON.parse((await runScript('scripts/keys.ts', ['freeze', String(k.id), '--json'])).stdout)).toEqual({
      id: k.id,
      status: 'frozen',
    });
    expect((await call(app.baseUrl, '/api/v1/x', { key: rotated.key })).status).toBe(403);
    expect((await call(app.baseUrl, '/api/v1/x', { key: k.key })).status).toBe(403);

    expect(JSON.parse((await runScript('scripts/keys.ts', ['unfreeze', String(k.id), '--json'])).stdout)).toEqual({
      id: k.id,
      status: 'active',
    });
    expect((await call(app.baseUrl, '/api/v1/x', { key: rotated.key })).status).toBe(404);

    expect(JSON.parse((await runScript('scripts/keys.ts', ['delete', String(k.id), '--json'])).stdout)).toEqual({
      id: k.id,
      status: 'deleted',
    });
    expect((await call(app.baseUrl, '/api/v1/x', { key: rotated.key })).status).toBe(403);
    // Each change is on the audit log the portal lists, as the key command line's, with its outcome.
    const entries = await app.container.db('operator_audit_log').where({ root_account_id: account.id }).orderBy('id');
    expect(entries.map((e) => [e.actor_kind, e.action, e.target_kind, e.outcome])).toEqual([
      ['key_cli', 'create_key', 'root_account', 'succeeded'],
      ['key_cli', 'rotate_key', 'api_key', 'succeeded'],
      ['key_cli', 'freeze_key', 'api_key', 'succeeded'],
      ['key_cli', 'unfreeze_key', 'api_key', 'succeeded'],
      ['key_cli', 'delete_key', 'api_key', 'succeeded'],
    ]);
    // Named as npm run ops names its operator: without OPERATOR_TOKEN, the OS user signed in.
    expect(new Set(entries.map((e) => `${e.actor} via ${e.actor_via}`))).toEqual(new Set([`${os.userInfo().username} via os_user`]));
    expect(JSON.stringify(entries)).not.toContain(rotated.key);
    // An operator token that names nobody stops the change before it is made, recorded as refused.
    const refused = await runScript('scripts/keys.ts', ['freeze', String(k.id)], { OPERATOR_TOKEN: 'opt_nobody_has_this_token' });
    expect(refused.code).toBe(1);
    expect(stderrLines(refused)).toEqual([expect.stringMatching(/^keys: .*token/i)]);
    const attempt = await app.container
      .db('operator_audit_log')
      .where({ action: 'freeze_key', outcome: 'refused' })
      .orderBy('id', 'desc')
      .first();
    expect(attempt).toMatchObject({ actor_kind: 'operator_cli', actor_via: 'operator_token' });
  });

  test('when return URLs are given at create, changed on the key, cleared, and set for the account, then each step is stored and list shows them', async () => {
    const account = await createRootAccount(app.container, 'Return URL Agency');
    const k = await createKeyByCli(account.id, [
      '--name',
      'agent site',
      '--success-url',
      'https://agent.example/thanks?s={CHECKOUT_SESSION_ID}',
      '--cancel-url',
      'http://127.0.0.1:8080/cancelled',
    ]);
    expect(k).toMatchObject({
      checkoutSuccessUrl: 'https://agent.example/thanks?s={CHECKOUT_SESSION_ID}',
      checkoutCancelUrl: 'http://127.0.0.1:8080/cancelled',
    });

    const changed = await runScript('scripts/keys.ts', ['set-return-urls', String(k.id), '--success-url', 'none', '--json']);
    expect(changed.code).toBe(0);
    expect(JSON.parse(changed.stdout)).toEqual({
      id: k.id,
      checkoutSuccessUrl: null,
      checkoutCancelUrl: 'http://127.0.0.1:8080/cancelled',
    });

    const forAccount = await runScript('scripts/keys.ts', [
      'set-account-return-urls',
      '--account',
      String(account.id),
      '--success-url',
      'https://agency.example/paid',
      '--cancel-url',
      'https://agency.example/left',
      '--json',
    ]);
    expect(forAccount.code).toBe(0);
    expect(JSON.parse(forAccount.stdout)).toEqual({
      rootAccountId: account.id,
      checkoutSuccessUrl: 'https://agency.example/paid',
      checkoutCancelUrl: 'https://agency.example/left',
    });

    const listed = await runScript('scripts/keys.ts', ['list', '--account', String(account.id), '--json']);
    expect(listed.code).toBe(0);
    const list = JSON.parse(listed.stdout);
    expect(list.account).toEqual({
      id: account.id,
      name: account.name,
      slug: account.slug,
      kind: account.kind,
      checkoutSuccessUrl: 'https://agency.example/paid',
      checkoutCancelUrl: 'https://agency.example/left',
    });
    expect(list.keys).toEqual([
      expect.objectContaining({ id: k.id, checkoutSuccessUrl: null, checkoutCancelUrl: 'http://127.0.0.1:8080/cancelled' }),
    ]);

    const human = await runScript('scripts/keys.ts', ['list', '--account', String(account.id)]);
    // The agency first, by name, so the operator sees whose keys these are.
    expect(human.stdout.split('\n')[0]).toBe(`${account.name} (root account ${account.id}, slug ${account.slug}, ${account.kind})`);
    expect(human.stdout).toContain(
      `account ${account.id} return URLs: success https://agency.example/paid, cancel https://agency.example/left`,
    );
    expect(human.stdout).toContain('success (account default), cancel http://127.0.0.1:8080/cancelled');

    const cleared = await runScript('scripts/keys.ts', [
      'set-account-return-urls',
      '--account',
      String(account.id),
      '--success-url',
      'none',
      '--cancel-url',
      'none',
    ]);
    expect(cleared.code).toBe(0);
    expect(cleared.stdout.trim()).toBe(`account ${account.id} return URLs: success (service page), cancel (service page)`);
  });

  test('when a return URL is over 2048 characters, then it exits 1 with one line naming the option and the limit', async () => {
    const res = await runScript('scripts/keys.ts', ['set-return-urls', '1', '--success-url', `https://a.example/${'p'.repeat(2040)}`]);
    expect(res.code).toBe(1);
    const lines = stderrLines(res);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^keys: --success-url must be at most 2048 characters \(got 2058\): "https:\/\/a\.example\/p{62}…"$/);
  });

  test.each([
    [['freeze', '999999'], /key 999999 not found/],
    [['create', '--account', '1'], /--name is required/],
    [['create', '--account', 'abc', '--name', 'x'], /--account must be a positive integer/],
    [['create', '--account', '1', '--name', 'x', '--mode', 'prod'], /--mode must be live or test/],
    [['rotate', '1', '--grace-hours=-3'], /--grace-hours must be a number >= 0/],
    [['rotate', '1', '--grace-hours', '-3'], /--grace-hours/],
    [['launch'], /unknown command "launch"/],
    [['list', '--acount', '1'], /Unknown option '--acount'/],
    [
      ['create', '--account', '1', '--name', 'x', '--success-url', 'agency.example/thanks'],
      /--success-url must be an absolute http or https URL: "agency\.example\/thanks"/,
    ],
    [
      ['create', '--account', '1', '--name', 'x', '--cancel-url', 'ftp://agency.example/'],
      /--cancel-url must be an absolute http or https URL/,
    ],
    [['set-return-urls', '1', '--cancel-url', 'https://a.example/a b'], /--cancel-url must not contain spaces/],
    [['set-return-urls', '1'], /--success-url or --cancel-url is required/],
    [['set-return-urls', '999999', '--success-url', 'none'], /key 999999 not found/],
    [['set-account-return-urls', '--success-url', 'https://a.example/'], /--account is required/],
    [
      ['set-account-return-urls', '--account', '1', '--success-url', 'javascript:alert(1)'],
      /--success-url must be an absolute http or https URL/,
    ],
    [['set-account-return-urls', '--account', '2147483000', '--cancel-url', 'none'], /root account 2147483000 not found/],
  ])('when called with %p, then it exits 1 with one clear line', async (args, pattern) => {
    const res = await runScript('scripts/keys.ts', args);
    expect(res.code).toBe(1);
    const lines = stderrLines(res);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^keys: /);
    expect(lines[0]).toMatch(pattern);
  });
});

describe('start-up', () => {
  test('when a config value is bad, then the API exits 1 with one line naming the variable', async () => {
    const res = await runScript('src/server.ts', [], { PORT: 'not-a-port' });
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toMatch(/^Invalid configuration: PORT: /);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });

  test('when the worker starts, then it registers with Temporal, serves /metrics, /healthz and /readyz on its own port, exports the SDK pollers of both task queues, and on SIGTERM it exits 0', async () => {
    const sdkPort = await freePort();
    // A queue of its own: on the run's default queue this real worker could take workflows other suites start.
    const queue = uniqueTaskQueue();
    const worker = await startProcess(
      'src/worker.ts',
      /"msg":"worker running"/,
      { LOG_LEVEL: 'info', TEMPORAL_TASK_QUEUE: queue, WORKER_METRICS_PORT: '0', WORKER_SDK_METRICS_ADDRESS: `127.0.0.1:${sdkPort}` },
      120_000,
    );
    expect(worker.output()).toContain(queue);
    const running = JSON.parse(
      worker
        .output()
        .split('\n')
        .find((l) => l.includes('"msg":"worker running"'))!,
    );
    expect(running.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const base = running.metrics.replace(/\/metrics$/, '');
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { polling: true, temporal: true, database: true, browser: true } });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(running.metrics)).text();
    for (const name of [
      'purchases_status_total',
      'certificates_rendered_total',
      'pdf_browser_launches_total',
      'event_deliveries_total',
      'purchases_paid_without_certificates',
      'coi_process_cpu_seconds_total',
    ]) {
      expect(metrics).toContain(`# TYPE ${name}`);
    }
    // The worker runs on the pinned Node (node_modules/.bin/node, first on the path of npm test).
    expect(metrics).toMatch(new RegExp(`coi_nodejs_version_info\\{version="v${PINNED_NODE.replaceAll('.', '\\.')}",major="24"`));
    // The Temporal SDK's exporter: the pollers gauge the NoWorkerPolling alert reads, per task queue.
    const sdk = await (await fetch(`http://127.0.0.1:${sdkPort}/metrics`)).text();
    expect(sdk).toMatch(new RegExp(`temporal_num_pollers\\{[^}]*poller_type="workflow_task"[^}]*task_queue="${queue}"[^}]*\\} [1-9]`));
    expect(sdk).toMatch(
      new RegExp(`temporal_num_pollers\\{[^}]*poller_type="activity_task"[^}]*task_queue="${queue}-certificates"[^}]*\\} [1-9]`),
    );
    // NoWorkerPolling leaves out a queue without a free slot: the worker exports them per queue.
    expect(sdk).toMatch(
      new RegExp(
        `temporal_worker_task_slots_available\\{[^}]*task_queue="${queue}-certificates"[^}]*worker_type="ActivityWorker"[^}]*\\} [1-9]`,
      ),
    );
    worker.child.kill('SIGTERM');
    const code = await worker.exited;
    expect(code).toBe(0);
    expect(worker.output()).toContain('"msg":"worker stopped"');
  }, 180_000); // bundling the workflows competes with the other suites for 2 cores
});
