/**
 * The purchase behind a getInvoiceData call (spec §4.5; tables `purchases`, `buyers`). Returns
 * plain objects.
 *
 * The caller's scope is part of the query, not a check after it: a purchase of another root
 * account, of another teammate (teammate scope), of the other mode than the key's, or of another
 * buyer than the one named is simply not found, exactly like an unknown one. A payment intent
 * belongs to one purchase at the processor; should two rows in scope carry it, the newest wins.
 */
import type { Db } from '../db/knex';
import type { PayprocMode } from '../payproc/client';
import type { AccountScope } from '../certificates/account-scope';

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

/** How the caller names the purchase: the checkout's payment intent or the purchase id. */
export type PurchaseRef = { paymentIntent: string } | { purchaseId: number };

export interface PurchaseFilter {
  scope: AccountScope;
  mode: PayprocMode;
  /** The buyer's idp_accnt_uuid; when given, only that buyer's purchase matches. */
  buyerIdpUuid?: string;
}

export function createInvoicesRepository(db: Db) {
  return {
    /** The purchase `ref` names within `filter`, or null (unknown and out of scope alike). */
    async findPurchase(ref: PurchaseRef, filter: PurchaseFilter): Promise<InvoicedPurchase | null> {
      const q = db('purchases as p')
        .join('buyers as b', 'b.id', 'p.buyer_id')
        .where({ 'p.root_account_id': filter.scope.rootAccountId, 'p.mode': filter.mode });
      if ('paymentIntent' in ref) q.where('p.payment_intent_id', ref.paymentIntent);
      else q.where('p.id', ref.purchaseId);
      if (filter.scope.agentId !== null) q.where('p.agent_id', filter.scope.agentId);
      if (filter.buyerIdpUuid !== undefined) q.where('b.idp_accnt_uuid', filter.buyerIdpUuid.toLowerCase());
      const r = await q.orderBy('p.id', 'desc').first('p.id', 'p.mode', 'p.status', 'p.checkout_session_id', 'p.payment_intent_id', 'p.paid_at', 'p.payproc_invoice_id');
      if (!r) return null;
      return {
        purchaseId: r.id,
        mode: r.mode,
        status: r.status,
        checkoutSessionId: r.checkout_session_id ?? null,
        paymentIntentId: r.payment_intent_id ?? null,
        paidAt: r.paid_at ?? null,
        invoiceId: r.payproc_invoice_id ?? null,
      };
    },
  };
}

export type InvoicesRepository = ReturnType<typeof createInvoicesRepository>;
