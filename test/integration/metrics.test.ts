/**
 * Prometheus metrics, scraped over HTTP from the same listener `src/server.ts` starts (API) and
 * from the worker's registry, before and after real traffic: a purchase checked out, paid with the
 * test helper and issued (Temporal dev server, PostgreSQL, stripe-mock, fake-gcs-server,
 * Chromium), a forged payment webhook and a request refused by the rate limiter.
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import type { TestWorker } from '../helpers/worker';
import {
  WEBHOOK_SECRET,
  checkout,
  createQuotingAccount,
  deliverWebhook,
  payByTestHelper,
  sessionCompletedEvent,
} from '../helpers/purchases';
import { startMetricsServer, type MetricsServer } from '../../src/metrics/server';
import { purchaseWorkflowId } from '../../workflows/contracts';

const stack = useStack({ app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET } });
let worker: TestWorker;
let app: TestApp;
let limited: TestApp;
let apiMetrics: MetricsServer;
let workerMetrics: MetricsServer;
let limitedMetrics: MetricsServer;

beforeAll(async () => {
  ({ app, worker } = stack);
  limited = await startTestApp({ TEMPORAL_TASK_QUEUE: stack.taskQueue, RATE_LIMIT_PER_MINUTE: '2' });
  apiMetrics = await startMetricsServer({ registry: app.container.metrics.registry, host: '127.0.0.1', port: 0 });
  limitedMetrics = await startMetricsServer({ registry: limited.container.metrics.registry, host: '127.0.0.1', port: 0 });
  workerMetrics = await startMetricsServer({ registry: worker.metrics.registry, host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await Promise.all([apiMetrics.close(), workerMetrics.close(), limitedMetrics.close()]);
  await limited.close();
});

/** Every sample of a scrape: `name{labels}` → value. */
async function scrape(server: MetricsServer): Promise<Map<string, number>> {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) samples.set(m[1]!, Number(m[2]));
  }
  return samples;
}
const delta = (before: Map<string, number>, after: Map<string, number>, series: string) =>
  (after.get(series) ?? 0) - (before.get(series) ?? 0);

