/**
 * Operators named (issue 55, item 8), on the real stack (PostgreSQL, the Temporal dev server, the
 * API, the ops CLI run as the operator runs it, and the Temporal CLI): who acts is the person an
 * operator token was issued to (`OPERATOR_TOKEN`), or the OS user signed in, never a name typed on
 * the command line; tokens are issued and revoked by audited ops commands and stored hashed; a
 * revoked token stops naming its person at once; and every codec decode (the endpoint, and the
 * Temporal CLI's `--codec-endpoint` path through it) is in the audit log with its caller.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../helpers/app';
import { call } from '../helpers/fixtures';
import { jsonPayload, withUnpolledWorkflow } from '../helpers/codec';
import { ROOT, runScript } from '../helpers/run';

jest.setTimeout(120_000);

const SHARED = 'shared-codec-token-for-operator-tests-0123456789';
const UI_KEY = 'ui-key-for-operator-identity-tests-0123456789';
const run = promisify(execFile);
let app: TestApp;
let off: TestApp;

beforeAll(async () => {
  app = await startTestApp({ TEMPORAL_CODEC_TOKEN: SHARED, TEMPORAL_CODEC_UI_KEY: UI_KEY });
  off = await startTestApp();
});
afterAll(async () => {
  await app?.close();
  await off?.close();
});

/** A name of this run's own, so runs on the shared database never meet. */
const person = (who: string) => `${who}-${process.pid}-${Date.now()}@ops.example`;
const ops = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runScript('scripts/ops.ts', [...args, '--json'], { LOG_LEVEL: 'silent', OPERATOR_TOKEN: '', OPS_OPERATOR_TOKEN_REQUIRED: '', ...env });
const json = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, any>;
const auditRow = (id: number) => app.container.db('operator_audit_log').where({ id }).first();
const newestAudit = () => app.container.db('operator_audit_log').max<{ max: string | null }[]>('id as max');
const lastId = async () => Number((await newestAudit())[0]!.max ?? 0);
const osUser = os.userInfo().username;
/** A purchase id no test makes: reissue is refused (exit 2) after its audit entry names who asked. */
const NO_PURCHASE = '2147483000';
/** The user agent of this file's codec requests. */
const AGENT = `operator-identity-test-${process.pid}`;
/**
 * The audit entries after `id` that this file's commands and requests made (other suites share
 * the database): the ops CLI's about NO_PURCHASE or an operator of this run, a token that named
 * nobody, and the decodes that carried this file's user agent.
 */
const rowsAfter = async (id: number) =>
  (await app.container.db('operator_audit_log').where('id', '>', id).orderBy('id')).filter(
    (r) =>
      (r.actor_kind === 'operator_cli' &&
        (r.target_id === NO_PURCHASE || String(r.target_id).includes(`-${process.pid}-`) || String(r.actor).startsWith('unrecognised'))) ||
      (r.actor_kind === 'codec' && r.details?.user_agent === AGENT),
  );

/** Issues a token to `name` as the OS user; answers the token. */
async function issue(name: string): Promise<string> {
  const r = await ops(['issue-operator-token', '--name', name, '--reason', 'new on-call engineer']);
  expect(r.code).toBe(0);
  return json(r.stdout).token as string;
}

