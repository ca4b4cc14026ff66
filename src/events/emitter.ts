/**
 * What the purchase activities call after they change a purchase: reads the purchase as it now
 * is, builds the matching agency event (`payloads.ts`) and publishes it. Each call is safe to
 * repeat (the event id is derived from what happened).
 */
import type { PurchasesRepository } from '../purchases/repository';
import type { CertificateService } from '../certificates/service';
import type { EventPublisher } from './publisher';
import { certificatesIssuedEvent, purchaseStatusEvent, refundEvent, renewalEvent } from './payloads';

export function createEventEmitter(deps: { purchases: Pick<PurchasesRepository, 'findById'>; certificates: Pick<CertificateService, 'getCertificates'>; publisher: EventPublisher }) {
  const load = async (purchaseId: number) => deps.purchases.findById(purchaseId);
  return {
    /** The event of the purchase's current status (checkout created, paid, expired, failed), if any. */
    async purchaseStatus(purchaseId: number): Promise<void> {
      const p = await load(purchaseId);
      const stored = p ? purchaseStatusEvent(p) : null;
      if (stored) await deps.publisher.publish(stored);
    },
    async refunded(purchaseId: number): Promise<void> {
      const p = await load(purchaseId);
      if (p && p.refundedMinor > 0) await deps.publisher.publish(refundEvent(p));
    },
    async renewed(renewalPurchaseId: number): Promise<void> {
      const p = await load(renewalPurchaseId);
      if (p) await deps.publisher.publish(renewalEvent(p));
    },
    async certificatesIssued(purchaseId: number): Promise<void> {
      const p = await load(purchaseId);
      if (!p?.certificatesIssuedAt) return;
      const certificates = await deps.certificates.getCertificates({ mode: p.mode }, { rootAccountId: p.rootAccountId, agentId: null }, { purchase_id: p.id });
      await deps.publisher.publish(certificatesIssuedEvent(p, certificates));
    },
  };
}

export type EventEmitter = ReturnType<typeof createEventEmitter>;
