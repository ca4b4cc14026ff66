/**
 * `npx tsx scripts/record-histories.ts`: re-records the purchase workflow histories in
 * `test/histories/` that `test/integration/replay.test.ts` replays against the current workflow
 * code (the guard for workflow changes: ISSUE 5 "Versioning").
 *
 * It brings up (or reuses) the real stack like the jest global setup — PostgreSQL (its own
 * database `insurance_histories`, recreated and migrated), the Temporal dev server, stripe-mock —
 * creates a Temporal namespace of its own (`histories-<time>`, search attributes registered), runs
 * the real API (test/helpers/app) and one in-process worker on a unique task queue, and drives
 * each scenario through the API as an agent would. Each workflow's history is then fetched
 * (`getHandle(id).fetchHistory()`) and written with `JSON.stringify`, one file per scenario; the
 * replay test reads it back with the proto class's `fromObject`. (The SDK's proto3-JSON helpers
 * `historyToJSON`/`historyFromJSON` fail in this install: "type must be a Type", because
 * @temporalio/common and @temporalio/proto each carry their own protobufjs.) Afterwards the
 * namespace is deleted and whatever this script started is stopped.
 *
 * Scenarios: (a) paid by the signed webhook (+ an operator's reissue once issued: the owner's
 * `reissueCertificates` update and its child certificates workflow's own history), (b)
 * expired after a 3 s TTL, (c) paid and found by the periodic check (webhook lost), (d) one still
 * waiting for payment (a partial history, the kind a code change meets in a running purchase),
 * and (e) the policy workflow of a paid purchase after a cancellation carried out (refund, units
 * cancelled; the run is still open, waiting for the next change), and (f) the policy workflow of a
 * test purchase with a test clock: two cancellations dated in the future, one rescinded, the other
 * carried out when the clock passes it, and (g) a bulk cancellation of two purchases and one
 * that is not the account's; for one paid purchase, (h) the purchase's owner (`policy-<id>`) after a
 * partial refund made in the processor's dashboard and a dispute decided for the buyer, (i) a proof-of-coverage email (a local SMTP server) and (j) the delivery of its
 * purchase.paid event to the account's endpoint (a local receiver); (k) a subscription's second
 * month (its billing-cycle invoice paid: the owner of the first month makes the second); the policy workflow of a paid purchase (l) after a
 * certificate holder was added (its certificates issued, `certificate_holder.added`) and then
 * removed, and (m) after an endorsement (the named insured corrected and the second day moved; its
 * new certificate versions issued, `certificates.reissued`), and (n) after two priced endorsements
 * adding a day (one by a saved card that stripe-mock declines, one by a checkout link the buyer
 * pays: the signed event relayed, the day added, its certificate issued), and (o) after a holder was
 * named additional insured at a premium (paid by a checkout link) and the mark then removed (the
 * premium refunded after the answer); (p) the notice to a certificate holder that asked to be told
 * of a cancellation (`holder-notices-<id>`), and (q) an insurer's bordereau and the monthly run for
 * its month; (r) a purchase whose delayed payment failed, (s) one resumed by a late payment after
 * its run closed, (t) one paid by a saved card, and (u) the hand-off: a holder added while the first
 * certificates are being issued (the owner asks the sale run, which answers when issued), and (v) the
 * stored-documents sweep repairing a certificate lost from storage, and (w) a claim's owner `claim-<id>` through every
 * state (denied, closed, reopened, approved, paid, closed), and (x) one paid out by a transfer to the claimant's
 * connected account; each policy history saved once the run is idle (no
 * activity or workflow task pending) and then terminated. `HISTORIES_ONLY=e` (letters,
 * comma-separated) records only those scenarios and leaves the other files as they are.
 *
 * A workflow change is made with `patched()` and must replay the existing files unchanged; only
 * after it has shipped are histories of the new code recorded, and this overwrites the scenario
 * files, so keep copies of the old ones while runs of the old code can still be open
 * (docs/operations.md "Changing workflow code").
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { History } from '@temporalio/common/lib/proto-utils';
import { loadConfig } from '../src/config';
import { createDb, migrateLatest } from '../src/db/knex';
import { activityDepsFromConfig, createActivities } from '../activities';
import { createObjectStore } from '../src/storage/object-store';
import { storedDocumentsSweepWorkflow } from '../workflows/document-sweep';
import { createLogger } from '../src/logger';
import { createEndorsementsRepository } from '../src/endorsements/repository';
import { createSaleRepository } from '../src/purchases/sale-repository';
import type { SessionState } from '../activities/purchase';
import {
  bordereauWorkflowId,
  bulkCancellationWorkflowId,
  holderNoticesWorkflowId,
  certificatesWorkflowId,
  eventDeliveryWorkflowId,
  policyWorkflowId,
  proofEmailWorkflowId,
  purchaseWorkflowId,
  STATUS_QUERY,
  type PurchaseStatusView,
  type SavedCardChargeResult,
} from '../workflows/contracts';
import type { PolicyStatusView } from '../workflows/policy';
import { monthlyBordereauxWorkflow } from '../workflows/bordereau';
import { call, createRootAccountOfKind } from '../test/helpers/fixtures';
import { startTestApp, type TestApp } from '../test/helpers/app';
import { eventually, startTestWorker, uniqueTaskQueue } from '../test/helpers/worker';
import { startSmtp } from '../test/helpers/smtp';
import {
  WEBHOOK_SECRET,
  chargeRefundedEvent,
  checkout,
  createMonthlyProduct,
  createQuotingAccount,
  type QuotingAccount,
  deliverWebhook,
  endorsementSessionCompletedEvent,
  processorEventRecorded,
  scheduledActivities,
  sessionCompletedEvent,
  subscriptionInvoicePaidEvent,
  subscriptionSessionCompletedEvent,
} from '../test/helpers/purchases';

const ROOT = path.resolve(__dirname, '..');
const OUT_DIR = path.join(ROOT, 'test', 'histories');
const DATABASE = 'insurance_histories';
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The parts of scripts/stack.mjs and scripts/tools.mjs this script uses (they are untyped ESM). */
interface Stack {
  ensurePostgres(o: { databaseUrl: string; recreate?: boolean; log?: typeof log }): Promise<string>;
  ensureTemporal(o: {
    port?: number;
    uiPort?: number;
    bin?: string;
    log?: typeof log;
  }): Promise<{ address: string; uiUrl: string; bin: string }>;
  ensureStripeMock(o: { bin?: string; log?: typeof log }): Promise<{ url: string }>;
  ensureFakeGcs(o: { bucket?: string; bin?: string; log?: typeof log }): Promise<{ url: string; bucket: string }>;
  ensureTemporalNamespace(o: { bin: string; address: string; namespace: string; log?: typeof log }): Promise<void>;
  stopAll(o?: { log?: typeof log }): Promise<void>;
}
interface Tools {
  ensureTools(o?: { log?: typeof log }): Promise<{ temporal: string; stripeMock: string; fakeGcs: string }>;
}

