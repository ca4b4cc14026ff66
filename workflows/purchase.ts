/**
 * purchaseWorkflow (ARCHITECTURE §3 steps 3–7): one per purchase, id `purchase-<id>`.
 *
 * 1. The `createCheckout` update (sent with update-with-start by the quote route) creates the
 *    processor checkout session in an activity and returns it (spec §4.4 step 2).
 * 2. It waits for payment: `paymentEvent` signals from the webhook route, its own check of the
 *    session every `pollIntervalSeconds` (a lost webhook delays, never loses, a payment), and
 *    the deadline `sessionTtlSeconds` after which the session is expired at the processor.
 * 3. On payment it records the payment and issues the certificates (the certificates workflow's
 *    rounds, `issueCertificateRounds`, run in this workflow: one execution per purchase);
 *    otherwise the purchase ends `expired`. Duplicate or out-of-order events change nothing: only the first
 *    decisive outcome counts, and `paid` always wins over a later `expired`.
 *
 * Outages never end a purchase: processor calls retry without an attempt limit (backoff capped
 * at `retryMaxIntervalSeconds`), and a payment signalled while a call is still retrying cancels
 * that call and goes on. Only a non-retryable processor answer (declined, invalid request) ends
 * the purchase `failed`, with the reason, published like every status; so does a payment the
 * processor reports failed after checkout (`checkout.session.async_payment_failed`). A run with `resume` is a
 * new run of a purchase whose earlier run closed (see `PurchaseWorkflowInput.resume`): it takes
 * the stored session and waits for, or asks the processor about, the payment.
 * Search attributes (workflows/search-attributes.ts): the API starts the run with PurchaseId,
 * AgencyId, Mode, AmountTotal, BuyerEmailHash, PurchaseStatus and StatusChangedAt; each status
 * change here updates PurchaseStatus and StatusChangedAt, plus CheckoutDeadline when the session
 * exists, PaidAt on payment and PaymentIntentId once known. The purchase's database steps (status
 * writes, recording the payment, loading the session) run as local activities: each is one marker
 * event instead of three and a workflow task. Timers are
 * named (checkout deadline, payment check) for the UI; the `status` query answers
 * `PurchaseStatusView`, with the issuance's phase once paid. Deterministic code only.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  log,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  getExternalWorkflowHandle,
  allHandlersFinished,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { PurchaseActivities, SessionState } from '../activities/purchase';
import {
  CHARGE_SAVED_CARD_UPDATE,
  CREATE_CHECKOUT_UPDATE,
  NOTIFY_WHEN_ISSUED_SIGNAL,
  SALE_ISSUED_SIGNAL,
  policyWorkflowId,
  PAYMENT_EVENT_SIGNAL,
  STATUS_QUERY,
  type CertificatesStatusView,
  type CheckoutSession,
  type PaymentEvent,
  type PurchaseStatus,
  type PurchaseStatusView,
  type PurchaseWorkflowInput,
  type SavedCardChargeResult,
} from './contracts';
import { heavyActivities, issueAndMarkIssued, localQuick } from './certificates';
import { CHECKOUT_DEADLINE, PAID_AT, PAYMENT_INTENT_ID, PURCHASE_STATUS, STATUS_CHANGED_AT } from './search-attributes';

export const createCheckoutUpdate = defineUpdate<CheckoutSession>(CREATE_CHECKOUT_UPDATE);
export const paymentEventSignal = defineSignal<[PaymentEvent]>(PAYMENT_EVENT_SIGNAL);
export const statusQuery = defineQuery<PurchaseStatusView>(STATUS_QUERY);
/** The purchase's owner `policy-<id>` waits for the first issuance: it is told by `saleIssued` once the certificates are issued. */
export const notifyWhenIssuedSignal = defineSignal(NOTIFY_WHEN_ISSUED_SIGNAL);
export const chargeSavedCardUpdate = defineUpdate<SavedCardChargeResult, [{ paymentMethodId: string }]>(CHARGE_SAVED_CARD_UPDATE);

/** A new saved-card charge needs at least this long before the payment deadline, in ms. */
const SAVED_CARD_MIN_TIME_LEFT_MS = 60_000;

/** Default cap of the wait between two tries of a processor call, in seconds. */
export const DEFAULT_RETRY_MAX_INTERVAL_SECONDS = 300;

const DB_STEP_OPTIONS = {
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '30 seconds' },
} as const;
/**
 * The purchase's own database reads and writes, short and idempotent, as local activities (run by
 * the worker that runs the workflow task, recorded as one marker event each instead of three
 * events and a workflow task): fewer history events and round trips per purchase.
 */
