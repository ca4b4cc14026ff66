/**
 * Names shared by the API, the worker and workflow code: task queue, workflow-id helpers and
 * search attributes (ARCHITECTURE §3). No runtime imports, so any side may import it.
 */

/** Default task queue of the worker (overridable with TEMPORAL_TASK_QUEUE). */
export const DEFAULT_TASK_QUEUE = 'insurance';

/**
 * The task queue of the policy workflows (cancellations), beside `taskQueue`: their workflow tasks
 * and database steps have slots of their own, so a cancellation is accepted at once even while
 * every slot of `taskQueue` is held by purchase workflows whose checkout calls retry through a
 * processor outage.
 */
export function policyTaskQueue(taskQueue: string): string {
  return `${taskQueue}-policy`;
}

/**
 * The task queue of the certificate rendering activities (render and store, zips, verification)
 * beside `taskQueue`: the worker polls it with a small concurrency of its own, so a burst of
 * certificate work waits in Temporal instead of taking the CPU that checkouts (a buyer waiting
 * on the API) need. Decision in docs/decisions.md (issue 8).
 */
export function certificatesTaskQueue(taskQueue: string): string {
  return `${taskQueue}-certificates`;
}

/**
 * The task queue of the activities that create refunds at the processor, beside `taskQueue`: its
 * workers are rate-capped by Temporal across the whole queue (REFUND_RATE_LIMIT_PER_SECOND, with a
 * second's burst on top still below the processor's own limit), so a bulk cancellation of hundreds of purchases queues its refunds
 * instead of meeting the processor's 429s.
 */
export function refundsTaskQueue(taskQueue: string): string {
  return `${taskQueue}-refunds`;
}

/** Workflow ids are business ids, so a duplicate start attaches instead of buying twice. */
export function purchaseWorkflowId(purchaseId: number): string {
  return `purchase-${purchaseId}`;
}

/** Workflow id of a purchase's certificate issuance (child of the purchase workflow). */
export function certificatesWorkflowId(purchaseId: number): string {
  return `certificates-${purchaseId}`;
}

/**
 * Purchase statuses, as stored in `purchases.status` and the `PurchaseStatus` search attribute:
 * `awaiting_certificates` = paid, certificates being issued; `issued` = every certificate and zip
 * verified in storage; `expired` = not paid by the deadline; `failed` = the processor refused the
 * purchase for good (declined, invalid request; never a transient outage), with a reason;
 * `partly_cancelled` = issued, and some of its covered units cancelled (their cancellation
 * completed, a buyer's withdrawal too), the rest still in force; `cancelled` = every covered unit
 * cancelled, final; `refunded` = fully refunded at the processor (certificates void), final. A
 * sold purchase's status after issuance is decided by its owner (`policy-<id>`). The allowed moves
 * between them are written once, in `src/purchases/purchase-record.ts`.
 */
export type PurchaseStatus =
  | 'quoted'
  | 'awaiting_payment'
  | 'paid'
  | 'expired'
  | 'failed'
  | 'awaiting_certificates'
  | 'issued'
  | 'partly_cancelled'
  | 'cancelled'
  | 'refunded';

/**
 * A `charge.refunded` event of the processor, handed to the purchase's owner (`policy-<id>`) as
 * the `processorRefund` signal: the charge's state after the refund; amounts in minor units. The
 * owner records it in turn with the purchase's other changes; a redelivered event records nothing
 * new (the amount is the charge's running total).
 */
export interface RefundInput {
  purchaseId: number;
  /** The processor's event id (what the owner's status query lists it by). */
  eventId: string;
  chargeId: string;
  /** Total refunded so far on the charge (the processor's `amount_refunded`). */
  amountRefundedMinor: number;
  /** True when the whole charge has been refunded. */
  fullyRefunded: boolean;
  /**
   * The charge's payment intent: the sale's, or a priced endorsement's difference (then the
   * purchase's own refunded amount and status stay as they are). Absent in runs started before
   * it was passed: the sale's.
   */
  paymentIntentId?: string;
}

/**
 * One `charge.dispute.*` event's dispute, handed to the purchase's owner (`policy-<id>`) as the
 * `processorDispute` signal; amounts in minor units. Recorded in turn with the purchase's other
 * changes; a redelivered or older event changes nothing.
 */
export interface DisputeInput {
  purchaseId: number;
  /** The processor's event id and its `created` (ISO 8601 UTC): a late, older event changes nothing. */
  eventId: string;
  eventCreatedAt: string;
  dispute: { id: string; chargeId: string | null; amountMinor: number; currency: string; reason: string; status: string; openedAt: string };
}