/** A dynamic import whose specifier TypeScript does not resolve (the .mjs modules have no types). */
const importUntyped = (file: string): Promise<unknown> => import(pathToFileURL(file).href);

function databaseUrl(): string {
  const url = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${DATABASE}`;
  return url.toString();
}

async function main(): Promise<void> {
  const stack = (await importUntyped(path.join(ROOT, 'scripts', 'stack.mjs'))) as Stack;
  const { ensureTools } = (await importUntyped(path.join(ROOT, 'scripts', 'tools.mjs'))) as Tools;
  const tools = await ensureTools({ log });
  const namespace = `histories-${Date.now()}`;
  let temporalAddress: string | undefined;
  try {
    const [dbUrl, temporal, stripeMock, storage] = await Promise.all([
      stack.ensurePostgres({ databaseUrl: databaseUrl(), recreate: true, log }),
      stack.ensureTemporal({ port: 7233, uiPort: 8233, bin: tools.temporal, log }),
      stack.ensureStripeMock({ bin: tools.stripeMock, log }),
      stack.ensureFakeGcs({ bucket: `certificates-histories-${process.pid}`, bin: tools.fakeGcs, log }),
    ]);
    temporalAddress = temporal.address;
    await stack.ensureTemporalNamespace({ bin: tools.temporal, address: temporal.address, namespace, log });
    // The test helpers read their config from process.env when called, as after the jest global setup.
    Object.assign(process.env, {
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: dbUrl,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: namespace,
      PAYPROC_API_BASE: stripeMock.url,
      PAYPROC_TEST_SECRET_KEY: 'sk_test_123',
      PAYPROC_LIVE_SECRET_KEY: 'sk_test_liveModeLocal',
      STORAGE_API_ENDPOINT: storage.url,
      STORAGE_BUCKET: storage.bucket,
    });
    const db = createDb(loadConfig(process.env));
    try {
      const applied = await migrateLatest(db);
      log(`[histories] database ${DATABASE} migrated (${applied.length} migrations)`);
    } finally {
      await db.destroy();
    }
    await recordAll(namespace);
  } finally {
    if (temporalAddress) {
      await promisify(execFile)(tools.temporal, [
        'operator',
        'namespace',
        'delete',
        '--namespace',
        namespace,
        '--yes',
        '--address',
        temporalAddress,
      ]).catch((err: Error) => log(`[histories] could not delete namespace ${namespace}: ${err.message}`));
    }
    await stack.stopAll({ log });
  }
}

async function recordAll(namespace: string): Promise<void> {
  // stripe-mock keeps no state, so "the buyer paid and no webhook came" is told to the periodic
  // check by this adapter; every other purchase gets the real activity's answer from stripe-mock.
  const config = loadConfig(process.env);
  const activityDb = createDb(config);
  const realDeps = activityDepsFromConfig(config, { db: activityDb, log: createLogger({ LOG_LEVEL: 'silent' }, 'histories') });
  const real = createActivities(realDeps);
  const paidAtProcessor = new Set<number>();
  const getCheckoutState = async (input: { purchaseId: number }): Promise<SessionState> =>
    paidAtProcessor.has(input.purchaseId)
      ? { state: 'paid', paymentIntentId: `pi_polled_${input.purchaseId}` }
      : real.getCheckoutState(input);
  // An endorsement's checkout link "paid at the processor" (stripe-mock answers every session open).
  const linksPaid = new Set<string>();
  const recordEndorsementPaid = async (input: { quoteId: string }): Promise<boolean> => {
    if (!linksPaid.has(input.quoteId)) return real.recordEndorsementPaid(input);
    await createEndorsementsRepository(activityDb).markPaid(input.quoteId, `pi_link_${input.quoteId}`, new Date());
    return true;
  };

  // A saved card "charged at the processor" (stripe-mock answers every payment intent unpaid).
  const cardsCharged = new Set<number>();
  const chargeSavedCard = async (input: { purchaseId: number; paymentMethodId: string }): Promise<SavedCardChargeResult> =>
    cardsCharged.has(input.purchaseId)
      ? {
          ok: true,
          paymentMethodId: input.paymentMethodId,
          paymentIntentId: `pi_card_${input.purchaseId}`,
          status: 'succeeded',
          subscriptionId: null,
        }
      : real.chargeSavedCard(input);

  // Proof-of-coverage emails go to a local SMTP server (the worker reads SMTP_URL when it starts).
  const smtp = await startSmtp();
  process.env.SMTP_URL = smtp.url;
  const closers: Array<() => Promise<void>> = [() => smtp.close()];
  const taskQueue = uniqueTaskQueue();
  // A purchase's first issuance held until the scenario lets it go (by purchase id): a change arrives meanwhile.
  const held = new Map<number, { entered: () => void; released: Promise<void> }>();
  const issueCertificatesAndArchives: typeof real.issueCertificatesAndArchives = async (input) => {
    const hold = held.get(input.purchaseId);
    if (hold) {
      hold.entered();
      await hold.released;
    }
    return real.issueCertificatesAndArchives(input);
  };
  const worker = await startTestWorker(taskQueue, {
    getCheckoutState,
    recordEndorsementPaid,
    chargeSavedCard,
    issueCertificatesAndArchives,
  });
  const apps: TestApp[] = [];
  const appWith = async (overrides: Record<string, string> = {}) => {
    const app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, ...overrides });
    apps.push(app);
    return { app, account: await createQuotingAccount(app) };
  };
  const save = async (app: TestApp, file: string, workflowId: string): Promise<History> => {
    const history = await app.container.temporal.client.workflow.getHandle(workflowId).fetchHistory();
    fs.writeFileSync(path.join(OUT_DIR, file), `${JSON.stringify(history, null, 2)}\n`);
    log(`[histories] ${file}: ${history.events?.length ?? 0} events of ${workflowId}`);
    return history;
  };
  /** Until the workflow waits for payment: status published, then the wait's timer, nothing pending. */
  const untilWaiting = async (app: TestApp, purchaseId: number) => {
    const handle = app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId));
    await eventually(async () => {
      const h = await handle.fetchHistory();
      return scheduledActivities(h, 'setPurchaseStatus') === 1 && h.events?.at(-1)?.timerStartedEventAttributes != null;
    }, 30_000);
  };
  /** Until the run has nothing in flight: no activity and no workflow task pending (it waits for an update, a signal or its timer). */
  const untilIdle = async (app: TestApp, workflowId: string) => {
    const handle = app.container.temporal.client.workflow.getHandle(workflowId);
    await eventually(async () => {
      const { raw } = await handle.describe();
      return (raw.pendingActivities?.length ?? 0) === 0 && raw.pendingWorkflowTask == null;
    }, 30_000);
  };
  const finish = async (app: TestApp, purchaseId: number) =>
    app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).result() as Promise<PurchaseStatusView>;

  /** A new purchase of the account (its checkout created), once its run `purchase-<id>` waits for payment. */
  const waitingCheckout = async (app: TestApp, account: QuotingAccount) => {
    const started = await checkout(app, account);
    await untilWaiting(app, started.purchaseId);
    return started;
  };
  /** Waits for the purchase's run `purchase-<id>` to end in `status` (issued unless said), then saves its history to `file`. */
  const saveEnded = async (app: TestApp, purchaseId: number, file: string, status: PurchaseStatusView['status'] = 'issued') => {
    expectStatus(await finish(app, purchaseId), status);
    await save(app, file, purchaseWorkflowId(purchaseId));
  };
  /** A new purchase of the account, paid by the signed webhook once its run waits for payment, issued: its id. */
  const paidPurchase = async (app: TestApp, account: QuotingAccount): Promise<number> => {
    const { purchaseId, sessionId } = await waitingCheckout(app, account);
    await deliverWebhook(app, sessionCompletedEvent(purchaseId, sessionId));
    expectStatus(await finish(app, purchaseId), 'issued');
    return purchaseId;
  };
  /** The public API with the account's key; a `body` makes it a POST. */
  const postingApi = (app: TestApp, account: QuotingAccount) => (p: string, body?: unknown) =>
    call(app.baseUrl, `/api/v1${p}`, { key: account.key, ...(body === undefined ? {} : { method: 'POST', body }) });
  /** The public API with the account's key, `init` as `call` takes it. */
  const accountApi =
    (app: TestApp, account: QuotingAccount) =>
    (p: string, init: { method?: string; body?: unknown } = {}) =>
      call(app.baseUrl, `/api/v1${p}`, { key: account.key, ...init });
  /**
   * Adds a certificate holder (`holder`: the API's body) to the purchase through `api` (an
   * `accountApi`); its id. Throws unless the API answers 201.
   */
  const addHolder = async (api: ReturnType<typeof accountApi>, purchaseId: number, holder: Record<string, unknown>): Promise<number> => {
    const added = await api(`/purchases/${purchaseId}/certificate_holders`, { method: 'POST', body: holder });
    if (added.status !== 201) throw new Error(`add holder: ${added.status} ${added.text}`);
    return added.body.data.id as number;
  };
  /**
   * Carries out the purchase's endorsement quote `quoteId` by a checkout link, pays the link (the
   * processor's signed event; the endorsement then reads as paid) and waits until it is applied.
   */
  const endorseByPaidLink = async (app: TestApp, account: QuotingAccount, purchaseId: number, quoteId: string) => {
    const api = accountApi(app, account);
    const open = await api(`/purchases/${purchaseId}/endorse`, {
      method: 'POST',
      body: { quote_id: quoteId, payment: { method: 'checkout_link' } },
    });
    if (open.status !== 200 || open.body.data.status !== 'awaiting_payment') throw new Error(`checkout link: ${open.status} ${open.text}`);
    const session = (await app.container.db('endorsements').where({ quote_id: quoteId }).first()).checkout_session_id as string;
    linksPaid.add(quoteId);
    const paid = await deliverWebhook(app, endorsementSessionCompletedEvent(session, quoteId, purchaseId, `pi_link_${quoteId}`));
    if (!paid.body?.relayed) throw new Error(`endorsement payment not relayed: ${paid.status} ${paid.text}`);
    await eventually(async () => (await api(`/purchases/${purchaseId}/endorsements/${quoteId}`)).body.data.status === 'applied', 60_000);
  };
  /** Ends workflow `workflowId` once its history is recorded (terminated: nothing more happens to it here). */
  const end = (app: TestApp, workflowId: string) =>
    app.container.temporal.client.workflow.getHandle(workflowId).terminate('history recorded by scripts/record-histories.ts');
  /** Saves the history of `workflowId` to `file`, then ends it. */
  const saveAndEnd = async (app: TestApp, file: string, workflowId: string) => {
    await save(app, file, workflowId);
    await end(app, workflowId);
  };
  /** Saves the history of `workflowId` to `file` once it has nothing in flight, then ends it. */
  const saveWhenIdle = async (app: TestApp, file: string, workflowId: string) => {
    await untilIdle(app, workflowId);
    await saveAndEnd(app, file, workflowId);
  };
  /** Saves the history of the purchase's owner `policy-<id>` once it has nothing in flight, then ends it. */
  const saveOwner = (app: TestApp, purchaseId: number, file: string) => saveWhenIdle(app, file, policyWorkflowId(purchaseId));

  const only = process.env.HISTORIES_ONLY?.split(',').map((x) => x.trim());
  const want = (scenario: string) => !only || only.includes(scenario);
  fs.mkdirSync(OUT_DIR, { recursive: true });
  try {
    if (want('a')) {
      // (a) paid: the signed checkout.session.completed webhook, the certificates issued in the
      // purchase workflow; then an operator's reissue, the certificates workflow on its own (the
      // run a renewal's child and runs recorded before issuance moved into the purchase make too)
      const { app, account } = await appWith();
      const { purchaseId, sessionId } = await waitingCheckout(app, account); // the usual path: the webhook ends the wait
      const res = await deliverWebhook(app, sessionCompletedEvent(purchaseId, sessionId));
      if (!res.body?.relayed) throw new Error(`webhook not relayed: ${res.status} ${res.text}`);
      await saveEnded(app, purchaseId, 'purchase-paid-webhook.json');
      const purchase = await createSaleRepository(app.container.db).findById(purchaseId);
      if (!purchase) throw new Error(`purchase ${purchaseId} not found`);
      const reissue = await app.container.purchaseWorkflows.reissueCertificates(purchase);
      await app.container.temporal.client.workflow.getHandle(reissue.workflowId).result();
      await save(app, 'certificates-issued.json', certificatesWorkflowId(purchaseId));
      await saveOwner(app, purchaseId, 'policy-reissue.json'); // the owner that started it (its reissueCertificates update)
    }
    if (want('b')) {
      // (b) expired: nobody pays within a 3 s TTL; the periodic check asks stripe-mock meanwhile
      const { app, account } = await appWith({ CHECKOUT_SESSION_TTL_SECONDS: '3', CHECKOUT_POLL_INTERVAL_SECONDS: '1' });
      const { purchaseId } = await checkout(app, account);
      await saveEnded(app, purchaseId, 'purchase-expired.json', 'expired');
    }
    if (want('c')) {
      // (c) paid, webhook lost: the periodic check (every second) finds the session paid
      const { app, account } = await appWith({ CHECKOUT_POLL_INTERVAL_SECONDS: '1' });
      const { purchaseId } = await checkout(app, account);
      await new Promise((r) => setTimeout(r, 2500)); // a couple of "still open" answers first
      paidAtProcessor.add(purchaseId);
      await saveEnded(app, purchaseId, 'purchase-paid-periodic-check.json');
    }
    if (want('d')) {
      // (d) still waiting for payment: the history a code change meets in a running purchase
      const { app, account } = await appWith();
      const { purchaseId } = await waitingCheckout(app, account);
      await saveAndEnd(app, 'purchase-awaiting-payment.json', purchaseWorkflowId(purchaseId));
    }
    if (want('e')) {
      // (e) a cancellation of one day of two, carried out by the purchase's policy workflow
      const { app, account } = await appWith();
      const purchaseId = await paidPurchase(app, account);
      const api = postingApi(app, account);
      const unit = (await api(`/purchases/${purchaseId}`)).body.data.items[0].covered_units[1].id;
      const quote = await api(`/purchases/${purchaseId}/cancellation_quote`, { covered_unit_ids: [unit], requested_by: 'buyer' });
      const cancelled = await api(`/purchases/${purchaseId}/cancel`, { quote_id: quote.body.data.id });
      if (cancelled.status !== 200) throw new Error(`cancel: ${cancelled.status} ${cancelled.text}`);
      await eventually(async () => (await api(`/purchases/${purchaseId}`)).body.data.cancellations[0]?.status === 'completed', 30_000);
      await saveAndEnd(app, 'policy-cancelled.json', policyWorkflowId(purchaseId));
    }
    if (want('f')) {
      // (f) cancellations dated in the future on a test clock: one rescinded, one carried out when the clock passes it
      const { app, account } = await appWith({ RATE_LIMIT_PER_MINUTE: '100000' });
      const purchaseId = await paidPurchase(app, account);
      const api = postingApi(app, account);
      const must = async (p: string, body: unknown, status = 200) => {
        const res = await api(p, body);
        if (res.status !== status) throw new Error(`${p}: ${res.status} ${res.text}`);
        return res.body.data;
      };
      const [day1, day2] = (await api(`/purchases/${purchaseId}`)).body.data.items[0].covered_units.map((u: { id: number }) => u.id);
      await must(`/test_helpers/purchases/${purchaseId}/test_clock`, { frozen_time: '2027-04-29T00:00:00Z' });
      const later = await must(
        `/purchases/${purchaseId}/cancellation_quote`,
        { covered_unit_ids: [day2], effective_at: '2027-05-01T12:00:00Z' },
        201,
      );
      await must(`/purchases/${purchaseId}/cancel`, { quote_id: later.id });
      const sooner = await must(
        `/purchases/${purchaseId}/cancellation_quote`,
        { covered_unit_ids: [day1], effective_at: '2027-04-30T12:00:00Z' },
        201,
      );
      const rescinded = await must(`/purchases/${purchaseId}/cancel`, { quote_id: sooner.id });
      await must(`/purchases/${purchaseId}/cancellations/${rescinded.id}/rescind`, {});
      await must(`/test_helpers/purchases/${purchaseId}/test_clock`, { frozen_time: '2027-05-01T13:00:00Z' });
      await eventually(
        async () =>
          (await api(`/purchases/${purchaseId}`)).body.data.cancellations.some((c: { status: string }) => c.status === 'completed'),
        30_000,
      );
      await saveAndEnd(app, 'policy-scheduled.json', policyWorkflowId(purchaseId));
    }
    if (want('g')) {
      // (g) a bulk cancellation of two purchases of the account and one that is not its own (skipped)
      const { app, account } = await appWith({ RATE_LIMIT_PER_MINUTE: '100000' });
      const ids: number[] = [];
      for (let i = 0; i < 2; i++) {
        const purchaseId = await paidPurchase(app, account);
        ids.push(purchaseId);
      }
      const api = postingApi(app, account);
      const started = await api('/bulk_cancellations', { purchase_ids: [...ids, 2_000_000_000], reason: 'Event called off' });
      if (started.status !== 202) throw new Error(`bulk: ${started.status} ${started.text}`);
      const bulkId = started.body.data.id as number;
      await app.container.temporal.client.workflow.getHandle(bulkCancellationWorkflowId(bulkId)).result();
      await save(app, 'bulk-cancellation.json', bulkCancellationWorkflowId(bulkId));
    }
    if (want('h') || want('i') || want('j')) {
      // A paid purchase whose account has a webhook endpoint (a local receiver answering 200), for
      // (h) a partial refund made in the processor's dashboard (charge.refunded) and a dispute, both recorded by the owner, (i) a
      // proof-of-coverage email through a local SMTP server, (j) the delivery of its purchase.paid event.
      const { app, account } = await appWith({ RATE_LIMIT_PER_MINUTE: '100000' });
      const receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(200).end('ok')));
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      closers.push(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const api = postingApi(app, account);
      const endpoint = await api('/webhook_endpoints', { url, enabled_events: ['purchase.paid'] });
      if (endpoint.status !== 201) throw new Error(`endpoint: ${endpoint.status} ${endpoint.text}`);
      const purchaseId = await paidPurchase(app, account);
      const p = (await api(`/purchases/${purchaseId}`)).body.data;
      if (want('h')) {
        const eventId = `evt_histories_refund_${purchaseId}`;
        const event = chargeRefundedEvent({
          id: eventId,
          chargeId: `ch_histories_${purchaseId}`,
          paymentIntent: p.payment_intent,
          amountMinor: p.amount_total,
          amountRefundedMinor: 1000,
          purchaseId,
        });
        const res = await deliverWebhook(app, event);
        if (res.status !== 200) throw new Error(`refund event: ${res.status} ${res.text}`);
        await processorEventRecorded(app, purchaseId, eventId);
        // Then the buyer disputes the payment and the processor decides for the buyer (test helper events).
        const disputed = await api(`/test_helpers/purchases/${purchaseId}/dispute`, { outcome: 'lost' });
        if (disputed.status !== 200) throw new Error(`dispute: ${disputed.status} ${disputed.text}`);
        for (const e of disputed.body.data.events as Array<{ id: string }>) await processorEventRecorded(app, purchaseId, e.id);
        await saveOwner(app, purchaseId, 'policy-processor-refund-dispute.json');
      }
      if (want('i')) {
        const rootUuid = (await app.container.db('root_accounts').where({ id: account.accountId }).first('idp_root_account_uuid'))
          .idp_root_account_uuid as string;
        const sent = await call(app.baseUrl, '/platform-agency-root-certs/teamEmailProofofCoverage', {
          method: 'POST',
          key: account.key,
          body: { idp_root_account_uuid: rootUuid, purchase_id: purchaseId, email_addresses: ['venue@histories.example'] },
        });
        if (sent.status !== 200) throw new Error(`proof email: ${sent.status} ${sent.text}`);
        const firstEmailId = sent.body.emails[0].email_id as number;
        await app.container.temporal.client.workflow.getHandle(proofEmailWorkflowId(firstEmailId)).result();
        await save(app, 'proof-email-sent.json', proofEmailWorkflowId(firstEmailId));
      }
      if (want('j')) {
        const delivery = await eventually(async () => {
          const row = await app.container.db('event_deliveries').where({ endpoint_id: endpoint.body.data.id }).first('id', 'status');
          return row && row.status === 'succeeded' ? row : null;
        }, 30_000);
        await save(app, 'event-delivery-succeeded.json', eventDeliveryWorkflowId(delivery.id as number, 0));
      }
    }
    if (want('k')) {
      // (k) a subscription's second month: the paid subscription checkout, then its billing-cycle invoice.paid
      const { app, account } = await appWith({ RATE_LIMIT_PER_MINUTE: '100000' });
      const monthlyId = await createMonthlyProduct(app, account.accountId, account.key, 'EVM-HIST-1');
      const body = await account.quoteBody();
      (body.selected_product_lines_to_purchase as Array<Record<string, unknown>>)[0]!.product_line_template_id = monthlyId;
      const quoted = await call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', { method: 'POST', key: account.key, body });
      if (quoted.status !== 200) throw new Error(`quote: ${quoted.status} ${quoted.text}`);
      const purchaseId = quoted.body.purchase_id as number;
      await untilWaiting(app, purchaseId);
      const subscription = `sub_histories_${purchaseId}`;
      await deliverWebhook(
        app,
        subscriptionSessionCompletedEvent({ id: `evt_histories_sub_${purchaseId}`, purchaseId, sessionId: quoted.body.id, subscription }),
      );
      expectStatus(await finish(app, purchaseId), 'issued');
      const invoiceId = `in_histories_${purchaseId}`;
      const cycle = subscriptionInvoicePaidEvent({
        id: `evt_histories_cycle_${purchaseId}`,
        invoiceId,
        subscription,
        paymentIntent: `pi_renew_${purchaseId}`,
        purchaseId,
        amountPaid: quoted.body.amount_total,
      });
      const delivered = await deliverWebhook(app, cycle);
      if (delivered.status !== 200) throw new Error(`invoice.paid: ${delivered.status} ${delivered.text}`);
      // The owner of the period in force (the first, here) makes the second period and issues its certificates.
      const owner = app.container.temporal.client.workflow.getHandle(policyWorkflowId(purchaseId));
      await eventually(async () => {
        const view = await owner.query<PolicyStatusView>(STATUS_QUERY).catch(() => null);
        return view?.renewals.some((r) => r.invoiceId === invoiceId && r.phase === 'issued') ?? false;
      }, 90_000);
      await untilIdle(app, policyWorkflowId(purchaseId));
      await save(app, 'policy-renewal-issued.json', policyWorkflowId(purchaseId));
      await owner.terminate('history recorded by scripts/record-histories.ts');
    }
    if (want('l')) {
      // (l) a certificate holder added to a paid purchase (its certificates issued, announced), then removed
      const { app, account } = await appWith({ RATE_LIMIT_PER_MINUTE: '100000' });
      const purchaseId = await paidPurchase(app, account);
      const api = accountApi(app, account);
      const holderId = await addHolder(api, purchaseId, {
        name: 'Riverside Hall LLC',
        address: { line1: '200 River Rd', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
        additional_insured: true,
      });
      await eventually(async () => {
        const holders = (await api(`/purchases/${purchaseId}/certificate_holders`)).body.data as Array<{
          id: number;
          certificates: Array<{ status: string }>;
        }>;
        const holder = holders.find((h) => h.id === holderId);
        return holder !== undefined && holder.certificates.length > 0 && holder.certificates.every((c) => c.status === 'issued');
      }, 90_000);
      await eventually(
        async () =>
          ((await api('/events?type=certificate_holder.added')).body.data as Array<{ data: { object: { id: number } } }>).some(
            (e) => e.data.object.id === holderId,
          ),
        90_000,
      );
      await untilIdle(app, policyWorkflowId(purchaseId));
      const removed = await api(`/purchases/${purchaseId}/certificate_holders/${holderId}`, { method: 'DELETE' });
      if (removed.status !== 200 || removed.body.data.status !== 'removed')
        throw new Error(`remove holder: ${removed.status} ${removed.text}`);
      await saveOwner(app, purchaseId, 'policy-holder-added-removed.json');
    }
    if (want('m')) {
      // (m) an endorsement of a paid purchase: the named insured corrected and the second day moved, its new certificate versions issued
      const { app, account } = await appWith({ RATE_LIMIT_PER_MINUTE: '100000' });
      const purchaseId = await paidPurchase(app, account);
      const api = postingApi(app, account);
      const unit = (await api(`/purchases/${purchaseId}`)).body.data.items[0].covered_units[1].id as number;
      const quote = await api(`/purchases/${purchaseId}/endorsement_quote`, {
        changes: [
          { type: 'named_insured', name: 'Kim Park Events LLC' },
          { type: 'move_covered_unit', covered_unit_id: unit, start_date: '2027-05-09' },
        ],
      });
      if (quote.status !== 201) throw new Error(`endorsement quote: ${quote.status} ${quote.text}`);
      const quoteId = quote.body.data.id as string;
      const endorsed = await api(`/purchases/${purchaseId}/endorse`, { quote_id: quoteId });
      if (endorsed.status !== 200) throw new Error(`endorse: ${endorsed.status} ${endorsed.text}`);
      await eventually(
        async () =>
          ((await api('/events?type=certificates.reissued')).body.data as Array<{ data: { object: { endorsement_id: string } } }>).some(
            (e) => e.data.object.endorsement_id === quoteId,
          ),
        90_000,
      );
      await saveOwner(app, purchaseId, 'policy-endorsed.json');
    }
    if (want('n')) {
      // (n) priced endorsements adding a day: a saved card declined (stripe-mock leaves every payment intent unpaid), then a checkout link paid
      const { app, account } = await appWith({ RATE_LIMIT_PER_MINUTE: '100000' });
      const purchaseId = await paidPurchase(app, account);
      const api = postingApi(app, account);
      const itemId = (await api(`/purchases/${purchaseId}`)).body.data.items[0].id as number;
      const addDay = async () => {
        const q = await api(`/purchases/${purchaseId}/endorsement_quote`, {
          changes: [{ type: 'add_covered_units', purchase_item_id: itemId, start_date: '2027-05-03', end_date: '2027-05-03' }],
        });
        if (q.status !== 201) throw new Error(`endorsement quote: ${q.status} ${q.text}`);
        return q.body.data.id as string;
      };
      const declined = await api(`/purchases/${purchaseId}/endorse`, {
        quote_id: await addDay(),
        payment: { method: 'saved_card', payment_method_id: 'pm_card_visa' },
      });
      if (declined.status !== 400) throw new Error(`saved card (stripe-mock leaves it unpaid): ${declined.status} ${declined.text}`);
      const quoteId = await addDay();
      await endorseByPaidLink(app, account, purchaseId, quoteId);
      await eventually(
        async () =>
          Number(
            (await app.container.db('certificates').where({ purchase_id: purchaseId }).whereNotNull('storage_key').count('* as n'))[0]!.n,
          ) === 3,
        90_000,
      );
      await saveOwner(app, purchaseId, 'policy-endorsed-priced.json');
    }
    if (want('o')) {
      // (o) a holder named additional insured at a premium (collected by a checkout link the buyer pays), then the mark removed (its premium refunded)
      const { app, account } = await appWith({ RATE_LIMIT_PER_MINUTE: '100000' });
      const api = accountApi(app, account);
      const terms = await api(`/products/${account.productId}/endorsement_terms`, {
        method: 'PATCH',
        body: { additional_insured_premium: 500 },
      });
      if (terms.status !== 200) throw new Error(`endorsement terms: ${terms.status} ${terms.text}`);
      const purchaseId = await paidPurchase(app, account);
      const stored = async (n: number) =>
        eventually(
          async () =>
            Number(
              (await app.container.db('certificates').where({ purchase_id: purchaseId }).whereNotNull('storage_key').count('* as n'))[0]!.n,
            ) === n,
          90_000,
        );
      const holderId = await addHolder(api, purchaseId, {
        name: 'Lakeside Pavilion LLC',
        address: { line1: '1 Shore Rd', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
      });
      await stored(4);
      const mark = async (on: boolean) => {
        const q = await api(`/purchases/${purchaseId}/endorsement_quote`, {
          method: 'POST',
          body: { changes: [{ type: 'certificate_holder_endorsements', certificate_holder_id: holderId, additional_insured: on }] },
        });
        if (q.status !== 201) throw new Error(`endorsement quote: ${q.status} ${q.text}`);
        return q.body.data.id as string;
      };
      const quoteId = await mark(true);
      await endorseByPaidLink(app, account, purchaseId, quoteId);
      await stored(6);
      const downId = await mark(false);
      const down = await api(`/purchases/${purchaseId}/endorse`, { method: 'POST', body: { quote_id: downId } });
      if (down.status !== 200 || down.body.data.total_difference >= 0) throw new Error(`mark removed: ${down.status} ${down.text}`);
      await eventually(
        async () => (await api(`/purchases/${purchaseId}/endorsements/${downId}`)).body.data.refund?.status === 'submitted',
        60_000,
      );
      await stored(8);
      await saveOwner(app, purchaseId, 'policy-holder-endorsement-refunded.json');
    }
    if (want('p')) {
      // (p) a cancellation that voids a certificate of a holder that asked to be told: the notice
      // sent by the policy workflow's child `holder-notices-<cancellationId>` (a local SMTP server)
      const { app, account } = await appWith({ RATE_LIMIT_PER_MINUTE: '100000' });
      const purchaseId = await paidPurchase(app, account);
      const api = accountApi(app, account);
      await addHolder(api, purchaseId, {
        name: 'City of Springfield',
        address: { line1: '1 City Sq', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
        email: 'permits@springfield.example',
        notify_on_cancellation: true,
      });
      await untilIdle(app, policyWorkflowId(purchaseId));
      const unit = (await api(`/purchases/${purchaseId}`)).body.data.items[0].covered_units[1].id;
      const cancelled = await api(`/purchases/${purchaseId}/cancel`, { method: 'POST', body: { covered_unit_ids: [unit] } });
      if (cancelled.status !== 200) throw new Error(`cancel: ${cancelled.status} ${cancelled.text}`);
      const cancellationId = cancelled.body.data.id as number;
      const notices = app.container.temporal.client.workflow.getHandle(holderNoticesWorkflowId(cancellationId));
      await eventually(async () => (await notices.describe().catch(() => null)) !== null, 60_000);
      const sent = (await notices.result()) as { sent: number };
      if (sent.sent !== 1) throw new Error(`holder notices: ${JSON.stringify(sent)}`);
      await save(app, 'holder-notices-sent.json', holderNoticesWorkflowId(cancellationId));
      await untilIdle(app, policyWorkflowId(purchaseId));
      await end(app, policyWorkflowId(purchaseId));
    }
    if (want('q')) {
      // (q) a bordereau of an insurer for a month (generated and stored), and the monthly run the
      // `monthly-bordereaux` Schedule starts, for that month (bordereaux asked for, both modes reconciled)
      const { app, account } = await appWith({ RATE_LIMIT_PER_MINUTE: '100000' });
      const api = accountApi(app, account);
      const insurer = await createRootAccountOfKind(app.container, 'insurer', 'Evergreen Mutual Insurance Co.', [account.accountId]);
      const named = await api(`/products/${account.productId}`, { method: 'PATCH', body: { insurerRootAccountID: insurer.id } });
      if (named.status !== 200) throw new Error(`product insurer: ${named.status} ${named.text}`);
      const asked = await api('/reports/bordereaux', { method: 'POST', body: { party_id: insurer.id, month: '2026-10' } });
      if (asked.status !== 202 && asked.status !== 200) throw new Error(`bordereau: ${asked.status} ${asked.text}`);
      const bordereauId = asked.body.data.id as number;
      await app.container.temporal.client.workflow.getHandle(bordereauWorkflowId(bordereauId)).result();
      await save(app, 'bordereau-generated.json', bordereauWorkflowId(bordereauId));
      const monthly = await app.container.temporal.client.workflow.start(monthlyBordereauxWorkflow, {
        workflowId: `monthly-bordereaux-histories-${Date.now()}`,
        taskQueue,
        args: [{ month: '2026-10' }],
      });
      await monthly.result();
      await save(app, 'monthly-bordereaux-run.json', monthly.workflowId);
    }
    if (want('r')) {
      // (r) the buyer's delayed payment method failed after checkout (test helper event): the purchase ends failed
      const { app, account } = await appWith({ RATE_LIMIT_PER_MINUTE: '100000' });
      const { purchaseId } = await waitingCheckout(app, account);
      const failed = await call(app.baseUrl, `/api/v1/test_helpers/purchases/${purchaseId}/pay`, {
        method: 'POST',
        key: account.key,
        body: { outcome: 'failed' },
      });
      if (failed.status !== 200) throw new Error(`pay failed: ${failed.status} ${failed.text}`);
      expectStatus(await finish(app, purchaseId), 'failed');
      await save(app, 'purchase-failed.json', purchaseWorkflowId(purchaseId));
    }
    if (want('s')) {
      // (s) resumed: the run closed (terminated) before the payment arrived; the signed payment starts a new run that records it and issues
      const { app, account } = await appWith();
      const { purchaseId, sessionId } = await waitingCheckout(app, account);
      const handle = app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(purchaseId));
      await handle.terminate('history recorded by scripts/record-histories.ts: the run closed before the payment');
      const late = await deliverWebhook(app, sessionCompletedEvent(purchaseId, sessionId));
      if (!late.body?.relayed) throw new Error(`late payment not relayed: ${late.status} ${late.text}`);
      await saveEnded(app, purchaseId, 'purchase-resumed-paid.json');
    }
    if (want('t')) {
      // (t) paid by a card saved on the buyer's processor customer (the chargeSavedCard update); the checkout link then closed
      const { app, account } = await appWith();
      const { purchaseId } = await waitingCheckout(app, account);
      cardsCharged.add(purchaseId);
      const charged = await app.container.purchaseWorkflows.chargeSavedCard(purchaseId, 'pm_card_visa');
      if (!charged.ok) throw new Error(`saved card: ${JSON.stringify(charged)}`);
      await saveEnded(app, purchaseId, 'purchase-paid-saved-card.json');
    }
    if (want('u')) {
      // (u) the hand-off: a holder added while the first certificates are being issued; the owner
      // asks the sale run (notifyWhenIssued), the sale run answers saleIssued, the holder is added
      const { app, account } = await appWith();
      const { purchaseId, sessionId } = await waitingCheckout(app, account);
      let entered!: () => void;
      const issuing = new Promise<void>((r) => (entered = r));
      let release!: () => void;
      held.set(purchaseId, { entered, released: new Promise<void>((r) => (release = r)) });
      await deliverWebhook(app, sessionCompletedEvent(purchaseId, sessionId));
      await issuing;
      const added = accountApi(app, account)(`/purchases/${purchaseId}/certificate_holders`, {
        method: 'POST',
        body: {
          name: 'Riverside Hall LLC',
          address: { line1: '200 River Rd', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
        },
      });
      const owner = app.container.temporal.client.workflow.getHandle(policyWorkflowId(purchaseId));
      await eventually(async () =>
        ((await owner.fetchHistory().catch(() => ({ events: [] }))).events ?? []).some(
          (e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'notifyWhenIssued',
        ),
      );
      release();
      const res = await added;
      if (res.status !== 201) throw new Error(`holder not added: ${res.status} ${res.text}`);
      await saveEnded(app, purchaseId, 'purchase-paid-handoff.json');
      await saveOwner(app, purchaseId, 'policy-holder-during-issuance.json');
    }
    if (want('v')) {
      // (v) the stored-documents sweep (what its daily Schedule starts) over one agency whose
      // purchase lost a certificate PDF from storage: found missing, issued again, checked again
      const { app, account } = await appWith();
      const purchaseId = await paidPurchase(app, account);
      const [lost] = await app.container.db('certificates').where({ purchase_id: purchaseId }).orderBy('id');
      await createObjectStore(config).deletePrefix(lost.storage_key);
      const { root_account_id: rootAccountId } = await app.container.db('purchases').where({ id: purchaseId }).first('root_account_id');
      const sweep = await app.container.temporal.client.workflow.start(storedDocumentsSweepWorkflow, {
        workflowId: `stored-documents-sweep-histories-${Date.now()}`,
        taskQueue,
        args: [{ rootAccountId }],
      });
      const report = await sweep.result();
      if (report.repaired !== 1) throw new Error(`sweep: ${JSON.stringify(report)}`);
      await save(app, 'stored-documents-sweep.json', sweep.workflowId);
    }
    /**
     * Files a claim (property damage on the covered day 2027-05-01, 1 250.00 claimed) on a newly paid
     * purchase whose test clock stands after its covered days; `payoutAccount` names the claimant's
     * connected account. Answers the app, its API, a call that must answer 2xx, the claim and a
     * call of the claim's test-helper actions.
     */
    const fileClaim = async (payoutAccount?: string) => {
      const { app, account } = await appWith();
      const purchaseId = await paidPurchase(app, account);
      const request = accountApi(app, account);
      const must = async (what: string, res: Promise<{ status: number; text: string; body: any }>) => {
        const r = await res;
        if (r.status !== 200 && r.status !== 201) throw new Error(`${what}: ${r.status} ${r.text}`);
        return r.body.data;
      };
      await must(
        'test clock',
        request(`/test_helpers/purchases/${purchaseId}/test_clock`, { method: 'POST', body: { frozen_time: '2027-05-03T12:00:00Z' } }),
      );
      const claim = await must(
        'claim',
        request(`/purchases/${purchaseId}/claims`, {
          method: 'POST',
          body: {
            incident_at: '2027-05-01T19:30:00-05:00',
            claim_type: 'property_damage',
            description: 'A storm flooded the marquee.',
            claimant: { name: 'Kim Park', email: 'kim@example.com', ...(payoutAccount ? { payout_account: payoutAccount } : {}) },
            amount_claimed: 125000,
          },
        }),
      );
      const act = (body: Record<string, unknown>) =>
        must(String(body.action), request(`/test_helpers/claims/${claim.id}/actions`, { method: 'POST', body }));
      return { app, request, must, claim, act };
    };
    if (want('w')) {
      // (w) a claim's owner `claim-<id>`: filed on a paid purchase (its test clock after the covered
      // days), acknowledged, commented, reviewed, denied, closed, reopened with a reason, reviewed
      // again, approved for part of the amount, paid and closed
      const { app, request, must, claim, act } = await fileClaim();
      await act({ action: 'acknowledge' });
      await must('comment', request(`/claims/${claim.id}/comments`, { method: 'POST', body: { text: 'Invoice follows.' } }));
      await act({ action: 'start_review' });
      await act({ action: 'deny', reason_code: 'excluded_peril', reason: 'Flood is excluded' });
      await act({ action: 'close' });
      await act({ action: 'reopen', reason: 'The surveyor found wind damage' });
      await act({ action: 'start_review' });
      await act({ action: 'approve', amount: 90000, reason: 'Depreciated value' });
      await act({ action: 'record_payment', reference: 'po_histories' });
      await act({ action: 'close' });
      await saveWhenIdle(app, 'claim-lifecycle.json', `claim-${claim.id}`);
    }
    if (want('x')) {
      // (x) a claim paid out by its owner: the claimant names a connected account, the approval is
      // paid by one transfer at the processor (payClaim) and recorded paid by the service, then closed
      const { app, request, must, claim, act } = await fileClaim('acct_1HistoriesPayout');
      await act({ action: 'acknowledge' });
      await act({ action: 'start_review' });
      await act({ action: 'approve', amount: 90000, reason: 'Depreciated value' });
      await eventually(async () => (await must('read', request(`/claims/${claim.id}`))).status === 'paid', 60_000);
      await act({ action: 'close' });
      await saveWhenIdle(app, 'claim-paid-out.json', `claim-${claim.id}`);
    }
    log(`[histories] written to ${path.relative(ROOT, OUT_DIR)}/ (namespace ${namespace})`);
  } finally {
    for (const app of apps) await app.close();
    await worker.shutdown();
    for (const close of closers) await close();
    await realDeps.pdf.close();
    realDeps.mailer.close();
    await realDeps.temporal.close();
    await activityDb.destroy();
  }
}

function expectStatus(view: PurchaseStatusView, status: PurchaseStatusView['status']): void {
  if (view.status !== status) throw new Error(`purchase ${view.purchaseId} ended ${view.status}, expected ${status}`);
}

main().catch((err: unknown) => {
  log(`record-histories failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
