/**
 * The owner's workflow client: every change of a sold purchase goes to its owner `policy-<id>`,
 * as an update answered synchronously (cancel, rescind, holders, endorsements, subscription
 * cancellation, an operator's retry and reissue) or as a signal (the processor's refunds, disputes,
 * subscription changes and renewals, an endorsement's paid link, a test clock), each with start so
 * a closed run is followed by a new one. A refusal whose type is an API error code becomes that
 * AppError; no answer within `timeoutMs` (default 30 000 ms) a 503 CONNECTION_ERROR.
 */
import { WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import { policyWorkflow } from '../../workflows/policy';
import { rethrowUpdateFailure } from '../temporal/update-refusal';
import {
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
  REISSUE_CERTIFICATES_UPDATE,
  type ReissueAnswer,
  purchaseWorkflowId,
  TEST_CLOCK_SIGNAL,
  policyWorkflowId,
  policyTaskQueue,
  refundsTaskQueue,
  type CancellationAccepted,
  type PolicyWorkflowInput,
  type RefundInput,
  type DisputeInput,
  type RenewalInput,
  ADD_HOLDER_UPDATE,
  ENDORSE_UPDATE,
  REMOVE_HOLDER_UPDATE,
  certificatesTaskQueue,
  type EndorsementApplied,
  type CertificateHolderChange,
  type CertificateHolderInput,
} from '../../workflows/contracts';
import type { PurchaseRecord } from './purchase-record';
import { clientSettings, withDeadline, type PurchaseStartFacts, type WorkflowClientDeps } from './workflow-starts';

export function createOwnerWorkflowClient(deps: WorkflowClientDeps) {
  const { timeoutMs, startAttributes } = clientSettings(deps);
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
    return new WithStartWorkflowOperation(policyWorkflow, {
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
    try {
      return await withDeadline(
        deps.client.workflow.executeUpdateWithStart<typeof policyWorkflow, R, [A]>(name, {
          args: [arg],
          startWorkflowOperation: start,
        }),
        timeoutMs,
        lateMessage,
      );
    } catch (err) {
      rethrowUpdateFailure(err);
    }
  }
  /** Signals `signal` with `arg` to the purchase's owner `policy-<id>`, starting a run when none is open. */
  async function signalOwner<A>(purchase: PurchaseStartFacts, signal: string, arg: A): Promise<void> {
    await deps.client.workflow.signalWithStart<typeof policyWorkflow, [A]>(policyWorkflow, {
      ...policyStartOptions(purchase),
      signal,
      signalArgs: [arg],
    });
  }
  return {
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
     * `payment` collects a positive difference first (a saved card charged now, or a checkout link
     * opened). Errors: the workflow's refusal as its AppError code (ENDORSEMENT_QUOTE_NOT_FOUND,
     * ENDORSEMENT_QUOTE_EXPIRED, ENDORSEMENT_QUOTE_STALE, PURCHASE_NOT_CHANGEABLE, COVERED_UNIT_STARTED,
     * CARD_ERROR, PAYMENT_REQUIRED, …); CONNECTION_ERROR (503) when not answered within `timeoutMs`.
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

    /**
     * Rescinds a cancellation still scheduled, through the purchase's policy workflow (one change
     * at a time, so it cannot cross the cancellation's own start). Answers the cancellation,
     * `rescinded`. Errors: CANCELLATION_NOT_FOUND (404), CANCELLATION_NOT_RESCINDABLE (409, its
     * time came); CONNECTION_ERROR (503) when not answered within `timeoutMs`.
     */
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
      return deps.client.workflow.executeUpdateWithStart<typeof policyWorkflow, number[], []>(RETRY_CANCELLATIONS_UPDATE, {
        startWorkflowOperation: start,
      });
    },

    /**
     * An operator's reissue: the purchase's owner (`policy-<id>`, started if no run is open) runs
     * certificate issuance again as a child `certificates-<id>`, in turn with the purchase's other
     * changes, and answers once it has started (`started`), or `running` when one is under way.
     * Before it is asked: while the purchase's own run (`purchase-<id>`) is still issuing its first
     * certificates, the answer is `running` with that run (nothing is started).
     */
    async reissueCertificates(purchase: PurchaseStartFacts & Pick<PurchaseRecord, 'certificatesIssuedAt'>): Promise<ReissueAnswer> {
      if (!purchase.certificatesIssuedAt) {
        try {
          const run = await deps.client.workflow.getHandle(purchaseWorkflowId(purchase.id)).describe();
          if (run.status.name === 'RUNNING' && (run.raw.pendingChildren ?? []).length === 0)
            return { action: 'running', workflowId: purchaseWorkflowId(purchase.id) };
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }
      }
      return deps.client.workflow.executeUpdateWithStart<typeof policyWorkflow, ReissueAnswer, []>(REISSUE_CERTIFICATES_UPDATE, {
        startWorkflowOperation: policyStart(purchase),
      });
    },
  };
}
