/**
 * Routes outside the gateway: liveness, readiness against the real PostgreSQL and Temporal,
 * and the generated OpenAPI document with its rendered page.
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { call } from '../helpers/fixtures';
import { eventually, startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';

describe('health and docs', () => {
  let app: TestApp;
  beforeAll(async () => {
    // A task queue no worker polls.
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: uniqueTaskQueue() });
  });
  afterAll(() => app.close());

  test('when /healthz is called without a key, then 200 and X-Request-Id', async () => {
    const res = await call(app.baseUrl, '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  test('when PostgreSQL and Temporal answer but no worker polls the purchase task queue, then /readyz is 503 naming the workers', async () => {
    const res = await call(app.baseUrl, '/readyz');
    expect(res.body).toEqual({ status: 'not_ready', checks: { database: true, temporal: true, workers: false } });
    expect(res.status).toBe(503);
  });

  test('when /openapi.json is fetched, then it is an OpenAPI 3.1 document with the key scheme and envelope', async () => {
    const res = await call(app.baseUrl, '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.components.securitySchemes.ApiKey).toEqual({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    expect(res.body.components.schemas.ErrorEnvelope).toBeDefined();
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz']));
  });

  test('when /docs is opened, then the page and its assets are served locally', async () => {
    const page = await call(app.baseUrl, '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('/docs/swagger-ui-bundle.js');
    const js = await fetch(`${app.baseUrl}/docs/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(100_000);
    expect((await call(app.baseUrl, '/docs/../package.json')).status).toBe(404);
  });

  test('when a docs asset is named like an Object.prototype member, then 404 ROUTE_NOT_FOUND (not a broken connection)', async () => {
    for (const asset of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const res = await call(app.baseUrl, `/docs/${asset}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: { code: 'ROUTE_NOT_FOUND', message: expect.any(String) } });
    }
  });
});

describe('readiness when a dependency is down', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Nothing listens on port 1: the Temporal check must fail fast, not hang.
    app = await startTestApp({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
  });
  afterAll(() => app.close());

  test('when Temporal does not answer, then /readyz is 503 not_ready naming it', async () => {
    const started = Date.now();
    const res = await call(app.baseUrl, '/readyz');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'not_ready', checks: { database: true, temporal: false, workers: false } });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('readiness and the worker', () => {
  let app: TestApp;
  let worker: TestWorker | undefined;
  const taskQueue = uniqueTaskQueue();
  /** A short poller window, so a stopped worker shows in seconds (production: 90 s, above the 60 s long poll). */
  const windowSeconds = 12;
  const readiness = async () => (await call(app.baseUrl, '/readyz')).body as { status: string; checks: { workers: boolean } };
  const until = (want: 'ready' | 'not_ready', timeoutMs: number) =>
    eventually(async () => {
      const body = await readiness();
      return body.status === want ? body : null;
    }, timeoutMs);
  beforeAll(async () => {
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, READINESS_POLLER_WINDOW_SECONDS: String(windowSeconds) });
  });
  afterAll(async () => {
    await app.close();
    await worker?.shutdown();
  });

  test('when no worker has polled, then /readyz is 503; a worker polls, then 200; it stops, then 503 within the poller window; a worker polls again, then 200', async () => {
    expect((await call(app.baseUrl, '/readyz')).body.checks.workers).toBe(false);

    worker = await startTestWorker(taskQueue);
    expect(await until('ready', 30_000)).toEqual({ status: 'ready', checks: { database: true, temporal: true, workers: true } });

    const stopped = Date.now();
    await worker.shutdown();
    worker = undefined;
    // The window plus the 5 s cache of the check, plus slack for a loaded machine.
    expect(await until('not_ready', (windowSeconds + 5 + 15) * 1000)).toEqual({
      status: 'not_ready',
      checks: { database: true, temporal: true, workers: false },
    });
    expect((await call(app.baseUrl, '/readyz')).status).toBe(503);
    expect(Date.now() - stopped).toBeLessThan((windowSeconds + 5 + 15) * 1000);

    worker = await startTestWorker(taskQueue);
    expect(await until('ready', 30_000)).toEqual({ status: 'ready', checks: { database: true, temporal: true, workers: true } });
  }, 120_000);
});
