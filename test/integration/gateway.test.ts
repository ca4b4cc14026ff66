/**
 * The gateway rules of every /api/v1 route (spec §2.5, §5, §7.1, §8, §9; ARCHITECTURE §4),
 * against the real Koa app, real PostgreSQL and the real Temporal dev server.
 */
import { ok } from '../../src/http/envelope';
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createKey, createRootAccount } from '../helpers/fixtures';

let app: TestApp;
let liveKey: string;
let liveKeyId: number;

beforeAll(async () => {
  app = await startTestApp({}, (c) => {
    // Routes that exist only in this suite: one answers, one fails like a bug would.
    c.apiV1Routes.push((router) => {
      router.get('/echo', (ctx) => {
        ctx.body = ok({ rootAccountId: ctx.state.principal!.rootAccountId, mode: ctx.state.principal!.mode }, 'echo');
      });
      router.post('/echo', (ctx) => {
        ctx.body = ok(ctx.request.body, 'echo');
      });
      router.get('/boom', () => {
        throw new Error('duplicate key value violates unique constraint "api_keys_pkey" select * from api_key_secrets');
      });
    });
  });
  const account = await createRootAccount(app.container);
  const k = await createKey(app.container, { rootAccountId: account.id });
  liveKey = k.key;
  liveKeyId = k.id;
});

afterAll(async () => {
  await app.close();
});

