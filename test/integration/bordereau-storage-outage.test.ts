/**
 * A premium bordereau asked for while object storage is unreachable (fake-gcs-server behind a TCP
 * proxy the test takes down): the bordereau stays `generating` while its workflow's activity fails
 * and is retried (no attempt limit, backing off), nothing is marked ready without its files, and
 * once storage is back the same bordereau becomes ready with both files stored once, readable, and
 * matching their checksums. Real app, worker, PostgreSQL, Temporal, stripe-mock and fake-gcs-server.
 */
import { createHash } from 'node:crypto';
import { eventually } from '../helpers/worker';
import { call, createRootAccountOfKind } from '../helpers/fixtures';
import { WEBHOOK_SECRET } from '../helpers/purchases';
import { buyAndPay, createAgency, eventSelection, waitIssued } from '../helpers/certificates';
import { useStorageOutageStack } from '../helpers/storage-outage';
import { createObjectStore } from '../../src/storage/object-store';

jest.setTimeout(240_000);

// Polling the bordereau until storage is back makes more calls than the default per-key limit.
const startStack = useStorageOutageStack({ PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' });

test('when storage is down while a bordereau is generated, then it stays generating and retries, and once storage is back the same bordereau is ready with its files stored once', async () => {
  const { app, proxy } = await startStack();
  const agency = await createAgency(app);
  const api = (method: string, path: string, body?: unknown) =>
    call(app.baseUrl, `/api/v1${path}`, { method, key: agency.key, ...(body === undefined ? {} : { body }) });
  const insurerId = (await createRootAccountOfKind(app.container, 'insurer', 'Outage Mutual', [agency])).id;
  expect((await api('PATCH', `/products/${agency.eventProductId}`, { insurerRootAccountID: insurerId })).status).toBe(200);
  // One sale, issued while storage is up, then recorded in September 2026.
  const paid = await buyAndPay(agency, eventSelection(agency, { start: '2027-09-01', end: '2027-09-02' }));
  await waitIssued(agency, paid.paymentIntent);
  await app.container
    .db('purchases')
    .where({ id: paid.purchaseId })
    .update({ paid_at: new Date('2026-09-09T09:00:00Z') });

  proxy.down();
  const asked = await api('POST', '/reports/bordereaux', { party_id: insurerId, month: '2026-09' });
  expect(asked.status).toBe(202);
  const id = asked.body.data.id as number;
  const handle = app.container.temporal.client.workflow.getHandle(`bordereau-${id}`);
  // The generation fails on storage and is retried: a second attempt is scheduled with the failure recorded.
  const pending = await eventually(async () => {
    const { raw } = await handle.describe();
    const activity = raw.pendingActivities?.[0];
    return activity && Number(activity.attempt) >= 2 && activity.lastFailure ? activity : null;
  }, 60_000);
  expect(pending!.activityType?.name).toBe('generateBordereau');
  expect(proxy.refused).toBeGreaterThan(0);
  const during = await api('GET', `/reports/bordereaux/${id}`);
  expect(during.body.data).toMatchObject({ id, status: 'generating', files: null });

  proxy.up();
  const ready = await eventually(async () => {
    const got = await api('GET', `/reports/bordereaux/${id}`);
    return got.body.data.status === 'ready' ? got.body.data : null;
  }, 120_000);
  expect(ready.rows).toBe(1);
  // Asked again: the same bordereau, not a second one.
  const again = await api('POST', '/reports/bordereaux', { party_id: insurerId, month: '2026-09' });
  expect(again.status).toBe(200);
  expect(again.body.data.id).toBe(id);
  for (const format of ['csv', 'xlsx'] as const) {
    const res = await fetch(ready.files[format].download_url);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(ready.files[format].sha256);
  }
  const objects = await createObjectStore(app.container.config).list('reports/bordereaux/');
  // Each file once: the premium bordereau's CSV and XLSX, and the loss bordereau's beside them.
  expect(objects.filter((k) => k.includes(`/${insurerId}/test/`) && k.includes('2026-09')).map((k) => k.split('/').pop())).toEqual([
    '2026-09-loss.csv',
    '2026-09-loss.xlsx',
    '2026-09.csv',
    '2026-09.xlsx',
  ]);
});
