/**
 * Signed events to the agency, end to end: webhook endpoints through the API, a purchase paid with
 * the test helper on the Temporal dev server, PostgreSQL, stripe-mock and fake-gcs-server, and
 * delivery workflows POSTing to a real local HTTP receiver whose signatures are checked with the
 * `stripe` package's own verifier. Retries after a 500 and after a timeout, giving up and marking
 * the endpoint failing, live-mode SSRF refusals (at creation and at connection time), resend,
 * a test event to one endpoint alone, and account isolation.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createKey, createRootAccount } from '../helpers/fixtures';
import { eventually, type TestWorker } from '../helpers/worker';
import { WEBHOOK_SECRET, checkout, createQuotingAccount, deliverWebhook, type QuotingAccount } from '../helpers/purchases';
import { purchaseWorkflowId } from '../../workflows/contracts';
import { createWebhookEndpointsRepository } from '../../src/webhook-endpoints/repository';
import { createEventsRepository } from '../../src/events/repository';
import { createDeliveryStarter, createEventPublisher } from '../../src/events/publisher';
import { agencyEventId } from '../../src/events/payloads';
import { isPrivateAddress } from '../../src/events/destination';

const verifier = new Stripe('sk_test_verifier');

interface Received {
  path: string;
  body: string;
  signature: string | undefined;
  event: { id: string; type: string; data: { object: Record<string, any> } };
}

/** A local receiver: `/ok` answers 200; `/flaky` 500 then 200; `/twice` 500 twice, then 200; `/slow` hangs past the deadline once, then 200; `/down` always 500. */
async function startReceiver() {
  const received: Received[] = [];
  const seen = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const path = req.url ?? '/';
      const n = (seen.get(path) ?? 0) + 1;
      seen.set(path, n);
      received.push({ path, body, signature: req.headers['signature'] as string | undefined, event: JSON.parse(body) });
      if (path.startsWith('/flaky') && n === 1) return void res.writeHead(500).end('not now');
      if (path.startsWith('/twice') && n <= 2) return void res.writeHead(500).end('not yet');
      if (path.startsWith('/slow') && n === 1) return void setTimeout(() => res.writeHead(200).end('late'), 3000);
      if (path.startsWith('/down')) return void res.writeHead(500).end('down');
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    port,
    received,
    of: (path: string) => received.filter((r) => r.path === path),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const SETTINGS = { WEBHOOK_RETRY_INITIAL_SECONDS: '1', WEBHOOK_DELIVERY_TIMEOUT_MS: '1000', WEBHOOK_RETRY_WINDOW_HOURS: '0.003' };

const stack = useStack({ workerEnv: SETTINGS, app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, ...SETTINGS } });
const { taskQueue } = stack;
let worker: TestWorker;
let app: TestApp;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  ({ app, worker } = stack);
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
});

const api = (key: string, method: string, path: string, body?: unknown) =>
  call(app.baseUrl, `/api/v1${path}`, { method, key, ...(body === undefined ? {} : { body }) });
const createEndpoint = async (key: string, url: string, events: string[] = ['*']) => {
  const res = await api(key, 'POST', '/webhook_endpoints', { url, enabled_events: events, description: 'test receiver' });
  expect(res.status).toBe(201);
  return res.body.data as { id: number; secret: string; url: string };
};
const paidPurchase = async (account: QuotingAccount) => {
  const { purchaseId } = await checkout(app, account);
  expect((await api(account.key, 'POST', `/test_helpers/purchases/${purchaseId}/pay`)).status).toBe(200);
  return purchaseId;
};
const deliveryOf = async (key: string, eventId: string) => (await api(key, 'GET', `/events/${eventId}`)).body.data;

