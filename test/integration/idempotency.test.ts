/**
 * Idempotency keys on POST and PATCH, against real PostgreSQL: through the real app (products on
 * stripe-mock via a recording proxy, and a checkout through the Temporal dev server), and through
 * the real middleware and store on a small Koa app whose routes can be held open, fail or refuse,
 * so the in-progress, 5xx and expiry rules are shown deterministically.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { startTestApp, type TestApp } from '../helpers/app';
import { useCatalogAccounts } from '../helpers/catalog-accounts';
import { call } from '../helpers/fixtures';
import type { ProcessorProxy } from '../helpers/processor-proxy';
import { eventually, startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';
import { createQuotingAccount } from '../helpers/purchases';
import { createLogger } from '../../src/logger';
import type { AppState } from '../../src/http/context';
import { requestId } from '../../src/http/request-id';
import { errorHandler } from '../../src/http/error-handler';
import { jsonBody } from '../../src/http/body';
import { AppError } from '../../src/shared/errors';
import { idempotency, type IdempotencyOptions } from '../../src/idempotency/middleware';
import { createIdempotencyRepository } from '../../src/idempotency/repository';

const catalog = useCatalogAccounts();
let proxy: ProcessorProxy;
let app: TestApp;
let accountId: number;
let live: string;
let testKey: string;
let otherLive: string;
let questionSetId: number;
let otherQuestionSetId: number;

beforeAll(() => {
  ({ proxy, app, accountId, live, testKey, otherLive, questionSetId, otherQuestionSetId } = catalog);
});

const productBody = (name: string) => ({ customerName: name, defaultPrice: 20, questionSetId });
const createProduct = (key: string, idempotencyKey: string | undefined, body: unknown, path = '/api/v1/products') =>
  call(app.baseUrl, path, {
    method: 'POST',
    key,
    body,
    headers: idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey },
  });
const productsNamed = async (name: string) =>
  (await app.container.db('product_lines').where({ customer_name: name }).count({ n: '*' }).first())!.n;
const processorProductCreates = (name: string) =>
  proxy.requests.filter((r) => r.method === 'POST' && r.path === '/v1/products' && r.params.get('name') === name).length;
let n = 0;
const unique = (what: string) => `${what} ${process.pid}-${Date.now()}-${n++}`;

describe('a retried POST with the same Idempotency-Key', () => {
  test('when the same body is sent again, then the first answer is replayed with Idempotent-Replayed: true and one product exists', async () => {
    const name = unique('Replayed');
    const first = await createProduct(live, `create-${name}`, productBody(name));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await createProduct(live, `create-${name}`, productBody(name));
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(Number(await productsNamed(name))).toBe(1);
    expect(processorProductCreates(name)).toBe(1);
  });

  test('when the same parameters come back in another key order and spacing, then it is the same request: replayed, one product', async () => {
    const name = unique('Reordered');
    const body = productBody(name);
    const first = await call(app.baseUrl, '/api/v1/products', {
      method: 'POST',
      key: live,
      rawBody: JSON.stringify(body),
      headers: { 'content-type': 'application/json', 'Idempotency-Key': `order-${name}` },
    });
    expect(first.status).toBe(201);
    const reordered = `{ "questionSetId": ${body.questionSetId},\n  "defaultPrice": ${body.defaultPrice}, "customerName": ${JSON.stringify(name)} }`;
    const again = await call(app.baseUrl, '/api/v1/products', {
      method: 'POST',
      key: live,
      rawBody: reordered,
      headers: { 'content-type': 'application/json', 'Idempotency-Key': `order-${name}` },
    });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(Number(await productsNamed(name))).toBe(1);
    // A value that differs is another request, in whatever order: refused.
    const changed = `{ "questionSetId": ${body.questionSetId}, "defaultPrice": 21, "customerName": ${JSON.stringify(name)} }`;
    expect(
      (
        await call(app.baseUrl, '/api/v1/products', {
          method: 'POST',
          key: live,
          rawBody: changed,
          headers: { 'content-type': 'application/json', 'Idempotency-Key': `order-${name}` },
        })
      ).body.error.code,
    ).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  test('when the key is reused with another body or on another path, then 409 IDEMPOTENCY_KEY_REUSED and nothing runs', async () => {
    const name = unique('Reused');
    expect((await createProduct(live, `k-${name}`, productBody(name))).status).toBe(201);
    const otherBody = await createProduct(live, `k-${name}`, productBody(`${name} changed`));
    expect(otherBody.status).toBe(409);
    expect(otherBody.body).toEqual({
      success: false,
      error: { code: 'IDEMPOTENCY_KEY_REUSED', message: expect.stringContaining('POST /api/v1/products') },
    });
    const otherPath = await createProduct(live, `k-${name}`, productBody(name), '/api/v1/bundles');
    expect(otherPath.status).toBe(409);
    expect(otherPath.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(Number(await productsNamed(`${name} changed`))).toBe(0);
  });

  test('when eight requests with one key arrive at once, then exactly one runs and the others replay its answer', async () => {
    const name = unique('Parallel');
    const answers = await Promise.all(Array.from({ length: 8 }, () => createProduct(live, `p-${name}`, productBody(name))));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    expect(Number(await productsNamed(name))).toBe(1);
    expect(processorProductCreates(name)).toBe(1);
  });

  test('when the request is refused (400), then the refusal is what a retry gets', async () => {
    const key = `refused-${unique('x')}`;
    const first = await createProduct(live, key, { customerName: '' });
    expect(first.status).toBe(400);
    const retry = await createProduct(live, key, { customerName: '' });
    expect(retry.status).toBe(400);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
  });

  test('when another account, or the test key of the same account, uses the same key, then each runs on its own', async () => {
    const name = unique('Scoped');
    const key = `shared-${name}`;
    const mine = await createProduct(live, key, productBody(name));
    const theirs = await createProduct(otherLive, key, { ...productBody(name), questionSetId: otherQuestionSetId });
    const myTest = await createProduct(testKey, key, { ...productBody(name), isTestMode: true });
    for (const r of [mine, theirs, myTest]) {
      expect(r.status).toBe(201);
      expect(r.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(new Set([mine, theirs, myTest].map((r) => r.body.data.id)).size).toBe(3);
  });

  test('when the header is empty, longer than 255 characters or not printable ASCII, then 400 VALIDATION_ERROR naming it and nothing runs', async () => {
    const name = unique('BadKey');
    for (const key of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9']) {
      const res = await call(app.baseUrl, '/api/v1/products', {
        method: 'POST',
        key: live,
        body: productBody(name),
        headers: { 'Idempotency-Key': key },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('Idempotency-Key') });
    }
    expect((await createProduct(live, 'k'.repeat(255), productBody(name))).status).toBe(201);
    expect(Number(await productsNamed(name))).toBe(1);
  });

  test('when the header comes with a GET or without it on a POST, then nothing changes', async () => {
    const name = unique('NoKey');
    await createProduct(live, undefined, productBody(name));
    await createProduct(live, undefined, productBody(name));
    expect(Number(await productsNamed(name))).toBe(2);
    const list = await call(app.baseUrl, '/api/v1/products', { key: live, headers: { 'Idempotency-Key': 'list' } });
    expect(list.status).toBe(200);
    expect(list.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('a retried checkout (quote surface) with the same Idempotency-Key', () => {
  let worker: TestWorker;
  let checkoutApp: TestApp;
  beforeAll(async () => {
    const taskQueue = uniqueTaskQueue();
    worker = await startTestWorker(taskQueue);
    checkoutApp = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue });
  });
  afterAll(async () => {
    await checkoutApp.close();
    await worker.shutdown();
  });

  test('when adminValidateBuyerResponses is retried, then the same purchase and checkout session come back and one purchase exists', async () => {
    const account = await createQuotingAccount(checkoutApp);
    const body = await account.quoteBody();
    const key = `checkout-${unique('c')}`;
    const sendWith = () =>
      call(checkoutApp.baseUrl, '/public-quote/adminValidateBuyerResponses', {
        method: 'POST',
        key: account.key,
        body,
        headers: { 'Idempotency-Key': key },
      });
    const [a, b] = await Promise.all([sendWith(), sendWith()]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body).toEqual(a.body);
    expect(typeof a.body.purchase_id).toBe('number');
    const later = await sendWith();
    expect(later.headers.get('idempotent-replayed')).toBe('true');
    expect(later.body.purchase_id).toBe(a.body.purchase_id);
    const buyer = await checkoutApp.container.db('purchases').where({ id: a.body.purchase_id }).first('buyer_id');
    expect(Number((await checkoutApp.container.db('purchases').where({ buyer_id: buyer.buyer_id }).count({ n: '*' }).first())!.n)).toBe(1);
    // A mismatch on the bare surface answers its bare error shape.
    const reused = await call(checkoutApp.baseUrl, '/public-quote/adminValidateBuyerResponses', {
      method: 'POST',
      key: account.key,
      body: { ...body, extra: 1 },
      headers: { 'Idempotency-Key': key },
    });
    expect(reused.status).toBe(409);
    expect(reused.body).toEqual({ code: 'IDEMPOTENCY_KEY_REUSED', message: expect.any(String) });
  }, 90_000);
});

describe('the idempotency middleware and store, on routes that can be held, fail or refuse', () => {
  let server: http.Server;
  let base: string;
  let effects: Record<string, number>;
  let hold: Promise<void>;
  let releaseHold: () => void;
  const options: IdempotencyOptions = { ttlMs: 60_000, waitMs: 200, takeoverAfterMs: 60_000 };

  beforeAll(async () => {
    const store = createIdempotencyRepository(app.container.db);
    const koa = new Koa<AppState>();
    const router = new Router<AppState>();
    router.post('/held', async (ctx) => {
      effects.held = (effects.held ?? 0) + 1;
      await hold;
      ctx.body = { run: effects.held };
    });
    router.post('/unavailable', (ctx) => {
      effects.unavailable = (effects.unavailable ?? 0) + 1;
      if (effects.unavailable === 1) throw new AppError('CONNECTION_ERROR', 'down for a moment');
      ctx.body = { run: effects.unavailable };
    });
    router.post('/crash', (ctx) => {
      effects.crash = (effects.crash ?? 0) + 1;
      if (effects.crash === 1) throw new Error('a bug');
      ctx.body = { run: effects.crash };
    });
    router.post('/counted', (ctx) => {
      effects.counted = (effects.counted ?? 0) + 1;
      ctx.body = { run: effects.counted };
    });
    koa.use(requestId(createLogger({ LOG_LEVEL: 'silent' }, 'test')));
    koa.use(errorHandler());
    // As in the real app: the body parser, then the idempotency key, then the routes.
    koa.use(jsonBody(1024 * 1024));
    koa.use(async (ctx, next) => {
      ctx.state.errorStyle = 'bare';
      ctx.state.principal = { apiKeyId: 1, rootAccountId: accountId, mode: 'test', agentId: null, platformFeeBps: null };
      const ttl = ctx.get('x-test-ttl-ms');
      return idempotency(store, ttl ? { ...options, ttlMs: Number(ttl) } : options)(ctx, next);
    });
    koa.use(router.routes());
    server = http.createServer(koa.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    effects = {};
    hold = new Promise<void>((resolve) => (releaseHold = resolve));
  });

  const post = (path: string, key: string, body: unknown = { a: 1 }, headers: Record<string, string> = {}) =>
    call(base, path, { method: 'POST', body, headers: { 'Idempotency-Key': key, ...headers } });
  /** Waits until the first request of a key holds it and runs (its route has started). */
  const firstRunning = (route: string) => eventually(async () => effects[route] === 1, 10_000);
  /** Waits until the key's `expires_at` is past by the database's clock, the one the store's claims and pruning compare with. */
  const expiredByTheStore = (key: string) =>
    eventually(async () => {
      const row = await app.container
        .db('idempotency_keys')
        .where({ idempotency_key: key })
        .first(app.container.db.raw('expires_at <= now() as expired'));
      return row?.expired === true;
    }, 10_000);

  test('when a retry arrives while the first request still runs past the wait, then 409 IDEMPOTENCY_KEY_IN_PROGRESS with Retry-After, and the first answer is replayed later', async () => {
    const key = unique('held');
    const first = post('/held', key);
    await firstRunning('held');
    const during = await post('/held', key);
    expect(during.status).toBe(409);
    expect(during.body).toEqual({ code: 'IDEMPOTENCY_KEY_IN_PROGRESS', message: expect.any(String) });
    expect(during.headers.get('retry-after')).toBe('1');
    releaseHold();
    expect((await first).body).toEqual({ run: 1 });
    const after = await post('/held', key);
    expect(after.body).toEqual({ run: 1 });
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(effects.held).toBe(1);
  });

  test('when a retry arrives while the first request runs and it finishes within the wait, then the retry gets its answer', async () => {
    const key = unique('waited');
    const first = post('/held', key);
    await firstRunning('held');
    const retry = post('/held', key);
    setTimeout(() => releaseHold(), 50);
    const [a, b] = await Promise.all([first, retry]);
    expect(a.body).toEqual({ run: 1 });
    expect(b.body).toEqual({ run: 1 });
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(effects.held).toBe(1);
  });

  test('when the first answer is a 5xx or a crash, then it is not stored and the retry runs again', async () => {
    const key = unique('503');
    expect((await post('/unavailable', key)).status).toBe(503);
    const retried = await post('/unavailable', key);
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ run: 2 });
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    const crashKey = unique('500');
    expect((await post('/crash', crashKey)).status).toBe(500);
    expect((await post('/crash', crashKey)).body).toEqual({ run: 2 });
  });

  test('when the key has expired, then a retry runs again, and pruning removes expired keys only', async () => {
    const key = unique('expiring');
    const kept = unique('kept');
    await post('/counted', key, { a: 1 }, { 'x-test-ttl-ms': '50' });
    await post('/counted', kept);
    await expiredByTheStore(key);
    const again = await post('/counted', key, { a: 1 }, { 'x-test-ttl-ms': '50' });
    expect(again.body).toEqual({ run: 3 });
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    await expiredByTheStore(key); // the second run's answer, kept for 50 ms too
    const store = createIdempotencyRepository(app.container.db);
    expect(await store.pruneExpired()).toBeGreaterThanOrEqual(1);
    const left = await app.container.db('idempotency_keys').whereIn('idempotency_key', [key, kept]).pluck('idempotency_key');
    expect(left).toEqual([kept]);
    expect((await post('/counted', kept)).headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('the OpenAPI document', () => {
  test('when fetched, then every keyed POST and PATCH declares Idempotency-Key, its 409 and Idempotent-Replayed; the webhook does not', async () => {
    const doc = (await call(app.baseUrl, '/openapi.json')).body;
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { maxLength: 255 },
    });
    const keyed = [
      doc.paths['/api/v1/products'].post,
      doc.paths['/api/v1/products/{id}'].patch,
      doc.paths['/public-quote/adminValidateBuyerResponses'].post,
    ];
    for (const op of keyed) {
      expect(op.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
      expect(op.responses['409'].description).toMatch(/IDEMPOTENCY_KEY_REUSED.*IDEMPOTENCY_KEY_IN_PROGRESS/);
    }
    expect(doc.paths['/api/v1/products'].post.responses['201'].headers['Idempotent-Replayed']).toBeDefined();
    expect(doc.paths['/public-quote/adminValidateBuyerResponses'].post.responses['409'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/BareError',
    });
    expect(doc.components.schemas.BareError).toBeDefined();
    expect(doc.paths['/webhooks/payproc'].post.parameters ?? []).not.toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
  });
});
