/**
 * policyWorkflow: the one ordered path for changes to a purchase after its sale (id `policy-<purchaseId>`:
 * cancellations, also dated in the future, and their rescission; certificate holders added and removed;
 * endorsements). The API starts it with update-with-start and the `cancel` update; updates are handled one at a
 * time, so two changes of one purchase never interleave. Each:
 * 1. `acceptCancellation` checks the quote against the purchase now and takes its units; the caller gets the
 *    accepted cancellation (or the refusal) at once. While the purchase's certificates are still being issued the
 *    update waits for them: the purchase's run tells this one when issuance is over (`notifyWhenIssued`, answered
 *    by `saleIssued`).
 * 2. Then, after the update has answered: the refund is created at the processor (idempotency key of the
 *    cancellation's own; an outage retries without an attempt limit), its outcome awaited (asked every
 *    `refundPollSeconds`), and only then are the units cancelled and their certificates voided
 *    (`completeCancellation`). A refund the processor refuses for good leaves the cancellation `refund_failed`.
 * A subscription's cancellation (`cancelSubscription` update, sent to the policy workflow of the subscription's
 * current period) ends it at the processor, and when it ends now cancels that period's unstarted units like any
 * cancellation; the processor's own changes to the subscription arrive as the `subscriptionChanged` signal and are
 * recorded in turn.
 * A cancellation dated in the future is accepted `scheduled` (its units taken) and waits in the workflow for its
 * effective time: a durable timer on the real clock, or, for a test purchase with a test clock, the
 * `testClockAdvanced` signal that moves that clock past it. Until then the `rescindCancellation` update withdraws
 * it (its units given back); the workflow stays open while anything is scheduled.
 * An operator's `retryFailedCancellations` update (`npm run ops -- retry-cancellation`) queues the refused and
 * stalled ones again (every step is idempotent, so one in progress is not harmed); an operator's
 * `reissueCertificates` update (`npm run ops -- reissue`) runs issuance again as a child `certificates-<id>` in
 * the same chain, answered once the child has started. The workflow completes after `idleSeconds` with nothing to
 * do; the next change starts a new run.
 * Certificate holders (`addCertificateHolder`, `removeCertificateHolder`) and endorsements (`endorse`) are updates
 * in the same chain: each answers the accepted change at once (waiting, like a cancel, while the purchase's first
 * certificates are being issued); the certificates an added holder or an endorsement's new versions need are then
 * issued by the main loop through the same rounds as issuance (`issueCertificateRounds`, on the main queue's
 * certificates queue) and announced (`certificate_holder.added`, `certificates.reissued`); an endorsement that
 * gives premium back has its refund created first (`refundEndorsementDifference`). After a cancellation completes,
 * the holders that asked are emailed a notice by `holder-notices-<id>`, a child it does not wait for.
 * The owner decides a sold purchase's status from then on: after each completed cancellation `partly_cancelled` or
 * `cancelled` (every unit), upserted as PurchaseStatus and StatusChangedAt; `refunded` after a processor's full
 * refund.
 */
import {
  ApplicationFailure,
  ParentClosePolicy,
  startChild,
  executeChild,
  workflowInfo,
  condition,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  allHandlersFinished,
  getExternalWorkflowHandle,
} from '@temporalio/workflow';
import type { PolicyActivities } from '../activities/policy';
import {
  cancelUpdate,
  rescindCancellationUpdate,
  addCertificateHolderUpdate,
  endorseUpdate,
  endorsementPaidSignal,
  removeCertificateHolderUpdate,
  cancelSubscriptionUpdate,
  subscriptionChangedSignal,
  processorRefundSignal,
  processorDisputeSignal,
  renewalPaidSignal,
  saleIssuedSignal,
  testClockAdvancedSignal,
  retryFailedCancellationsUpdate,
  reissueCertificatesUpdate,
  type PolicyStatusView,
  policyStatusQuery,
} from './policy-messages';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { PURCHASE_STATUS, STATUS_CHANGED_AT } from './search-attributes';
import { policyRetryPolicies } from './retry-policy';
import type { CertificateHolderActivities } from '../activities/certificate-holders';
import type { CertificateActivities } from '../activities/certificates';
import type { EndorsementActivities } from '../activities/endorsements';
import type { PurchaseActivities } from '../activities/purchase';
import type { DisputeActivities } from '../activities/disputes';
import type { RenewalActivities } from '../activities/renewal';
import { certificatesWorkflow, heavyActivities, issueCertificateRounds, type CertificatesStatusView } from './certificates';
import { holderNoticesWorkflow } from './holder-notices';
import {
  certificatesWorkflowId,
  NOTIFY_WHEN_ISSUED_SIGNAL,
  purchaseWorkflowId,
  type EndorsementPaymentInput,
  type EndorsementApplied,
  certificatesTaskQueue,
  holderNoticesWorkflowId,
  refundsTaskQueue,
  type CancellationAccepted,
  type PolicyWorkflowInput,
  type ReissueAnswer,
} from './contracts';

