/**
 * The typed client on a busy day (clients/typescript, `retryingFetch`), against a small local
 * HTTP server that answers from a script: 429 retried after its Retry-After, 502/503/504 and
 * connection errors (a socket closed mid-request, an attempt over the timeout) retried after a
 * capped, jittered backoff, a 409 of an Idempotency-Key still in progress retried; every POST and
 * PATCH carries one Idempotency-Key (the caller's or a generated one) that each attempt repeats,
 * with the same body; nothing else is retried; `maxNetworkRetries` bounds it all (0: off); the
 * caller's abort stops it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ApiError,
  createApiClient,
  ok,
  parseRetryAfter,
  retryDelayMs,
  retryingFetch,
  type RetryInfo,
  type RetryOptions,
} from '../../clients/typescript';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the server does with the n-th request: answer (status, headers, JSON body), drop the connection, or never answer. */
type Step = { status: number; headers?: Record<string, string>; body?: unknown } | 'drop' | 'hang';

let server: http.Server;
let baseUrl: string;
let script: Step[] = [];
let seen: Seen[] = [];
const OK_BODY = { success: true, data: { id: 7 }, message: 'ok' };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString(), at: Date.now() });
      const step = script.shift() ?? { status: 200, body: OK_BODY };
      if (step === 'drop') return req.socket.destroy();
      if (step === 'hang') return;
      res
        .writeHead(step.status, { 'content-type': 'application/json', ...step.headers })
        .end(
          JSON.stringify(
            step.body ?? (step.status < 300 ? OK_BODY : { success: false, error: { code: `E${step.status}`, message: 'scripted' } }),
          ),
        );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

beforeEach(() => {
  script = [];
  seen = [];
});

/** A client with short backoffs (10 ms doubling to 40 ms) unless told otherwise; its retries are recorded. */
function client(options: RetryOptions = {}) {
  const retries: RetryInfo[] = [];
  const api = createApiClient({
    baseUrl,
    apiKey: 'ik_test_retries',
    initialNetworkRetryDelay: 10,
    maxNetworkRetryDelay: 40,
    onRetry: (r) => retries.push(r),
    ...options,
  });
  return { api, retries };
}

const createProduct = (api: ReturnType<typeof client>['api'], key?: string) =>
  api.POST('/api/v1/products', {
    params: key ? { header: { 'Idempotency-Key': key } } : {},
    body: { customerName: 'Event Liability', defaultPrice: 39.5 },
  });

