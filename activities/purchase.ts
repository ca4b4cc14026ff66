/**
 * Activities of the purchase workflow (all I/O): create the processor checkout session, ask the
 * processor about it, expire it, and record what happened on the purchase row.
 *
 * Built by `createPurchaseActivities({ db, payproc, publicBaseUrl })` over injected clients
 * (STYLE practice 2). Amounts are integer minor units. Processor calls carry idempotency keys
 * built from the purchase id, so a retried activity never makes a second session. Declines and
 * invalid requests become non-retryable failures; network and rate-limit errors retry.
 */
import { ApplicationFailure } from '@temporalio/common';
import type Stripe from 'stripe';
import type { Db } from '../src/db/knex';
import type { Payproc } from '../src/payproc/client';
import { ensureBuyerCustomer } from '../src/payproc/customers';
import { idOf } from '../src/payproc/ids';
import { RECURRING_INTERVAL } from '../src/payproc/catalog';
import { createPaymentsRepository } from '../src/payments/repository';
import type { CheckoutSession, PurchaseStatus, RefundInput } from '../workflows/contracts';

export interface PurchaseActivityDeps {
  db: Db;
  payproc: Payproc;
  /** Where the buyer lands when the account has no success/cancel URL configured. */
  publicBaseUrl: string;
}

/** The session as the processor now sees it. */
export type SessionState = { state: 'open' } | { state: 'paid'; paymentIntentId: string | null } | { state: 'expired' };

/** Turns processor errors into retryable or non-retryable activity failures. */
function processorFailure(err: unknown): never {
  const type = (err as { type?: string }).type;
  const message = err instanceof Error ? err.message : String(err);
  if (type === 'StripeCardError' || type === 'StripeInvalidRequestError' || type === 'StripeAuthenticationError' || type === 'StripePermissionError') {
    throw ApplicationFailure.nonRetryable(message, type);
  }
  throw err;
}

function sessionState(s: Stripe.Checkout.Session): SessionState {
  if (s.status === 'complete' && (s.payment_status === 'paid' || s.payment_status === 'no_payment_required')) {
    return { state: 'paid', paymentIntentId: idOf(s.payment_intent) };
  }
  if (s.status === 'expired') return { state: 'expired' };
  return { state: 'open' };
}