describe('webhook endpoints', () => {
  test('when one is created, then the secret is shown once; list and get never show it; bad input is 400 and another account sees 404', async () => {
    const account = await createQuotingAccount(app);
    const created = await api(account.key, 'POST', '/webhook_endpoints', {
      url: receiver.url('/ok'),
      enabled_events: ['purchase.paid', 'purchase.paid'],
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      object: 'webhook_endpoint',
      url: receiver.url('/ok'),
      enabled_events: ['purchase.paid'],
      status: 'enabled',
      livemode: false,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    const listed = await api(account.key, 'GET', '/webhook_endpoints');
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).not.toHaveProperty('secret');
    const one = await api(account.key, 'GET', `/webhook_endpoints/${created.body.data.id}`);
    expect(one.body.data).not.toHaveProperty('secret');

    const patched = await api(account.key, 'PATCH', `/webhook_endpoints/${created.body.data.id}`, {
      enabled_events: ['*'],
      disabled: true,
    });
    expect(patched.body.data).toMatchObject({ enabled_events: ['*'], status: 'disabled' });

    for (const [body, path] of [
      [{ url: receiver.url('/ok'), enabled_events: ['purchase.maybe'] }, 'enabled_events.0'],
      [{ url: receiver.url('/ok'), enabled_events: [] }, 'enabled_events'],
      [{ url: 'ftp://agency.example/x', enabled_events: ['*'] }, 'url'],
      [{ url: 'not a url', enabled_events: ['*'] }, 'url'],
      [{ url: receiver.url('/ok'), enabled_events: ['*'], secret: 'whsec_mine' }, 'secret'],
    ] as const) {
      const res = await api(account.key, 'POST', '/webhook_endpoints', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    const other = await createRootAccount(app.container, 'Nosy Agency');
    const otherKey = (await createKey(app.container, { rootAccountId: other.id, mode: 'test' })).key;
    expect((await api(otherKey, 'GET', `/webhook_endpoints/${created.body.data.id}`)).status).toBe(404);
    expect((await api(otherKey, 'DELETE', `/webhook_endpoints/${created.body.data.id}`)).status).toBe(404);
    const deleted = await api(account.key, 'DELETE', `/webhook_endpoints/${created.body.data.id}`);
    expect(deleted.body.data).toEqual({ id: created.body.data.id, object: 'webhook_endpoint', deleted: true });
    expect((await api(account.key, 'GET', `/webhook_endpoints/${created.body.data.id}`)).status).toBe(404);
  });

  test('when a live key registers an http, loopback, private or link-local URL, then 400 naming the url; test keys may use them', async () => {
    const account = await createRootAccount(app.container, 'Live Agency');
    const live = (await createKey(app.container, { rootAccountId: account.id, mode: 'live' })).key;
    for (const url of [
      'http://agency.example/hook',
      'https://localhost:8443/hook',
      'https://127.0.0.1/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.10/hook',
      'https://169.254.169.254/latest',
      'https://[::1]/hook',
      'https://[fd00::1]/hook',
      'https://user:pw@agency.example/hook',
    ]) {
      const res = await api(live, 'POST', '/webhook_endpoints', { url, enabled_events: ['*'] });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ path: 'url', message: expect.any(String) }]);
    }
    expect((await api(live, 'POST', '/webhook_endpoints', { url: 'https://agency.example/hook', enabled_events: ['*'] })).status).toBe(201);
    const test = (await createKey(app.container, { rootAccountId: account.id, mode: 'test' })).key;
    expect((await api(test, 'POST', '/webhook_endpoints', { url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] })).status).toBe(201);
    // Test-mode endpoints are not listed to the live key, and the other way round.
    expect((await api(live, 'GET', '/webhook_endpoints')).body.data.map((e: { url: string }) => e.url)).toEqual([
      'https://agency.example/hook',
    ]);
    expect(['::ffff:127.0.0.1', '100.64.0.1', '0.0.0.0', 'fe80::1', '224.0.0.1'].map(isPrivateAddress)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'].map(isPrivateAddress)).toEqual([false, false, false, false]);
  });
});

