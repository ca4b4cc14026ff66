/**
 * A paid buyer always gets certificates: the purchase workflow against the Temporal dev server,
 * PostgreSQL and stripe-mock when the processor is down for longer than any attempt limit, when
 * it refuses a purchase for good, and when a payment arrives for a purchase whose workflow run
 * has already closed (failed, terminated or expired).
 */
import os from 'node:os';
import Stripe from 'stripe';
import { ApplicationFailure } from '@temporalio/common';
import { startQuotingStack, type QuotingStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import { eventually } from '../helpers/worker';
import { purchaseWorkflowId, type PurchaseStatusView } from '../../workflows/contracts';
import { AGENCY_ID, MODE, PURCHASE_ID } from '../../workflows/search-attributes';
import type { SessionState } from '../../activities/purchase';
import { startProcessorProxy } from '../helpers/processor-proxy';
import { runScript } from '../helpers/run';
import { createObjectStore } from '../../src/storage/object-store';
import { createSaleRepository } from '../../src/purchases/sale-repository';
import { WEBHOOK_SECRET, sessionCompletedEvent } from '../helpers/purchases';
import { createOperatorService } from '../../src/operators/service';
import { createOperatorTokensRepository } from '../../src/operators/repository';

const stripe = new Stripe('sk_test_123');

type Env = QuotingStack;
const setUp = (config: Record<string, string> = {}, overrides: Parameters<typeof startQuotingStack>[1] = {}) =>
  startQuotingStack({ PURCHASE_RETRY_MAX_INTERVAL_SECONDS: '1', ...config }, overrides);
const tearDown = (env: Env) => env.close();

async function checkout(env: Env) {
  const res = await call(env.app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
    method: 'POST',
    key: env.key,
    body: await env.quoteBody(),
  });
  return res;
}

async function deliver(env: Env, payload: string) {
  const signature = stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
  return call(env.app.baseUrl, '/webhooks/payproc', { method: 'POST', rawBody: payload, headers: { 'stripe-signature': signature } });
}

const purchaseRow = (env: Env, id: number) => env.app.container.db('purchases').where({ id }).first();
const handle = (env: Env, id: number) => env.app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(id));
const issued = (env: Env, id: number, timeoutMs = 60_000) =>
  eventually(async () => {
    const r = await purchaseRow(env, id);
    return r.status === 'issued' && r.certificates_issued_at ? r : null;
  }, timeoutMs);

/**
 * The stack the suites of a closed run and of the ops commands share (checkouts polled every
 * second); the tests that need other settings or replaced activities start stacks of their own.
 */
let env: Env;
beforeAll(async () => {
  env = await setUp({ CHECKOUT_POLL_INTERVAL_SECONDS: '1' });
});
afterAll(() => tearDown(env));

describe('a processor outage longer than any attempt limit', () => {
  test('when the processor is unreachable for 15 checks in a row and the paid webhook arrives meanwhile, then the purchase is paid and issued, never failed', async () => {
    let attempts = 0;
    const env = await setUp(
      { CHECKOUT_POLL_INTERVAL_SECONDS: '1' },
      {
        // The processor is down: every check fails as a connection error would (retryable).
        getCheckoutState: async (): Promise<SessionState> => {
          attempts += 1;
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:12111'), { type: 'StripeConnectionError' });
        },
      },
    );
    try {
      const res = await checkout(env);
      expect(res.status).toBe(200);
      const purchaseId = res.body.purchase_id as number;
      // More tries than the old limit of 10 attempts, and the run is still open.
      await eventually(async () => attempts >= 15, 60_000);
      expect((await handle(env, purchaseId).describe()).status.name).toBe('RUNNING');
      expect((await purchaseRow(env, purchaseId)).status).toBe('awaiting_payment');

      // The buyer's payment arrives while the check is still retrying: it cancels the check and goes on.
      const delivered = await deliver(env, sessionCompletedEvent(purchaseId, res.body.id));
      expect(delivered.body).toMatchObject({ relayed: true, purchase_id: purchaseId });
      const row = await issued(env, purchaseId);
      expect(row.payment_intent_id).toBe(`pi_paid_${purchaseId}`);
      expect(row.failure_reason).toBeNull();
      const result = (await handle(env, purchaseId).result()) as PurchaseStatusView;
      expect(result.status).toBe('issued');
    } finally {
      await tearDown(env);
    }
  }, 120_000);
});

