/**
 * Rate limit per key (spec §8): 429 RATE_LIMIT_ERROR with Retry-After, in memory and shared
 * through the real Redis when REDIS_URL is set. Limits are lowered to keep the test short.
 */
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createKey, createRootAccount } from '../helpers/fixtures';

const LIMIT = 5;

describe('in-memory limiter', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: String(LIMIT), REDIS_URL: '' });
  });
  afterAll(() => app.close());

  test('when a key exceeds its per-minute budget, then 429 RATE_LIMIT_ERROR with Retry-After, and other keys are unaffected', async () => {
    const account = await createRootAccount(app.container);
    const a = await createKey(app.container, { rootAccountId: account.id });
    const b = await createKey(app.container, { rootAccountId: account.id });

    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await call(app.baseUrl, '/api/v1/anything', { key: a.key })).status);
    expect(statuses).toEqual(Array(LIMIT).fill(404)); // through the gateway, no such route

    const limited = await call(app.baseUrl, '/api/v1/anything', { key: a.key });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ success: false, error: { code: 'RATE_LIMIT_ERROR', message: expect.any(String) } });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('x-request-id')).toBeTruthy();

    expect((await call(app.baseUrl, '/api/v1/anything', { key: b.key })).status).toBe(404);
  });

  test('when requests are refused at the gateway for a bad key, then they do not consume a real key budget', async () => {
    const account = await createRootAccount(app.container);
    const k = await createKey(app.container, { rootAccountId: account.id });
    for (let i = 0; i < LIMIT * 2; i++) expect((await call(app.baseUrl, '/api/v1/x', { key: 'nope' })).status).toBe(403);
    expect((await call(app.baseUrl, '/api/v1/x', { key: k.key })).status).toBe(404);
  });
});

describe('Redis-shared limiter', () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    const shared = {
      RATE_LIMIT_PER_MINUTE: String(LIMIT),
      REDIS_URL: 'redis://127.0.0.1:6379',
      RATE_LIMIT_REDIS_PREFIX: `rl:test:${randomUUID()}`,
    };
    first = await startTestApp(shared);
    second = await startTestApp(shared);
  });
  afterAll(async () => {
    await first.close();
    await second.close();
  });

  test('when one key calls two API instances, then they share one budget', async () => {
    const account = await createRootAccount(first.container);
    const k = await createKey(first.container, { rootAccountId: account.id });
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 1; i++) {
      const target = i % 2 === 0 ? first : second;
      statuses.push((await call(target.baseUrl, '/api/v1/anything', { key: k.key })).status);
    }
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(404));
    expect(statuses[LIMIT]).toBe(429);
  });
});
