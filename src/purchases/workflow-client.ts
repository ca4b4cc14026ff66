/**
 * The API's doorway to purchase workflows (ARCHITECTURE §3 steps 3 and 5); routes and services
 * call this, never the Temporal client directly.
 *
 * `startCheckout` starts `purchase-<id>` with update-with-start (conflict policy USE_EXISTING,
 * so a repeated call attaches to the running workflow instead of buying twice) and returns the
 * checkout session the `createCheckout` update produced. A purchase whose workflow has closed
 * (paid, expired) is never started again for a new checkout (reuse policy REJECT_DUPLICATE): 400
 * INVALID_REQUEST. `signalPayment` relays a processor event; it reports `false` when no run of the
 * purchase is open. `resumePurchase` starts the run that recovers a purchase whose run closed. Every change after
 * the sale, and the processor's refund, dispute and subscription events, go to the purchase's
 * owner `policy-<id>` (an update or a signal with start, so a closed run is followed by a new one).
 * Errors: the processor's failures as their spec §7.1 AppError; a workflow that does not answer
 * within `timeoutMs` (default 30 000 ms) → 503 CONNECTION_ERROR.
 */
import {
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { mapProcessorError } from '../payproc/errors';
import { toMajorUnits } from '../shared/money';
import { AppError, ERROR_STATUS, type ErrorCode } from '../shared/errors';
import {
  bulkCancellationWorkflowId,
  bordereauWorkflowId,
  type BulkCancellationInput,
  CANCEL_SUBSCRIPTION_UPDATE,
  CANCEL_UPDATE,
  RESCIND_UPDATE,
  SUBSCRIPTION_CHANGED_SIGNAL,
  ENDORSEMENT_PAID_SIGNAL,
  PROCESSOR_DISPUTE_SIGNAL,
  PROCESSOR_REFUND_SIGNAL,
  RENEWAL_PAID_SIGNAL,
  type EndorsementPaymentInput,
  type SubscriptionCancelInput,
  type SubscriptionChange,
  RETRY_CANCELLATIONS_UPDATE,
  TEST_CLOCK_SIGNAL,
  CHARGE_SAVED_CARD_UPDATE,
  CREATE_CHECKOUT_UPDATE,
  policyWorkflowId,
  policyTaskQueue,
  refundsTaskQueue,
  type CancellationAccepted,
  type PolicyWorkflowInput,
  PAYMENT_EVENT_SIGNAL,
  certificatesWorkflowId,
  purchaseWorkflowId,
  type CheckoutSession,
  type PaymentEvent,
  type PurchaseWorkflowInput,
  type RefundInput,
  proofEmailWorkflowId,
  type DisputeInput,
  type RenewalInput,
  type SavedCardChargeResult,
  ADD_HOLDER_UPDATE,
  ENDORSE_UPDATE,
  REMOVE_HOLDER_UPDATE,
  certificatesTaskQueue,
  type EndorsementApplied,
  type CertificateHolderChange,
  type CertificateHolderInput,
} from '../../workflows/contracts';
import {
  AGENCY_ID,
  AMOUNT_TOTAL,
  BUYER_EMAIL_HASH,
  MODE,
  PURCHASE_ID,
  PURCHASE_STATUS,
  STATUS_CHANGED_AT,
} from '../../workflows/search-attributes';
import { buyerEmailHash } from './buyer-email-hash';
import type { PurchaseRecord } from './purchase-record';

/** What a purchase workflow is started with: the purchase's operator-facing facts (amount in minor units). */
export type PurchaseStartFacts = Pick<
  PurchaseRecord,
  'id' | 'rootAccountId' | 'mode' | 'totalMinor' | 'currency' | 'buyerEmail' | 'status'
>;

/** `1234` minor units of `usd` → `USD 12.34` (the service's money rules; the summary is for people). */
function money(minor: number, currency: string): string {
  return `${currency.toUpperCase()} ${toMajorUnits(minor).toFixed(2)}`;
}

/** Finds the processor error type an activity failed with, anywhere in the cause chain. */
function processorType(err: unknown): string | undefined {
  for (let e = err as { type?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e.type === 'string' && e.type.startsWith('Stripe')) return e.type;
  }
  return undefined;
}

export function createPurchaseWorkflows(deps: {
  client: Client;
  taskQueue: string;
  sessionTtlSeconds: number;
  pollIntervalSeconds: number;
  /** Cap of the wait between two tries of a processor call inside the workflow, in seconds. */
  retryMaxIntervalSeconds?: number;
  timeoutMs?: number;
  /** Key of the `BuyerEmailHash` search attribute (BUYER_EMAIL_HASH_KEY). */
  buyerEmailHashKey: string;
}) {
  const timeoutMs = deps.timeoutMs ?? 30_000;
  /**
   * Search attributes and UI summary a purchase run starts with (workflows/search-attributes.ts):
   * the operator finds it by agency, mode, amount and hashed buyer email, never the email itself.
   */
  function startAttributes(p: PurchaseStartFacts) {
    const typedSearchAttributes: SearchAttributePair[] = [
      { key: PURCHASE_ID, value: String(p.id) },
      { key: AGENCY_ID, value: String(p.rootAccountId) },
      { key: MODE, value: p.mode },
      { key: AMOUNT_TOTAL, value: p.totalMinor },
      { key: PURCHASE_STATUS, value: p.status },
      { key: STATUS_CHANGED_AT, value: new Date() },
    ];
    if (p.buyerEmail) typedSearchAttributes.push({ key: BUYER_EMAIL_HASH, value: buyerEmailHash(deps.buyerEmailHashKey, p.buyerEmail) });
    return {
      typedSearchAttributes,
      staticSummary: `Purchase ${p.id} · agency ${p.rootAccountId} · ${p.mode} · ${money(p.totalMinor, p.currency)}`,
      staticDetails: [
        `**Purchase** ${p.id}`,
        `**Agency** (root account) ${p.rootAccountId}`,
        `**Mode** ${p.mode}`,
        `**Amount** ${money(p.totalMinor, p.currency)} (${p.totalMinor} minor units)`,
      ].join('\n\n'),
    };
  }
  /** What `policy-<id>` starts with: its refunds go to the main queue's rate-capped refunds queue. */
  const policyInput = (purchaseId: number): PolicyWorkflowInput => ({
    purchaseId,
    refundsTaskQueue: refundsTaskQueue(deps.taskQueue),
    certificatesTaskQueue: certificatesTaskQueue(deps.taskQueue),
    taskQueue: deps.taskQueue,
    ...(deps.retryMaxIntervalSeconds ? { retryMaxIntervalSeconds: deps.retryMaxIntervalSeconds } : {}),
  });
  /** The start of `policy-<id>` an update goes with: attaches to the open run, or starts one (a closed run may be followed by a new one). */
  /** How `policy-<id>` is started (by an update or a signal): its id, queue, input, search attributes and summary. */
  function policyStartOptions(purchase: PurchaseStartFacts) {
    return {
      workflowId: policyWorkflowId(purchase.id),
      taskQueue: policyTaskQueue(deps.taskQueue),
      args: [policyInput(purchase.id)] as [PolicyWorkflowInput],
      typedSearchAttributes: startAttributes(purchase).typedSearchAttributes,
      staticSummary: `Policy changes of purchase ${purchase.id}`,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE' as const,
    };
  }
  function policyStart(purchase: PurchaseStartFacts) {
    return new WithStartWorkflowOperation<(input: PolicyWorkflowInput) => Promise<unknown>>('policyWorkflow', {
      ...policyStartOptions(purchase),
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  }
  /**
   * Runs update `name` of the purchase's policy workflow (started if no run is open) and answers
   * its result; a refusal whose type is an API error code becomes that AppError, no answer within
   * `timeoutMs` a 503 CONNECTION_ERROR saying `lateMessage`.
   */
  async function policyUpdate<A, R = CancellationAccepted>(
    purchase: PurchaseStartFacts,
    name: string,
    arg: A,
    lateMessage: string,
  ): Promise<R> {
    const start = policyStart(purchase);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AppError('CONNECTION_ERROR', lateMessage)), timeoutMs);
    });
    try {
      return await Promise.race([
        deps.client.workflow.executeUpdateWithStart<(input: PolicyWorkflowInput) => Promise<unknown>, R, [A]>(name, {
          args: [arg],
          startWorkflowOperation: start,
        }),
        timeout,
      ]);
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (err instanceof WorkflowUpdateFailedError) {
        // The refusal's type is the API's code, on the failure itself or on the activity's cause.
        for (let e = err.cause as { type?: unknown; message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
          if (typeof e.type === 'string' && e.type in ERROR_STATUS)
            throw new AppError(e.type as ErrorCode, e.message ?? 'The change was refused', { cause: err });
        }
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
  /** Starts `type` once per business id; false when that id was started before (a redelivered event). */
  async function startOnce(type: string, workflowId: string, input: unknown): Promise<boolean> {
    try {
      await deps.client.workflow.start(type, {
        workflowId,
        taskQueue: deps.taskQueue,
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
      return true;
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw err;
    }
  }
  /** Signals `signal` with `arg` to the purchase's owner `policy-<id>`, starting a run when none is open. */
  async function signalOwner<A>(purchase: PurchaseStartFacts, signal: string, arg: A): Promise<void> {
    await deps.client.workflow.signalWithStart<(input: PolicyWorkflowInput) => Promise<unknown>, [A]>('policyWorkflow', {
      ...policyStartOptions(purchase),
      signal,
      signalArgs: [arg],
    });
  }
  async function signalPayment(purchaseId: number, event: PaymentEvent): Promise<boolean> {
    try {
      await deps.client.workflow.getHandle(purchaseWorkflowId(purchaseId)).signal(PAYMENT_EVENT_SIGNAL, event);
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  return {
    async startCheckout(purchase: PurchaseStartFacts): Promise<CheckoutSession> {
      const input = { purchaseId: purchase.id };
      const args: PurchaseWorkflowInput = {
        purchaseId: purchase.id,
        sessionTtlSeconds: deps.sessionTtlSeconds,
        pollIntervalSeconds: deps.pollIntervalSeconds,
        ...(deps.retryMaxIntervalSeconds ? { retryMaxIntervalSeconds: deps.retryMaxIntervalSeconds } : {}),
      };
      const start = new WithStartWorkflowOperation<(input: PurchaseWorkflowInput) => Promise<unknown>>('purchaseWorkflow', {
        workflowId: purchaseWorkflowId(input.purchaseId),
        taskQueue: deps.taskQueue,
        args: [args],
        ...startAttributes(purchase),
        workflowIdConflictPolicy: 'USE_EXISTING',
        // A closed purchase-<id> must not come back as a new run waiting for a second payment.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new AppError('CONNECTION_ERROR', 'The purchase workflow did not answer in time; retry with backoff')),
          timeoutMs,
        );
      });
      try {
        return await Promise.race([
          deps.client.workflow.executeUpdateWithStart<(input: PurchaseWorkflowInput) => Promise<unknown>, CheckoutSession, []>(
            CREATE_CHECKOUT_UPDATE,
            { startWorkflowOperation: start },
          ),
          timeout,
        ]);
      } catch (err) {
        if (err instanceof AppError) throw err;
        if (err instanceof WorkflowExecutionAlreadyStartedError) {
          throw new AppError('INVALID_REQUEST', `Purchase ${input.purchaseId} is no longer awaiting payment`, { cause: err });
        }
        const type = processorType(err);
        if (type) throw mapProcessorError(Object.assign(new Error('checkout session could not be created'), { type }));
        // The workflow's validator refused: the purchase was paid or expired meanwhile.
        if (err instanceof WorkflowUpdateFailedError) {
          throw new AppError('INVALID_REQUEST', `Purchase ${input.purchaseId} is no longer awaiting payment`, { cause: err });
        }
        throw err;
      } finally {
        clearTimeout(timer);
      }
    },

    /**
     * Runs certificate issuance of a paid purchase again (`certificates-<id>`, a new run when the
     * last one closed; every step is idempotent), found in the UI by the same agency, mode and amount
     * and hashed buyer email as its purchase, with the status it has now. Answers `running` with the
     * run that is issuing when issuance is under way already: the `certificates-<id>` run, or the
     * purchase's own run (`purchase-<id>`) while a purchase paid since issuance moved into the
     * purchase workflow has not issued yet.
     */
    async reissueCertificates(
      purchase: PurchaseStartFacts & Pick<PurchaseRecord, 'certificatesIssuedAt'>,
    ): Promise<{ action: 'started' | 'running'; workflowId: string }> {
      const { typedSearchAttributes } = startAttributes(purchase);
      if (!purchase.certificatesIssuedAt) {
        try {
          const run = await deps.client.workflow.getHandle(purchaseWorkflowId(purchase.id)).describe();
          if (run.status.name === 'RUNNING' && (run.raw.pendingChildren ?? []).length === 0)
            return { action: 'running', workflowId: purchaseWorkflowId(purchase.id) };
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }
      }
      try {
        await deps.client.workflow.start('certificatesWorkflow', {
          workflowId: certificatesWorkflowId(purchase.id),
          taskQueue: deps.taskQueue,
          args: [{ purchaseId: purchase.id }],
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          typedSearchAttributes,
          staticSummary: `Certificates of purchase ${purchase.id} (reissued by an operator)`,
        });
        return { action: 'started', workflowId: certificatesWorkflowId(purchase.id) };
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError)
          return { action: 'running', workflowId: certificatesWorkflowId(purchase.id) };
        throw err;
      }
    },

    /**
     * Sends the `chargeSavedCard` update to the running purchase workflow, which charges the
     * purchase to the saved payment method at most once and returns what happened; a repeat
     * attaches to the charge in flight. Errors: INVALID_REQUEST (400) when the purchase is no
     * longer awaiting payment (paid, expired, failed, closed); CONNECTION_ERROR (503) when the
     * workflow does not answer within `timeoutMs` (the charge goes on; call again to learn it).
     */
    async chargeSavedCard(purchaseId: number, paymentMethodId: string): Promise<SavedCardChargeResult> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new AppError(
                'CONNECTION_ERROR',
                'The charge did not finish in time; call again with the same payment method to learn its outcome (it never charges twice)',
              ),
            ),
          timeoutMs,
        );
      });
      try {
        const handle = deps.client.workflow.getHandle(purchaseWorkflowId(purchaseId));
        return await Promise.race([
          handle.executeUpdate<SavedCardChargeResult, [{ paymentMethodId: string }]>(CHARGE_SAVED_CARD_UPDATE, {
            args: [{ paymentMethodId }],
          }),
          timeout,
        ]);
      } catch (err) {
        if (err instanceof AppError) throw err;
        if (err instanceof WorkflowNotFoundError)
          throw new AppError('INVALID_REQUEST', `Purchase ${purchaseId} is no longer awaiting payment`, { cause: err });
        if (err instanceof WorkflowUpdateFailedError) {
          const reason = (err.cause as Error | undefined)?.message ?? 'it is no longer awaiting payment';
          throw new AppError('INVALID_REQUEST', `Purchase ${purchaseId} cannot be charged: ${reason.replace(/^purchase \d+ /, '')}`, {
            cause: err,
          });
        }
        throw err;
      } finally {
        clearTimeout(timer);
      }
    },

    /**
     * Hands one `charge.refunded` event to the purchase's owner (`policy-<id>`, started if no run is
     * open) as the `processorRefund` signal; it records the refund in turn with the purchase's other
     * changes. A redelivered event is signalled again and records nothing new.
     */
    async processorRefund(purchase: PurchaseStartFacts, input: RefundInput): Promise<void> {
      await signalOwner(purchase, PROCESSOR_REFUND_SIGNAL, input);
    },

    /** Hands one `charge.dispute.*` event to the purchase's owner (`policy-<id>`, started if no run is open) as the `processorDispute` signal. */
    async processorDispute(purchase: PurchaseStartFacts, input: DisputeInput): Promise<void> {
      await signalOwner(purchase, PROCESSOR_DISPUTE_SIGNAL, input);
    },

    /**
     * Hands a paid billing-cycle invoice to the owner of the subscription's period in force
     * (`period`, started if no run is open) as the `renewalPaid` signal: it makes the next period's
     * purchase and issues its certificates. A redelivered invoice makes nothing new.
     */
    async renewalPaid(period: PurchaseStartFacts, input: RenewalInput): Promise<void> {
      await signalOwner(period, RENEWAL_PAID_SIGNAL, input);
    },

    /** Starts the workflow that sends the recorded proof-of-coverage emails `emailIds` (spec §4.5). */
    async startProofOfCoverageEmail(emailIds: number[]): Promise<void> {
      await deps.client.workflow.start('proofOfCoverageEmailWorkflow', {
        workflowId: proofEmailWorkflowId(emailIds[0]!),
        taskQueue: deps.taskQueue,
        args: [{ emailIds }],
      });
    },

    /**
     * Starts a new run of `purchase-<id>` that resumes a purchase whose earlier run closed
     * (failed, terminated, or ended before a late payment): it takes the stored checkout session
     * and, with `event`, records that payment and issues the certificates (every step
     * idempotent); without one it asks the processor. While a run is open, `event` is signalled
     * to it instead and nothing new starts. Returns `started` or `running`.
     */
    async resumePurchase(input: { purchase: PurchaseStartFacts; event?: PaymentEvent }): Promise<'started' | 'running'> {
      const purchaseId = input.purchase.id;
      const options = {
        workflowId: purchaseWorkflowId(purchaseId),
        taskQueue: deps.taskQueue,
        ...startAttributes(input.purchase),
        args: [
          {
            purchaseId,
            sessionTtlSeconds: deps.sessionTtlSeconds,
            pollIntervalSeconds: deps.pollIntervalSeconds,
            ...(deps.retryMaxIntervalSeconds ? { retryMaxIntervalSeconds: deps.retryMaxIntervalSeconds } : {}),
            resume: true,
          } satisfies PurchaseWorkflowInput,
        ],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE' as const,
      };
      if (input.event) {
        // Signals the open run if there is one, else starts the resuming run with the signal.
        const running = await signalPayment(purchaseId, input.event);
        if (running) return 'running';
        await deps.client.workflow.signalWithStart('purchaseWorkflow', {
          ...options,
          signal: PAYMENT_EVENT_SIGNAL,
          signalArgs: [input.event],
        });
        return 'started';
      }
      try {
        await deps.client.workflow.start('purchaseWorkflow', options);
        return 'started';
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return 'running';
        throw err;
      }
    },

    /**
     * Hands a cancellation quote to the purchase's policy workflow (`policy-<id>`, started if no
     * run is open) and answers the accepted cancellation; the refund and the voiding follow in the
     * workflow. The same quote again answers the same cancellation. Errors: the workflow's refusal
     * as its AppError code (CANCELLATION_QUOTE_NOT_FOUND, CANCELLATION_QUOTE_EXPIRED,
     * CANCELLATION_QUOTE_STALE, PURCHASE_ALREADY_CANCELLED, PURCHASE_NOT_CANCELLABLE);
     * CONNECTION_ERROR (503) when it does not answer within `timeoutMs` (for instance while the
     * purchase's certificates are still being issued: call again, nothing is cancelled twice).
     */
    async cancel(purchase: PurchaseStartFacts, quoteId: string): Promise<CancellationAccepted> {
      return policyUpdate<{ quoteId: string }>(
        purchase,
        CANCEL_UPDATE,
        { quoteId },
        'The cancellation was not answered in time (certificates may still be being issued); call again with the same quote_id: nothing is cancelled twice',
      );
    },

    /**
     * Rescinds a cancellation still scheduled, through the purchase's policy workflow (one change
     * at a time, so it cannot cross the cancellation's own start). Answers the cancellation,
     * `rescinded`. Errors: CANCELLATION_NOT_FOUND (404), CANCELLATION_NOT_RESCINDABLE (409, its
     * time came); CONNECTION_ERROR (503) when not answered within `timeoutMs`.
     */
    /**
     * Adds a certificate holder through the purchase's policy workflow (one change at a time);
     * answers the holder's id and its planned certificate numbers, issued after the answer.
     * `requestKey` names the request: the same key again answers the same holder. Errors: the
     * workflow's refusal as its AppError code (PURCHASE_NOT_CHANGEABLE, NO_ACTIVE_COVERED_UNITS);
     * CONNECTION_ERROR (503) when not answered within `timeoutMs` (certificates still being issued:
     * call again with the same Idempotency-Key).
     */
    async addCertificateHolder(
      purchase: PurchaseStartFacts,
      requestKey: string,
      holder: CertificateHolderInput,
    ): Promise<CertificateHolderChange> {
      return policyUpdate<{ requestKey: string; holder: CertificateHolderInput }, CertificateHolderChange>(
        purchase,
        ADD_HOLDER_UPDATE,
        { requestKey, holder },
        'The certificate holder was not answered in time (the purchase’s certificates may still be being issued); call again with the same Idempotency-Key: it is added once',
      );
    },

    /**
     * Carries out endorsement quote `quoteId` through the purchase's policy workflow (one change at
     * a time); answers the certificate numbers it reissued. The same quote again answers the same.
     * Errors: the workflow's refusal as its AppError code (ENDORSEMENT_QUOTE_NOT_FOUND,
     * ENDORSEMENT_QUOTE_EXPIRED, ENDORSEMENT_QUOTE_STALE, PURCHASE_NOT_CHANGEABLE, COVERED_UNIT_STARTED,
     * …); CONNECTION_ERROR (503) when not answered within `timeoutMs`.
     */
    /**
     * Carries out an endorsement quote through the policy workflow; `payment` collects a positive
     * difference first (a saved card charged now, or a checkout link opened). Errors: the refusals'
     * codes (ENDORSEMENT_QUOTE_*, CARD_ERROR, PAYMENT_REQUIRED, …); CONNECTION_ERROR (503) when late.
     */
    async endorse(purchase: PurchaseStartFacts, quoteId: string, payment?: EndorsementPaymentInput): Promise<EndorsementApplied> {
      return policyUpdate<{ quoteId: string; payment?: EndorsementPaymentInput }, EndorsementApplied>(
        purchase,
        ENDORSE_UPDATE,
        payment ? { quoteId, payment } : { quoteId },
        'The endorsement was not answered in time (certificates may still be being issued, or the card is being charged); call again with the same quote_id: it is carried out once',
      );
    },

    /** Tells the policy workflow of purchase `purchase` that the checkout link of endorsement quote `quoteId` was paid (started if no run is open). */
    async endorsementPaid(purchase: PurchaseStartFacts, quoteId: string): Promise<void> {
      await signalOwner(purchase, ENDORSEMENT_PAID_SIGNAL, { quoteId });
    },

    /** Removes a certificate holder through the policy workflow; answers the numbers voided. Errors: NOT_FOUND, LAST_CERTIFICATE_HOLDER, PURCHASE_NOT_CHANGEABLE; CONNECTION_ERROR (503) when late. */
    async removeCertificateHolder(purchase: PurchaseStartFacts, holderId: number): Promise<CertificateHolderChange> {
      return policyUpdate<{ holderId: number }, CertificateHolderChange>(
        purchase,
        REMOVE_HOLDER_UPDATE,
        { holderId },
        'The removal was not answered in time; call again: removing twice changes nothing',
      );
    },

    async rescind(purchase: PurchaseStartFacts, cancellationId: number): Promise<CancellationAccepted> {
      return policyUpdate<{ cancellationId: number }>(
        purchase,
        RESCIND_UPDATE,
        { cancellationId },
        'The rescission was not answered in time; call again: rescinding twice changes nothing',
      );
    },

    /**
     * Cancels a subscription through the policy workflow of its current period `period` (started
     * if no run is open): at the processor, then (`now`) that period's unstarted units. Answers
     * the period's cancellation (null: none, at period end or nothing left to cancel). Errors as
     * `cancel`; CONNECTION_ERROR (503) when the processor is slow (the cancellation goes on).
     */
    async cancelSubscription(
      period: PurchaseStartFacts,
      input: SubscriptionCancelInput,
    ): Promise<{ cancellation: CancellationAccepted | null }> {
      return policyUpdate<SubscriptionCancelInput, { cancellation: CancellationAccepted | null }>(
        period,
        CANCEL_SUBSCRIPTION_UPDATE,
        input,
        'The subscription’s cancellation was not answered in time (the processor may be slow); it goes on: call again to see it, nothing is cancelled twice',
      );
    },

    /** Relays the processor's change of a subscription to the policy workflow of its current period `period` (started if no run is open). */
    async subscriptionChanged(period: PurchaseStartFacts, change: SubscriptionChange): Promise<void> {
      await signalOwner(period, SUBSCRIPTION_CHANGED_SIGNAL, change);
    },

    /** Tells the purchase's open policy workflow that its test clock moved (false: no run open, so nothing is scheduled). */
    async testClockAdvanced(purchaseId: number, frozenTime: Date): Promise<boolean> {
      try {
        await deps.client.workflow
          .getHandle(policyWorkflowId(purchaseId))
          .signal(TEST_CLOCK_SIGNAL, { frozenTime: frozenTime.toISOString() });
        return true;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      }
    },

    /**
     * An operator's retry of the purchase's unfinished cancellations: the policy workflow (started
     * if no run is open) queues them again and answers their ids (empty: none is unfinished).
     */
    async retryFailedCancellations(purchase: PurchaseStartFacts): Promise<number[]> {
      const start = policyStart(purchase);
      return deps.client.workflow.executeUpdateWithStart<(input: PolicyWorkflowInput) => Promise<unknown>, number[], []>(
        RETRY_CANCELLATIONS_UPDATE,
        { startWorkflowOperation: start },
      );
    },

    /** Starts the workflow of bulk cancellation `bulkId` (once; a repeat attaches to nothing new). */
    /** Starts bordereau `bordereauId`'s generation once (`bordereau-<id>`; asked again, nothing new starts). */
    async startBordereau(bordereauId: number): Promise<void> {
      await startOnce('bordereauWorkflow', bordereauWorkflowId(bordereauId), { bordereauId });
    },

    async startBulkCancellation(bulkId: number): Promise<void> {
      await startOnce('bulkCancellationWorkflow', bulkCancellationWorkflowId(bulkId), { bulkId } satisfies BulkCancellationInput);
    },

    signalPayment,
  };
}

export type PurchaseWorkflows = ReturnType<typeof createPurchaseWorkflows>;
