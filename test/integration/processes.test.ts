/**
 * The entry points as real processes: the key-management CLI (the portal's operations,
 * spec §3/§5), start-up with a bad config, and the worker's start and clean SIGTERM shutdown.
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createRootAccount } from '../helpers/fixtures';
import { runScript, startProcess } from '../helpers/run';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('npm run keys', () => {
  test('when a key goes through create, list, rotate, freeze, unfreeze and delete, then each step takes effect at the gateway', async () => {
    const account = await createRootAccount(app.container);
    const created = await runScript('scripts/keys.ts', ['create', '--account', String(account.id), '--name', 'cli key', '--description', 'from test', '--mode', 'test', '--platform-fee-bps', '250', '--json']);
    expect(created.code).toBe(0);
    const k = JSON.parse(created.stdout);
    expect(k).toMatchObject({ id: expect.any(Number), rootAccountId: account.id, mode: 'test', platformFeeBps: 250, status: 'active' });
    expect(k.key).toMatch(/^ik_test_/);
    expect((await call(app.baseUrl, '/api/v1/x', { key: k.key })).status).toBe(404);

    const listed = await runScript('scripts/keys.ts', ['list', '--account', String(account.id), '--json']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(k.key);
    expect(JSON.parse(listed.stdout).keys).toEqual([expect.objectContaining({ id: k.id, status: 'active', values: [expect.objectContaining({ state: 'current', displayPrefix: k.key.slice(0, 12) })] })]);

    const rotated = JSON.parse((await runScript('scripts/keys.ts', ['rotate', String(k.id), '--grace-hours', '1', '--json'])).stdout);
    expect(rotated.id).toBe(k.id);
    expect(rotated.key).not.toBe(k.key);
    expect((await call(app.baseUrl, '/api/v1/x', { key: k.key })).status).toBe(404);
    expect((await call(app.baseUrl, '/api/v1/x', { key: rotated.key })).status).toBe(404);

    expect(JSON.parse((await runScript('scripts/keys.ts', ['freeze', String(k.id), '--json'])).stdout)).toEqual({ id: k.id, status: 'frozen' });
    expect((await call(app.baseUrl, '/api/v1/x', { key: rotated.key })).status).toBe(403);
    expect((await call(app.baseUrl, '/api/v1/x', { key: k.key })).status).toBe(403);

    expect(JSON.parse((await runScript('scripts/keys.ts', ['unfreeze', String(k.id), '--json'])).stdout)).toEqual({ id: k.id, status: 'active' });
    expect((await call(app.baseUrl, '/api/v1/x', { key: rotated.key })).status).toBe(404);

    expect(JSON.parse((await runScript('scripts/keys.ts', ['delete', String(k.id), '--json'])).stdout)).toEqual({ id: k.id, status: 'deleted' });
    expect((await call(app.baseUrl, '/api/v1/x', { key: rotated.key })).status).toBe(403);
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
  ])('when called with %p, then it exits 1 with one clear line', async (args, pattern) => {
    const res = await runScript('scripts/keys.ts', args);
    expect(res.code).toBe(1);
    const lines = res.stderr.trim().split('\n').filter((l) => !l.includes('npm warn'));
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

  test('when the worker starts, then it registers with Temporal, and on SIGTERM it exits 0', async () => {
    const worker = await startProcess('src/worker.ts', /"msg":"worker running"/, { LOG_LEVEL: 'info' }, 120_000);
    expect(worker.output()).toContain(process.env.TEMPORAL_TASK_QUEUE!);
    worker.child.kill('SIGTERM');
    const code = await worker.exited;
    expect(code).toBe(0);
    expect(worker.output()).toContain('"msg":"worker stopped"');
  }, 180_000); // bundling the workflows competes with the other suites for 2 cores
});
