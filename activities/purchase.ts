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
import { Context, log } from '@temporalio/activity';
import type Stripe from 'stripe';
import type { Db } from '../src/db/knex';
import type { EventEmitter } from '../src/events/emitter';
import type { WorkerMetrics } from '../src/metrics/registry';
import type { Payproc } from '../src/payproc/client';
import { customerBuyerOf, ensureBuyerCustomer } from '../src/payproc/customers';
import { isProcessorFailure } from '../src/payproc/error-counting';
import { idOf } from '../src/payproc/ids';
import { RECURRING_INTERVAL } from '../src/payproc/catalog';
import { createBuyersRepository } from '../src/buyers/repository';
import { createPaymentsRepository } from '../src/payments/repository';
import type { PurchaseRecord } from '../src/purchases/purchase-record';
import { createSaleRepository } from '../src/purchases/sale-repository';
import { checkoutReturnUrls } from '../src/purchases/return-urls';
import { createSavedCardCharges } from '../src/payments/saved-card';
import { createBuyerEmailAfterPayment } from '../src/proof-of-coverage/after-payment';
import { createProofOfCoverageEmailsRepository } from '../src/proof-of-coverage/repository';
import { PROCESSOR_TAX_LINE } from '../src/taxes/premium-tax';
import type { CheckoutSession, PurchaseStatus, RefundInput, SavedCardChargeResult } from '../workflows/contracts';

export interface PurchaseActivityDeps {
  db: Db;
  payproc: Payproc;
  /** Where the buyer lands when the account has no success/cancel URL configured. */
  publicBaseUrl: string;
  /** Publishes the agency event of each change (checkout created, paid, expired, failed, refunded, certificates issued). */
  events: Pick<EventEmitter, 'purchaseStatus' | 'refunded' | 'certificatesIssued'>;
  /** Counts processor errors by activity (optional in unit tests). */
  metrics?: Pick<WorkerMetrics, 'dependencyErrors'>;
  /**
   * Starts the sending of the buyer's proof-of-coverage email after payment (`proof-email-<id>`): the
   * workflow client's method, taken by its shape so that activities do not import the client.
   */
  purchaseWorkflows: { startProofOfCoverageEmail(emailIds: number[]): Promise<void> };
}

/** The session as the processor now sees it. */
export type SessionState = { state: 'open' } | { state: 'paid'; paymentIntentId: string | null } | { state: 'expired' };

/**
 * Turns processor errors into retryable or non-retryable activity failures, first counting a
 * failure of the processor itself (unreachable, timeout, 5xx: `isProcessorFailure`; a decline or
 * an invalid request is its answer) under the activity that met it (`count`, from the
 * activities' metrics).
 */
