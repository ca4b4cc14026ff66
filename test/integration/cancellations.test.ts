/**
 * Cancellations carried out (`POST /api/v1/purchases/{id}/cancel`) on the real stack: the API
 * hands the quote to the purchase's policy workflow (Temporal dev server) with update-with-start,
 * the worker refunds at stripe-mock, then cancels the units and voids their certificates
 * (PostgreSQL), the verification page says so and `purchase.cancelled` is recorded. Also: the same
 * quote twice is one cancellation, two quotes racing for a unit give one cancellation and one 409,
 * expired and stale quotes are refused, and a processor that refuses the refund for good leaves the
 * cancellation `refund_failed` (a worker whose refund activity meets a decline).
 */
import { ApplicationFailure } from '@temporalio/common';
import { startTestApp, type TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import {
  WEBHOOK_SECRET,
  chargeRefundedEvent,
  checkout,
  createQuotingAccount,
  createQuotingAccountWithoutFreeLook,
  deliverWebhook,
  cancellationCalls,
  type QuotingAccount,
  issuedPurchase,
  unitStatesAndVoided,
} from '../helpers/purchases';
import { eventually, startTestWorker, uniqueTaskQueue } from '../helpers/worker';
import { createPolicyActivities } from '../../activities/policy';
import { createSaleRepository } from '../../src/purchases/sale-repository';
import { createLedgerRepository } from '../../src/purchases/ledger-repository';
import { createAttentionRepository } from '../../src/purchases/attention-repository';
import { createPurchaseOperations } from '../../src/purchases/operations';

jest.setTimeout(120_000);

const stack = useStack({ app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET } });
let app: TestApp;
let account: QuotingAccount;

const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });
const { quote, cancel, purchase } = cancellationCalls(api);

beforeAll(async () => {
  app = stack.app;
  // No free look: a cancellation is priced pro rata, so one day of two gives back half.
  account = await createQuotingAccountWithoutFreeLook(app);
});

test('when one day of two is cancelled with a quote, then the refund is created, that day is cancelled, its certificate voided, the other day untouched, and purchase.cancelled is recorded', async () => {
  const id = await issuedPurchase(app, account);
  const [first, second] = (await purchase(id)).items[0].covered_units;
  const q = await quote(id, { covered_unit_ids: [second.id], requested_by: 'buyer', reason: 'Second day called off' });
  expect(q.refund).toEqual({ premium: 2000, tax: 0, platform_fee: 0, total: 2000 });

  const res = await cancel(id, { quote_id: q.id });
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({
    object: 'cancellation',
    purchase_id: id,
    quote_id: q.id,
    requested_by: 'buyer',
    reason: 'Second day called off',
    refund: { total: 2000 },
  });
  expect(['accepted', 'refund_pending', 'completed']).toContain(res.body.data.status);

  const done = await eventually(async () => {
    const p = await purchase(id);
    return p.cancellations[0]?.status === 'completed' ? p : null;
  });
  expect(done.cancellations[0].refund.id).toMatch(/^re_/);
  expect(done.amount_refunded).toBe(2000);
  // One day of two: the purchase reads partly cancelled as soon as the cancellation reads completed.
  expect(done.status).toBe('partly_cancelled');
  const units = done.items[0].covered_units;
  expect(units.map((u: { state: string }) => u.state)).toEqual(['active', 'cancelled']);
  expect(units[0].certificate.voided_at).toBeNull();
  expect(units[1].certificate.voided_at).toEqual(expect.any(String));
  expect(done.timeline.map((t: { type: string }) => t.type)).toEqual([
    'created',
    'paid',
    'certificates_issued',
    'cancellation_accepted',
    'cancelled',
  ]);

  const verify = async (n: string) => (await call(app.baseUrl, `/verify/${n}`, { headers: { accept: 'application/json' } })).body;
  expect(await verify(second.certificate.number)).toMatchObject({ state: 'voided', coverage: [{ voided_at: expect.any(String) }] });
  expect((await verify(first.certificate.number)).state).toBe('not_yet_valid');
  const html = await call(app.baseUrl, `/verify/${second.certificate.number}`, { headers: { accept: 'text/html' } });
  expect(html.text).toMatch(/Voided: cancelled on \d{4}-\d{2}-\d{2}, no coverage from \d{4}-\d{2}-\d{2}/);

  const events = (await api('/events?type=purchase.cancelled')).body.data;
  const event = events.find((e: { data: { object: { id: number } } }) => e.data.object.id === id);
  expect(event.data.object.cancellation).toMatchObject({
    covered_unit_ids: [second.id],
    refund: { total: 2000 },
    voided_certificates: [second.certificate.number],
    requested_by: 'buyer',
  });
  expect(event.data.object.cancellation.effective_at).toEqual(expect.any(String));
  const ofPurchase = async (type: string) =>
    ((await api(`/events?type=${type}`)).body.data as Array<{ data: { object: Record<string, unknown> } }>)
      .filter((e) => e.data.object.purchase_id === id)
      .map((e) => e.data.object);
  expect(await ofPurchase('refund.succeeded')).toEqual([
    expect.objectContaining({
      object: 'refund',
      id: done.cancellations[0].refund.id,
      status: 'succeeded',
      amount: 2000,
      cancellation_id: res.body.data.id,
    }),
  ]);
  expect(await ofPurchase('certificates.voided')).toEqual([
    expect.objectContaining({
      certificate_numbers: [second.certificate.number],
      covered_unit_ids: [second.id],
      effective_at: expect.any(String),
    }),
  ]);

  // getCertificates lists both, the cancelled day's with its voided_at; the purchase stays issued.
  const rootUuid = (await app.container.db('root_accounts').where({ id: account.accountId }).first('idp_root_account_uuid'))
    .idp_root_account_uuid as string;
  const certs = await call(app.baseUrl, '/platform-agency-root-certs/getCertificates', {
    method: 'POST',
    key: account.key,
    body: { idp_root_account_uuid: rootUuid, purchase_id: id },
  });
  expect(certs.body.status).toBe('issued');
  expect(
    certs.body.certificates.map((c: { certificate_number: string; voided_at: string | null }) => [
      c.certificate_number,
      c.voided_at === null,
    ]),
  ).toEqual([
    [first.certificate.number, true],
    [second.certificate.number, false],
  ]);

  // The same quote again is the same cancellation: one row, one refund.
  const again = await cancel(id, { quote_id: q.id });
  expect(again.body.data).toMatchObject({ id: res.body.data.id, status: 'completed' });
  expect(await app.container.db('policy_transactions').where({ purchase_id: id }).count({ n: '*' }).first()).toEqual({ n: '1' });
});