describe('the ops CLI names its operator', () => {
  test('when a token is issued, then it is printed once, stored only as its hash, and the issue is audited under the OS user', async () => {
    const name = person('alice');
    const r = await ops(['issue-operator-token', '--name', name, '--reason', 'new on-call engineer']);
    expect(r.code).toBe(0);
    const out = json(r.stdout);
    expect(out.token).toMatch(/^opk_[A-Za-z0-9_-]{43}$/);
    expect(out).toMatchObject({ name, prefix: out.token.slice(0, 8), created_by: osUser, revoked_at: null });
    const stored = await app.container.db('operator_tokens').where({ id: out.id }).first();
    expect(stored.token_hash).toBe(createHash('sha256').update(out.token).digest('hex'));
    expect(JSON.stringify(stored)).not.toContain(out.token);
    expect(await auditRow(out.audit_id)).toMatchObject({
      actor_kind: 'operator_cli',
      actor: osUser,
      actor_via: 'os_user',
      action: 'issue-operator-token',
      target_kind: 'operator',
      target_id: name,
      reason: 'new on-call engineer',
      outcome: 'succeeded',
      details: { token_id: out.id, prefix: out.prefix },
    });
    // A second live token for the same person (any case) is refused, on the record.
    const again = await ops(['issue-operator-token', '--name', name.toUpperCase(), '--reason', 'lost it']);
    expect(again.code).toBe(2);
    expect(json(again.stdout)).toMatchObject({ outcome: 'refused', reason: expect.stringMatching(/already has a live operator token/) });
    expect(await auditRow(json(again.stdout).audit_id)).toMatchObject({ action: 'issue-operator-token', outcome: 'refused' });
  });

  test('when OPERATOR_TOKEN is set, then a command is recorded as the token’s person (via operator_token), and its use is noted', async () => {
    const name = person('bob');
    const token = await issue(name);
    const r = await ops(['reissue', '--purchase', NO_PURCHASE, '--reason', 'agency reports a missing PDF'], { OPERATOR_TOKEN: token });
    expect(r.code).toBe(2); // no such purchase: refused, after the entry naming who asked
    expect(await auditRow(json(r.stdout).audit_id)).toMatchObject({
      actor_kind: 'operator_cli',
      actor: name,
      actor_via: 'operator_token',
      action: 'reissue',
      target_id: NO_PURCHASE,
      outcome: 'refused',
    });
    const listed = json((await ops(['operators'])).stdout).operators as Array<Record<string, unknown>>;
    expect(listed.find((t) => t.name === name)).toMatchObject({ last_used_at: expect.any(String), revoked_at: null });
    // `ops audit` shows how the person was named.
    const audit = await runScript('scripts/ops.ts', ['audit', '--limit', '20'], { LOG_LEVEL: 'silent' });
    expect(audit.stdout).toContain(`${name} (operator_cli via operator_token) reissue purchase ${NO_PURCHASE}: refused`);
  });

  test('when a name is typed with --operator, or a token is required and none is set, then nothing is done and nothing recorded', async () => {
    const before = await lastId();
    const typed = await ops(['reissue', '--purchase', NO_PURCHASE, '--reason', 'x', '--operator', 'somebody-else']);
    expect(typed.code).toBe(1);
    expect(typed.stderr).toMatch(/--operator is not taken/);
    const required = await ops(['reissue', '--purchase', NO_PURCHASE, '--reason', 'x'], { OPS_OPERATOR_TOKEN_REQUIRED: 'true' });
    expect(required.code).toBe(1);
    expect(required.stderr).toMatch(/an operator token is required/);
    expect(await rowsAfter(before)).toEqual([]);
  });

  test('when a token is revoked, then it names nobody at once: the command stops before acting and the attempt is recorded as refused', async () => {
    const name = person('carol');
    const token = await issue(name);
    const revoked = await ops(['revoke-operator-token', '--name', name, '--reason', 'left the team'], {
      OPERATOR_TOKEN: await issue(person('dana')),
    });
    expect(revoked.code).toBe(0);
    const out = json(revoked.stdout);
    expect(out).toMatchObject({ name, revoked_at: expect.any(String), revoked_by: expect.stringMatching(/^dana-/) });
    expect(await auditRow(out.audit_id)).toMatchObject({ action: 'revoke-operator-token', actor_via: 'operator_token', target_id: name });

    const before = await lastId();
    const r = await ops(['reissue', '--purchase', NO_PURCHASE, '--reason', 'still here'], { OPERATOR_TOKEN: token });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/OPERATOR_TOKEN names nobody/);
    const rows = await rowsAfter(before);
    expect(rows.map((x) => [x.actor, x.actor_via, x.action, x.outcome])).toEqual([
      [`unrecognised token ${token.slice(0, 8)}…`, 'operator_token', 'reissue', 'refused'],
    ]);
    // A made-up token is no better; revoking a person without a live token is refused.
    expect((await ops(['reissue', '--purchase', NO_PURCHASE, '--reason', 'x'], { OPERATOR_TOKEN: `opk_${'A'.repeat(43)}` })).code).toBe(1);
    expect((await ops(['revoke-operator-token', '--name', name, '--reason', 'twice'])).code).toBe(2);
  });
});

const post = (a: TestApp, urlPath: string, body: unknown, bearer: string | null, headers: Record<string, string> = {}) =>
  call(a.baseUrl, urlPath, {
    method: 'POST',
    body,
    headers: { 'user-agent': AGENT, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...headers },
  });

/** Asserts that each of `rows` (audit entries) is a succeeded codec decode by `name` with their operator token, and has the fields of `more`. */
function expectDecodesBy(rows: Record<string, unknown>[], name: string, more: Record<string, unknown> = {}): void {
  for (const row of rows)
    expect(row).toMatchObject({
      actor_kind: 'codec',
      actor: name,
      actor_via: 'operator_token',
      action: 'codec_decode',
      outcome: 'succeeded',
      ...more,
    });
}