/** Input of `purchaseWorkflow`. Durations are inputs so tests can make them short (STYLE 10). */
export interface PurchaseWorkflowInput {
  purchaseId: number;
  /** How long the buyer has to pay, in seconds. */
  sessionTtlSeconds: number;
  /** How often to ask the processor about the session while waiting, in seconds. */
  pollIntervalSeconds: number;
  /**
   * Longest wait between two tries of a processor call, in seconds (default 300). Processor calls
   * retry without an attempt limit: an outage delays a purchase, never fails it.
   */
  retryMaxIntervalSeconds?: number;
  /**
   * A new run of a purchase whose earlier run closed (failed, terminated, or ended before a late
   * payment): the checkout session exists already, so the run starts waiting for the payment
   * (signalled with the start, or asked of the processor) instead of creating a session.
   */
  resume?: boolean;
}

/** The checkout session returned to the agent (spec §4.4 step 2); amounts in minor units. */
export interface CheckoutSession {
  id: string;
  url: string;
  /** The processor's payment intent, when it exists at creation (it may appear only after payment). */
  payment_intent: string | null;
  amount_total: number;
  currency: string;
  /** Subscription checkouts: the subscription invoice when the processor returns one (else null/absent). */
  subscription_invoice?: string | null;
  /** ISO 8601: when the session stops accepting payment. */
  expires_at: string;
}

/** A processor notification relayed by the webhook route to the purchase workflow. */
export interface PaymentEvent {
  eventId: string;
  /** `paid`: money captured; `failed`: async payment failed; `expired`: session expired. */
  outcome: 'paid' | 'failed' | 'expired';
  paymentIntentId: string | null;
  /** A paid subscription checkout: the processor subscription it created (its renewals find the purchase by it). */
  subscriptionId?: string | null;
}

/** What the `status` query answers. */
export interface PurchaseStatusView {
  purchaseId: number;
  status: PurchaseStatus;
  /** Why the purchase `failed` (the processor's answer); absent otherwise. */
  failureReason?: string;
  checkoutSessionId: string | null;
  paymentIntentId: string | null;
  /**
   * Issuance of the purchase's certificates, once paid, in runs that issue them themselves;
   * absent before payment and in runs recorded before, which issued through the certificates
   * child workflow (`certificates-<id>`, whose own `status` query answers the same shape).
   */
  certificates?: CertificatesStatusView;
}

/**
 * Progress of certificate issuance: what the certificates workflow's `status` query answers, and
 * `certificates` of the purchase's own (purchases paid since issuance runs inside the purchase workflow).
 */
export interface CertificatesStatusView {
  purchaseId: number;
  /** `rendering`: certificates being rendered and stored (for a small purchase, in one step with the zips and the check); `archiving`: zips; `verifying`: storage check; `waiting`: backoff before another round; `issued`: done. */
  phase: 'planning' | 'rendering' | 'archiving' | 'verifying' | 'waiting' | 'issued';
  /** Issuance round, from 0 (a round after 0 means storage was found incomplete). */
  round: number;
  /** Render batches of this round finished / planned (`CERTIFICATE_BATCH_SIZE` certificates each). */
  batchesDone: number;
  batchesTotal: number;
}

/** What the saved-card charge of a purchase came to (`chargeSavedCard` update). */
export type SavedCardChargeResult =
  | {
      ok: true;
      paymentMethodId: string;
      /** The payment intent (the same on every repeat of a charge). */
      paymentIntentId: string;
      /** `succeeded`: paid, certificates follow; `processing`: the processor's webhook confirms later. */
      status: 'succeeded' | 'processing';
      /** A subscription purchase: the processor subscription created on the saved payment method. */
      subscriptionId: string | null;
    }
  | {
      ok: false;
      paymentMethodId: string;
      /** CARD_ERROR: declined (retry only with another card); INVALID_REQUEST / AUTHENTICATION_ERROR: refused. */
      code: 'CARD_ERROR' | 'INVALID_REQUEST' | 'AUTHENTICATION_ERROR';
      message: string;
      declineCode?: string | null;
      paymentIntentId?: string | null;
    };

/** Update, signal and query names (the workflow defines them with these names). */
export const CREATE_CHECKOUT_UPDATE = 'createCheckout';
export const CHARGE_SAVED_CARD_UPDATE = 'chargeSavedCard';
export const PAYMENT_EVENT_SIGNAL = 'paymentEvent';
export const STATUS_QUERY = 'status';

/** Workflow id of the emails of one teamEmailProofofCoverage request (its first row's id). */
export function proofEmailWorkflowId(firstEmailId: number): string {
  return `proof-email-${firstEmailId}`;
}