test('when two quotes race for the same day, then one cancellation is accepted and the other is refused as stale', async () => {
  const id = await issuedPurchase(app, account);
  const [, second] = (await purchase(id)).items[0].covered_units;
  const [a, b] = [await quote(id, { covered_unit_ids: [second.id] }), await quote(id)];
  const answers = await Promise.all([cancel(id, { quote_id: a.id }), cancel(id, { quote_id: b.id })]);
  const statuses = answers.map((r) => r.status).sort();
  expect(statuses).toEqual([200, 409]);
  expect(answers.find((r) => r.status === 409)!.body).toMatchObject({ success: false, error: { code: 'CANCELLATION_QUOTE_STALE' } });
  await eventually(async () => (await purchase(id)).cancellations[0]?.status === 'completed');
  expect(await app.container.db('policy_transactions').where({ purchase_id: id }).count({ n: '*' }).first()).toEqual({ n: '1' });
});

test('when the cancel names no quote, then the units are priced now and cancelled; afterwards nothing is left to cancel', async () => {
  const id = await issuedPurchase(app, account);
  const res = await cancel(id, { requested_by: 'agency' });
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ requested_by: 'agency', refund: { total: 4000 } });
  expect(res.body.data.quote_id).toMatch(/^cq_/);
  const done = await eventually(async () => {
    const p = await purchase(id);
    return p.cancellations[0]?.status === 'completed' ? p : null;
  });
  expect(done.items[0].covered_units.map((u: { state: string }) => u.state)).toEqual(['cancelled', 'cancelled']);
  expect((await cancel(id, {})).body).toMatchObject({ error: { code: 'NOTHING_TO_CANCEL' } });
  // Every certificate voided: getCertificates says voided, and no proof of coverage can be emailed.
  const rootUuid = (await app.container.db('root_accounts').where({ id: account.accountId }).first('idp_root_account_uuid'))
    .idp_root_account_uuid as string;
  const root = (path: string, body: Record<string, unknown>) =>
    call(app.baseUrl, `/platform-agency-root-certs${path}`, {
      method: 'POST',
      key: account.key,
      body: { idp_root_account_uuid: rootUuid, purchase_id: id, ...body },
    });
  expect((await root('/getCertificates', {})).body.status).toBe('voided');
  const email = await root('/teamEmailProofofCoverage', { email_addresses: ['holder@example.com'] });
  expect([email.status, email.body.code, email.body.message]).toEqual([
    400,
    'INVALID_REQUEST',
    expect.stringMatching(/voided by a cancellation/),
  ]);
});

