/**
 * What the purchase activities call after they change a purchase: reads the purchase as it now
 * is (through the purchases domain's reads: the purchase read model, its items, its buyer's
 * reference), builds the matching agency event (`payloads.ts`) and publishes it. Each call is safe to
 * repeat (the event id is derived from what happened). The first time an event is recorded, the
 * status it announces is counted in `purchases_status_total{status,mode}` (and, for issued
 * certificates, the time since payment in `purchase_paid_to_issued_seconds`): once per purchase
 * and status, however often a step is retried.
 */
import type { SaleRepository } from '../purchases/sale-repository';
import type { SubscriptionRepository } from '../purchases/subscription-repository';
import type { CertificateService } from '../certificates/service';
import type { EventPublisher } from './publisher';
import type { WorkerMetrics } from '../metrics/registry';
import type { PurchaseItemDetail, PurchaseRecord } from '../purchases/purchase-record';
import type { StoredCancellation } from '../purchases/ledger-record';
import type { CertificateHolderRecord } from '../certificate-holders/repository';
import type { StoredEndorsement } from '../endorsements/repository';
import type { StoredDispute } from '../disputes/repository';
import {
  cancellationRefundEvent,
  cancelledEvent,
  certificateHolderEvent,
  certificatesReissuedEvent,
  certificatesIssuedEvent,
  certificatesVoidedEvent,
  disputeEvent,
  purchaseStatusEvent,
  refundEvent,
  statusHasEvent,
  renewalEvent,
  subscriptionCancelledEvent,
  reportReadyEvent,
} from './payloads';
import type { BordereauRecord } from '../reports/repository';
import type { ClaimEventRecord, ClaimRecord } from '../claims/repository';
import { claimChangeEvent } from './claim-payloads';