describe('events of a purchase, delivered signed', () => {
  test('when a purchase is checked out, paid and issued, then the receiver gets checkout_created, paid and certificates.issued, each verifiable with the endpoint secret', async () => {
    const account = await createQuotingAccount(app);
    const endpoint = await createEndpoint(account.key, receiver.url(`/ok/${Date.now()}`));
    const purchaseId = await paidPurchase(account);
    await app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).result();

    const mine = () =>
      receiver.received.filter(
        (r) =>
          r.path === new URL(endpoint.url).pathname &&
          (r.event.data.object.id === purchaseId || r.event.data.object.purchase_id === purchaseId),
      );
    await eventually(async () => mine().length >= 3, 30_000);
    expect(
      mine()
        .map((r) => r.event.type)
        .sort(),
    ).toEqual(['certificates.issued', 'purchase.checkout_created', 'purchase.paid']);
    for (const r of mine()) {
      const verified = verifier.webhooks.constructEvent(r.body, r.signature!, endpoint.secret);
      expect(verified.id).toBe(r.event.id);
      expect(() => verifier.webhooks.constructEvent(r.body, r.signature!, 'whsec_wrong')).toThrow();
    }
    const paid = mine().find((r) => r.event.type === 'purchase.paid')!.event;
    expect(paid).toMatchObject({
      object: 'event',
      livemode: false,
      api_version: 'v1',
      data: { object: { object: 'purchase', id: purchaseId, status: 'paid', currency: 'usd' } },
    });
    expect(paid.data.object.amount_total).toEqual(expect.any(Number));
    const issued = mine().find((r) => r.event.type === 'certificates.issued')!.event.data.object;
    const numbers = (await app.container
      .db('certificates')
      .where({ purchase_id: purchaseId })
      .orderBy('id')
      .pluck('certificate_number')) as string[];
    expect(issued).toMatchObject({
      object: 'certificate_set',
      purchase_id: purchaseId,
      status: 'issued',
      certificate_count: numbers.length,
    });
    expect(issued.certificates.map((c: { certificate_number: string }) => c.certificate_number).sort()).toEqual([...numbers].sort());
    expect(
      issued.certificates.every(
        (c: { verification_url: string; download_url: string }) =>
          /\/verify\//.test(c.verification_url) && /^https?:\/\//.test(c.download_url),
      ),
    ).toBe(true);
    expect(issued.payment_zip_url).toEqual(expect.any(String));

    // The events are listed and each delivery shows its one successful attempt.
    const listed = await api(account.key, 'GET', '/events?type=certificates.issued');
    expect(listed.body.data.map((e: { id: string }) => e.id)).toContain(agencyEventId('certificates.issued', purchaseId));
    const detail = await deliveryOf(account.key, agencyEventId('purchase.paid', purchaseId));
    expect(detail.deliveries).toEqual([
      expect.objectContaining({
        endpoint_id: endpoint.id,
        status: 'succeeded',
        attempts: [expect.objectContaining({ response_status: 200, error: null })],
      }),
    ]);
  }, 90_000);

  test('when purchases expire, fail and are refunded, then purchase.expired, purchase.failed and purchase.refunded arrive with the purchase as it then is', async () => {
    const account = await createQuotingAccount(app);
    const endpoint = await createEndpoint(account.key, receiver.url(`/ok/ends-${Date.now()}`), [
      'purchase.expired',
      'purchase.failed',
      'purchase.refunded',
    ]);
    const path = new URL(endpoint.url).pathname;
    const expired = (await checkout(app, account)).purchaseId;
    await api(account.key, 'POST', `/test_helpers/purchases/${expired}/expire`);
    const failed = (await checkout(app, account)).purchaseId;
    await api(account.key, 'POST', `/test_helpers/purchases/${failed}/pay`, { outcome: 'failed' });
    const refunded = await paidPurchase(account);
    const row = await eventually(async () => {
      const r = await app.container.db('purchases').where({ id: refunded }).first();
      return r.status === 'issued' ? r : null;
    });
    const refund = JSON.stringify({
      id: `evt_refund_${refunded}`,
      object: 'event',
      type: 'charge.refunded',
      livemode: false,
      created: Math.floor(Date.now() / 1000),
      data: {
        object: {
          id: `ch_${refunded}`,
          object: 'charge',
          amount: Number(row.total_minor),
          amount_refunded: Number(row.total_minor),
          refunded: true,
          metadata: { purchase_id: String(refunded) },
        },
      },
    });
    expect((await deliverWebhook(app, refund)).body).toMatchObject({ relayed: true, purchase_id: refunded });

    await eventually(async () => receiver.of(path).length >= 3, 30_000);
    const byType = new Map(receiver.of(path).map((r) => [r.event.type, r.event.data.object]));
    expect(byType.get('purchase.expired')).toMatchObject({ object: 'purchase', id: expired, status: 'expired' });
    expect(byType.get('purchase.failed')).toMatchObject({
      id: failed,
      status: 'failed',
      failure_reason: expect.stringMatching(/^payment failed/),
    });
    expect(byType.get('purchase.refunded')).toMatchObject({ id: refunded, status: 'refunded', amount_refunded: Number(row.total_minor) });
    // Types the endpoint did not ask for are not sent to it.
    expect(receiver.of(path).every((r) => ['purchase.expired', 'purchase.failed', 'purchase.refunded'].includes(r.event.type))).toBe(true);
  }, 90_000);

  /** The worker's counter summed over the series matching `labels` (every agency's unless `root_account_id` is given; 0 before the first increment). */
  const counted = async (name: 'eventDeliveries' | 'eventDeliveryAttempts', labels: Record<string, string>) =>
    (await worker.metrics[name].get()).values
      .filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k as keyof typeof v.labels] === x))
      .reduce((sum, v) => sum + v.value, 0);

  test('when the endpoint answers 500 first, or does not answer within the deadline, then the delivery is retried and succeeds', async () => {
    const before = {
      succeeded: await counted('eventDeliveries', { outcome: 'succeeded', mode: 'test' }),
      failed: await counted('eventDeliveries', { outcome: 'failed', mode: 'test' }),
      attemptsRejected: await counted('eventDeliveryAttempts', { outcome: 'rejected', mode: 'test' }),
      attemptsFailed: await counted('eventDeliveryAttempts', { outcome: 'failed', mode: 'test' }),
    };
    const account = await createQuotingAccount(app);
    const flaky = await createEndpoint(account.key, receiver.url(`/flaky/${Date.now()}`), ['purchase.paid']);
    const slow = await createEndpoint(account.key, receiver.url(`/slow/${Date.now()}`), ['purchase.paid']);
    const purchaseId = await paidPurchase(account);
    const eventId = agencyEventId('purchase.paid', purchaseId);
    const detail = await eventually(async () => {
      const d = await deliveryOf(account.key, eventId);
      return d?.deliveries?.length === 2 && d.deliveries.every((x: { status: string }) => x.status === 'succeeded') ? d : null;
    }, 30_000);
    const byEndpoint = (id: number) => detail.deliveries.find((d: { endpoint_id: number }) => d.endpoint_id === id);
    expect(byEndpoint(flaky.id).attempts.map((a: { response_status: number | null }) => a.response_status)).toEqual([500, 200]);
    expect(byEndpoint(slow.id).attempts).toEqual([
      expect.objectContaining({ response_status: null, error: expect.stringMatching(/no answer within 1000 ms/) }),
      expect.objectContaining({ response_status: 200 }),
    ]);
    // Each attempt carried the same event.
    expect(new Set(receiver.of(new URL(flaky.url).pathname).map((r) => r.event.id))).toEqual(new Set([eventId]));
    // Two deliveries ended, both succeeded: a failed attempt that was retried is an attempt, not a failed delivery.
    expect(await counted('eventDeliveries', { outcome: 'succeeded', mode: 'test' })).toBeGreaterThanOrEqual(before.succeeded + 2);
    expect(await counted('eventDeliveries', { outcome: 'failed', mode: 'test' })).toBe(before.failed);
    expect(await counted('eventDeliveryAttempts', { outcome: 'rejected', mode: 'test' })).toBe(before.attemptsRejected + 1);
    expect(await counted('eventDeliveryAttempts', { outcome: 'failed', mode: 'test' })).toBe(before.attemptsFailed + 1);
  }, 60_000);

  test('when a delivery is retried twice and then succeeds, then event_deliveries_total{outcome="succeeded"} rises by 1 and event_delivery_attempts_total by 3 (2 rejected, 1 succeeded)', async () => {
    // Earlier tests' deliveries may still be ending on this task queue: wait until none runs, so the counters move by this one's only.
    const running = `WorkflowType='eventDeliveryWorkflow' AND ExecutionStatus='Running' AND TaskQueue='${taskQueue}'`;
    await eventually(async () => (await app.container.temporal.client.workflow.count(running)).count === 0, 30_000);
    const labels = ['succeeded', 'failed', 'skipped'] as const;
    const attemptLabels = ['succeeded', 'rejected', 'failed', 'refused'] as const;
    const snapshot = async () => ({
      ended: Object.fromEntries(
        await Promise.all(labels.map(async (o) => [o, await counted('eventDeliveries', { outcome: o, mode: 'test' })])),
      ),
      attempts: Object.fromEntries(
        await Promise.all(attemptLabels.map(async (o) => [o, await counted('eventDeliveryAttempts', { outcome: o, mode: 'test' })])),
      ),
    });
    const before = await snapshot();
    const account = await createQuotingAccount(app);
    const twice = await createEndpoint(account.key, receiver.url(`/twice/${Date.now()}`), ['purchase.paid']);
    const purchaseId = await paidPurchase(account);
    const eventId = agencyEventId('purchase.paid', purchaseId);
    const detail = await eventually(async () => {
      const d = await deliveryOf(account.key, eventId);
      return d?.deliveries?.[0]?.status === 'succeeded' ? d : null;
    }, 30_000);
    expect(detail.deliveries[0].attempts.map((a: { response_status: number | null }) => a.response_status)).toEqual([500, 500, 200]);
    expect(detail.deliveries[0].endpoint_id).toBe(twice.id);
    // The delivery's workflow has ended: its activity counted before it returned.
    await eventually(async () => (await app.container.temporal.client.workflow.count(running)).count === 0, 10_000);
    const after = await snapshot();
    expect(after.ended).toEqual({ ...before.ended, succeeded: before.ended.succeeded + 1 });
    expect(after.attempts).toEqual({
      ...before.attempts,
      rejected: before.attempts.rejected + 2,
      succeeded: before.attempts.succeeded + 1,
    });
  }, 60_000);

  test('when the endpoint keeps failing past the retry window, then the delivery fails and the endpoint is marked failing, while the purchase is issued regardless', async () => {
    const failedBefore = await counted('eventDeliveries', { outcome: 'failed', mode: 'test' });
    const account = await createQuotingAccount(app);
    const down = await createEndpoint(account.key, receiver.url(`/down/${Date.now()}`), ['purchase.paid']);
    const purchaseId = await paidPurchase(account);
    expect(
      (await app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).result()) as { status: string },
    ).toMatchObject({ status: 'issued' });
    const detail = await eventually(async () => {
      const d = await deliveryOf(account.key, agencyEventId('purchase.paid', purchaseId));
      return d?.deliveries?.[0]?.status === 'failed' ? d : null;
    }, 40_000);
    expect(detail.deliveries[0].attempts.length).toBeGreaterThanOrEqual(2);
    expect(detail.deliveries[0].attempts.every((a: { response_status: number }) => a.response_status === 500)).toBe(true);
    // The delivery counts once as failed when it gives up, however many attempts it made.
    expect(
      await eventually(async () => ((await counted('eventDeliveries', { outcome: 'failed', mode: 'test' })) > failedBefore ? true : null)),
    ).toBe(true);
    expect(await counted('eventDeliveries', { outcome: 'failed', mode: 'test' })).toBe(failedBefore + 1);
    // …in the agency's own series (the per-agency ticket's signal), with every attempt beside it.
    const rootAccountId = String(
      (await app.container.db('webhook_endpoints').where({ id: down.id }).first('root_account_id')).root_account_id,
    );
    expect(await counted('eventDeliveries', { outcome: 'failed', mode: 'test', root_account_id: rootAccountId })).toBe(1);
    expect(await counted('eventDeliveryAttempts', { outcome: 'rejected', mode: 'test', root_account_id: rootAccountId })).toBe(
      detail.deliveries[0].attempts.length,
    );
    // …and in the endpoint's own series (issue 55: AgencyWebhookDeliveriesFailing is per endpoint).
    const endpoint = String(down.id);
    expect(await counted('eventDeliveries', { outcome: 'failed', mode: 'test', root_account_id: rootAccountId, endpoint })).toBe(1);
    expect(await counted('eventDeliveryAttempts', { outcome: 'rejected', mode: 'test', root_account_id: rootAccountId, endpoint })).toBe(
      detail.deliveries[0].attempts.length,
    );
    expect(await counted('eventDeliveryAttempts', { outcome: 'succeeded', root_account_id: rootAccountId, endpoint })).toBe(0);
    expect((await api(account.key, 'GET', `/webhook_endpoints/${down.id}`)).body.data.status).toBe('failing');
    // Re-enabling clears it.
    expect((await api(account.key, 'PATCH', `/webhook_endpoints/${down.id}`, { disabled: false })).body.data.status).toBe('enabled');
  }, 60_000);

  test('when an event is resent, then the endpoint receives it again and the delivery shows the new attempt; another account gets 404', async () => {
    const account = await createQuotingAccount(app);
    const endpoint = await createEndpoint(account.key, receiver.url(`/ok/resend-${Date.now()}`), ['purchase.paid']);
    const purchaseId = await paidPurchase(account);
    const eventId = agencyEventId('purchase.paid', purchaseId);
    await eventually(async () => (await deliveryOf(account.key, eventId))?.deliveries?.[0]?.status === 'succeeded', 30_000);
    const resent = await api(account.key, 'POST', `/events/${eventId}/resend`);
    expect(resent.status).toBe(200);
    expect(resent.body.data).toEqual({
      event_id: eventId,
      deliveries: [{ delivery_id: expect.any(Number), endpoint_id: endpoint.id, action: 'resent' }],
    });
    const path = new URL(endpoint.url).pathname;
    await eventually(async () => receiver.of(path).length === 2, 20_000);
    expect(receiver.of(path).map((r) => r.event.id)).toEqual([eventId, eventId]);
    const detail = await eventually(async () => {
      const d = await deliveryOf(account.key, eventId);
      return d.deliveries[0].attempts.length === 2 && d.deliveries[0].status === 'succeeded' ? d : null;
    });
    expect(detail.deliveries[0].resends).toBe(1);

    const other = await createRootAccount(app.container, 'Other Agency');
    const otherKey = (await createKey(app.container, { rootAccountId: other.id, mode: 'test' })).key;
    expect((await api(otherKey, 'GET', `/events/${eventId}`)).status).toBe(404);
    expect((await api(otherKey, 'POST', `/events/${eventId}/resend`)).status).toBe(404);
    expect((await api(otherKey, 'GET', '/events')).body.data).toEqual([]);
    expect((await api(account.key, 'GET', '/events/evt_nope')).status).toBe(404);
    expect((await api(account.key, 'GET', '/events?type=purchase.maybe')).body.error.code).toBe('QUERY_VALIDATION_ERROR');
  }, 60_000);

  test('when a test event is asked for through the API, then that endpoint alone receives webhook_endpoint.test, signed; a resend goes to it alone; the list leaves it out', async () => {
    const account = await createQuotingAccount(app);
    const tested = await createEndpoint(account.key, receiver.url(`/ok/tested-${Date.now()}`), ['purchase.paid']);
    const everything = await createEndpoint(account.key, receiver.url(`/ok/everything-${Date.now()}`), ['*']);
    const pathOf = (e: { url: string }) => new URL(e.url).pathname;

    const sent = await api(account.key, 'POST', `/webhook_endpoints/${tested.id}/test`);
    expect(sent.status).toBe(201);
    const event = sent.body.data;
    expect(event).toMatchObject({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      object: 'event',
      type: 'webhook_endpoint.test',
      livemode: false,
      data: { object: { object: 'webhook_endpoint_test', endpoint_id: tested.id, url: tested.url, requested_via: 'api' } },
      deliveries: [{ endpoint_id: tested.id, url: tested.url, status: 'pending' }],
    });
    await eventually(async () => receiver.of(pathOf(tested)).length === 1, 20_000);
    const [got] = receiver.of(pathOf(tested));
    const verified = verifier.webhooks.constructEvent(got!.body, got!.signature!, tested.secret);
    expect([verified.id, verified.type]).toEqual([event.id, 'webhook_endpoint.test']);
    await eventually(async () => (await deliveryOf(account.key, event.id)).deliveries[0].status === 'succeeded', 20_000);

    // A resend goes to the endpoint tested again, never to another.
    const resent = await api(account.key, 'POST', `/events/${event.id}/resend`);
    expect(resent.body.data.deliveries.map((d: { endpoint_id: number }) => d.endpoint_id)).toEqual([tested.id]);
    await eventually(async () => receiver.of(pathOf(tested)).length === 2, 20_000);
    expect(receiver.of(pathOf(everything))).toEqual([]);
    // Not a business event: listed neither among all events nor by its type (which is refused).
    expect((await api(account.key, 'GET', '/events')).body.data.map((e: { id: string }) => e.id)).not.toContain(event.id);
    expect((await api(account.key, 'GET', '/events?type=webhook_endpoint.test')).body.error.code).toBe('QUERY_VALIDATION_ERROR');

    // A disabled endpoint gets none (400); another account's endpoint, a bad id and a body with fields are refused.
    await api(account.key, 'PATCH', `/webhook_endpoints/${everything.id}`, { disabled: true });
    const disabled = await api(account.key, 'POST', `/webhook_endpoints/${everything.id}/test`);
    expect([disabled.status, disabled.body.error.code]).toEqual([400, 'INVALID_REQUEST']);
    const other = await createRootAccount(app.container, 'Other Tester');
    const otherKey = (await createKey(app.container, { rootAccountId: other.id, mode: 'test' })).key;
    const foreign = await api(otherKey, 'POST', `/webhook_endpoints/${tested.id}/test`);
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect((await api(otherKey, 'GET', `/events/${event.id}`)).status).toBe(404);
    expect((await api(account.key, 'POST', '/webhook_endpoints/0/test')).body.error.code).toBe('VALIDATION_ERROR');
    expect((await api(account.key, 'POST', `/webhook_endpoints/${tested.id}/test`, { extra: 1 })).body.error.code).toBe('VALIDATION_ERROR');
    expect(receiver.of(pathOf(everything))).toEqual([]);
  }, 60_000);

  test('when a live endpoint’s host resolves to a loopback address at delivery time, then no request is made, the attempt records the refusal and the endpoint is marked failing', async () => {
    const account = await createRootAccount(app.container, 'Rebinding Agency');
    // Written straight through the endpoints repository: the API refuses localhost in live mode at
    // creation, so this stands for a public name whose DNS answer later turns private.
    const endpoints = createWebhookEndpointsRepository(app.container.db);
    const endpoint = await endpoints.create(
      { rootAccountId: account.id, mode: 'live' },
      { url: `https://localhost:${receiver.port}/rebound`, enabledEvents: ['*'], description: '', secret: 'whsec_test' },
    );
    const publisher = createEventPublisher({
      events: createEventsRepository(app.container.db),
      endpoints,
      startDelivery: createDeliveryStarter(app.container.temporal.client, taskQueue, {
        initialRetrySeconds: 1,
        retryWindowSeconds: 10,
        timeoutMs: 1000,
      }),
    });
    const eventId = agencyEventId('purchase.paid', 1_000_000_000 + account.id);
    await publisher.publish({
      event: {
        id: eventId,
        object: 'event',
        type: 'purchase.paid',
        created: Math.floor(Date.now() / 1000),
        livemode: true,
        api_version: 'v1',
        data: { object: { object: 'purchase', id: 0 } },
      },
      rootAccountId: account.id,
      mode: 'live',
      purchaseId: null,
    });
    const events = createEventsRepository(app.container.db);
    const delivery = await eventually(async () => {
      const [d] = await events.deliveriesOf(eventId);
      return d?.status === 'failed' ? d : null;
    }, 20_000);
    expect(delivery!.attempts).toEqual([
      expect.objectContaining({
        responseStatus: null,
        error: expect.stringMatching(/localhost resolves to (127\.0\.0\.1|::1), a loopback, private or link-local address/),
      }),
    ]);
    expect(receiver.of('/rebound')).toEqual([]);
    expect((await endpoints.findForDelivery(endpoint.id))!.status).toBe('failing');
  }, 40_000);
});