test('when a purchase is checked out, paid and issued and a forged webhook arrives, then the API and worker counters move by exactly that', async () => {
  const account = await createQuotingAccount(app);
  const [apiBefore, workerBefore] = await Promise.all([scrape(apiMetrics), scrape(workerMetrics)]);

  const { purchaseId } = await checkout(app, account);
  expect((await payByTestHelper(app, account, purchaseId)).status).toBe(200);
  await app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).result();
  const forged = await call(app.baseUrl, '/webhooks/payproc', {
    method: 'POST',
    rawBody: '{"id":"evt_forged"}',
    headers: { 'stripe-signature': 't=1,v1=00' },
  });
  expect(forged.status).toBe(400);
  // A verified test-mode event that handling then refuses (a NUL in it) is test traffic, not `none`.
  const refusedTest = await deliverWebhook(
    app,
    JSON.stringify({
      id: 'evt_metrics_nul',
      object: 'event',
      type: 'charge.updated',
      livemode: false,
      data: { object: { note: 'a\u0000b' } },
    }),
  );
  expect(refusedTest.status).toBe(400);
  await call(app.baseUrl, '/api/v1/products/999999999', { key: account.key });

  const [apiAfter, workerAfter] = await Promise.all([scrape(apiMetrics), scrape(workerMetrics)]);
  expect(
    delta(
      apiBefore,
      apiAfter,
      'http_request_duration_seconds_count{method="POST",route="/api/v1/test_helpers/purchases/:id/pay",status="200",mode="test"}',
    ),
  ).toBe(1);
  expect(
    delta(
      apiBefore,
      apiAfter,
      'http_request_duration_seconds_count{method="POST",route="/public-quote/adminValidateBuyerResponses",status="200",mode="test"}',
    ),
  ).toBe(1);
  // The route label is the template, not the id; mode is the key's, a verified webhook's livemode, else `none` (the forged webhook).
  expect(
    delta(apiBefore, apiAfter, 'http_request_duration_seconds_count{method="GET",route="/api/v1/products/:id",status="404",mode="test"}'),
  ).toBe(1);
  expect(
    delta(apiBefore, apiAfter, 'http_request_duration_seconds_count{method="POST",route="/webhooks/payproc",status="400",mode="none"}'),
  ).toBe(1);
  expect(
    delta(apiBefore, apiAfter, 'http_request_duration_seconds_count{method="POST",route="/webhooks/payproc",status="400",mode="test"}'),
  ).toBe(1);
  expect(delta(apiBefore, apiAfter, 'payproc_webhook_events_total{type="checkout.session.completed",outcome="relayed"}')).toBe(1);
  expect(delta(apiBefore, apiAfter, 'payproc_webhook_events_total{type="unknown",outcome="forged"}')).toBe(1);

  const certificates = Number((await app.container.db('certificates').where({ purchase_id: purchaseId }).count({ n: '*' }).first())!.n);
  expect(delta(workerBefore, workerAfter, 'purchases_status_total{status="awaiting_payment",mode="test"}')).toBe(1);
  expect(delta(workerBefore, workerAfter, 'purchases_status_total{status="paid",mode="test"}')).toBe(1);
  expect(delta(workerBefore, workerAfter, 'purchases_status_total{status="issued",mode="test"}')).toBe(1);
  expect(delta(workerBefore, workerAfter, 'purchase_paid_to_issued_seconds_count{mode="test"}')).toBe(1);
  expect(delta(workerBefore, workerAfter, 'certificates_rendered_total')).toBe(certificates);
  expect(delta(workerBefore, workerAfter, 'certificate_render_seconds_count')).toBeGreaterThanOrEqual(1);
  expect(workerAfter.get('pdf_browser_launches_total')).toBe(worker.pdf.launches);
  // Each activity execution counted by type and attempt: one checkout session, first attempt.
  expect(delta(workerBefore, workerAfter, 'activity_attempts_total{activity_type="createCheckoutSession",attempt="1"}')).toBe(1);
  expect(delta(workerBefore, workerAfter, 'activity_attempts_total{activity_type="markCertificatesIssued",attempt="1"}')).toBe(1);
}, 90_000);

test('when a payment event is redelivered, names no purchase of ours, and purchases end failed and expired, then the duplicate, not_relayed, failed and expired series count each once', async () => {
  const account = await createQuotingAccount(app);
  const paid = await checkout(app, account);
  const failed = await checkout(app, account);
  const expired = await checkout(app, account);
  const [apiBefore, workerBefore] = await Promise.all([scrape(apiMetrics), scrape(workerMetrics)]);

  const event = sessionCompletedEvent(paid.purchaseId, paid.sessionId);
  expect((await deliverWebhook(app, event)).body).toMatchObject({ duplicate: false, relayed: true });
  expect((await deliverWebhook(app, event)).body).toMatchObject({ duplicate: true });
  expect((await deliverWebhook(app, sessionCompletedEvent(999_999_999, 'cs_test_not_ours'))).body).toMatchObject({
    duplicate: false,
    relayed: false,
  });
  expect((await payByTestHelper(app, account, failed.purchaseId, 'failed')).status).toBe(200);
  expect(
    (await call(app.baseUrl, `/api/v1/test_helpers/purchases/${expired.purchaseId}/expire`, { method: 'POST', key: account.key })).status,
  ).toBe(200);
  const client = app.container.temporal.client.workflow;
  await Promise.all([paid, failed, expired].map((p) => client.getHandle(purchaseWorkflowId(p.purchaseId)).result()));

  const [apiAfter, workerAfter] = await Promise.all([scrape(apiMetrics), scrape(workerMetrics)]);
  expect(delta(apiBefore, apiAfter, 'payproc_webhook_events_total{type="checkout.session.completed",outcome="duplicate"}')).toBe(1);
  expect(delta(apiBefore, apiAfter, 'payproc_webhook_events_total{type="checkout.session.completed",outcome="not_relayed"}')).toBe(1);
  expect(delta(workerBefore, workerAfter, 'purchases_status_total{status="paid",mode="test"}')).toBe(1);
  expect(delta(workerBefore, workerAfter, 'purchases_status_total{status="failed",mode="test"}')).toBe(1);
  expect(delta(workerBefore, workerAfter, 'purchases_status_total{status="expired",mode="test"}')).toBe(1);
}, 90_000);

