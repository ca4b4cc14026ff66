/**
 * Persistence behind the payment options (tables `checkout_link_emails`, `buyer_payproc_customers`,
 * `purchase_direct_charges`; migration 20261122000700). Returns plain objects; amounts are integer
 * minor units. The purchase itself is read through the purchases domain (`findByHandle`,
 * `itemDetails` of src/purchases/sale-repository: the purchase read model), not here.
 *
 * A direct charge row is inserted before the processor is called (`insertCharge`), so the
 * idempotency key and parameters of a charge whose response was lost are known on the retry.
 * The partial unique index `purchase_direct_charges_one_live` lets only one attempt per purchase
 * be anything but `failed`: `insertCharge` returns null when another is live (a concurrent call).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { dbErrorKind } from '../db/errors';
import type { PayprocMode } from '../payproc/client';

export type DirectChargeStatus = 'pending' | 'processing' | 'succeeded' | 'failed';

export interface DirectCharge {
  id: number;
  purchaseId: number;
  attempt: number;
  idempotencyKey: string;
  customerId: string;
  paymentMethodId: string;
  amountMinor: number;
  currency: string;
  paymentIntentId: string | null;
  status: DirectChargeStatus;
  failureKind: string | null;
  failureCode: string | null;
}

const toCharge = (r: Record<string, unknown>): DirectCharge => ({
  id: r.id as number,
  purchaseId: r.purchase_id as number,
  attempt: r.attempt as number,
  idempotencyKey: r.idempotency_key as string,
  customerId: r.payproc_customer_id as string,
  paymentMethodId: r.payment_method_id as string,
  amountMinor: Number(r.amount_minor),
  currency: r.currency as string,
  paymentIntentId: (r.payment_intent_id as string | null) ?? null,
  status: r.status as DirectChargeStatus,
  failureKind: (r.failure_kind as string | null) ?? null,
  failureCode: (r.failure_code as string | null) ?? null,
});

/** The outcome of `reserveCheckoutLinkEmail`: a new send to make, or the earlier one within the window. */
export type CheckoutLinkEmailReservation = { reserved: true; id: number; sentAt: Date } | { reserved: false; sentAt: Date };

