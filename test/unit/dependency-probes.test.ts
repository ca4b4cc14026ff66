/**
 * The worker's dependency probes (src/metrics/dependency-probes.ts): `dependency_up` and
 * `dependency_last_success_timestamp_seconds` read at scrapes, for probes that answer, fail, hang
 * or have not answered yet; and the processor probe against a real HTTP server playing the
 * processor (a 4xx answer is an answer, a 503 or a closed port is not).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { dependencyProbes, watchDependencies, type DependencyProbe } from '../../src/metrics/dependency-probes';

/** `dependency_up` (and the last-success gauge) after one scrape, as `{ "dependency/mode": value }`. */
async function scrape(registry: Registry): Promise<{ up: Record<string, number>; lastSuccess: Record<string, number> }> {
  const read = async (name: string) => {
    const metric = registry.getSingleMetric(name)!;
    const { values } = await metric.get();
    return Object.fromEntries(values.map((v) => [`${String(v.labels.dependency)}/${String(v.labels.mode)}`, v.value]));
  };
  const up = await read('dependency_up'); // collects: starts the probes and waits for them
  return { up, lastSuccess: await read('dependency_last_success_timestamp_seconds') };
}

const probe = (dependency: DependencyProbe['dependency'], mode: DependencyProbe['mode'], check: () => Promise<void>): DependencyProbe => ({
  dependency,
  mode,
  check,
});

test('when probes answer, fail or hang, then a scrape reads up 1, 0 and 0 (after the timeout), with a last success only for the answer', async () => {
  const registry = new Registry();
  const before = Date.now() / 1000;
  watchDependencies(
    registry,
    [
      probe('processor', 'live', async () => {}),
      probe('processor', 'test', () => Promise.reject(new Error('refused'))),
      probe('storage', 'shared', () => new Promise<void>(() => {})),
    ],
    { waitMs: 2000, timeoutMs: 50 },
  );
  const { up, lastSuccess } = await scrape(registry);
  expect(up).toEqual({ 'processor/live': 1, 'processor/test': 0, 'storage/shared': 0 });
  expect(Object.keys(lastSuccess)).toEqual(['processor/live']);
  expect(lastSuccess['processor/live']).toBeGreaterThanOrEqual(before);
});

test('when a dependency comes back, then the next probe reads up 1; before the first answer there is no series', async () => {
  let answering = false;
  let release: () => void = () => {};
  const registry = new Registry();
  watchDependencies(
    registry,
    [
      probe('processor', 'live', () => (answering ? Promise.resolve() : Promise.reject(new Error('503')))),
      probe('storage', 'shared', () => new Promise<void>((resolve) => (release = resolve))),
    ],
    { waitMs: 20, timeoutMs: 10_000, minIntervalMs: 0 },
  );
  expect((await scrape(registry)).up).toEqual({ 'processor/live': 0 });
  answering = true;
  release();
  expect((await scrape(registry)).up).toEqual({ 'processor/live': 1, 'storage/shared': 1 });
});

test('when the processor answers 401, then its probe is up; 503 or a closed port, then down', async () => {
  let status = 401;
  const server = http.createServer((_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { type: status === 401 ? 'invalid_request_error' : 'api_error', message: 'probe' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const config = {
      PAYPROC_LIVE_SECRET_KEY: 'sk_live_probe',
      PAYPROC_TEST_SECRET_KEY: 'sk_test_probe',
      STORAGE_API_ENDPOINT: 'http://127.0.0.1:4443',
      STORAGE_BUCKET: 'certificates',
      STORAGE_PROJECT_ID: 'local-project',
    };
    const processorOnly = (apiBase: string) => dependencyProbes({ ...config, PAYPROC_API_BASE: apiBase }, 2000).slice(0, 2);
    const [live, test] = processorOnly(base);
    await expect(live!.check()).resolves.toBeUndefined();
    status = 503;
    await expect(test!.check()).rejects.toThrow();
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedBase = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(processorOnly(closedBase)[0]!.check()).rejects.toThrow();
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