test('when a key goes over its limit, then rate_limit_refusals_total{limiter="api_key"} counts each 429', async () => {
  const account = await createQuotingAccount(app);
  const before = await scrape(limitedMetrics);
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await call(limited.baseUrl, '/api/v1/products', { key: account.key })).status);
  expect(statuses).toEqual([200, 200, 429, 429]);
  const after = await scrape(limitedMetrics);
  expect(delta(before, after, 'rate_limit_refusals_total{limiter="api_key"}')).toBe(2);
  // Refused before routing, so no route template: `unmatched`.
  expect(delta(before, after, 'http_request_duration_seconds_count{method="GET",route="unmatched",status="429",mode="test"}')).toBe(2);
});

test('when a process starts, then dependency_errors_total has a series at 0 for each dependency and mode (processor live and test, storage shared), so "no errors" is 0 and not "no data"', async () => {
  const zero = [
    'dependency_errors_total{dependency="processor",mode="live",operation="none"}',
    'dependency_errors_total{dependency="processor",mode="test",operation="none"}',
    'dependency_errors_total{dependency="storage",mode="shared",operation="none"}',
  ];
  // A fresh API process (no processor or storage call made yet), the suite's API and its worker.
  const fresh = await startTestApp({ TEMPORAL_TASK_QUEUE: stack.taskQueue });
  const freshMetrics = await startMetricsServer({ registry: fresh.container.metrics.registry, host: '127.0.0.1', port: 0 });
  try {
    const freshSamples = await scrape(freshMetrics);
    expect([...freshSamples.keys()].filter((k) => k.startsWith('dependency_errors_total')).sort()).toEqual(zero);
    expect(zero.map((k) => freshSamples.get(k))).toEqual([0, 0, 0]);
  } finally {
    await freshMetrics.close();
    await fresh.close();
  }
  for (const server of [apiMetrics, workerMetrics]) {
    const samples = await scrape(server);
    expect(zero.map((k) => samples.get(k))).toEqual([0, 0, 0]);
    // Every series carries a mode: processor live or test, storage shared.
    for (const k of [...samples.keys()].filter((x) => x.startsWith('dependency_errors_total')))
      expect(k).toMatch(/^dependency_errors_total\{dependency="(processor",mode="(live|test)|storage",mode="shared)",operation="[^"]+"\}$/);
  }
});

test("when the worker is scraped, then its probes read the processor (live and test) and object storage (shared) up, with their last answer's time", async () => {
  const up = [
    'dependency_up{dependency="processor",mode="live"}',
    'dependency_up{dependency="processor",mode="test"}',
    'dependency_up{dependency="storage",mode="shared"}',
  ];
  const started = Date.now() / 1000;
  // A scrape waits for the probes at most 250 ms: the first answers may reach a later scrape.
  let samples = await scrape(workerMetrics);
  for (const deadline = Date.now() + 15_000; up.some((k) => samples.get(k) !== 1) && Date.now() < deadline;)
    samples = await scrape(workerMetrics);
  expect(up.map((k) => samples.get(k))).toEqual([1, 1, 1]);
  for (const k of up)
    expect(samples.get(k.replace('dependency_up', 'dependency_last_success_timestamp_seconds'))).toBeGreaterThan(started - 60);
});

test('when the metrics listener is asked for anything else, then 404, and only GET is served', async () => {
  expect((await fetch(`${apiMetrics.url}/nope`)).status).toBe(404);
  expect((await fetch(`${apiMetrics.url}/metrics`, { method: 'POST' })).status).toBe(405);
});
