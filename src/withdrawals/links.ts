/**
 * When a purchase offers its buyer the online withdrawal link, and the link itself: used by the
 * checkout return page (API) and the proof-of-coverage email (worker), so both offer it alike.
 *
 * Offered when the purchase is paid (paid, certificates being issued, or issued; not once refunded
 * in full) and every item's cancellation terms, as bought, allow it (`buyerWithdrawal`, default
 * true): a purchase is one contract, withdrawn from as a whole, so one product that does not allow
 * it (a cover exempt from the right of withdrawal) leaves the purchase to the agency.
 */
import type { PurchaseItemDetail, PurchaseRecord } from '../purchases/purchase-record';
import type { SaleRepository } from '../purchases/sale-repository';
import { withdrawalUrl } from './token';
import { isInForce } from '../purchases/rules';

/** Whether the terms every item was bought with let the buyer withdraw online (false without items). */
export function withdrawalOffered(items: Pick<PurchaseItemDetail, 'cancellationTerms'>[]): boolean {
  return items.length > 0 && items.every((i) => i.cancellationTerms.buyerWithdrawal);
}

export function createWithdrawalLinks(deps: {
  sales: Pick<SaleRepository, 'itemDetails'>;
  /** WITHDRAWAL_LINK_KEY. */
  key: string;
  publicBaseUrl: string;
}) {
  return {
    /**
     * The purchase's withdrawal page URL (`<PUBLIC_BASE_URL>/withdraw/<signed token>`) when it
     * offers one now, else null (not paid, refunded, or an item's terms do not allow it).
     */
    async urlFor(p: Pick<PurchaseRecord, 'id' | 'status'>): Promise<string | null> {
      if (!isInForce(p.status)) return null; // a withdrawal is offered only while the policy is in force
      return withdrawalOffered(await deps.sales.itemDetails(p.id)) ? withdrawalUrl(deps.publicBaseUrl, deps.key, p.id) : null;
    },
  };
}

export type WithdrawalLinks = ReturnType<typeof createWithdrawalLinks>;