test('when the quote has expired, names another purchase, comes with units, or the purchase is unpaid, then a clear refusal and nothing is cancelled', async () => {
  const id = await issuedPurchase(app, account);
  const other = await issuedPurchase(app, account);
  const expired = await quote(id);
  await app.container
    .db('cancellation_quotes')
    .where({ id: expired.id })
    .update({ expires_at: new Date(Date.now() - 1000) });
  expect((await cancel(id, { quote_id: expired.id })).body).toMatchObject({
    success: false,
    error: { code: 'CANCELLATION_QUOTE_EXPIRED' },
  });
  const foreign = await quote(other);
  const wrong = await cancel(id, { quote_id: foreign.id });
  expect([wrong.status, wrong.body.error.code]).toEqual([404, 'CANCELLATION_QUOTE_NOT_FOUND']);
  const both = await cancel(id, { quote_id: foreign.id, covered_unit_ids: [1] });
  expect([both.status, both.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
  expect((await cancel(id, { quote_id: 'cq_nothex' })).body.error.code).toBe('VALIDATION_ERROR');
  const { purchaseId: unpaid } = await checkout(app, account);
  expect((await cancel(unpaid, {})).body.error.code).toBe('PURCHASE_NOT_CANCELLABLE');
  const other2 = await createQuotingAccount(app);
  expect((await call(app.baseUrl, `/api/v1/purchases/${id}/cancel`, { method: 'POST', key: other2.key, body: {} })).status).toBe(404);
  expect(await app.container.db('policy_transactions').whereIn('purchase_id', [id, other, unpaid]).count({ n: '*' }).first()).toEqual({
    n: '0',
  });
  expect((await purchase(id)).items[0].covered_units.map((u: { state: string }) => u.state)).toEqual(['active', 'active']);
});

test('when the processor refuses the refund for good, then the cancellation is refund_failed, its units stay held, no certificate is voided, operators see it; a retry completes it', async () => {
  // A worker of its own whose first refund meets a decline (as the processor answers a refund it refuses); later ones go to stripe-mock.
  const taskQueue = uniqueTaskQueue();
  let declines = 1;
  const real = createPolicyActivities({
    db: app.container.db,
    payproc: app.container.payproc,
    events: {
      cancelled: async () => undefined,
      cancellationRefundFailed: async () => undefined,
      subscriptionCancelled: async () => undefined,
    },
  });
  const declining = await startTestWorker(taskQueue, {
    createCancellationRefund: async (input: { cancellationId: number }) => {
      if (declines-- > 0) throw ApplicationFailure.nonRetryable('Your card was declined for refunds', 'REFUND_REJECTED');
      return real.createCancellationRefund(input);
    },
  });
  const declApp = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue });
  try {
    const acc = await createQuotingAccount(declApp);
    const id = await issuedPurchase(declApp, acc);
    const res = await call(declApp.baseUrl, `/api/v1/purchases/${id}/cancel`, { method: 'POST', key: acc.key, body: {} });
    expect(res.status).toBe(200);
    const p = await eventually(async () => {
      const got = (await call(declApp.baseUrl, `/api/v1/purchases/${id}`, { key: acc.key })).body.data;
      return got.cancellations[0]?.status === 'refund_failed' ? got : null;
    });
    expect(p.cancellations[0].failure_reason).toMatch(/declined/);
    expect(
      p.items[0].covered_units.map((u: { state: string; certificate: { voided_at: string | null } }) => [u.state, u.certificate.voided_at]),
    ).toEqual([
      ['cancellation_pending', null],
      ['cancellation_pending', null],
    ]);
    expect(p.timeline.map((t: { type: string }) => t.type)).toContain('cancellation_failed');
    expect(p.amount_refunded).toBe(0);
    const refundFailed = (await call(declApp.baseUrl, '/api/v1/events?type=refund.failed', { key: acc.key })).body.data;
    expect(refundFailed.map((e: { data: { object: Record<string, unknown> } }) => e.data.object)).toEqual([
      expect.objectContaining({ purchase_id: id, status: 'failed', failure_reason: expect.stringMatching(/declined/) }),
    ]);

    // Operators see it: in `ops stuck`'s rows and in the gauge behind CancellationRefundFailed.
    const attention = createAttentionRepository(declApp.container.db);
    expect(await attention.stuckCancellations(600, 500, acc.accountId)).toEqual([
      expect.objectContaining({ kind: 'cancellation_refund_failed', id, cancellationId: p.cancellations[0].id, mode: 'test' }),
    ]);
    expect((await attention.countCancellationsNeedingAttention(1800)).test.refundFailed).toBeGreaterThanOrEqual(1);

    // The operator's retry (npm run ops -- retry-cancellation) goes through the policy workflow again and completes it.
    const operations = createPurchaseOperations({
      sales: createSaleRepository(declApp.container.db),
      ledger: createLedgerRepository(declApp.container.db),
      workflows: declApp.container.purchaseWorkflows,
    });
    expect(await operations.retryCancellation(id)).toMatchObject({
      purchaseId: id,
      workflowId: `policy-${id}`,
      cancellationIds: [p.cancellations[0].id],
    });
    const done = await eventually(async () => {
      const got = (await call(declApp.baseUrl, `/api/v1/purchases/${id}`, { key: acc.key })).body.data;
      return got.cancellations[0]?.status === 'completed' ? got : null;
    });
    expect(done.items[0].covered_units.map((u: { state: string }) => u.state)).toEqual(['cancelled', 'cancelled']);
    expect(done.cancellations[0].failure_reason).toBeNull();
    await expect(operations.retryCancellation(id)).rejects.toThrow(/no unfinished cancellation/);
  } finally {
    await declApp.close();
    await declining.shutdown();
  }
});