describe('a processor that refuses a purchase for good', () => {
  test('when the processor rejects the checkout session as an invalid request, then the purchase ends failed with the reason, published everywhere', async () => {
    const proxy = await startProcessorProxy();
    const env = await setUp({ PAYPROC_API_BASE: proxy.url });
    try {
      proxy.failNext({
        method: 'POST',
        pathPrefix: '/v1/checkout/sessions',
        status: 400,
        body: { error: { type: 'invalid_request_error', code: 'parameter_invalid_integer', message: 'Invalid integer: unit_amount' } },
      });
      const res = await checkout(env);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('INVALID_REQUEST');
      // This account's only purchase: other suites create purchases in the same database meanwhile.
      const purchaseId = Number(
        (await env.app.container.db('purchases').where({ root_account_id: env.accountId }).max({ id: 'id' }).first())!.id,
      );

      const row = await eventually(async () => {
        const r = await purchaseRow(env, purchaseId);
        return r.status === 'failed' ? r : null;
      }, 20_000);
      expect(row.failure_reason).toMatch(/StripeInvalidRequestError/);
      expect(row.failed_at).toBeInstanceOf(Date);
      const result = (await handle(env, purchaseId).result()) as PurchaseStatusView;
      expect(result).toMatchObject({ status: 'failed', failureReason: expect.stringMatching(/Invalid integer/) });
      expect((await handle(env, purchaseId).describe()).searchAttributes).toMatchObject({ PurchaseStatus: ['failed'] });
    } finally {
      await tearDown(env);
      await proxy.close();
    }
  });
});

