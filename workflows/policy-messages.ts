/**
 * What the purchase's owner `policy-<id>` (./policy.ts) answers to: its updates (answered at once,
 * one change at a time), its signals (the processor's events, the sale's hand-off, a test clock)
 * and its `status` query with the view it answers. Definitions only; the handling is in ./policy.ts.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import {
  type CancellationAccepted,
  CANCEL_UPDATE,
  RESCIND_UPDATE,
  type CertificateHolderChange,
  type CertificateHolderInput,
  ADD_HOLDER_UPDATE,
  type EndorsementApplied,
  type EndorsementPaymentInput,
  ENDORSE_UPDATE,
  ENDORSEMENT_PAID_SIGNAL,
  REMOVE_HOLDER_UPDATE,
  type SubscriptionCancelInput,
  CANCEL_SUBSCRIPTION_UPDATE,
  type SubscriptionChange,
  SUBSCRIPTION_CHANGED_SIGNAL,
  type RefundInput,
  PROCESSOR_REFUND_SIGNAL,
  type DisputeInput,
  PROCESSOR_DISPUTE_SIGNAL,
  type RenewalInput,
  RENEWAL_PAID_SIGNAL,
  SALE_ISSUED_SIGNAL,
  TEST_CLOCK_SIGNAL,
  RETRY_CANCELLATIONS_UPDATE,
  REISSUE_CERTIFICATES_UPDATE,
  type ReissueAnswer,
  STATUS_QUERY,
} from './contracts';

/**
 * An operator's reissue: runs certificate issuance again as a child `certificates-<id>` (every step
 * idempotent: fixed numbers, stored objects never overwritten, missing ones rendered again), in
 * turn with the purchase's other changes; answers once that run has started, or `running` when
 * one is under way.
 */
export const reissueCertificatesUpdate = defineUpdate<ReissueAnswer, []>(REISSUE_CERTIFICATES_UPDATE);
export const cancelUpdate = defineUpdate<CancellationAccepted, [{ quoteId: string }]>(CANCEL_UPDATE);
/** Rescinds a cancellation still scheduled (its units given back); refused once its time came. */
export const rescindCancellationUpdate = defineUpdate<CancellationAccepted, [{ cancellationId: number }]>(RESCIND_UPDATE);
/**
 * Adds a certificate holder: answers the holder and the certificates planned for it at once; they
 * are issued after the answer (rendered, stored, zipped, verified), then `certificate_holder.added`.
 * `requestKey` names the API request, so a retried update adds the holder once.
 */
export const addCertificateHolderUpdate = defineUpdate<CertificateHolderChange, [{ requestKey: string; holder: CertificateHolderInput }]>(
  ADD_HOLDER_UPDATE,
);
/**
 * Carries out an endorsement quote: its changes and the certificates it replaces by new versions,
 * answered at once; the new versions are issued after the answer, then `certificates.reissued`.
 * A quote that adds covered units names `payment`: a saved card is charged first (declined: the
 * update fails CARD_ERROR and nothing changes), or a checkout link is opened and the update
 * answers at once with nothing reissued; the change then waits for `endorsementPaid`.
 */
export const endorseUpdate = defineUpdate<EndorsementApplied, [{ quoteId: string; payment?: EndorsementPaymentInput }]>(ENDORSE_UPDATE);
/** The checkout link of an endorsement was paid: applied in turn with the other changes (refunded in full if the quote no longer holds). */
export const endorsementPaidSignal = defineSignal<[{ quoteId: string }]>(ENDORSEMENT_PAID_SIGNAL);
/** Removes a certificate holder and voids its certificates; answers the numbers voided. */
export const removeCertificateHolderUpdate = defineUpdate<CertificateHolderChange, [{ holderId: number }]>(REMOVE_HOLDER_UPDATE);
/**
 * Cancels the subscription this purchase is the current period of: at the processor, then (`now`)
 * this period's unstarted units like any cancellation. Answers that cancellation, or null.
 */
export const cancelSubscriptionUpdate = defineUpdate<{ cancellation: CancellationAccepted | null }, [SubscriptionCancelInput]>(
  CANCEL_SUBSCRIPTION_UPDATE,
);
/** The processor ended the subscription, or set it to end (its dashboard, an unpaid invoice): recorded in turn with the other changes. */
export const subscriptionChangedSignal = defineSignal<[SubscriptionChange]>(SUBSCRIPTION_CHANGED_SIGNAL);
/**
 * The processor refunded a charge of the purchase (its dashboard, or a refund of ours): recorded in
 * turn with the other changes, moving the purchase to `refunded` when its sale is refunded in full.
 */
export const processorRefundSignal = defineSignal<[RefundInput]>(PROCESSOR_REFUND_SIGNAL);
/** The processor opened, changed or closed a dispute of a charge of the purchase: recorded in turn with the other changes. */
export const processorDisputeSignal = defineSignal<[DisputeInput]>(PROCESSOR_DISPUTE_SIGNAL);
/**
 * A billing-cycle invoice of the subscription this purchase is the period in force of was paid:
 * the next period's purchase is made and its certificates issued (a child `certificates-<id>`),
 * in turn with the other changes.
 */
export const renewalPaidSignal = defineSignal<[RenewalInput]>(RENEWAL_PAID_SIGNAL);
/** The purchase's first issuance is over: sent by `purchase-<id>` when this workflow asked (`notifyWhenIssued`). */
export const saleIssuedSignal = defineSignal(SALE_ISSUED_SIGNAL);
/** A test-mode purchase's test clock moved to `frozenTime` (ISO 8601): scheduled cancellations due by it are carried out. */
export const testClockAdvancedSignal = defineSignal<[{ frozenTime: string }]>(TEST_CLOCK_SIGNAL);
/** An operator's retry of the cancellations not completed (refund refused, or stalled): answers the ids queued again. */
export const retryFailedCancellationsUpdate = defineUpdate<number[], []>(RETRY_CANCELLATIONS_UPDATE);

/** What the `status` query answers: the cancellations this run handled and the one in progress. */
export interface PolicyStatusView {
  purchaseId: number;
  cancellations: Array<{
    cancellationId: number;
    phase: 'scheduled' | 'accepted' | 'refunding' | 'completed' | 'refund_failed' | 'rescinded';
  }>;
  /**
   * The processor's events this run recorded, in order: a refund with the purchase's refunded
   * total (minor units) and whether it is now refunded in full; a dispute with its status.
   */
  processorEvents: Array<
    | { eventId: string; kind: 'refund'; refundedMinor: number; refunded: boolean }
    | { eventId: string; kind: 'dispute'; status: string; opened: boolean; closed: boolean }
  >;
  /** The subscription renewals this run made: the invoice, the next period's purchase and whether its certificates are issued. */
  renewals: Array<{ invoiceId: string; renewalPurchaseId: number | null; period: number | null; phase: 'creating' | 'issuing' | 'issued' }>;
}
export const policyStatusQuery = defineQuery<PolicyStatusView>(STATUS_QUERY);
