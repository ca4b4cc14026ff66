/**
 * The purchase behind a getInvoiceData call (spec §4.5; tables `purchases`, `buyers`). Returns
 * plain objects.
 *
 * The caller's scope is part of the query, not a check after it: a purchase of another root
 * account, of another teammate (teammate scope), of the other mode than the key's, or of another
 * buyer than the one named is simply not found, exactly like an unknown one. A payment intent
 * may be held by several of the caller's purchases (the processor's test mode gives every
 * checkout the same one): the lookup returns them all (up to a limit) for the service to refuse.
 */
import type { Db } from '../db/knex';
import type { PayprocMode } from '../payproc/client';
import type { PurchaseHandle } from '../certificates/purchase-handles';
import type { AccountScope } from '../accounts/scope';

/** What getInvoiceData needs of a purchase to find its invoice at the processor. */
export interface InvoicedPurchase {
  purchaseId: number;
  mode: PayprocMode;
  status: string;
  checkoutSessionId: string | null;
  paymentIntentId: string | null;
  paidAt: Date | null;
  /** The invoice the purchase was paid by, when recorded (subscription renewals). */
  invoiceId: string | null;
}

export interface PurchaseFilter {
  scope: AccountScope;
  mode: PayprocMode;
  /** The buyer's idp_accnt_uuid; when given, only that buyer's purchase matches. */
  buyerIdpUuid?: string;
}

export function createInvoicesRepository(db: Db) {
  return {
    /** The purchases `ref` names within `filter`, newest first, at most `limit` (none: unknown and out of scope alike). */
    async findPurchases(
      ref: PurchaseHandle,
      filter: PurchaseFilter,
      limit: number,
    ): Promise<Array<InvoicedPurchase & { createdAt: Date }>> {
      const q = db('purchases as p')
        .join('buyers as b', 'b.id', 'p.buyer_id')
        .where({ 'p.root_account_id': filter.scope.rootAccountId, 'p.mode': filter.mode });
      if ('paymentIntent' in ref) q.where('p.payment_intent_id', ref.paymentIntent);
      else if ('checkoutSessionId' in ref) q.where('p.checkout_session_id', ref.checkoutSessionId);
      else q.where('p.id', ref.purchaseId);
      if (filter.scope.agentId !== null) q.where('p.agent_id', filter.scope.agentId);
      if (filter.buyerIdpUuid !== undefined) q.where('b.idp_accnt_uuid', filter.buyerIdpUuid.toLowerCase());
      const rows = await q
        .orderBy('p.id', 'desc')
        .limit(limit)
        .select(
          'p.id',
          'p.mode',
          'p.status',
          'p.checkout_session_id',
          'p.payment_intent_id',
          'p.paid_at',
          'p.payproc_invoice_id',
          'p.created_at',
        );
      return rows.map((r) => ({
        purchaseId: r.id,
        mode: r.mode,
        status: r.status,
        checkoutSessionId: r.checkout_session_id ?? null,
        paymentIntentId: r.payment_intent_id ?? null,
        paidAt: r.paid_at ?? null,
        invoiceId: r.payproc_invoice_id ?? null,
        createdAt: r.created_at,
      }));
    },
  };
}

export type InvoicesRepository = ReturnType<typeof createInvoicesRepository>;