describe('API key at the gateway (spec §5.2)', () => {
  test.each([
    ['missing', undefined],
    ['empty', ''],
    ['malformed', 'not-a-key'],
    ['unknown but well-formed', 'ik_live_' + 'A'.repeat(43)],
  ])('when the key is %s, then 403 with exactly {"message":"Forbidden"}', async (_label, key) => {
    const res = await call(app.baseUrl, '/api/v1/echo', { key });
    expect(res.status).toBe(403);
    expect(res.text).toBe('{"message":"Forbidden"}');
  });

  test('when the key is valid, then the request reaches the route and sees its account', async () => {
    const res = await call(app.baseUrl, '/api/v1/echo', { key: liveKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { rootAccountId: expect.any(Number), mode: 'live' }, message: 'echo' });
  });

  test('when a key is frozen, then it is refused at once, and unfreeze restores it', async () => {
    const account = await createRootAccount(app.container);
    const k = await createKey(app.container, { rootAccountId: account.id, mode: 'test' });
    expect((await call(app.baseUrl, '/api/v1/echo', { key: k.key })).status).toBe(200);

    await app.container.services.apiKeys.freeze(k.id);
    const frozen = await call(app.baseUrl, '/api/v1/echo', { key: k.key });
    expect(frozen.status).toBe(403);
    expect(frozen.body).toEqual({ message: 'Forbidden' });

    await app.container.services.apiKeys.unfreeze(k.id);
    expect((await call(app.baseUrl, '/api/v1/echo', { key: k.key })).status).toBe(200);
  });

  test('when a key is deleted, then it is refused and cannot be unfrozen or rotated', async () => {
    const account = await createRootAccount(app.container);
    const k = await createKey(app.container, { rootAccountId: account.id });
    await app.container.services.apiKeys.delete(k.id);
    expect((await call(app.baseUrl, '/api/v1/echo', { key: k.key })).status).toBe(403);
    await expect(app.container.services.apiKeys.unfreeze(k.id)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(app.container.services.apiKeys.rotate(k.id)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  test('when a key is rotated, then old and new values both work during the grace period', async () => {
    const account = await createRootAccount(app.container);
    const k = await createKey(app.container, { rootAccountId: account.id });
    const rotated = await app.container.services.apiKeys.rotate(k.id, 24);
    expect(rotated.key).not.toBe(k.key);
    expect(new Date(rotated.previousValueExpiresAt!).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect((await call(app.baseUrl, '/api/v1/echo', { key: k.key })).status).toBe(200);
    expect((await call(app.baseUrl, '/api/v1/echo', { key: rotated.key })).status).toBe(200);
  });

  test('when the grace period of a rotated value has passed, then only the new value works', async () => {
    const account = await createRootAccount(app.container);
    const k = await createKey(app.container, { rootAccountId: account.id });
    const rotated = await app.container.services.apiKeys.rotate(k.id, 0);
    expect((await call(app.baseUrl, '/api/v1/echo', { key: k.key })).status).toBe(403);
    expect((await call(app.baseUrl, '/api/v1/echo', { key: rotated.key })).status).toBe(200);
  });

  test('when a test-mode value is presented with a live prefix, then it is refused', async () => {
    const account = await createRootAccount(app.container);
    const k = await createKey(app.container, { rootAccountId: account.id, mode: 'test' });
    const forged = k.key.replace('ik_test_', 'ik_live_');
    expect((await call(app.baseUrl, '/api/v1/echo', { key: forged })).status).toBe(403);
  });
});

describe('optional headers (spec §5.6, §9.1)', () => {
  test.each([['v2'], ['V1'], ['']])('when api-version is "%s", then 400 UNSUPPORTED_API_VERSION', async (v) => {
    const res = await call(app.baseUrl, '/api/v1/echo', { key: liveKey, headers: { 'api-version': v } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: { code: 'UNSUPPORTED_API_VERSION', message: expect.any(String) } });
  });

  test('when api-version is v1, then the request passes', async () => {
    expect((await call(app.baseUrl, '/api/v1/echo', { key: liveKey, headers: { 'api-version': 'v1' } })).status).toBe(200);
  });

  test.each([['acc_123'], ['123'], ['']])('when payproc-account is "%s", then 400 INVALID_ACCOUNT_ID', async (v) => {
    const res = await call(app.baseUrl, '/api/v1/echo', { key: liveKey, headers: { 'payproc-account': v } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_ACCOUNT_ID');
    expect(res.body.success).toBe(false);
  });

  test('when payproc-account starts with acct_, then the request passes', async () => {
    expect((await call(app.baseUrl, '/api/v1/echo', { key: liveKey, headers: { 'payproc-account': 'acct_1ABC' } })).status).toBe(200);
  });
});

describe('routes and bodies (spec §7.1, ARCHITECTURE §4)', () => {
  test('when the path does not exist, then 404 ROUTE_NOT_FOUND in the envelope', async () => {
    for (const path of ['/api/v1/nope', '/nope', '/api/v2/products']) {
      const res = await call(app.baseUrl, path, { key: liveKey });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: { code: 'ROUTE_NOT_FOUND', message: expect.any(String) } });
    }
  });

  test('when a known path is called with a method it does not have, then 404 ROUTE_NOT_FOUND', async () => {
    const res = await call(app.baseUrl, '/api/v1/echo', { method: 'DELETE', key: liveKey });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('ROUTE_NOT_FOUND');
  });

  test('when the body is malformed JSON, then 400 VALIDATION_ERROR', async () => {
    const res = await call(app.baseUrl, '/api/v1/echo', { method: 'POST', key: liveKey, rawBody: '{"a": ' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: { code: 'VALIDATION_ERROR', message: 'Request body is not valid JSON' } });
  });

  test('when the body is a JSON scalar, then 400 VALIDATION_ERROR', async () => {
    const res = await call(app.baseUrl, '/api/v1/echo', { method: 'POST', key: liveKey, rawBody: '"just a string"' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  test('when the body is over 1 MiB, then 413 PAYLOAD_TOO_LARGE', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(1024 * 1024) });
    const res = await call(app.baseUrl, '/api/v1/echo', { method: 'POST', key: liveKey, rawBody: big });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ success: false, error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } });
  });

  test('when the body is just under 1 MiB, then it is accepted', async () => {
    const body = JSON.stringify({ pad: 'x'.repeat(1024 * 1024 - 20) });
    const res = await call(app.baseUrl, '/api/v1/echo', { method: 'POST', key: liveKey, rawBody: body });
    expect(res.status).toBe(200);
    expect(res.body.data.pad).toHaveLength(1024 * 1024 - 20);
  });

  test('when a route throws an unexpected error, then 500 INTERNAL_ERROR with no stack or SQL', async () => {
    const res = await call(app.baseUrl, '/api/v1/boom', { key: liveKey });
    expect(res.status).toBe(500);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe('INTERNAL_ERROR');
    expect(res.text).not.toMatch(/select|constraint|api_key|at \w+ \(|\.ts:/i);
    const logged = app.logs.find((l) => l.msg === 'unhandled error' && l.reqId === res.headers.get('x-request-id'));
    expect(logged).toBeDefined();
  });
});

describe('X-Request-Id (spec §2.5)', () => {
  test('when the caller sends a well-formed id, then it is echoed and logged', async () => {
    const res = await call(app.baseUrl, '/api/v1/echo', { key: liveKey, headers: { 'x-request-id': 'agent-req.42:abc' } });
    expect(res.headers.get('x-request-id')).toBe('agent-req.42:abc');
    expect(app.logs.some((l) => l.reqId === 'agent-req.42:abc' && l.msg === 'request')).toBe(true);
  });

  test('when the caller sends a malformed id, then a UUID replaces it', async () => {
    const res = await call(app.baseUrl, '/api/v1/echo', { key: liveKey, headers: { 'x-request-id': 'bad id with spaces\u00e9' } });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test('when any error path answers, then the response still carries X-Request-Id', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(1024 * 1024 + 1) });
    const cases = [
      call(app.baseUrl, '/api/v1/echo'),
      call(app.baseUrl, '/api/v1/echo', { key: 'ik_live_' + 'B'.repeat(43) }),
      call(app.baseUrl, '/api/v1/echo', { key: liveKey, headers: { 'api-version': 'v9' } }),
      call(app.baseUrl, '/api/v1/echo', { key: liveKey, headers: { 'payproc-account': 'x' } }),
      call(app.baseUrl, '/api/v1/nope', { key: liveKey }),
      call(app.baseUrl, '/nope'),
      call(app.baseUrl, '/api/v1/echo', { method: 'POST', key: liveKey, rawBody: '{' }),
      call(app.baseUrl, '/api/v1/echo', { method: 'POST', key: liveKey, rawBody: big }),
      call(app.baseUrl, '/api/v1/boom', { key: liveKey }),
    ];
    const results = await Promise.all(cases);
    expect(results.map((r) => r.status)).toEqual([403, 403, 400, 400, 404, 404, 400, 413, 500]);
    for (const r of results) expect(r.headers.get('x-request-id')).toBeTruthy();
  });
});

describe('secrets stay out of logs', () => {
  test('when requests carry API keys, then no log line contains a key value', async () => {
    await call(app.baseUrl, '/api/v1/echo', { key: liveKey });
    await call(app.baseUrl, '/api/v1/echo', { key: 'ik_live_' + 'C'.repeat(43) });
    const raw = app.rawLogs();
    expect(raw).toContain(`"apiKeyId":${liveKeyId}`);
    expect(raw).not.toContain(liveKey);
    expect(raw).not.toContain('C'.repeat(43));
  });
});