/** A paid billing-cycle invoice of a subscription purchase (amounts in minor units). */
/**
 * A paid billing-cycle invoice of a subscription, handed to the owner of the subscription's period
 * in force (`policy-<id>`) as the `renewalPaid` signal: it creates the next period's purchase and
 * issues its certificates, in turn with its other changes. A redelivered invoice makes nothing new.
 */
export interface RenewalInput {
  /** The original (checkout) purchase of the subscription. */
  purchaseId: number;
  invoiceId: string;
  subscriptionId: string | null;
  /** The invoice's payment intent (what getCertificates of the renewal is asked with). */
  paymentIntentId: string | null;
}

/** Input of `eventDeliveryWorkflow`: one delivery of an agency event to one endpoint. */
export interface EventDeliveryInput {
  deliveryId: number;
  /** Wait before the second attempt, in seconds; it doubles after each failure (capped at 1 h). */
  initialRetrySeconds: number;
  /** How long attempts go on before the delivery fails and its endpoint is marked failing, in seconds. */
  retryWindowSeconds: number;
  /** Each attempt's deadline for the endpoint's answer, in ms. */
  timeoutMs: number;
}

/** `event-delivery-<delivery>-<resends>`: one run per delivery and per manual resend of it. */
export function eventDeliveryWorkflowId(deliveryId: number, resends: number): string {
  return `event-delivery-${deliveryId}-${resends}`;
}

/** Workflow id of the cancellation notices of cancellation `cancellationId` to its purchase's certificate holders. */
export function holderNoticesWorkflowId(cancellationId: number): string {
  return `holder-notices-${cancellationId}`;
}

/** Workflow id of a purchase's policy changes after its sale (cancellations, one at a time). */
export function policyWorkflowId(purchaseId: number): string {
  return `policy-${purchaseId}`;
}

/** Name of the policy workflow's update that carries out a cancellation quote. */
export const CANCEL_UPDATE = 'cancel';

/** Name of the policy workflow's update that tries the purchase's refused refunds again (an operator's). */
export const RETRY_CANCELLATIONS_UPDATE = 'retryFailedCancellations';

/**
 * Name of the policy workflow's update that runs certificate issuance of the purchase again (an
 * operator's `npm run ops -- reissue`): a child `certificates-<id>`, in turn with the purchase's
 * other changes. Answers `ReissueAnswer` once the child has started (or is found running).
 */
export const REISSUE_CERTIFICATES_UPDATE = 'reissueCertificates';

/** What an operator's reissue answers: a new issuance run started, or one already running; and that run's workflow id. */
export interface ReissueAnswer {
  action: 'started' | 'running';
  workflowId: string;
}

/** Name of the policy workflow's update that rescinds a cancellation still scheduled. */
export const RESCIND_UPDATE = 'rescindCancellation';

/** Name of the policy workflow's signal that a test-mode purchase's test clock moved (ISO 8601 frozen time). */
export const TEST_CLOCK_SIGNAL = 'testClockAdvanced';

/** Name of the policy workflow's update that cancels the subscription the purchase is a period of. */
export const CANCEL_SUBSCRIPTION_UPDATE = 'cancelSubscription';

/** Name of the policy workflow's signal that the processor changed the subscription (ended it, or set it to end). */
export const SUBSCRIPTION_CHANGED_SIGNAL = 'subscriptionChanged';

/** Name of the policy workflow's update that adds a certificate holder (its certificates issued after the answer). */
export const ADD_HOLDER_UPDATE = 'addCertificateHolder';

/** Name of the policy workflow's update that removes a certificate holder (its certificates voided). */
export const REMOVE_HOLDER_UPDATE = 'removeCertificateHolder';

/** Name of the policy workflow's update that carries out an endorsement quote (its new certificate versions issued after the answer). */
export const ENDORSE_UPDATE = 'endorse';

/** What the `endorse` update answers: the quote carried out and the certificate numbers it reissued (old → new). */
export interface EndorsementApplied {
  quoteId: string;
  reissued: Array<{ from: string; to: string }>;
}

/** How the `endorse` update collects a positive difference (absent: nothing to collect). */
export type EndorsementPaymentInput = { method: 'saved_card'; paymentMethodId: string } | { method: 'checkout_link' };

/** Name of the policy workflow's signal that an endorsement's checkout link was paid (relayed from the processor's event). */
export const ENDORSEMENT_PAID_SIGNAL = 'endorsementPaid';

/**
 * Signal to `purchase-<id>` from the purchase's owner `policy-<id>`, whose change waits for the
 * first issuance: tell the owner (`SALE_ISSUED_SIGNAL`) once the certificates are issued (at once
 * if they are already).
 */