describe('the typed client, retrying', () => {
  test('when a POST is answered 429 with Retry-After: 1, then it waits that second and sends the same body with the same generated Idempotency-Key', async () => {
    script = [{ status: 429, headers: { 'Retry-After': '1' } }];
    const { api, retries } = client();
    const product = await ok(createProduct(api));
    expect(product.data.id).toBe(7);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(990);
    const key = seen[0]!.headers['idempotency-key'];
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(seen[1]!.headers['idempotency-key']).toBe(key);
    expect(seen[1]!.body).toBe(seen[0]!.body);
    expect(JSON.parse(seen[1]!.body)).toEqual({ customerName: 'Event Liability', defaultPrice: 39.5 });
    expect(seen[1]!.headers['x-api-key']).toBe('ik_test_retries');
    expect(retries).toEqual([expect.objectContaining({ retry: 1, status: 429, method: 'POST', idempotencyKey: key })]);
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(1000);
  });

  test('when the caller sends its own Idempotency-Key, then every attempt carries it, and two calls never share a generated one', async () => {
    script = [{ status: 503 }, { status: 502 }];
    const { api } = client();
    await ok(createProduct(api, 'my-key-1'));
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['my-key-1', 'my-key-1', 'my-key-1']);
    seen = [];
    await ok(createProduct(api));
    await ok(createProduct(api));
    expect(new Set(seen.map((s) => s.headers['idempotency-key'])).size).toBe(2);
  });

  test('when 503 and 504 come back, then the backoffs double from the initial delay, jittered within [half, full], and capped', async () => {
    script = [{ status: 503 }, { status: 504 }, { status: 503 }];
    const { api, retries } = client({ maxNetworkRetries: 3, initialNetworkRetryDelay: 20, maxNetworkRetryDelay: 50 });
    await ok(api.GET('/api/v1/products/{id}', { params: { path: { id: '7' } } }));
    expect(seen).toHaveLength(4);
    expect(retries.map((r) => r.status)).toEqual([503, 504, 503]);
    const [first, second, third] = retries.map((r) => r.delayMs);
    expect(first).toBe(20); // 20 · [0.5, 1) never below the initial delay
    expect(second).toBeGreaterThanOrEqual(20);
    expect(second).toBeLessThanOrEqual(40);
    expect(third).toBeGreaterThanOrEqual(25);
    expect(third).toBeLessThanOrEqual(50); // 80 capped at 50
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.at - seen[i - 1]!.at).toBeGreaterThanOrEqual(retries[i - 1]!.delayMs - 5);
    // A GET is not keyed: it changes nothing to retry it.
    expect(seen.every((s) => s.headers['idempotency-key'] === undefined)).toBe(true);
  });

  test('when the connection drops mid-request, then the request is sent again and its answer returned', async () => {
    script = ['drop'];
    const { api, retries } = client();
    const product = await ok(createProduct(api));
    expect(product.data.id).toBe(7);
    expect(seen).toHaveLength(2);
    expect(seen[0]!.headers['idempotency-key']).toBe(seen[1]!.headers['idempotency-key']);
    expect(retries).toHaveLength(1);
    expect(retries[0]!.status).toBeUndefined();
    expect(String(retries[0]!.error)).toMatch(/fetch failed/); // undici's TypeError for a closed socket
  });

  test('when nothing listens at all, then each retry fails too and the last connection error is thrown', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const retries: RetryInfo[] = [];
    const api = createApiClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'k',
      maxNetworkRetries: 2,
      initialNetworkRetryDelay: 5,
      onRetry: (r) => retries.push(r),
    });
    await expect(api.GET('/api/v1/products')).rejects.toThrow(/fetch failed/);
    expect(retries).toHaveLength(2);
  });

  test('when an attempt gets no answer within the timeout, then it counts as a connection error and is retried', async () => {
    script = ['hang'];
    const { api, retries } = client({ timeout: 300 });
    const started = Date.now();
    await ok(createProduct(api));
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(seen).toHaveLength(2);
    expect(retries).toHaveLength(1);
    expect(String((retries[0]!.error as Error).name)).toMatch(/TimeoutError|AbortError/);
  });

  test('when retries run out, then the last answer is handed back (and ok() throws it as an ApiError)', async () => {
    script = [{ status: 503 }, { status: 503 }, { status: 503 }];
    const { api, retries } = client({ maxNetworkRetries: 2 });
    const err = await ok(createProduct(api)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 503, code: 'E503', method: 'POST' });
    expect(seen).toHaveLength(3);
    expect(retries).toHaveLength(2);
  });

  test('when the answer is a 400, a 404, a 500 or a 409 without Retry-After, then it is not retried', async () => {
    const { api, retries } = client();
    for (const status of [400, 404, 500, 409]) {
      seen = [];
      script = [{ status }];
      const { response } = await createProduct(api);
      expect({ status, got: response.status, requests: seen.length }).toEqual({ status, got: status, requests: 1 });
    }
    expect(retries).toEqual([]);
  });

  test('when a 409 says its Idempotency-Key’s first request still runs (Retry-After), then it is retried after that', async () => {
    script = [
      {
        status: 409,
        headers: { 'Retry-After': '1' },
        body: { success: false, error: { code: 'IDEMPOTENCY_KEY_IN_PROGRESS', message: 'still running' } },
      },
    ];
    const { api, retries } = client();
    await ok(createProduct(api, 'k-409'));
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['k-409', 'k-409']);
    expect(retries.map((r) => r.status)).toEqual([409]);
  });

  test('when a 429 asks for longer than maxRetryAfter, then it is handed back at once', async () => {
    script = [{ status: 429, headers: { 'Retry-After': '120' } }];
    const { api, retries } = client();
    const started = Date.now();
    const { response } = await createProduct(api);
    expect(response.status).toBe(429);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(seen).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  test('when maxNetworkRetries is 0, then nothing is retried and the request goes as given (no generated key)', async () => {
    script = [{ status: 503 }];
    const { api } = client({ maxNetworkRetries: 0 });
    const { response } = await createProduct(api);
    expect(response.status).toBe(503);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers['idempotency-key']).toBeUndefined();
  });

  test('when the caller aborts during a backoff, then the call rejects and no other attempt is made', async () => {
    script = [{ status: 503 }, { status: 503 }];
    const { api } = client({ initialNetworkRetryDelay: 2000, maxNetworkRetryDelay: 2000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    await expect(api.GET('/api/v1/products', { signal: controller.signal })).rejects.toThrow(/abort/i);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(seen).toHaveLength(1);
  });

  test('when retryingFetch wraps a plain fetch, then a PATCH is keyed and retried like the client’s calls', async () => {
    script = [{ status: 503 }];
    const fetchWithRetries = retryingFetch({ initialNetworkRetryDelay: 5 });
    const res = await fetchWithRetries(`${baseUrl}/api/v1/products/7`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ defaultPrice: 40 }),
    });
    expect(res.status).toBe(200);
    expect(seen.map((s) => [s.method, s.body])).toEqual([
      ['PATCH', '{"defaultPrice":40}'],
      ['PATCH', '{"defaultPrice":40}'],
    ]);
    expect(seen[0]!.headers['idempotency-key']).toBeTruthy();
    expect(seen[1]!.headers['idempotency-key']).toBe(seen[0]!.headers['idempotency-key']);
    expect(() => retryingFetch({ maxNetworkRetries: -1 })).toThrow(/maxNetworkRetries/);
  });
});

describe('the backoff and Retry-After rules', () => {
  test('when the delay of a retry is computed, then it is initial · 2^(n−1) capped at the maximum, jittered into [half, full), never below the initial delay nor a Retry-After', () => {
    const o = { initialNetworkRetryDelay: 500, maxNetworkRetryDelay: 5000 };
    expect(retryDelayMs(1, o, undefined, () => 0)).toBe(500);
    expect(retryDelayMs(1, o, undefined, () => 0.999)).toBe(500);
    expect(retryDelayMs(3, o, undefined, () => 0)).toBe(1000);
    expect(retryDelayMs(3, o, undefined, () => 0.5)).toBe(1500);
    expect(retryDelayMs(3, o, undefined, () => 0.999)).toBe(1999);
    expect(retryDelayMs(10, o, undefined, () => 0.999)).toBe(4998);
    expect(retryDelayMs(10, o, undefined, () => 0)).toBe(2500);
    expect(retryDelayMs(1, o, 3, () => 0)).toBe(3000);
    expect(retryDelayMs(5, o, 1, () => 0.999)).toBe(4998);
    // stripe-node's defaults: 500 ms first, 5 s at most.
    for (let n = 1; n < 20; n++) {
      const d = retryDelayMs(n);
      expect(d).toBeGreaterThanOrEqual(500);
      expect(d).toBeLessThanOrEqual(5000);
    }
  });

  test('when Retry-After is read, then seconds and HTTP dates are understood and anything else ignored', () => {
    const now = Date.parse('2026-11-22T12:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Sun, 22 Nov 2026 12:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Sun, 22 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