/** Most certificates the policy workflow issues in one heavy activity (a holder of a 31-day purchase, an endorsement of every day of it). */
export const HOLDER_ONE_STEP_MAX = 31;

// Its updates, signals and status query (re-exported: callers import them from here).
export * from './policy-messages';

export async function policyWorkflow(input: PolicyWorkflowInput): Promise<PolicyStatusView> {
  // Money calls at the processor retry at least every 30 s, so they resume soon after an outage (retry-policy.ts).
  const { retry, money } = policyRetryPolicies(input.retryMaxIntervalSeconds);
  const db = proxyActivities<PolicyActivities>({ startToCloseTimeout: '30 seconds', retry });
  const processor = proxyActivities<PolicyActivities>({ startToCloseTimeout: '60 seconds', retry: money });
  // Creating a refund goes through the rate-capped refunds queue (below the processor's request limit).
  // (Runs started before policy workflows had a queue of their own ran on the main queue and carry no refundsTaskQueue.)
  const refundsQueue = input.refundsTaskQueue ?? refundsTaskQueue(workflowInfo().taskQueue);
  const refunds = proxyActivities<PolicyActivities>({ startToCloseTimeout: '60 seconds', retry: money, taskQueue: refundsQueue });
  const holderActs = proxyActivities<CertificateHolderActivities>({ startToCloseTimeout: '30 seconds', retry });
  const planner = proxyActivities<Pick<CertificateActivities, 'planCertificates'>>({ startToCloseTimeout: '30 seconds', retry });
  const endorsementActs = proxyActivities<EndorsementActivities>({ startToCloseTimeout: '30 seconds', retry });
  const endorsementPayments = proxyActivities<EndorsementActivities>({ startToCloseTimeout: '60 seconds', retry: money });
  const endorsementRefunds = proxyActivities<EndorsementActivities>({
    startToCloseTimeout: '60 seconds',
    retry: money,
    taskQueue: refundsQueue,
  });
  const sale = proxyActivities<Pick<PurchaseActivities, 'recordRefund'>>({ startToCloseTimeout: '30 seconds', retry });
  const disputes = proxyActivities<DisputeActivities>({ startToCloseTimeout: '30 seconds', retry });
  const renewalActs = proxyActivities<RenewalActivities>({ startToCloseTimeout: '30 seconds', retry });
  const view: PolicyStatusView = { purchaseId: input.purchaseId, cancellations: [], processorEvents: [], renewals: [] };
  const pending: number[] = [];
  /** Holders added, and endorsements carried out, whose certificates are still to be issued (by the main loop, in order). */
  const issuing: number[] = [];
  const reissuing: string[] = [];
  /** Endorsements applied with a negative difference whose refund is still to be created (after their answer, in order). */
  const refundingEndorsements: string[] = [];
  /** Progress of the issuance of added holders' certificates. */
  const issuance: CertificatesStatusView = { purchaseId: input.purchaseId, phase: 'issued', round: 0, batchesDone: 0, batchesTotal: 0 };
  /** Cancellations waiting for their effective time (epoch ms), on the real clock or on the purchase's test clock. */
  const scheduled: Array<{ cancellationId: number; effectiveMs: number; onTestClock: boolean }> = [];
  /** The purchase's test clock (epoch ms), once one is known; scheduled entries on it wait for it, not for a timer. */
  let testClockMs: number | null = null;
  /** Bumped when `scheduled` or the test clock changes, so the main loop re-arms its timer. */
  let scheduleVersion = 0;
  const due = () => scheduled.filter((e) => e.effectiveMs <= (e.onTestClock ? (testClockMs ?? 0) : Date.now()));
  let chain: Promise<unknown> = Promise.resolve();
  /**
   * Runs `change` once every change accepted before it has finished (one change at a time, in the
   * order they came); answers its result or failure, and the next change runs either way.
   */
  const inTurn = <T>(change: () => Promise<T>): Promise<T> => {
    const run = chain.then(change);
    chain = run.catch(() => undefined);
    return run;
  };
  /** The purchase status this run last published as PurchaseStatus after a cancellation (none yet). */
  let publishedStatus: string | null = null;
  /** Issuance runs an operator's reissue started that are still open (the run does not end under them). */
  let reissuesOpen = 0;
  /** The main queue, where issuance runs (`certificates-<id>` children: renewals, reissues). */
  const mainQueue = input.taskQueue ?? (input.certificatesTaskQueue ?? '').replace(/-certificates$/, '');
  const onMainQueue = mainQueue ? { taskQueue: mainQueue } : {};
  upsertSearchAttributes({ PurchaseId: [String(input.purchaseId)] });
  setHandler(policyStatusQuery, () => ({
    purchaseId: view.purchaseId,
    cancellations: view.cancellations.map((c) => ({ ...c })),
    processorEvents: view.processorEvents.map((e) => ({ ...e })),
    renewals: view.renewals.map((r) => ({ ...r })),
  }));

  let saleIssued = false;
  setHandler(saleIssuedSignal, () => {
    saleIssued = true;
  });
  /**
   * Waits while the purchase's first certificates are being issued, before a change that needs
   * them is looked at again: asks the purchase's run to say when issuance is over (`saleIssued`),
   * a hand-off by signal, not a poll. A sale run that closed without issuing (terminated; an
   * operator's resume opens a new one) cannot answer: then it looks again after a while.
   */
  async function untilIssued(): Promise<void> {
    if (saleIssued) {
      await sleep('5 seconds'); // told issued, yet not seen so: the write lands in a moment
      return;
    }
    try {
      await getExternalWorkflowHandle(purchaseWorkflowId(input.purchaseId)).signal(NOTIFY_WHEN_ISSUED_SIGNAL);
    } catch {
      await sleep('1 minute'); // no open sale run to tell this one
      return;
    }
    await condition(() => saleIssued, '10 minutes');
  }

  /** Accepts quote `quoteId` (waiting while certificates are still being issued) and queues it: due now, or scheduled. */
  async function accept(quoteId: string): Promise<CancellationAccepted> {
    for (;;) {
      const r = await db.acceptCancellation({ purchaseId: input.purchaseId, quoteId });
      if (r.kind === 'accepted') {
        const known = view.cancellations.some((c) => c.cancellationId === r.cancellation.cancellationId);
        const c = r.cancellation;
        if (c.testClockAt) testClockMs = Math.max(testClockMs ?? 0, Date.parse(c.testClockAt));
        if (!known && c.status === 'scheduled') {
          view.cancellations.push({ cancellationId: c.cancellationId, phase: 'scheduled' });
          scheduled.push({
            cancellationId: c.cancellationId,
            effectiveMs: Date.parse(c.effectiveAt!),
            onTestClock: Boolean(c.testClockAt),
          });
          scheduleVersion++;
        } else if (!known && (c.status === 'accepted' || c.status === 'refund_pending')) {
          view.cancellations.push({ cancellationId: c.cancellationId, phase: 'accepted' });
          pending.push(c.cancellationId);
        }
        return c;
      }
      await untilIssued(); // certificates still being issued: a cancel waits for them
    }
  }

  setHandler(
    cancelUpdate,
    (u) => {
      // One change at a time: each update runs after the previous one has answered.
      return inTurn(() => accept(u.quoteId));
    },
    {
      validator: (u) => {
        if (typeof u?.quoteId !== 'string' || !/^cq_[0-9a-f]{24}$/.test(u.quoteId))
          throw ApplicationFailure.nonRetryable('quote_id must be a cancellation quote id (cq_…)', 'VALIDATION_ERROR');
      },
    },
  );

  setHandler(
    cancelSubscriptionUpdate,
    (u) => {
      return inTurn(async () => {
        await processor.endSubscription({ subscriptionPurchaseId: u.subscriptionPurchaseId, at: u.at });
        if (u.at !== 'now') return { cancellation: null };
        const quoteId = await db.quoteSubscriptionPeriodCancellation({
          purchaseId: input.purchaseId,
          apiKeyId: u.apiKeyId,
          reason: u.reason,
        });
        return { cancellation: quoteId ? await accept(quoteId) : null };
      });
    },
    {
      validator: (u) => {
        if (!Number.isInteger(u?.subscriptionPurchaseId) || (u.at !== 'now' && u.at !== 'at_period_end'))
          throw ApplicationFailure.nonRetryable('a subscription and at (now or at_period_end) are required', 'VALIDATION_ERROR');
      },
    },
  );

  setHandler(subscriptionChangedSignal, async (change) => {
    // An async handler: the idle ending waits for it (allHandlersFinished).
    await inTurn(() => db.recordSubscriptionChange(change)).catch(() => undefined);
  });

  setHandler(
    rescindCancellationUpdate,
    (u) => {
      return inTurn(async () => {
        const c = await db.rescindCancellation({ purchaseId: input.purchaseId, cancellationId: u.cancellationId });
        const at = scheduled.findIndex((e) => e.cancellationId === u.cancellationId);
        if (at >= 0) scheduled.splice(at, 1);
        scheduleVersion++;
        const entry = view.cancellations.find((e) => e.cancellationId === u.cancellationId);
        if (entry) entry.phase = 'rescinded';
        return c;
      });
    },
    {
      validator: (u) => {
        if (!Number.isInteger(u?.cancellationId) || u.cancellationId < 1)
          throw ApplicationFailure.nonRetryable('cancellation_id must be an integer >= 1', 'VALIDATION_ERROR');
      },
    },
  );

  setHandler(
    addCertificateHolderUpdate,
    (u) => {
      return inTurn(async () => {
        for (;;) {
          const r = await holderActs.addCertificateHolder({ purchaseId: input.purchaseId, requestKey: u.requestKey, holder: u.holder });
          if (r.kind === 'added') {
            if (!issuing.includes(r.change.holderId)) issuing.push(r.change.holderId);
            return r.change;
          }
          await untilIssued(); // the purchase's certificates are still being issued: the holder waits for them
        }
      });
    },
    {
      validator: (u) => {
        if (typeof u?.requestKey !== 'string' || u.requestKey.length === 0 || typeof u.holder?.name !== 'string')
          throw ApplicationFailure.nonRetryable('a request key and a holder are required', 'VALIDATION_ERROR');
      },
    },
  );

  /**
   * Applies paid quote `quoteId` (its difference collected); when it no longer holds, the payment
   * goes back in full and the refusal is thrown on. Queues the new certificates.
   */
  async function applyPaid(quoteId: string): Promise<EndorsementApplied> {
    let r;
    try {
      r = await endorsementActs.applyEndorsement({ purchaseId: input.purchaseId, quoteId });
    } catch (err) {
      const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      await endorsementRefunds.refundEndorsementPayment({ quoteId, reason });
      throw err;
    }
    if (r.kind !== 'applied') throw ApplicationFailure.nonRetryable('the purchase is not ready for the change', 'PURCHASE_NOT_CHANGEABLE');
    if (!reissuing.includes(quoteId)) reissuing.push(quoteId);
    return { quoteId, reissued: r.reissued };
  }

  /** Collects quote `quoteId`'s positive difference by `payment`, then (a saved card) applies it. */
  async function endorseWithPayment(quoteId: string, payment: EndorsementPaymentInput): Promise<EndorsementApplied> {
    for (;;) {
      const begun = await endorsementActs.beginEndorsementPayment({ purchaseId: input.purchaseId, quoteId, payment });
      if (begun.kind === 'applied') return { quoteId, reissued: begun.reissued };
      if (begun.kind === 'pay') break;
      await untilIssued(); // the purchase's certificates are still being issued
    }
    if (payment.method === 'checkout_link') {
      await endorsementPayments.createEndorsementCheckout({ quoteId });
      return { quoteId, reissued: [] };
    }
    const charged = await endorsementPayments.chargeEndorsement({ quoteId });
    if (!charged.ok) {
      await endorsementActs.failEndorsementPayment({ quoteId, code: charged.code, message: charged.message });
      throw ApplicationFailure.nonRetryable(charged.message, 'CARD_ERROR');
    }
    return applyPaid(quoteId);
  }

  setHandler(endorsementPaidSignal, async ({ quoteId }) => {
    // An async handler: the idle ending waits for it (allHandlersFinished).
    await inTurn(async () => {
      if (await endorsementPayments.recordEndorsementPaid({ quoteId })) await applyPaid(quoteId);
    }).catch(() => undefined);
  });

  setHandler(
    endorseUpdate,
    (u) => {
      if (u.payment) {
        const payment = u.payment;
        return inTurn(() => endorseWithPayment(u.quoteId, payment));
      }
      return inTurn(async () => {
        for (;;) {
          const r = await endorsementActs.applyEndorsement({ purchaseId: input.purchaseId, quoteId: u.quoteId });
          if (r.kind === 'applied') {
            if (r.reissued.length > 0 && !reissuing.includes(u.quoteId)) reissuing.push(u.quoteId);
            if (r.refundDue && !refundingEndorsements.includes(u.quoteId)) refundingEndorsements.push(u.quoteId);
            return { quoteId: u.quoteId, reissued: r.reissued };
          }
          await untilIssued(); // the purchase's certificates are still being issued: the endorsement waits for them
        }
      });
    },
    {
      validator: (u) => {
        if (typeof u?.quoteId !== 'string' || !/^eq_[0-9a-f]{24}$/.test(u.quoteId))
          throw ApplicationFailure.nonRetryable('quote_id must be an endorsement quote id (eq_…)', 'VALIDATION_ERROR');
        if (
          u.payment !== undefined &&
          !(u.payment?.method === 'checkout_link' || (u.payment?.method === 'saved_card' && typeof u.payment.paymentMethodId === 'string'))
        )
          throw ApplicationFailure.nonRetryable('payment must be a saved card or a checkout link', 'VALIDATION_ERROR');
      },
    },
  );

  setHandler(
    removeCertificateHolderUpdate,
    (u) => {
      return inTurn(() => holderActs.removeCertificateHolder({ purchaseId: input.purchaseId, holderId: u.holderId }));
    },
    {
      validator: (u) => {
        if (!Number.isInteger(u?.holderId) || u.holderId < 1)
          throw ApplicationFailure.nonRetryable('holder_id must be an integer >= 1', 'VALIDATION_ERROR');
      },
    },
  );

  setHandler(processorRefundSignal, async (refund) => {
    // An async handler: the idle ending waits for it (allHandlersFinished).
    await inTurn(async () => {
      const r = await sale.recordRefund(refund);
      view.processorEvents.push({ eventId: refund.eventId, kind: 'refund', refundedMinor: r.refundedMinor, refunded: r.refunded });
      if (r.refunded) upsertSearchAttributes({ PurchaseStatus: ['refunded'] });
    }).catch(() => undefined);
  });

  setHandler(renewalPaidSignal, async (renewal) => {
    // A redelivered invoice in this run changes nothing; in a later run, the renewal's purchase is
    // found by its invoice and its issuance, idempotent, finds nothing left to do.
    if (view.renewals.some((r) => r.invoiceId === renewal.invoiceId)) return;
    const entry: PolicyStatusView['renewals'][number] = {
      invoiceId: renewal.invoiceId,
      renewalPurchaseId: null,
      period: null,
      phase: 'creating',
    };
    view.renewals.push(entry);
    await inTurn(async () => {
      const made = await renewalActs.createRenewalPurchase(renewal);
      Object.assign(entry, { renewalPurchaseId: made.purchaseId, period: made.period, phase: 'issuing' });
      await executeChild(certificatesWorkflow, {
        workflowId: certificatesWorkflowId(made.purchaseId),
        args: [{ purchaseId: made.purchaseId }],
        ...onMainQueue,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      });
      entry.phase = 'issued';
    }).catch(() => undefined);
  });

  setHandler(reissueCertificatesUpdate, () => {
    // An operator's reissue: issuance again as a child, in turn with the purchase's other changes;
    // answered once it has started (found by agency, mode and purchase like the owner itself).
    const workflowId = certificatesWorkflowId(input.purchaseId);
    let answer!: (a: ReissueAnswer) => void;
    const answered = new Promise<ReissueAnswer>((resolve) => (answer = resolve));
    const run = inTurn(async () => {
      let child;
      try {
        child = await startChild(certificatesWorkflow, {
          workflowId,
          args: [{ purchaseId: input.purchaseId }],
          ...onMainQueue,
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          typedSearchAttributes: workflowInfo().typedSearchAttributes,
          staticSummary: `Certificates of purchase ${input.purchaseId} (reissued by an operator)`,
        });
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return answer({ action: 'running', workflowId });
        throw err;
      }
      reissuesOpen++;
      answer({ action: 'started', workflowId });
      try {
        await child.result();
      } finally {
        reissuesOpen--;
      }
    });
    return Promise.race([answered, run.then(() => answered)]);
  });

  setHandler(processorDisputeSignal, async (dispute) => {
    await inTurn(async () => {
      const r = await disputes.recordDispute(dispute);
      view.processorEvents.push({ eventId: dispute.eventId, kind: 'dispute', ...r });
    }).catch(() => undefined);
  });

  setHandler(testClockAdvancedSignal, ({ frozenTime }) => {
    const ms = Date.parse(frozenTime);
    if (Number.isFinite(ms)) testClockMs = Math.max(testClockMs ?? 0, ms);
    scheduleVersion++;
  });

  setHandler(retryFailedCancellationsUpdate, () => {
    return inTurn(async () => {
      const ids = await db.reopenUnfinishedCancellations({ purchaseId: input.purchaseId });
      for (const id of ids) {
        const entry = view.cancellations.find((c) => c.cancellationId === id);
        if (entry) entry.phase = 'accepted';
        else view.cancellations.push({ cancellationId: id, phase: 'accepted' });
        if (!pending.includes(id)) pending.push(id);
      }
      return ids;
    });
  });

  for (;;) {
    const idleMs = (input.idleSeconds ?? 600) * 1000;
    // A scheduled cancellation on the real clock wakes the workflow at its effective time (a durable timer).
    const realDue = scheduled.filter((e) => !e.onTestClock).map((e) => e.effectiveMs - Date.now());
    // Nothing scheduled: wait for work up to the idle time; else until the next effective time (one timer, however far).
    const waitMs = realDue.length ? Math.max(1, Math.min(...realDue)) : idleMs;
    const seen = scheduleVersion;
    const ready = () =>
      pending.length > 0 ||
      issuing.length > 0 ||
      reissuing.length > 0 ||
      refundingEndorsements.length > 0 ||
      due().length > 0 ||
      scheduleVersion !== seen;
    const busy =
      scheduled.some((e) => e.onTestClock) && realDue.length === 0 ? (await condition(ready), true) : await condition(ready, waitMs);
    for (const e of due()) {
      scheduled.splice(scheduled.indexOf(e), 1);
      const entry = view.cancellations.find((c) => c.cancellationId === e.cancellationId)!;
      if (await db.startScheduledCancellation({ cancellationId: e.cancellationId })) {
        entry.phase = 'accepted';
        pending.push(e.cancellationId);
      } else entry.phase = 'rescinded';
    }
    // A negative difference goes back once its endorsement is applied (an outage retries; a refusal is kept on its ledger row).
    while (refundingEndorsements.length > 0)
      await endorsementRefunds.refundEndorsementDifference({ quoteId: refundingEndorsements.shift()! });
    if (issuing.length > 0 || reissuing.length > 0) {
      // Added holders' certificates and endorsements' new versions: the same rounds as issuance
      // (plan, render and store, zips, verify), then announced.
      const holders = issuing.splice(0);
      const endorsements = reissuing.splice(0);
      const queue =
        input.certificatesTaskQueue ?? certificatesTaskQueue((input.refundsTaskQueue ?? workflowInfo().taskQueue).replace(/-refunds$/, ''));
      // One heavy activity for up to HOLDER_ONE_STEP_MAX certificates: the zips are rebuilt over every
      // certificate of the purchase, and zipping the new ones from memory saves reading them back.
      await issueCertificateRounds(input.purchaseId, issuance, {
        heavy: heavyActivities(queue),
        plan: planner,
        oneStep: true,
        oneStepMax: HOLDER_ONE_STEP_MAX,
      });
      issuance.phase = 'issued';
      for (const holderId of holders) await holderActs.certificateHolderIssued({ purchaseId: input.purchaseId, holderId });
      for (const quoteId of endorsements) await endorsementActs.endorsementReissued({ purchaseId: input.purchaseId, quoteId });
      continue;
    }
    if (!busy && scheduled.length === 0 && pending.length === 0) {
      // Idle: finish once no update is still being handled (one waiting for issuance may yet accept a cancellation).
      await condition(() => allHandlersFinished() && reissuesOpen === 0);
      if (
        pending.length === 0 &&
        scheduled.length === 0 &&
        issuing.length === 0 &&
        reissuing.length === 0 &&
        refundingEndorsements.length === 0
      )
        break;
      continue;
    }
    if (pending.length === 0) continue;
    const cancellationId = pending.shift()!;
    const entry = view.cancellations.find((c) => c.cancellationId === cancellationId)!;
    entry.phase = 'refunding';
    try {
      await refunds.createCancellationRefund({ cancellationId });
      for (;;) {
        const state = await processor.cancellationRefundStatus({ cancellationId });
        if (state === 'succeeded') break;
        if (state === 'failed') throw ApplicationFailure.nonRetryable('the processor reports the refund failed', 'REFUND_FAILED');
        await sleep(`${input.refundPollSeconds ?? 30} seconds`);
      }
    } catch (err) {
      const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      await db.failCancellation({ cancellationId, reason });
      entry.phase = 'refund_failed';
      continue;
    }
    const done = await db.completeCancellation({ cancellationId });
    entry.phase = 'completed';
    // The owner decides a sold purchase's status: partly or wholly cancelled, published for Temporal's search
    // (`ops find`) like the sale's statuses. (A result without a status, recorded before, changes nothing.)
    if ((done.purchaseStatus === 'partly_cancelled' || done.purchaseStatus === 'cancelled') && done.purchaseStatus !== publishedStatus) {
      publishedStatus = done.purchaseStatus;
      upsertSearchAttributes([
        { key: PURCHASE_STATUS, value: publishedStatus },
        { key: STATUS_CHANGED_AT, value: new Date() },
      ]);
    }
    // Holders that asked to be told get a notice, sent by a child this workflow does not wait for.
    const noticeIds = await holderActs.queueHolderCancellationNotices({ cancellationId });
    if (noticeIds.length > 0) {
      await startChild(holderNoticesWorkflow, {
        workflowId: holderNoticesWorkflowId(cancellationId),
        args: [{ noticeIds }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      });
    }
  }
  return view;
}