export const NOTIFY_WHEN_ISSUED_SIGNAL = 'notifyWhenIssued';

/** Signal to `policy-<id>` from `purchase-<id>`: the purchase's first certificates are issued (the hand-off the owner asked for). */
export const SALE_ISSUED_SIGNAL = 'saleIssued';

/** Signal to `policy-<id>` of a subscription's period in force: a billing-cycle invoice was paid (`RenewalInput`). */
export const RENEWAL_PAID_SIGNAL = 'renewalPaid';

/** Signal to `policy-<id>`: the processor refunded a charge of the purchase (`RefundInput`). */
export const PROCESSOR_REFUND_SIGNAL = 'processorRefund';

/** Signal to `policy-<id>`: the processor opened, changed or closed a dispute of a charge of the purchase (`DisputeInput`). */
export const PROCESSOR_DISPUTE_SIGNAL = 'processorDispute';

/** A certificate holder as the add update carries it (the API's validated body; address as the quote answers' postal address). */
export interface CertificateHolderInput {
  name: string;
  address: { line1: string; line2?: string; city: string; region: string; postal_code: string; country: string };
  email: string | null;
  additionalInsured: boolean;
  waiverOfSubrogation: boolean;
  descriptionOfOperations: string | null;
  notifyOnCancellation: boolean;
}

/** What the holder updates answer: the holder, and the certificates planned for it (add) or voided (remove). */
export interface CertificateHolderChange {
  holderId: number;
  certificateNumbers: string[];
}

/** What `cancelSubscription` is asked: the subscription (its first purchase) and how it ends. */
export interface SubscriptionCancelInput {
  /** The subscription's first purchase (the one holding the processor subscription). */
  subscriptionPurchaseId: number;
  /** `at_period_end`: renewals stop, this period stays covered; `now`: it ends now and this period's unstarted units are cancelled and refunded. */
  at: 'at_period_end' | 'now';
  reason: string | null;
  /** The API key that asked (kept on the period's cancellation). */
  apiKeyId: number;
}

/** What the processor's subscription event says, relayed by the webhook. */
export interface SubscriptionChange {
  subscriptionPurchaseId: number;
  /** The processor ended it (`customer.subscription.deleted`, or a status `canceled`). */
  ended: boolean;
  /** The processor will end it at the period's end (`cancel_at_period_end`). */
  cancelAtPeriodEnd: boolean;
  /** When it ended (ISO 8601), if it did. */
  endedAt: string | null;
}

/** Input of `bulkCancellationWorkflow` (id `bulk-cancellation-<bulkId>`). */
export interface BulkCancellationInput {
  bulkId: number;
  /** Purchases handed to their policy workflows at once (default 8). */
  concurrency?: number;
}

/** The workflow that generates bordereau `bordereauId`'s file. */
export function bordereauWorkflowId(bordereauId: number): string {
  return `bordereau-${bordereauId}`;
}

export function bulkCancellationWorkflowId(bulkId: number): string {
  return `bulk-cancellation-${bulkId}`;
}

/** Input of `policyWorkflow`. Durations are inputs so tests can make them short. */
export interface PolicyWorkflowInput {
  purchaseId: number;
  /** Longest wait between two tries of a processor call, in seconds (default 300; no attempt limit). */
  retryMaxIntervalSeconds?: number;
  /** How often to ask the processor about a refund still pending, in seconds (default 30). */
  refundPollSeconds?: number;
  /** How long the workflow stays open with nothing to do before it completes, in seconds (default 600). */
  idleSeconds?: number;
  /** The rate-capped queue its refunds are created on (`refundsTaskQueue` of the main queue; the workflow itself runs on `policyTaskQueue`). */
  refundsTaskQueue?: string;
  /** The queue certificates are rendered and stored on (`certificatesTaskQueue` of the main queue), for a holder's certificates. */
  certificatesTaskQueue?: string;
  /** The worker's main queue, where a renewal's certificates workflow runs (default: derived from `certificatesTaskQueue`). */
  taskQueue?: string;
}

/** What the `cancel` and `rescindCancellation` updates answer: the cancellation (its refund in minor units). */
export interface CancellationAccepted {
  cancellationId: number;
  status: 'scheduled' | 'accepted' | 'refund_pending' | 'completed' | 'refund_failed' | 'rescinded';
  totalMinor: number;
  /** When it takes effect, ISO 8601 (a `scheduled` one is carried out then). */
  effectiveAt?: string;
  /** The purchase's test clock when it was accepted, ISO 8601 (null: the real clock). */
  testClockAt?: string | null;
}