export function createEventEmitter(deps: {
  sales: Pick<SaleRepository, 'findById' | 'itemDetails' | 'buyerIdpAccntUuid'>;
  subscriptions: Pick<SubscriptionRepository, 'subscriptionPeriods'>;
  certificates: Pick<CertificateService, 'getCertificates'>;
  publisher: EventPublisher;
  metrics?: Pick<WorkerMetrics, 'purchaseStatus' | 'paidToIssued'>;
}) {
  const load = async (purchaseId: number) => deps.sales.findById(purchaseId);
  /** What the events' `purchase` shows beside the purchase itself, read by the purchases domain: the buyer's reference and the items. */
  const buyerAndItemsOf = (p: PurchaseRecord): Promise<[string | null, PurchaseItemDetail[]]> =>
    Promise.all([deps.sales.buyerIdpAccntUuid(p.buyerId), deps.sales.itemDetails(p.id)]);
  const count = (p: PurchaseRecord, status: string, recorded: boolean) => {
    if (!recorded || !deps.metrics) return;
    deps.metrics.purchaseStatus.inc({ status, mode: p.mode });
    if (status === 'issued' && p.paidAt && p.certificatesIssuedAt)
      deps.metrics.paidToIssued.observe({ mode: p.mode }, (p.certificatesIssuedAt.getTime() - p.paidAt.getTime()) / 1000);
  };
  return {
    /**
     * The event of the purchase's current status (checkout created, paid, expired, failed), if any.
     * The buyer and items are read only for a status that has an event (a paid purchase also
     * passes `awaiting_certificates`, which has none).
     */
    async purchaseStatus(purchaseId: number): Promise<void> {
      const p = await load(purchaseId);
      if (!p || !statusHasEvent(p.status)) return;
      const stored = purchaseStatusEvent(p, ...(await buyerAndItemsOf(p)));
      if (stored) count(p, p.status, (await deps.publisher.publish(stored)).recorded);
    },
    async refunded(purchaseId: number): Promise<void> {
      const p = await load(purchaseId);
      if (p && p.refundedMinor > 0)
        count(
          p,
          p.status === 'refunded' ? 'refunded' : 'partially_refunded',
          (await deps.publisher.publish(refundEvent(p, ...(await buyerAndItemsOf(p))))).recorded,
        );
    },
    /** For a completed cancellation: `refund.succeeded`, `certificates.voided` and `purchase.cancelled`, in that order. */
    async cancelled(cancellation: StoredCancellation, voidedCertificates: string[]): Promise<void> {
      const p = await load(cancellation.purchaseId);
      if (!p) return;
      await deps.publisher.publish(cancellationRefundEvent(p, cancellation, 'succeeded'));
      await deps.publisher.publish(certificatesVoidedEvent(p, cancellation, voidedCertificates));
      const [buyerIdpAccntUuid, items] = await buyerAndItemsOf(p);
      count(
        p,
        'cancelled',
        (await deps.publisher.publish(cancelledEvent(p, buyerIdpAccntUuid, items, cancellation, voidedCertificates))).recorded,
      );
    },
    /** `refund.failed` for a cancellation whose refund the processor refused for good. */
    async cancellationRefundFailed(cancellation: StoredCancellation): Promise<void> {
      const p = await load(cancellation.purchaseId);
      if (p) await deps.publisher.publish(cancellationRefundEvent(p, cancellation, 'failed'));
    },
    async renewed(renewalPurchaseId: number): Promise<void> {
      const p = await load(renewalPurchaseId);
      if (p) count(p, 'renewed', (await deps.publisher.publish(renewalEvent(p, ...(await buyerAndItemsOf(p))))).recorded);
    },
    /** `certificate_holder.added` for a holder whose certificates (`certificateNumbers`) are stored. */
    async certificateHolderAdded(holder: CertificateHolderRecord, certificateNumbers: string[]): Promise<void> {
      const p = await load(holder.purchaseId);
      if (p) await deps.publisher.publish(certificateHolderEvent(p, holder, 'added', certificateNumbers));
    },
    /** `certificate_holder.removed` for a removed holder and the certificates that voided. */
    async certificateHolderRemoved(holder: CertificateHolderRecord, certificateNumbers: string[]): Promise<void> {
      const p = await load(holder.purchaseId);
      if (p) await deps.publisher.publish(certificateHolderEvent(p, holder, 'removed', certificateNumbers));
    },
    /** `dispute.opened` for a dispute of the purchase's payment (once per dispute). */
    async disputeOpened(purchaseId: number, dispute: StoredDispute): Promise<void> {
      const p = await load(purchaseId);
      if (p) await deps.publisher.publish(disputeEvent(p, dispute, 'opened'));
    },
    /** `dispute.closed` once the processor decided the dispute (once per dispute). */
    async disputeClosed(purchaseId: number, dispute: StoredDispute): Promise<void> {
      const p = await load(purchaseId);
      if (p) await deps.publisher.publish(disputeEvent(p, dispute, 'closed'));
    },
    /** The `claim.*` event of `change` (a status claim `claim` reached; nothing for a comment or a missed deadline), once per change. */
    async claimChanged(claim: ClaimRecord, change: ClaimEventRecord): Promise<void> {
      const stored = claimChangeEvent(claim, change);
      if (stored) await deps.publisher.publish(stored);
    },
    /** `report.ready` for a bordereau whose files are stored (once per bordereau). */
    async reportReady(bordereau: BordereauRecord): Promise<void> {
      if (bordereau.status === 'ready') await deps.publisher.publish(reportReadyEvent(bordereau));
    },
    /** `certificates.reissued` for an endorsement whose new certificate versions are stored. */
    async certificatesReissued(endorsement: StoredEndorsement): Promise<void> {
      const p = await load(endorsement.purchaseId);
      if (p) await deps.publisher.publish(certificatesReissuedEvent(p, endorsement));
    },
    /** `subscription.cancelled` for the subscription whose first purchase is `firstPurchaseId`, as it now stands. */
    async subscriptionCancelled(firstPurchaseId: number): Promise<void> {
      const first = await load(firstPurchaseId);
      if (first) await deps.publisher.publish(subscriptionCancelledEvent(first, await deps.subscriptions.subscriptionPeriods(first.id)));
    },
    /** `certificates.issued` again for an endorsement that added covered units (their certificates are stored). */
    async certificatesIssuedByEndorsement(endorsement: StoredEndorsement): Promise<void> {
      const p = await load(endorsement.purchaseId);
      if (!p) return;
      const certificates = await deps.certificates.getCertificates(
        { mode: p.mode },
        { rootAccountId: p.rootAccountId, agentId: null },
        { purchase_id: p.id },
      );
      await deps.publisher.publish(certificatesIssuedEvent(p, certificates, endorsement.quoteId));
    },
    async certificatesIssued(purchaseId: number): Promise<void> {
      const p = await load(purchaseId);
      if (!p?.certificatesIssuedAt) return;
      const certificates = await deps.certificates.getCertificates(
        { mode: p.mode },
        { rootAccountId: p.rootAccountId, agentId: null },
        { purchase_id: p.id },
      );
      count(p, 'issued', (await deps.publisher.publish(certificatesIssuedEvent(p, certificates))).recorded);
    },
  };
}

export type EventEmitter = ReturnType<typeof createEventEmitter>;