export function createPaymentsRepository(db: Db) {
  return {
    /**
     * One at a time per purchase (a transaction-scoped advisory lock): when the same checkout
     * session was emailed to `recipient` less than `windowSeconds` ago, answers that send
     * (`reserved: false`); otherwise records a send now and answers its id (`reserved: true`),
     * to be released with `releaseCheckoutLinkEmail` if the email cannot go out. `windowSeconds`
     * 0 always reserves.
     */
    async reserveCheckoutLinkEmail(e: {
      purchaseId: number;
      checkoutSessionId: string;
      recipient: string;
      windowSeconds: number;
    }): Promise<CheckoutLinkEmailReservation> {
      return db.transaction(async (trx) => {
        await trx.raw("select pg_advisory_xact_lock(hashtext('checkout_link_emails'), ?)", [e.purchaseId]);
        if (e.windowSeconds > 0) {
          const earlier = await trx('checkout_link_emails')
            .where({ purchase_id: e.purchaseId, checkout_session_id: e.checkoutSessionId, recipient: e.recipient })
            .andWhere('sent_at', '>', trx.raw('now() - make_interval(secs => ?)', [e.windowSeconds]))
            .orderBy('sent_at', 'desc')
            .first('sent_at');
          if (earlier) return { reserved: false as const, sentAt: earlier.sent_at as Date };
        }
        const [row] = await trx('checkout_link_emails')
          .insert({ purchase_id: e.purchaseId, checkout_session_id: e.checkoutSessionId, recipient: e.recipient })
          .returning(['id', 'sent_at']);
        return { reserved: true as const, id: Number(row.id), sentAt: row.sent_at as Date };
      });
    },

    /** Forgets a reserved send whose email could not be sent, so the next call sends it. */
    async releaseCheckoutLinkEmail(id: number): Promise<void> {
      await db('checkout_link_emails').where({ id }).delete();
    },

    async findCustomer(buyerId: number, mode: PayprocMode): Promise<string | null> {
      const r = await db('buyer_payproc_customers').where({ buyer_id: buyerId, mode }).first('payproc_customer_id');
      return r?.payproc_customer_id ?? null;
    },

    /** Stores the buyer's customer unless one is stored already; returns the stored one. */
    async saveCustomer(buyerId: number, mode: PayprocMode, customerId: string): Promise<string> {
      await db('buyer_payproc_customers')
        .insert({ buyer_id: buyerId, mode, payproc_customer_id: customerId })
        .onConflict(['buyer_id', 'mode'])
        .ignore();
      const stored = await db('buyer_payproc_customers').where({ buyer_id: buyerId, mode }).first('payproc_customer_id');
      return stored.payproc_customer_id as string;
    },

    /** The purchase's attempt that is not `failed` (at most one), or null. */
    async liveCharge(purchaseId: number): Promise<DirectCharge | null> {
      const r = await db('purchase_direct_charges').where({ purchase_id: purchaseId }).whereNot('status', 'failed').first();
      return r ? toCharge(r) : null;
    },

    /** Every attempt of the purchase, oldest first. */
    async charges(purchaseId: number): Promise<DirectCharge[]> {
      const rows = await db('purchase_direct_charges').where({ purchase_id: purchaseId }).orderBy('attempt');
      return rows.map(toCharge);
    },

    /** Records a new `pending` attempt; null when another attempt is live or took this number. */
    async insertCharge(
      c: Omit<DirectCharge, 'id' | 'paymentIntentId' | 'status' | 'failureKind' | 'failureCode'>,
    ): Promise<DirectCharge | null> {
      try {
        const [row] = await db('purchase_direct_charges')
          .insert({
            purchase_id: c.purchaseId,
            attempt: c.attempt,
            idempotency_key: c.idempotencyKey,
            payproc_customer_id: c.customerId,
            payment_method_id: c.paymentMethodId,
            amount_minor: c.amountMinor,
            currency: c.currency,
          })
          .returning('*');
        return toCharge(row);
      } catch (err) {
        if (dbErrorKind(err) === 'unique') return null;
        throw err;
      }
    },

    /** Stores the payment intent the processor answered with, and its outcome. */
    async recordIntent(chargeId: number, paymentIntentId: string, status: 'pending' | 'processing' | 'succeeded'): Promise<void> {
      await db('purchase_direct_charges')
        .where({ id: chargeId })
        .update({ payment_intent_id: paymentIntentId, status, updated_at: db.fn.now() });
    },

    /** Marks the attempt definitively not charged, so a later call may try another card. */
    async markFailed(chargeId: number, f: { paymentIntentId: string | null; kind: string; code: string | null }): Promise<void> {
      await db('purchase_direct_charges')
        .where({ id: chargeId })
        .update({
          status: 'failed',
          payment_intent_id: db.raw('coalesce(?, payment_intent_id)', [f.paymentIntentId]),
          failure_kind: f.kind,
          failure_code: f.code?.slice(0, 64) ?? null,
          updated_at: db.fn.now(),
        });
    },

    /**
     * A buyer's erasure on purchases `purchaseIds`, in `trx`: their checkout link emails sent to any
     * of `emails` (compared case-insensitively) are recorded as sent to `placeholder` instead.
     */
    async eraseRecipient(trx: Knex.Transaction, purchaseIds: number[], emails: string[], placeholder: string): Promise<void> {
      await trx('checkout_link_emails')
        .whereIn('purchase_id', purchaseIds)
        .whereRaw(`lower(recipient) in (${emails.map(() => 'lower(?)').join(', ')})`, emails)
        .update({ recipient: placeholder });
    },
  };
}

export type PaymentsRepository = ReturnType<typeof createPaymentsRepository>;
