/**
 * The request histogram's mode label (src/http/metrics.ts), which keeps test traffic out of the
 * paging alerts: the authenticated key's mode, the mode a well-formed key names when the request
 * failed before the key was looked up, `none` otherwise. One Koa app on a loopback port.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { httpMetrics } from '../../src/http/metrics';
import { createApiMetrics } from '../../src/metrics/registry';
import type { AppState } from '../../src/http/context';

const metrics = createApiMetrics();
let server: http.Server;
let url: string;

beforeAll(async () => {
  const app = new Koa<AppState>();
  app.use(httpMetrics(metrics));
  app.use(async (ctx) => {
    // `/authenticated` stands for a request the gateway let through with a live key; anything
    // else fails before the key is looked up (as when the database is down).
    if (ctx.path === '/authenticated') {
      ctx.state.principal = { apiKeyId: 1, rootAccountId: 1, mode: 'live', agentId: null, platformFeeBps: null };
      ctx.body = 'ok';
    } else ctx.status = 500;
  });
  server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

const modes = async () =>
  (await metrics.registry.getMetricsAsJSON())
    .find((m) => m.name === 'http_request_duration_seconds')!
    .values.filter((v) => (v as { metricName?: string }).metricName === 'http_request_duration_seconds_count')
    .map((v) => [v.labels.status, v.labels.mode, v.value]);

test('when requests are authenticated, fail before the key is checked, or carry no key, then each is counted under its mode', async () => {
  const testKey = `ik_test_${'a'.repeat(43)}`;
  await fetch(`${url}/authenticated`, { headers: { 'x-api-key': `ik_live_${'b'.repeat(43)}` } });
  await fetch(`${url}/fails`, { headers: { 'x-api-key': testKey } });
  await fetch(`${url}/fails`, { headers: { 'x-api-key': 'not-a-key' } });
  await fetch(`${url}/fails`);
  expect(await modes()).toEqual(
    expect.arrayContaining([
      ['200', 'live', 1],
      ['500', 'test', 1],
      ['500', 'none', 2],
    ]),
  );
  expect(await modes()).toHaveLength(3);
});