const dbLocalActivities = proxyLocalActivities<PurchaseActivities>(DB_STEP_OPTIONS);

/**
 * The reason of a non-retryable activity failure (the processor's answer), else null. A regular
 * activity's failure arrives as an ActivityFailure around the ApplicationFailure; a local
 * activity's here surfaces as the ApplicationFailure itself.
 */
function permanentFailure(err: unknown): string | null {
  if (isCancellation(err)) return null;
  if (err instanceof ApplicationFailure) return `${err.type ?? 'Error'}: ${err.message}`;
  if (!(err instanceof ActivityFailure)) return null;
  const cause = err.cause;
  if (cause instanceof ApplicationFailure) return `${cause.type ?? 'Error'}: ${cause.message}`;
  return cause?.message ?? err.message;
}

export async function purchaseWorkflow(input: PurchaseWorkflowInput): Promise<PurchaseStatusView> {
  // No maximum attempts: an outage of any length delays the purchase, never fails it.
  const processorOptions = {
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: `${input.retryMaxIntervalSeconds ?? DEFAULT_RETRY_MAX_INTERVAL_SECONDS} seconds`,
    },
  } as const;
  const processor = proxyActivities<PurchaseActivities>(processorOptions);
  // New runs create the checkout session as a local activity (the buyer's checkout waits on it:
  // no task queue round trip, one marker event); long outages back off on workflow timers.
  const processorLocal = proxyLocalActivities<PurchaseActivities>(processorOptions);
  let status: PurchaseStatus = 'quoted';
  let session: CheckoutSession | null = null;
  let sessionPromise: Promise<CheckoutSession> | null = null;
  type Outcome = { kind: 'paid'; paymentIntentId: string | null; subscriptionId: string | null } | { kind: 'expired' };
  // Typed through `as` so the handlers' assignments are not narrowed away by control flow.
  let outcome = null as Outcome | null;
  let failure = null as string | null;
  // When the session stops accepting payment (a resumed run takes the stored session's).
  let deadline = input.resume ? 0 : workflowInfo().startTime.getTime() + input.sessionTtlSeconds * 1000;
  let charge = null as Promise<SavedCardChargeResult> | null;
  let paidBySavedCard = false;
  /** Issuance progress once paid, in runs that issue the certificates themselves. */
  let certificates = null as CertificatesStatusView | null;

  const view = (): PurchaseStatusView => ({
    purchaseId: input.purchaseId,
    status,
    ...(failure !== null && status === 'failed' ? { failureReason: failure } : {}),
    checkoutSessionId: session?.id ?? null,
    paymentIntentId: outcome?.kind === 'paid' ? outcome.paymentIntentId : (session?.payment_intent ?? null),
    ...(certificates ? { certificates: { ...certificates } } : {}),
  });
  /**
   * Sets `status` and its search attributes (the database write is the caller's). `paidNow`: the
   * payment was recorded in this step, though the status moved on past `paid` (PaidAt set).
   */
  const publishAttributes = (next: PurchaseStatus, paidNow = next === 'paid') => {
    status = next;
    const pi = view().paymentIntentId;
    const now = new Date(); // the workflow clock: the time of this workflow task
    const update: SearchAttributeUpdatePair[] = [
      { key: PURCHASE_STATUS, value: next },
      { key: STATUS_CHANGED_AT, value: now },
    ];
    if (pi) update.push({ key: PAYMENT_INTENT_ID, value: pi });
    if (next === 'awaiting_payment' && session) update.push({ key: CHECKOUT_DEADLINE, value: new Date(session.expires_at) });
    if (paidNow) update.push({ key: PAID_AT, value: now });
    upsertSearchAttributes(update);
    setCurrentDetails(`Purchase ${input.purchaseId}: **${next}**${next === 'failed' && failure !== null ? ` (${failure})` : ''}`);
  };
  const publish = async (next: PurchaseStatus) => {
    publishAttributes(next);
    await dbLocalActivities.setPurchaseStatus({
      purchaseId: input.purchaseId,
      status: next,
      ...(next === 'failed' && failure !== null ? { reason: failure } : {}),
    });
  };
  const decide = (s: SessionState | PaymentEvent) => {
    const kind = 'state' in s ? s.state : s.outcome;
    if (kind === 'paid') {
      const pi = 'state' in s ? (s.state === 'paid' ? s.paymentIntentId : null) : s.paymentIntentId;
      const sub = 'state' in s ? null : (s.subscriptionId ?? null);
      if (outcome?.kind !== 'paid') outcome = { kind: 'paid', paymentIntentId: pi ?? session?.payment_intent ?? null, subscriptionId: sub };
      else if (sub && !outcome.subscriptionId) outcome.subscriptionId = sub;
    } else if (kind === 'expired' && !outcome) {
      outcome = { kind: 'expired' };
    } else if (kind === 'failed' && !outcome && failure === null) {
      // The buyer's delayed payment method failed after checkout: the session is complete and can
      // no longer be paid, so the purchase ends `failed` (a later payment still wins: see below).
      failure = `payment failed: the processor reported the checkout's payment as failed (${'eventId' in s ? s.eventId : 'unknown event'})`;
    }
  };
  /**
   * Runs a processor call until it answers, unless an outcome arrives first (then the call is
   * cancelled and undefined returned). A non-retryable answer sets `failure` (undefined returned).
   */
  const unlessDecided = async <T>(call: () => Promise<T>): Promise<T | undefined> => {
    // The call and the wait for an outcome share one scope, cancelled once either ends, so
    // neither outlives this step (no pending activity, no condition left behind).
    const scope = new CancellationScope();
    const work = scope.run(call).then(
      (value) => ({ value }),
      (err: unknown) => {
        const reason = permanentFailure(err);
        if (reason === null) throw err;
        return { reason };
      },
    );
    const decided = scope
      .run(() => condition(() => outcome !== null))
      .then(
        () => null,
        () => null,
      );
    let first: Awaited<typeof work> | null;
    try {
      first = await Promise.race([work, decided]);
    } finally {
      scope.cancel();
    }
    if (first === null) {
      await work.catch(() => undefined);
      return undefined;
    }
    if ('reason' in first) {
      failure ??= first.reason;
      return undefined;
    }
    return first.value;
  };

  setHandler(
    createCheckoutUpdate,
    async () => {
      sessionPromise ??= processorLocal.createCheckoutSession({
        purchaseId: input.purchaseId,
        sessionTtlSeconds: input.sessionTtlSeconds,
      });
      try {
        session = await sessionPromise;
      } catch (err) {
        // The processor refused the session for good: the purchase fails.
        const reason = permanentFailure(err);
        if (reason !== null) failure ??= reason;
        throw err;
      }
      return session;
    },
    {
      // A paid, expired or failed purchase hands out no session, even while its workflow is
      // finishing. Rejected updates leave no history, so this is safe for running and saved workflows.
      validator: () => {
        if (outcome || failure !== null) throw new Error(`purchase ${input.purchaseId} is no longer awaiting payment`);
      },
    },
  );
  setHandler(
    chargeSavedCardUpdate,
    async ({ paymentMethodId }) => {
      // A call after a timeout attaches to the charge in flight (or its result); a declined card
      // lets a call with another card start a new attempt.
      if (charge) {
        const earlier = await charge;
        if (earlier.ok || earlier.paymentMethodId === paymentMethodId || outcome) return earlier;
      }
      charge = processor.chargeSavedCard({ purchaseId: input.purchaseId, paymentMethodId });
      const result = await charge;
      if (result.ok && result.status === 'succeeded' && outcome?.kind !== 'paid') {
        paidBySavedCard = true;
        decide({
          eventId: `direct-${result.paymentIntentId}`,
          outcome: 'paid',
          paymentIntentId: result.paymentIntentId,
          subscriptionId: result.subscriptionId,
        });
      }
      return result;
    },
    {
      validator: (_request: { paymentMethodId: string }) => {
        if (charge) return; // repeats settle the same charge
        if (failure !== null || outcome?.kind === 'expired') throw new Error(`purchase ${input.purchaseId} is no longer awaiting payment`);
        if (outcome?.kind === 'paid') throw new Error(`purchase ${input.purchaseId} is already paid`);
        if (!session) throw new Error(`purchase ${input.purchaseId} has no checkout session yet`);
        if (deadline - Date.now() < SAVED_CARD_MIN_TIME_LEFT_MS)
          throw new Error(`purchase ${input.purchaseId} has expired and can no longer be paid`);
      },
    },
  );
  setHandler(paymentEventSignal, (e) => decide(e));
  // The hand-off to the purchase's owner: a change that reached it while the first issuance runs
  // waits for this run to say it is over (told once, when asked; never asked, nothing is sent).
  let ownerWaiting = false;
  let ownerTold = false;
  const tellOwner = async () => {
    if (ownerTold) return;
    ownerTold = true;
    // The owner's run may have closed meanwhile: its next run reads the issued purchase anyway.
    await getExternalWorkflowHandle(policyWorkflowId(input.purchaseId))
      .signal(SALE_ISSUED_SIGNAL)
      .catch(() => undefined);
  };
  setHandler(notifyWhenIssuedSignal, async () => {
    ownerWaiting = true;
    if (status === 'issued') await tellOwner();
  });
  setHandler(statusQuery, view);

  if (input.resume) {
    session = await dbLocalActivities.loadCheckoutSession({ purchaseId: input.purchaseId });
    deadline = session ? Date.parse(session.expires_at) : 0;
  } else {
    // The update arrives with the start (update-with-start). The run waits for the session however
    // long the processor takes (an outage delays; the deadline below applies once the session
    // exists), which saves a timer per purchase.
    await condition(() => session !== null || failure !== null);
    if (failure !== null) {
      await publish('failed');
      return view();
    }
    await publish('awaiting_payment');
  }

  while (!outcome && failure === null) {
    if (!session) {
      // Resumed without a session: nothing could have been paid but a signalled payment.
      outcome = { kind: 'expired' };
      break;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      const state = await unlessDecided(() => processor.expireCheckoutSession({ purchaseId: input.purchaseId }));
      if (state) decide(state);
      break;
    }
    const waitMs = Math.min(left, input.pollIntervalSeconds * 1000);
    const summary = waitMs === left ? 'checkout deadline' : 'next payment check';
    // The wait also ends at once when the payment is reported failed.
    if (!(await condition(() => outcome !== null || failure !== null, waitMs, { summary }))) {
      const state = await unlessDecided(() => processor.getCheckoutState({ purchaseId: input.purchaseId }));
      if (state) decide(state);
    }
  }

  if (!outcome || outcome.kind === 'expired') {
    await publish(failure !== null ? 'failed' : 'expired');
    // A payment signalled while that status was being written reached this run, not a new one:
    // dropping it with the run would leave a paid buyer without certificates. Paid wins.
    if ((outcome as Outcome | null)?.kind !== 'paid') return view();
  }
  const final = outcome as Outcome & { kind: 'paid' };
  const payment = {
    purchaseId: input.purchaseId,
    paymentIntentId: final.paymentIntentId,
    ...(final.subscriptionId ? { subscriptionId: final.subscriptionId } : {}),
  };
  // One local activity records the payment and moves the purchase to paid, a second to
  // awaiting certificates: both in this workflow task, with one search-attribute update.
  await dbLocalActivities.recordPayment({ ...payment, status: 'paid' });
  await dbLocalActivities.setPurchaseStatus({ purchaseId: input.purchaseId, status: 'awaiting_certificates' });
  publishAttributes('awaiting_certificates', true);
  if (paidBySavedCard && session) {
    // Paid with the saved card: close the checkout link so the buyer cannot pay a second time.
    // Never at the cost of the certificates: a refusal is logged and issuance goes on.
    try {
      const state = await processor.expireCheckoutSession({ purchaseId: input.purchaseId });
      if (state.state === 'paid') {
        log.error('purchase paid twice (checkout link and saved card): refund one', {
          purchaseId: input.purchaseId,
          paymentIntentId: final.paymentIntentId,
          checkoutPaymentIntentId: state.paymentIntentId,
        });
      }
    } catch (err) {
      log.warn('checkout session not expired after a saved-card charge', {
        purchaseId: input.purchaseId,
        reason: permanentFailure(err) ?? String(err),
      });
    }
  }
  // The certificates child's steps, run here (shared with it and the policy workflow): plan,
  // render and store, zips and the storage check in rounds until complete, then issued.
  certificates = { purchaseId: input.purchaseId, phase: 'planning', round: 0, batchesDone: 0, batchesTotal: 0 };
  await issueAndMarkIssued(input.purchaseId, certificates, {
    heavy: heavyActivities(),
    plan: localQuick,
    oneStep: true,
    db: dbLocalActivities,
  });
  status = 'issued';
  upsertSearchAttributes([
    { key: PURCHASE_STATUS, value: status },
    { key: STATUS_CHANGED_AT, value: new Date() },
  ]);
  setCurrentDetails(`Purchase ${input.purchaseId}: **${status}**`);
  if (ownerWaiting) await tellOwner();
  await condition(allHandlersFinished);
  return view();
}