export function processorFailure(err: unknown, count: (operation: string) => void): never {
  let operation = 'unknown';
  try {
    operation = Context.current().info.activityType;
  } catch {
    // outside an activity (unit tests)
  }
  if (isProcessorFailure(err)) count(operation);
  const type = (err as { type?: string }).type;
  const message = err instanceof Error ? err.message : String(err);
  if (
    type === 'StripeCardError' ||
    type === 'StripeInvalidRequestError' ||
    type === 'StripeAuthenticationError' ||
    type === 'StripePermissionError'
  ) {
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

/**
 * The checkout session stored on a purchase (`sessionId`, its URL, payment intent, total in
 * minor units and expiry, ISO 8601 UTC) as the workflows see it; `expiryUnknown` stands for an
 * expiry that was not stored.
 */
function storedCheckoutSession(
  purchase: Pick<PurchaseRecord, 'checkoutUrl' | 'paymentIntentId' | 'totalMinor' | 'currency' | 'checkoutExpiresAt'>,
  sessionId: string,
  expiryUnknown: Date,
): CheckoutSession {
  return {
    id: sessionId,
    url: purchase.checkoutUrl ?? '',
    payment_intent: purchase.paymentIntentId,
    amount_total: purchase.totalMinor,
    currency: purchase.currency,
    expires_at: (purchase.checkoutExpiresAt ?? expiryUnknown).toISOString(),
  };
}

export function createPurchaseActivities(deps: PurchaseActivityDeps) {
  const { db, payproc } = deps;
  const customers = createPaymentsRepository(db);
  const sales = createSaleRepository(db);
  const buyers = createBuyersRepository(db);
  const savedCards = createSavedCardCharges({ buyers, repo: customers, sales, payproc });
  const buyerEmail = createBuyerEmailAfterPayment({
    emails: createProofOfCoverageEmailsRepository(db),
    startSending: (ids) => deps.purchaseWorkflows.startProofOfCoverageEmail(ids),
  });
  const errors = deps.metrics?.dependencyErrors;
  const processorError: (err: unknown, mode: 'live' | 'test') => never = (err, mode) =>
    processorFailure(err, (operation) => errors?.inc({ dependency: 'processor', mode, operation }));

  /**
   * Moves the purchase to `status` under the status rules; `reason` goes with `failed`. A move the
   * rules refuse changes nothing. Publishes the status event whenever the purchase is in that
   * status now (a retry after a crash announces it again, with the same event id). Returns the
   * status afterwards (null: no such purchase).
   */
  async function transition(input: { purchaseId: number; status: PurchaseStatus; reason?: string }): Promise<PurchaseStatus | null> {
    const result = await sales.transition(input.purchaseId, input.status, input.reason);
    if (input.status === 'failed' && result?.changed)
      log.warn('purchase failed', { purchaseId: input.purchaseId, reason: input.reason ?? null });
    if (result?.status === input.status) await deps.events.purchaseStatus(input.purchaseId);
    return result?.status ?? null;
  }

  async function loadPurchase(purchaseId: number): Promise<PurchaseRecord & { checkoutSessionId: string }> {
    const purchase = await sales.findById(purchaseId);
    if (!purchase) throw ApplicationFailure.nonRetryable(`purchase ${purchaseId} does not exist`, 'PurchaseNotFound');
    if (!purchase.checkoutSessionId)
      throw ApplicationFailure.nonRetryable(`purchase ${purchaseId} has no checkout session`, 'NoCheckoutSession');
    return purchase as PurchaseRecord & { checkoutSessionId: string };
  }

  return {
    /**
     * Creates (or, on retry, returns the same) checkout session for the purchase: one line per
     * product line at its priced amount, plus the platform fee as its own line and each premium
     * tax (per tax and jurisdiction, over the items) as its own line, its product's metadata
     * `line: premium_tax` (what the monthly reconciliation adds up as tax); metadata carries
     * the purchase id on the session, its payment intent and the invoice the processor creates
     * once the session is paid (invoice creation on). Stores the session on the purchase.
     */
    async createCheckoutSession(input: { purchaseId: number; sessionTtlSeconds: number }): Promise<CheckoutSession> {
      const context = await sales.checkoutContext(input.purchaseId);
      if (!context) throw ApplicationFailure.nonRetryable(`purchase ${input.purchaseId} does not exist`, 'PurchaseNotFound');
      const { purchase, lines } = context;
      if (purchase.checkoutSessionId) return storedCheckoutSession(purchase, purchase.checkoutSessionId, new Date());
      const currency = purchase.currency;
      // A subscription bills every line (and the fee) monthly; see docs/decisions.md.
      const subscription = purchase.billing === 'subscription';
      const recurring = subscription ? { recurring: { interval: RECURRING_INTERVAL } } : {};
      const lineItems: Stripe.Checkout.SessionCreateParams.LineItem[] = lines.map((l) => ({
        quantity: 1,
        price_data: {
          ...recurring,
          currency,
          unit_amount: l.amountMinor,
          ...(l.payprocProductId ? { product: l.payprocProductId } : { product_data: { name: l.name } }),
        },
      }));
      if (purchase.platformFeeMinor > 0) {
        lineItems.push({
          quantity: 1,
          price_data: { ...recurring, currency, unit_amount: purchase.platformFeeMinor, product_data: { name: 'Platform fee' } },
        });
      }
      // Premium tax as its own lines, one per tax and jurisdiction (summed over the items), after the fee.
      const taxes = new Map<string, number>();
      for (const t of lines.flatMap((l) => l.taxLines)) {
        const name = `${t.label} (${t.jurisdiction})`;
        taxes.set(name, (taxes.get(name) ?? 0) + t.amountMinor);
      }
      for (const [name, amount] of taxes)
        if (amount > 0)
          lineItems.push({
            quantity: 1,
            price_data: { ...recurring, currency, unit_amount: amount, product_data: { name, metadata: { line: PROCESSOR_TAX_LINE } } },
          });
      // The processor accepts 30 min to 24 h; the workflow enforces the configured deadline itself.
      const expiresAt = Math.floor(Date.now() / 1000) + Math.min(86_400, Math.max(1_800, input.sessionTtlSeconds));
      const returnUrls = checkoutReturnUrls({
        publicBaseUrl: deps.publicBaseUrl,
        purchaseId: purchase.id,
        returnToken: purchase.returnToken ?? '',
        configured: { successUrl: context.successUrl, cancelUrl: context.cancelUrl },
      });
      const metadata = { purchase_id: String(purchase.id) };
      const stripe = payproc.client(purchase.mode);
      let session: Stripe.Checkout.Session;
      try {
        // Saving the card needs the buyer as a processor customer (the saved-card option charges it).
        const buyer = purchase.savePaymentMethod ? await buyers.findById(purchase.buyerId) : null;
        const customer = buyer ? await ensureBuyerCustomer(customers, stripe, customerBuyerOf(buyer), purchase.mode) : null;
        const modeParams: Partial<Stripe.Checkout.SessionCreateParams> = subscription
          ? // The subscription (and through it each period's invoice) carries the purchase id.
            { mode: 'subscription', subscription_data: { metadata } }
          : {
              mode: 'payment',
              payment_intent_data: customer ? { metadata, setup_future_usage: 'off_session' } : { metadata },
              // A paid one-time session then carries an invoice (getInvoiceData).
              invoice_creation: { enabled: true, invoice_data: { metadata } },
            };
        session = await stripe.checkout.sessions.create(
          {
            ...modeParams,
            line_items: lineItems,
            client_reference_id: `purchase-${purchase.id}`,
            ...(customer ? { customer } : { customer_email: purchase.buyerEmail ?? undefined }),
            metadata,
            expires_at: expiresAt,
            success_url: returnUrls.successUrl,
            cancel_url: returnUrls.cancelUrl,
          },
          { idempotencyKey: `purchase-${purchase.id}-checkout` },
        );
      } catch (err) {
        processorError(err, purchase.mode);
      }
      const paymentIntent = idOf(session.payment_intent);
      const deadline = new Date(Date.now() + input.sessionTtlSeconds * 1000);
      await sales.recordCheckoutSession(purchase.id, {
        sessionId: session.id,
        url: session.url,
        expiresAt: deadline,
        paymentIntentId: paymentIntent,
      });
      // In the same step, so the agent's next read after checkout already says so.
      await sales.transition(purchase.id, 'awaiting_payment');
      return {
        id: session.id,
        url: session.url ?? '',
        payment_intent: paymentIntent,
        amount_total: purchase.totalMinor,
        currency,
        expires_at: deadline.toISOString(),
        subscription_invoice: subscription ? idOf(session.invoice) : null,
      };
    },

    /**
     * The checkout session already stored on the purchase (no processor call), for a run that
     * resumes a purchase whose earlier run closed; null when it never got one.
     */
    async loadCheckoutSession(input: { purchaseId: number }): Promise<CheckoutSession | null> {
      const purchase = await sales.findById(input.purchaseId);
      if (!purchase) throw ApplicationFailure.nonRetryable(`purchase ${input.purchaseId} does not exist`, 'PurchaseNotFound');
      if (!purchase.checkoutSessionId) return null;
      return storedCheckoutSession(purchase, purchase.checkoutSessionId, new Date(0));
    },

    /** Asks the processor whether the purchase's session is open, paid or expired. */
    async getCheckoutState(input: { purchaseId: number }): Promise<SessionState> {
      const purchase = await loadPurchase(input.purchaseId);
      try {
        return sessionState(await payproc.client(purchase.mode).checkout.sessions.retrieve(purchase.checkoutSessionId));
      } catch (err) {
        processorError(err, purchase.mode);
      }
    },

    /** Expires the session at the processor so it can no longer be paid; reports the final state. */
    async expireCheckoutSession(input: { purchaseId: number }): Promise<SessionState> {
      const purchase = await loadPurchase(input.purchaseId);
      const stripe = payproc.client(purchase.mode);
      try {
        const s = await stripe.checkout.sessions.expire(
          purchase.checkoutSessionId,
          {},
          { idempotencyKey: `purchase-${purchase.id}-expire` },
        );
        return sessionState(s).state === 'paid' ? sessionState(s) : { state: 'expired' };
      } catch (err) {
        // Already completed or expired: the processor refuses to expire it; read what it is.
        if ((err as { type?: string }).type === 'StripeInvalidRequestError') {
          return sessionState(await stripe.checkout.sessions.retrieve(purchase.checkoutSessionId));
        }
        processorError(err, purchase.mode);
      }
    },

    /**
     * Records the payment once (`paid_at`, the payment intent, and for a subscription checkout the
     * processor subscription); a repeated call changes nothing.
     */
    async recordPayment(input: {
      purchaseId: number;
      paymentIntentId: string | null;
      subscriptionId?: string;
      status?: 'paid';
    }): Promise<void> {
      await sales.recordPayment(input.purchaseId, input.paymentIntentId);
      if (input.subscriptionId) await sales.recordSubscription(input.purchaseId, input.subscriptionId);
      // With `status`, also the move to paid (one step for the workflow instead of two).
      if (input.status) await transition({ purchaseId: input.purchaseId, status: input.status });
    },

    /**
     * Records a refund of one of the purchase's charges (the sale's, or an endorsement's by
     * `paymentIntentId`): the refunded amount only grows (events may arrive out of order), a full
     * refund of the sale's charge moves the purchase to `refunded` (final), and money no refund
     * of ours explains becomes a dashboard `refund` row (purchases repository, recordRefund).
     * Returns the purchase's refund state. Throws a non-retryable PurchaseNotFound when the
     * purchase does not exist.
     */
    async recordRefund(input: RefundInput): Promise<{ refundedMinor: number; refunded: boolean }> {
      const result = await sales.recordRefund(
        input.purchaseId,
        input.amountRefundedMinor,
        input.fullyRefunded,
        new Date(),
        input.paymentIntentId,
      );
      if (!result) throw ApplicationFailure.nonRetryable(`purchase ${input.purchaseId} does not exist`, 'PurchaseNotFound');
      await deps.events.refunded(input.purchaseId);
      return result;
    },

    /**
     * Moves the purchase to `status` under the status rules (what lists and the API read; the
     * workflow is the source); `reason` goes with `failed`. A move the rules refuse (a late step
     * after a refund, say) changes nothing. Returns the status the purchase has afterwards.
     */
    async setPurchaseStatus(input: { purchaseId: number; status: PurchaseStatus; reason?: string }): Promise<PurchaseStatus | null> {
      return transition(input);
    },

    /**
     * Charges the purchase to a payment method saved on the buyer's processor customer, at most
     * once (`src/payments/saved-card.ts`). Definitive outcomes come back as data; an unknown
     * outcome (processor unreachable, 5xx) throws and the retry settles the same attempt.
     */
    async chargeSavedCard(input: { purchaseId: number; paymentMethodId: string }): Promise<SavedCardChargeResult> {
      return savedCards.charge(input.purchaseId, input.paymentMethodId);
    },

    /**
     * Marks the purchase's certificates issued (getCertificates lists them from now on) and its
     * status `issued`, then emails the buyer the proof of coverage unless the account turned that
     * off (once per purchase: src/proof-of-coverage/after-payment.ts).
     */
    async markCertificatesIssued(input: { purchaseId: number }): Promise<void> {
      await sales.recordCertificatesIssued(input.purchaseId);
      await deps.events.certificatesIssued(input.purchaseId);
      await buyerEmail.send(input.purchaseId);
    },
  };
}

export type PurchaseActivities = ReturnType<typeof createPurchaseActivities>;