describe('a payment that arrives while the run is writing its final status', () => {
  test('when the payment is signalled while the run records failed, then the run goes on: paid and issued by the same run', async () => {
    let reachedFailed!: () => void;
    const failing = new Promise<void>((resolve) => (reachedFailed = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The override runs only after setUp has returned, so `env` is set by then.
    const env: Env = await setUp(
      { CHECKOUT_POLL_INTERVAL_SECONDS: '1' },
      {
        getCheckoutState: async (): Promise<SessionState> => {
          throw ApplicationFailure.nonRetryable('No such checkout.session', 'StripeInvalidRequestError');
        },
        // Holds the write of `failed` until the payment has reached the still-open run.
        setPurchaseStatus: async (input) => {
          if (input.status === 'failed') {
            reachedFailed();
            await released;
          }
          const result = await createSaleRepository(env.app.container.db).transition(input.purchaseId, input.status, input.reason);
          return result?.status ?? null;
        },
      },
    );
    try {
      const res = await checkout(env);
      const purchaseId = res.body.purchase_id as number;
      await failing;
      const runId = (await handle(env, purchaseId).describe()).runId;
      const delivered = await deliver(env, sessionCompletedEvent(purchaseId, res.body.id));
      expect(delivered.body).toMatchObject({ relayed: true, purchase_id: purchaseId });
      release();

      const result = (await handle(env, purchaseId).result()) as PurchaseStatusView;
      expect(result.status).toBe('issued');
      const row = await issued(env, purchaseId);
      expect(row.payment_intent_id).toBe(`pi_paid_${purchaseId}`);
      expect((await handle(env, purchaseId).describe()).runId).toBe(runId);
    } finally {
      release();
      await tearDown(env);
    }
  }, 120_000);
});

describe('a payment for a purchase whose workflow run has closed', () => {
  test('when the run was terminated and the signed payment arrives, then a new run records the payment and issues the certificates, once', async () => {
    const res = await checkout(env);
    const purchaseId = res.body.purchase_id as number;
    const first = await handle(env, purchaseId).describe();
    await handle(env, purchaseId).terminate('simulated: the run closed before the payment arrived');

    const delivered = await deliver(env, sessionCompletedEvent(purchaseId, res.body.id, `evt_late_${purchaseId}`));
    expect(delivered.status).toBe(200);
    expect(delivered.body).toEqual({ received: true, duplicate: false, purchase_id: purchaseId, relayed: true });
    const row = await issued(env, purchaseId);
    expect(row.payment_intent_id).toBe(`pi_paid_${purchaseId}`);
    const resumed = await handle(env, purchaseId).describe();
    expect(resumed.runId).not.toBe(first.runId);
    const certificates = await env.app.container.db('certificates').where({ purchase_id: purchaseId });
    expect(certificates.length).toBeGreaterThan(0);
    expect(certificates.every((c) => c.storage_key)).toBe(true);

    // The processor re-delivers the same event once the resumed run has closed: nothing starts
    // again. (While the run is still finishing, a redelivery is relayed to it and ignored.)
    await handle(env, purchaseId).result();
    const again = await deliver(env, sessionCompletedEvent(purchaseId, res.body.id, `evt_late_${purchaseId}`));
    expect(again.body).toEqual({ received: true, duplicate: true, purchase_id: purchaseId, relayed: false });
    expect((await handle(env, purchaseId).describe()).runId).toBe(resumed.runId);
    expect(await env.app.container.db('certificates').where({ purchase_id: purchaseId }).count({ n: '*' }).first()).toEqual({
      n: String(certificates.length),
    });
  }, 120_000);

  test('when the purchase had expired and the processor then reports it paid, then the payment is honoured: paid and issued', async () => {
    const short = await setUp({ CHECKOUT_SESSION_TTL_SECONDS: '2', CHECKOUT_POLL_INTERVAL_SECONDS: '1' });
    try {
      const res = await checkout(short);
      const purchaseId = res.body.purchase_id as number;
      await eventually(async () => ((await purchaseRow(short, purchaseId)).status === 'expired' ? true : null), 20_000);
      await handle(short, purchaseId).result();

      const delivered = await deliver(short, sessionCompletedEvent(purchaseId, res.body.id));
      expect(delivered.body).toMatchObject({ relayed: true });
      const row = await issued(short, purchaseId);
      expect(row.paid_at).toBeInstanceOf(Date);
    } finally {
      await tearDown(short);
    }
  }, 120_000);

  test('when the run failed on a non-retryable error and the payment arrives, then it is recovered too', async () => {
    const failing = await setUp(
      { CHECKOUT_POLL_INTERVAL_SECONDS: '1' },
      {
        getCheckoutState: async (): Promise<SessionState> => {
          throw ApplicationFailure.nonRetryable('No such checkout.session', 'StripeInvalidRequestError');
        },
      },
    );
    try {
      const res = await checkout(failing);
      const purchaseId = res.body.purchase_id as number;
      const failed = await eventually(async () => {
        const r = await purchaseRow(failing, purchaseId);
        return r.status === 'failed' ? r : null;
      }, 20_000);
      expect(failed.failure_reason).toMatch(/No such checkout.session/);

      const delivered = await deliver(failing, sessionCompletedEvent(purchaseId, res.body.id));
      expect(delivered.body).toMatchObject({ relayed: true });
      const row = await issued(failing, purchaseId);
      expect(row.payment_intent_id).toBe(`pi_paid_${purchaseId}`);
    } finally {
      await tearDown(failing);
    }
  }, 120_000);
});

describe('npm run ops: reissue and recover, guarded', () => {
  const ops = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
    runScript('scripts/ops.ts', [...args, '--json'], {
      TEMPORAL_TASK_QUEUE: env.worker.taskQueue,
      PURCHASE_RETRY_MAX_INTERVAL_SECONDS: '1',
      CHECKOUT_POLL_INTERVAL_SECONDS: '1',
      LOG_LEVEL: 'silent',
      ...extraEnv,
    });
  const why = ['--reason', 'recovery test'];
  /**
   * Runs `ops <command> --purchase <id>` and asserts it exited 0 having started `workflowId`, with
   * the purchase then `status` and its standing holding `standing` too.
   */
  const expectStarted = async (
    command: 'recover' | 'reissue',
    purchaseId: number,
    workflowId: string,
    status: string,
    standing: Record<string, unknown>,
  ) => {
    const r = await ops([command, '--purchase', String(purchaseId), ...why]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      purchaseId,
      workflowId,
      action: 'started',
      audit_id: expect.any(Number),
      purchase_status: status,
      standing: expect.objectContaining({ purchase_id: purchaseId, status, ...standing }),
    });
  };

  test('when a terminated purchase is recovered and then paid, then it is issued; reissue then runs issuance again without a second certificate and stores a lost one again under its number, and recover refuses', async () => {
    const res = await checkout(env);
    const purchaseId = res.body.purchase_id as number;
    const refusedUnpaid = await ops(['reissue', '--purchase', String(purchaseId), ...why]);
    expect(refusedUnpaid.code).toBe(2);
    expect(refusedUnpaid.stderr).toMatch(/^ops: refused: purchase \d+ is not paid/m);
    expect(JSON.parse(refusedUnpaid.stdout)).toEqual({
      outcome: 'refused',
      reason: expect.stringMatching(/^purchase \d+ is not paid/),
      audit_id: expect.any(Number),
    });

    await handle(env, purchaseId).terminate('simulated: the run closed');
    await expectStarted('recover', purchaseId, `purchase-${purchaseId}`, 'awaiting_payment', { in_force_units: 0 });
    expect((await handle(env, purchaseId).describe()).status.name).toBe('RUNNING');
    // The resumed run waits for the payment like the first one did.
    const delivered = await deliver(env, sessionCompletedEvent(purchaseId, res.body.id));
    expect(delivered.body).toMatchObject({ relayed: true });
    await issued(env, purchaseId);
    const before = await env.app.container.db('certificates').where({ purchase_id: purchaseId }).orderBy('id');

    const again = await ops(['recover', '--purchase', String(purchaseId), ...why]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already has its certificates; use reissue/);

    // Storage lost one certificate since: reissue finds it missing, renders it again and stores
    // it under the same key and number (alone in its print, its bytes may differ: fonts are
    // subset per print), and its row takes the new digest; the others are left as they were.
    const store = createObjectStore(env.app.container.config);
    expect(await store.deletePrefix(before[0].storage_key)).toBe(1);
    expect(await store.stat(before[0].storage_key)).toBeNull();
    await expectStarted('reissue', purchaseId, `certificates-${purchaseId}`, 'issued', { cancelled_units: 0 });
    const reissuedRun = env.app.container.temporal.client.workflow.getHandle(`certificates-${purchaseId}`);
    await reissuedRun.result();
    // The operator's run is found like the purchase: by agency and mode, with a summary.
    const described = await reissuedRun.describe();
    const row = await purchaseRow(env, purchaseId);
    expect([
      described.typedSearchAttributes.get(AGENCY_ID),
      described.typedSearchAttributes.get(MODE),
      described.typedSearchAttributes.get(PURCHASE_ID),
    ]).toEqual([String(row.root_account_id), row.mode, String(purchaseId)]);
    expect(await described.staticSummary()).toBe(`Certificates of purchase ${purchaseId} (reissued by an operator)`);
    const after = await env.app.container.db('certificates').where({ purchase_id: purchaseId }).orderBy('id');
    expect(after.map((c) => [c.certificate_number, c.storage_key])).toEqual(before.map((c) => [c.certificate_number, c.storage_key]));
    expect(after.slice(1).map((c) => c.sha256)).toEqual(before.slice(1).map((c) => c.sha256));
    expect((await purchaseRow(env, purchaseId)).status).toBe('issued');
    expect((await store.stat(before[0].storage_key))?.sha256).toBe(after[0].sha256);
  }, 120_000);

  test('when the purchase does not exist or the arguments are wrong, then one clear line and a non-zero exit', async () => {
    const missing = await ops(['recover', '--purchase', '99999999', ...why]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/purchase 99999999 not found/);
    const bad = await runScript('scripts/ops.ts', ['reissue', '--purchase', 'abc', ...why]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^ops: --purchase must be a positive integer/m);
  });

  test('when reissue or recover runs without --reason, then it exits 1 and does nothing; with one, each run is recorded with its operator, target, reason and outcome, and ops audit lists them newest first', async () => {
    const res = await checkout(env);
    const purchaseId = res.body.purchase_id as number;
    const row = await purchaseRow(env, purchaseId);
    const entriesOf = async (id: number) =>
      env.app.container.db('operator_audit_log').where({ target_kind: 'purchase', target_id: String(id) });
    await handle(env, purchaseId).terminate('simulated: the run closed');

    // No reason (or a blank one): a usage error, no run started, nothing recorded.
    const noReason = await ops(['recover', '--purchase', String(purchaseId)]);
    expect(noReason.code).toBe(1);
    expect(noReason.stderr).toMatch(/^ops: recover changes the service: --reason "<why>" is required/m);
    expect(noReason.stdout).toBe('');
    const blank = await ops(['reissue', '--purchase', String(purchaseId), '--reason', '  ']);
    expect(blank.code).toBe(1);
    expect(blank.stderr).toMatch(/^ops: reissue changes the service: --reason "<why>" is required/m);
    expect((await handle(env, purchaseId).describe()).status.name).toBe('TERMINATED');
    expect(await entriesOf(purchaseId)).toEqual([]);

    // Succeeded (as alice, named by her operator token), refused (the OS user), failed (Temporal has no such namespace).
    const alice = `alice-${process.pid}-${Date.now()}`;
    const { token } = await createOperatorService({ repo: createOperatorTokensRepository(env.app.container.db) }).issue(alice, 'test');
    const recovered = await ops(['recover', '--purchase', String(purchaseId), '--reason', 'buyer says they paid'], {
      OPERATOR_TOKEN: token,
    });
    expect(recovered.code).toBe(0);
    expect((await handle(env, purchaseId).describe()).status.name).toBe('RUNNING');
    const refused = await ops(['reissue', '--purchase', String(purchaseId), '--reason', 'certificates missing']);
    expect(refused.code).toBe(2);
    await handle(env, purchaseId).terminate('simulated: the run closed again');
    const failed = await ops(['recover', '--purchase', String(purchaseId), '--reason', 'second try'], {
      TEMPORAL_NAMESPACE: `no-such-namespace-${process.pid}`,
    });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^ops: unexpected error: .*no-such-namespace/m);

    const listed = await runScript('scripts/ops.ts', ['audit', '--purchase', String(purchaseId), '--json'], { LOG_LEVEL: 'silent' });
    expect(listed.code).toBe(0);
    const { entries } = JSON.parse(listed.stdout);
    const target = {
      actor_kind: 'operator_cli',
      target_kind: 'purchase',
      target_id: String(purchaseId),
      root_account_id: row.root_account_id,
    };
    expect(entries).toEqual([
      expect.objectContaining({
        ...target,
        action: 'recover',
        actor: os.userInfo().username,
        reason: 'second try',
        outcome: 'failed',
        outcome_detail: expect.stringMatching(/no-such-namespace/),
      }),
      expect.objectContaining({
        ...target,
        id: JSON.parse(refused.stdout).audit_id,
        action: 'reissue',
        actor: os.userInfo().username,
        actor_via: 'os_user',
        reason: 'certificates missing',
        outcome: 'refused',
        outcome_detail: expect.stringMatching(
          new RegExp(`^purchase ${purchaseId} is not paid \\(status \\w+\\); use recover if the buyer paid$`),
        ),
      }),
      expect.objectContaining({
        ...target,
        id: JSON.parse(recovered.stdout).audit_id,
        action: 'recover',
        actor: alice,
        actor_via: 'operator_token',
        reason: 'buyer says they paid',
        outcome: 'succeeded',
        outcome_detail: null,
        details: { workflowId: `purchase-${purchaseId}`, action: 'started' },
      }),
    ]);
    for (const e of entries) expect(Date.parse(e.finished_at)).toBeGreaterThanOrEqual(Date.parse(e.started_at));
    expect(entries[0].id).toBeGreaterThan(entries[1].id);
    expect(entries[1].id).toBeGreaterThan(entries[2].id);

    const limited = JSON.parse(
      (await runScript('scripts/ops.ts', ['audit', '--purchase', String(purchaseId), '--limit', '1', '--json'], { LOG_LEVEL: 'silent' }))
        .stdout,
    );
    expect(limited.entries.map((e: { id: number }) => e.id)).toEqual([entries[0].id]);
    const human = await runScript('scripts/ops.ts', ['audit', '--purchase', String(purchaseId)], { LOG_LEVEL: 'silent' });
    expect(human.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${entries[0].id} \\S+ ${os.userInfo().username} \\(operator_cli via os_user\\) recover purchase ${purchaseId}: failed: .*; reason: "second try"$`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `^${entries[1].id} \\S+ ${os.userInfo().username} \\(operator_cli via os_user\\) reissue purchase ${purchaseId}: refused: purchase ${purchaseId} is not paid .*; reason: "certificates missing"$`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `^${entries[2].id} \\S+ ${alice} \\(operator_cli via operator_token\\) recover purchase ${purchaseId}: succeeded; reason: "buyer says they paid"$`,
        ),
      ),
    ]);
    // The whole log, newest first, holds them too; a purchase with no entries says so.
    const all = JSON.parse((await runScript('scripts/ops.ts', ['audit', '--limit', '1000', '--json'], { LOG_LEVEL: 'silent' })).stdout);
    expect(all.entries.map((e: { id: number }) => e.id)).toEqual(expect.arrayContaining(entries.map((e: { id: number }) => e.id)));
    expect(all.entries.map((e: { id: number }) => e.id)).toEqual([...all.entries.map((e: { id: number }) => e.id)].sort((a, b) => b - a));
    expect((await runScript('scripts/ops.ts', ['audit', '--purchase', '99999998'], { LOG_LEVEL: 'silent' })).stdout).toBe(
      'no audit entries for purchase 99999998\n',
    );
    const badLimit = await runScript('scripts/ops.ts', ['audit', '--limit', '5000']);
    expect(badLimit.code).toBe(1);
    expect(badLimit.stderr).toMatch(/^ops: --limit must be at most 1000, got 5000/m);
  }, 90_000);
});