test('when the processor’s dashboard refunds part of a purchase, then the purchase shows it and a cancellation gives back no more than is left; a full dashboard refund voids every certificate and ends cancellations', async () => {
  const id = await issuedPurchase(app, account);
  const before = await purchase(id);
  const total = before.amount_total as number;
  const [first, second] = before.items[0].covered_units;
  const refunded = (eventId: string, amount: number) =>
    chargeRefundedEvent({
      id: eventId,
      chargeId: `ch_dash_${id}`,
      paymentIntent: before.payment_intent,
      amountMinor: total,
      amountRefundedMinor: amount,
      purchaseId: id,
    });
  // Partial: 30.00 of the total back in the dashboard.
  expect((await deliverWebhook(app, refunded(`evt_dash_part_${id}`, 3000))).status).toBe(200);
  await eventually(async () => (await purchase(id)).amount_refunded === 3000);
  const partial = await purchase(id);
  expect(partial.status).toBe('issued');
  expect(partial.items[0].covered_units.map((u: { state: string }) => u.state)).toEqual(['active', 'active']);
  // Both days would be 4000 pro rata, but only total − 3000 is left to give back.
  const q = await quote(id);
  expect(q.refund.total).toBe(total - 3000);
  expect(q.refund.total).toBeLessThan(4000);

  // Full: the rest in the dashboard; every certificate voided, nothing left to cancel.
  expect((await deliverWebhook(app, refunded(`evt_dash_full_${id}`, total))).status).toBe(200);
  const full = await eventually(async () => {
    const p = await purchase(id);
    return p.status === 'refunded' ? p : null;
  });
  expect(full.amount_refunded).toBe(total);
  expect(unitStatesAndVoided(full)).toEqual([
    ['cancelled', true],
    ['cancelled', true],
  ]);
  const verify = async (n: string) => (await call(app.baseUrl, `/verify/${n}`, { headers: { accept: 'application/json' } })).body;
  expect((await verify(first.certificate.number)).state).toBe('voided');
  expect((await verify(second.certificate.number)).state).toBe('voided');
  const refused = await api(`/purchases/${id}/cancellation_quote`, { method: 'POST', body: {} });
  expect([refused.status, refused.body.error.code]).toEqual([409, 'PURCHASE_ALREADY_CANCELLED']);
});