export function createPurchaseActivities(deps: PurchaseActivityDeps) {
  const { db, payproc } = deps;
  const customers = createPaymentsRepository(db);

  async function loadPurchase(purchaseId: number) {
    const purchase = await db('purchases as p').join('root_accounts as a', 'a.id', 'p.root_account_id').where('p.id', purchaseId).first('p.*', 'a.checkout_success_url', 'a.checkout_cancel_url');
    if (!purchase) throw ApplicationFailure.nonRetryable(`purchase ${purchaseId} does not exist`, 'PurchaseNotFound');
    return purchase;
  }

  return {
    /**
     * Creates (or, on retry, returns the same) checkout session for the purchase: one line per
     * product line at its priced amount, plus the platform fee as its own line; metadata carries
     * the purchase id on the session, its payment intent and the invoice the processor creates
     * once the session is paid (invoice creation on). Stores the session on the purchase.
     */
    async createCheckoutSession(input: { purchaseId: number; sessionTtlSeconds: number }): Promise<CheckoutSession> {
      const purchase = await loadPurchase(input.purchaseId);
      if (purchase.checkout_session_id) {
        return {
          id: purchase.checkout_session_id,
          url: purchase.checkout_url,
          payment_intent: purchase.payment_intent_id,
          amount_total: Number(purchase.total_minor),
          currency: purchase.currency,
          expires_at: new Date(purchase.checkout_expires_at).toISOString(),
        };
      }
      const items = await db('purchase_items as i').join('product_lines as pl', 'pl.id', 'i.product_line_id').where('i.purchase_id', input.purchaseId).orderBy('i.position').select('i.*', 'pl.customer_name', 'pl.payproc_product_id');
      const currency = purchase.currency as string;
      // A subscription bills every line (and the fee) monthly; see docs/decisions.md.
      const subscription = purchase.billing === 'subscription';
      const recurring = subscription ? { recurring: { interval: RECURRING_INTERVAL } } : {};
      const lineItems: Stripe.Checkout.SessionCreateParams.LineItem[] = items.map((i) => ({
        quantity: 1,
        price_data: {
          ...recurring,
          currency,
          unit_amount: Number(i.amount_minor),
          ...(i.payproc_product_id ? { product: i.payproc_product_id as string } : { product_data: { name: i.customer_name as string } }),
        },
      }));
      if (Number(purchase.platform_fee_minor) > 0) {
        lineItems.push({ quantity: 1, price_data: { ...recurring, currency, unit_amount: Number(purchase.platform_fee_minor), product_data: { name: 'Platform fee' } } });
      }
      // The processor accepts 30 min to 24 h; the workflow enforces the configured deadline itself.
      const expiresAt = Math.floor(Date.now() / 1000) + Math.min(86_400, Math.max(1_800, input.sessionTtlSeconds));
      const base = deps.publicBaseUrl.replace(/\/$/, '');
      const metadata = { purchase_id: String(purchase.id) };
      const stripe = payproc.client(purchase.mode);
      let session: Stripe.Checkout.Session;
      try {
        // Saving the card needs the buyer as a processor customer (the saved-card option charges it).
        const buyer = purchase.save_payment_method
          ? await db('buyers').where({ id: purchase.buyer_id }).first('id', 'email', 'first_name', 'last_name', 'idp_accnt_uuid')
          : null;
        const customer = buyer
          ? await ensureBuyerCustomer(customers, stripe, { buyerId: buyer.id, email: buyer.email, firstName: buyer.first_name, lastName: buyer.last_name, idpAccntUuid: buyer.idp_accnt_uuid }, purchase.mode)
          : null;
        const modeParams: Partial<Stripe.Checkout.SessionCreateParams> = subscription
          ? // The subscription (and through it each period's invoice) carries the purchase id.
            { mode: 'subscription', subscription_data: { metadata } }
          : {
              mode: 'payment',
              payment_intent_data: customer ? { metadata, setup_future_usage: 'off_session' } : { metadata },
              // A paid one-time session then carries an invoice (getInvoiceData, spec §4.5).
              invoice_creation: { enabled: true, invoice_data: { metadata } },
            };
        session = await stripe.checkout.sessions.create(
          {
            ...modeParams,
            line_items: lineItems,
            client_reference_id: `purchase-${purchase.id}`,
            ...(customer ? { customer } : { customer_email: purchase.buyer_email ?? undefined }),
            metadata,
            expires_at: expiresAt,
            success_url: purchase.checkout_success_url ?? `${base}/checkout/success?purchase=${purchase.id}`,
            cancel_url: purchase.checkout_cancel_url ?? `${base}/checkout/cancel?purchase=${purchase.id}`,
          },
          { idempotencyKey: `purchase-${purchase.id}-checkout` },
        );
      } catch (err) {
        processorFailure(err);
      }
      const paymentIntent = idOf(session.payment_intent);
      const deadline = new Date(Date.now() + input.sessionTtlSeconds * 1000);
      await db('purchases')
        .where({ id: purchase.id })
        .update({ checkout_session_id: session.id, checkout_url: session.url, checkout_expires_at: deadline, payment_intent_id: paymentIntent, status: 'awaiting_payment', updated_at: db.fn.now() });
      return {
        id: session.id,
        url: session.url ?? '',
        payment_intent: paymentIntent,
        amount_total: Number(purchase.total_minor),
        currency,
        expires_at: deadline.toISOString(),
        subscription_invoice: subscription ? idOf(session.invoice) : null,
      };
    },

    /** Asks the processor whether the purchase's session is open, paid or expired. */
    async getCheckoutState(input: { purchaseId: number }): Promise<SessionState> {
      const purchase = await loadPurchase(input.purchaseId);
      try {
        return sessionState(await payproc.client(purchase.mode).checkout.sessions.retrieve(purchase.checkout_session_id));
      } catch (err) {
        processorFailure(err);
      }
    },

    /** Expires the session at the processor so it can no longer be paid; reports the final state. */
    async expireCheckoutSession(input: { purchaseId: number }): Promise<SessionState> {
      const purchase = await loadPurchase(input.purchaseId);
      const stripe = payproc.client(purchase.mode);
      try {
        const s = await stripe.checkout.sessions.expire(purchase.checkout_session_id, {}, { idempotencyKey: `purchase-${purchase.id}-expire` });
        return sessionState(s).state === 'paid' ? sessionState(s) : { state: 'expired' };
      } catch (err) {
        // Already completed or expired: the processor refuses to expire it; read what it is.
        if ((err as { type?: string }).type === 'StripeInvalidRequestError') {
          return sessionState(await stripe.checkout.sessions.retrieve(purchase.checkout_session_id));
        }
        processorFailure(err);
      }
    },

    /** Records the payment once; a repeated call changes nothing. */
    async recordPayment(input: { purchaseId: number; paymentIntentId: string | null }): Promise<void> {
      await db('purchases')
        .where({ id: input.purchaseId })
        .whereNull('paid_at')
        .update({ status: 'paid', paid_at: db.fn.now(), payment_intent_id: db.raw('coalesce(?, payment_intent_id)', [input.paymentIntentId]), updated_at: db.fn.now() });
    },

    /**
     * Records a refund: the refunded amount only grows (events may arrive out of order), and a
     * full refund marks the purchase `refunded` once. Returns the purchase's refund state.
     */
    async recordRefund(input: RefundInput): Promise<{ refundedMinor: number; refunded: boolean }> {
      const [row] = await db('purchases')
        .where({ id: input.purchaseId })
        .update({
          refunded_minor: db.raw('greatest(refunded_minor, ?)', [input.amountRefundedMinor]),
          ...(input.fullyRefunded ? { status: 'refunded', refunded_at: db.raw('coalesce(refunded_at, now())') } : {}),
          updated_at: db.fn.now(),
        })
        .returning(['refunded_minor', 'status']);
      if (!row) throw ApplicationFailure.nonRetryable(`purchase ${input.purchaseId} does not exist`, 'PurchaseNotFound');
      return { refundedMinor: Number(row.refunded_minor), refunded: row.status === 'refunded' };
    },

    /** Sets the purchase status (what lists and the API read; the workflow is the source). */
    async setPurchaseStatus(input: { purchaseId: number; status: PurchaseStatus }): Promise<void> {
      // A refunded purchase stays refunded, whatever step of issuance finishes after the refund.
      await db('purchases').where({ id: input.purchaseId }).whereNot('status', 'refunded').update({ status: input.status, updated_at: db.fn.now() });
    },
  };
}

export type PurchaseActivities = ReturnType<typeof createPurchaseActivities>;
