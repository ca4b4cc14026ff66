/**
 * Guarded operator actions on one purchase (`npm run ops -- reissue|recover --purchase <id>`).
 *
 * - `reissue`: runs certificate issuance for the purchase again (`certificates-<id>`, a new run
 *   when the last one closed). Every step of issuance is idempotent: certificate numbers are
 *   fixed, stored objects are never overwritten, and missing ones are rendered again. Refused
 *   unless the purchase is paid and not refunded; answers `running` (with the run's id) while
 *   issuance is under way, in `certificates-<id>` or in the purchase's own run.
 * - `recover`: starts a new run of `purchase-<id>` for a purchase whose run closed without
 *   certificates (failed, terminated, timed out): a paid purchase records its payment again
 *   (idempotent) and issues its certificates; an unpaid one asks the processor about its
 *   checkout session and waits for payment until the session's deadline. Refused for a refunded
 *   purchase, one whose certificates are issued (use `reissue`), and while a run is open.
 *
 * - `retryCancellation`: tries the purchase's unfinished cancellations again (`refund_failed`,
 *   or stalled `accepted`/`refund_pending`) through its policy workflow. Refused when there is none.
 *
 * Each returns `{ purchaseId, workflowId, action }`; a refusal throws `OperationRefused` with the reason.
 */
import { policyWorkflowId, purchaseWorkflowId } from '../../workflows/contracts';
import type { SaleRepository } from './sale-repository';
import type { LedgerRepository } from './ledger-repository';
import type { PurchaseWorkflows } from './workflow-client';

/** An operator action the purchase's state does not allow; the message says why. */
export class OperationRefused extends Error {
  override name = 'OperationRefused';
}

export interface OperationResult {
  purchaseId: number;
  workflowId: string;
  action: 'started' | 'running';
}

export function createPurchaseOperations(deps: {
  sales: Pick<SaleRepository, 'findById'>;
  ledger: Pick<LedgerRepository, 'cancellations'>;
  workflows: Pick<PurchaseWorkflows, 'resumePurchase' | 'reissueCertificates' | 'retryFailedCancellations'>;
}) {
  async function load(purchaseId: number) {
    const purchase = await deps.sales.findById(purchaseId);
    if (!purchase) throw new OperationRefused(`purchase ${purchaseId} not found`);
    if (purchase.status === 'refunded' || purchase.refundedAt)
      throw new OperationRefused(`purchase ${purchaseId} is refunded: its certificates are void`);
    if (purchase.status === 'cancelled')
      throw new OperationRefused(`purchase ${purchaseId} is cancelled: every covered unit's certificates are void`);
    return purchase;
  }
  return {
    async reissue(purchaseId: number): Promise<OperationResult> {
      const purchase = await load(purchaseId);
      if (!purchase.paidAt)
        throw new OperationRefused(`purchase ${purchaseId} is not paid (status ${purchase.status}); use recover if the buyer paid`);
      const { action, workflowId } = await deps.workflows.reissueCertificates(purchase);
      return { purchaseId, workflowId, action };
    },

    /** Tries the purchase's unfinished cancellations again (refund refused, or stalled; their units are still held). */
    async retryCancellation(purchaseId: number): Promise<OperationResult & { cancellationIds: number[] }> {
      const purchase = await deps.sales.findById(purchaseId);
      if (!purchase) throw new OperationRefused(`purchase ${purchaseId} not found`);
      const unfinished = (await deps.ledger.cancellations(purchaseId)).filter((c) => c.status !== 'completed');
      if (unfinished.length === 0) throw new OperationRefused(`purchase ${purchaseId} has no unfinished cancellation`);
      const cancellationIds = await deps.workflows.retryFailedCancellations(purchase);
      return { purchaseId, workflowId: policyWorkflowId(purchaseId), action: 'started', cancellationIds };
    },

    async recover(purchaseId: number): Promise<OperationResult> {
      const purchase = await load(purchaseId);
      if (purchase.certificatesIssuedAt)
        throw new OperationRefused(`purchase ${purchaseId} already has its certificates; use reissue to check and repair them`);
      const event = purchase.paidAt
        ? { eventId: `ops-recover-${purchaseId}`, outcome: 'paid' as const, paymentIntentId: purchase.paymentIntentId }
        : undefined;
      const action = await deps.workflows.resumePurchase({ purchase, ...(event ? { event } : {}) });
      if (action === 'running')
        throw new OperationRefused(
          `purchase ${purchaseId} has an open run (${purchaseWorkflowId(purchaseId)}): it is still working; see it in the Temporal UI`,
        );
      return { purchaseId, workflowId: purchaseWorkflowId(purchaseId), action };
    },
  };
}

export type PurchaseOperations = ReturnType<typeof createPurchaseOperations>;