describe('codec decodes are audited with their caller', () => {
  test('when a person decodes with their operator token, then the decode is recorded as theirs (encodes are not); a revoked token is 401', async () => {
    const name = person('erin');
    const token = await issue(name);
    const [encoded] = (await post(app, '/codec/encode', { payloads: [jsonPayload({ buyer: 'Jordan Lee' })] }, token)).body.payloads;
    const before = await lastId();
    // With no shared token configured too: the per-person token alone opens the endpoint.
    for (const a of [app, off]) {
      const res = await post(a, '/codec/decode', { payloads: [encoded] }, token, {
        'x-namespace': 'default',
      });
      expect(res.status).toBe(200);
      expect(res.body.payloads).toEqual([jsonPayload({ buyer: 'Jordan Lee' })]);
    }
    const rows = await rowsAfter(before);
    expect(rows).toHaveLength(2);
    expectDecodesBy(rows, name, {
      target_kind: 'namespace',
      target_id: 'default',
      client_address: expect.stringMatching(/127\.0\.0\.1/),
      details: { payloads: 1, user_agent: AGENT, origin: null },
    });
    expect(app.logs.filter((l) => l.msg === 'codec request').at(-1)).toMatchObject({ caller: 'operator-token', operator: name });

    await ops(['revoke-operator-token', '--name', name, '--reason', 'rotation']);
    const after = await lastId();
    for (const a of [app, off]) expect((await post(a, '/codec/decode', { payloads: [encoded] }, token)).status).toBe(401);
    expect((await post(off, '/codec/decode', { payloads: [encoded] }, 'not-an-operator-token')).status).toBe(404); // still off without one
    expect(await rowsAfter(after)).toEqual([]);
  });

  test('when the shared codec token or the UI mount decodes, then the entry says only that (the token’s fingerprint, the UI)', async () => {
    const [encoded] = (await post(app, '/codec/encode', { payloads: [jsonPayload('x')] }, SHARED)).body.payloads;
    const before = await lastId();
    expect((await post(app, '/codec/decode', { payloads: [encoded] }, SHARED)).status).toBe(200);
    expect((await post(app, `/codec/ui/${UI_KEY}/decode`, { payloads: [encoded] }, null, { 'x-namespace': 'default' })).status).toBe(200);
    const fingerprint = createHash('sha256').update(SHARED).digest('hex').slice(0, 8);
    expect((await rowsAfter(before)).map((r) => [r.actor_kind, r.actor, r.actor_via, r.target_id])).toEqual([
      ['codec', `codec token ${fingerprint}`, 'codec_token', null],
      ['codec', 'Temporal UI', 'temporal_ui', 'default'],
    ]);
  });

  test('when ops stuck decrypts the retrying activities’ failures, then its run is a decode recorded under the operator', async () => {
    const name = person('gina');
    const token = await issue(name);
    const before = await lastId();
    const r = await ops(['stuck', '--older-than-minutes', '525600'], { OPERATOR_TOKEN: token });
    expect([0, 3]).toContain(r.code);
    const rows = (await app.container.db('operator_audit_log').where('id', '>', before)).filter((x) => x.actor === name);
    expect(rows).toEqual([
      expect.objectContaining({
        actor_kind: 'codec',
        actor_via: 'operator_token',
        action: 'codec_decode',
        target_kind: 'namespace',
        target_id: app.container.config.TEMPORAL_NAMESPACE,
        outcome: 'succeeded',
        details: { via: 'ops stuck', failures_decoded: expect.any(Number) },
      }),
    ]);
  });

  test('when an operator reads a history with the Temporal CLI through the codec endpoint, then they read it in clear and each decode is theirs in the audit log', async () => {
    const name = person('frank');
    const token = await issue(name);
    const input = { purchaseId: 7, note: 'Named insured: Jordan Lee' };
    await withUnpolledWorkflow(
      app.container.temporal.client,
      'operatorProbeWorkflow',
      input,
      'operator identity test done',
      async (handle) => {
        const before = await lastId();
        const { config } = app.container;
        const shown = await run(
          path.join(ROOT, '.tools/bin/temporal'),
          [
            ...['workflow', 'show', '--workflow-id', handle.workflowId, '--output', 'json'],
            ...['--address', config.TEMPORAL_ADDRESS, '--namespace', config.TEMPORAL_NAMESPACE],
            ...['--codec-endpoint', `${app.baseUrl}/codec`, '--codec-auth', `Bearer ${token}`],
          ],
          { timeout: 30_000 },
        );
        expect(shown.stdout).toContain(Buffer.from(JSON.stringify(input)).toString('base64'));
        const rows = (await app.container.db('operator_audit_log').where('id', '>', before)).filter((r) => r.actor === name);
        expect(rows.length).toBeGreaterThan(0);
        expectDecodesBy(rows, name);
      },
    );
  });
});
