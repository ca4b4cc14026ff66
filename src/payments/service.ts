/**
 * Payment options (b) and (c) of spec §4.4 step 3; ARCHITECTURE §3 step 4. Option (a), the
 * redirect, is the session URL that adminValidateBuyerResponses already returns.
 *
 * - `emailCheckoutLink`: the purchase's checkout session (the same one: update-with-start
 *   attaches to the running purchase workflow) emailed to the buyer with the products, the
 *   amount (minor units shown as currency) and the expiry.
 * - `chargeSavedCard` (`processUserDirectPayprocPayment`): an off-session payment intent, created
 *   and confirmed with a payment method saved on the buyer's processor customer, for the
 *   purchase's priced total (minor units). Spec §7.2 forbids blind retries, so every attempt is
 *   recorded before the processor is called (idempotency key `purchase-<id>-direct-charge`,
 *   `…-direct-charge-<n>` for the n-th attempt after a definitive decline) and its payment
 *   intent id is stored as soon as it is known. A repeated call first settles the earlier
 *   attempt: it retrieves the stored payment intent, or — when the response was lost — re-sends
 *   the identical request with the same idempotency key, which the processor answers with the
 *   original result instead of charging again. Only a definitively failed attempt lets a new
 *   one start. On success the purchase workflow gets the `paid` signal, so certificates follow
 *   the normal path, and the now-pointless checkout session is expired.
 *
 * Both take the buyer's `idp_accnt_uuid` + `access_token` (spec §5.5) and a purchase of the
 * key's root account and that buyer (a test key sees only test purchases). Errors (bare body,
 * spec §7.2): ACCESS_TOKEN_INVALID/EXPIRED (401); NOT_FOUND (404) for any other purchase;
 * INVALID_REQUEST (400) when the purchase is not awaiting payment (paid, expired) or another
 * charge is in flight; CARD_ERROR (400) for a declined card (retry only with a different card;
 * the same card is refused for that purchase without calling the processor); the processor's
 * other failures per spec §7.1 (CONNECTION_ERROR 503, API_ERROR 500, …); INTERNAL_ERROR (500)
 * when the email could not be sent.
 */
import type Stripe from 'stripe';
import { ensureBuyerCustomer } from '../payproc/customers';
import { AppError, notFound } from '../http/errors';
import type { Logger } from '../logger';
import type { Principal } from '../api-keys/service';
import type { VerifiedBuyer } from '../buyers/service';
import type { Mailer } from '../mail/mailer';
import type { Payproc } from '../payproc/client';
import { isProcessorError, mapProcessorError, withProcessorErrors } from '../payproc/errors';
import type { PurchaseWorkflows } from '../purchases/workflow-client';
import type { DirectCharge, PayablePurchase, PaymentsRepository } from './repository';
import type { DirectPaymentRequest, DirectPaymentResponse, EmailCheckoutLinkRequest, EmailCheckoutLinkResponse } from './schemas';
import { checkoutLinkEmail } from './checkout-link-email';

/** A new saved-card charge needs at least this long before the purchase's payment deadline. */
const MIN_TIME_LEFT_MS = 60_000;

type Outcome = { ok: true; paymentIntentId: string; status: 'succeeded' | 'processing' } | { ok: false; error: AppError };

interface StripeErrorLike {
  type?: string;
  statusCode?: number;
  code?: string;
  decline_code?: string;
  payment_intent?: { id?: string };
}

export const directChargeKey = (purchaseId: number, attempt: number) =>
  attempt === 1 ? `purchase-${purchaseId}-direct-charge` : `purchase-${purchaseId}-direct-charge-${attempt}`;

export function createPaymentService(deps: {
  repo: PaymentsRepository;
  payproc: Payproc;
  verifyBuyer: (principal: Principal, idpAccntUuid: string, accessToken: string) => Promise<VerifiedBuyer>;
  workflows: Pick<PurchaseWorkflows, 'startCheckout' | 'signalPayment'>;
  mailer: Mailer;
  now?: () => Date;
}) {
  const { repo } = deps;
  const now = deps.now ?? (() => new Date());

  async function loadPurchase(principal: Principal, buyer: VerifiedBuyer, purchaseId: number): Promise<PayablePurchase> {
    const purchase = await repo.findPurchase(purchaseId, principal.rootAccountId, buyer.buyerId);
    if (!purchase || (principal.mode === 'test' && purchase.mode !== 'test')) throw notFound('purchase', purchaseId);
    return purchase;
  }

  /** Throws INVALID_REQUEST unless the purchase can still be paid for `marginMs` more. */
  function assertPayable(p: PayablePurchase, marginMs: number): void {
    if (p.paidAt || p.status === 'paid' || p.status === 'awaiting_certificates' || p.status === 'issued') {
      throw new AppError('INVALID_REQUEST', `Purchase ${p.id} is already paid`);
    }
    if (p.status === 'expired' || (p.checkoutExpiresAt && p.checkoutExpiresAt.getTime() - marginMs <= now().getTime())) {
      throw new AppError('INVALID_REQUEST', `Purchase ${p.id} has expired and can no longer be paid; quote again with adminValidateBuyerResponses`);
    }
    if (p.status !== 'quoted' && p.status !== 'awaiting_payment') {
      throw new AppError('INVALID_REQUEST', `Purchase ${p.id} is not awaiting payment (status ${p.status})`);
    }
  }

  /** Refuses to charge a purchase whose checkout session was paid (or closed) at the processor. */
  async function assertSessionOpen(stripe: Stripe, p: PayablePurchase, sessionId: string): Promise<void> {
    const s = await withProcessorErrors(() => stripe.checkout.sessions.retrieve(sessionId));
    if (s.status === 'complete') throw new AppError('INVALID_REQUEST', `Purchase ${p.id} was already paid through its checkout link`);
    if (s.status === 'expired') throw new AppError('INVALID_REQUEST', `Purchase ${p.id} has expired and can no longer be paid`);
  }

  const ensureCustomer = (stripe: Stripe, buyer: VerifiedBuyer, mode: PayablePurchase['mode']) => ensureBuyerCustomer(repo, stripe, buyer, mode);

  /** A create failure after which nothing was charged, so the attempt may be closed; else null. */
  function definitiveFailure(err: unknown): { kind: string; code: string | null; paymentIntentId: string | null; error: AppError } | null {
    if (!isProcessorError(err)) return null;
    const e = err as StripeErrorLike;
    const mapped = mapProcessorError(err) as AppError;
    const paymentIntentId = e.payment_intent?.id ?? null;
    if (e.type === 'StripeCardError') {
      const declineCode = e.decline_code || e.code || null;
      const error = new AppError('CARD_ERROR', mapped.message, { cause: err, extra: { ...(declineCode ? { decline_code: declineCode } : {}), ...(paymentIntentId ? { payment_intent: paymentIntentId } : {}) } });
      return { kind: 'card_error', code: declineCode, paymentIntentId, error };
    }
    // 400/404: the request was refused (e.g. a payment method not saved on this customer). A 409
    // (the same key still in flight) is not a failure of the charge and stays pending.
    if (e.type === 'StripeInvalidRequestError' && (e.statusCode === 400 || e.statusCode === 404)) {
      return { kind: 'invalid_request', code: e.code ?? null, paymentIntentId, error: mapped };
    }
    if (e.type === 'StripeAuthenticationError' || e.type === 'StripePermissionError') {
      return { kind: 'authentication', code: e.code ?? null, paymentIntentId: null, error: mapped };
    }
    return null;
  }

  /**
   * Finds out what an attempt did: retrieves its payment intent, or (no id yet) sends the
   * create with the attempt's stored parameters and idempotency key. Unknown outcomes
   * (connection, processor 5xx, rate limit) throw and leave the attempt pending for the next call.
   */
  async function settle(stripe: Stripe, charge: DirectCharge): Promise<Outcome> {
    let pi: Stripe.PaymentIntent;
    if (charge.paymentIntentId) {
      pi = await withProcessorErrors(() => stripe.paymentIntents.retrieve(charge.paymentIntentId!));
    } else {
      try {
        pi = await stripe.paymentIntents.create(
          {
            amount: charge.amountMinor,
            currency: charge.currency,
            customer: charge.customerId,
            payment_method: charge.paymentMethodId,
            off_session: true,
            confirm: true,
            description: `Purchase ${charge.purchaseId}`,
            metadata: { purchase_id: String(charge.purchaseId), direct_charge_attempt: String(charge.attempt) },
          },
          // One request per call: a retry happens only through the next call, which checks first.
          { idempotencyKey: charge.idempotencyKey, maxNetworkRetries: 0 },
        );
      } catch (err) {
        const failure = definitiveFailure(err);
        if (!failure) throw mapProcessorError(err);
        await repo.markFailed(charge.id, { paymentIntentId: failure.paymentIntentId, kind: failure.kind, code: failure.code });
        return { ok: false, error: failure.error };
      }
      // Stored at once: from here on a retry retrieves this payment intent.
      await repo.recordIntent(charge.id, pi.id, 'pending');
    }
    const status = pi.status === 'succeeded' ? 'succeeded' : pi.status === 'processing' ? 'processing' : null;
    if (status) {
      await repo.recordIntent(charge.id, pi.id, status);
      return { ok: true, paymentIntentId: pi.id, status };
    }
    // requires_payment_method (declined), requires_action (the buyer must authenticate, which an
    // off-session charge cannot do), canceled, …: nothing was captured.
    const code = pi.last_payment_error?.decline_code ?? pi.last_payment_error?.code ?? pi.status;
    const cardProblem = pi.status === 'requires_payment_method' || pi.status === 'requires_action';
    await repo.markFailed(charge.id, { paymentIntentId: pi.id, kind: cardProblem ? 'card_error' : 'not_completed', code });
    const reason = pi.status === 'requires_action' ? 'the card needs the buyer to authenticate; send the checkout link instead' : `the payment was not completed (${code})`;
    return { ok: false, error: new AppError('CARD_ERROR', `Payment processor: ${reason}`, { extra: { decline_code: code, payment_intent: pi.id } }) };
  }

  /** After a successful charge: the `paid` signal (certificates follow) and the session expired. */
  async function finish(stripe: Stripe, purchase: PayablePurchase, outcome: Extract<Outcome, { ok: true }>, log: Logger): Promise<DirectPaymentResponse> {
    const response: DirectPaymentResponse = { purchase_id: purchase.id, payment_intent: outcome.paymentIntentId, status: outcome.status };
    // `processing`: the processor's payment_intent.succeeded webhook (metadata.purchase_id) relays it later.
    if (outcome.status !== 'succeeded' || purchase.paidAt) return response;
    const relayed = await deps.workflows.signalPayment(purchase.id, { eventId: `direct-${outcome.paymentIntentId}`, outcome: 'paid', paymentIntentId: outcome.paymentIntentId });
    if (!relayed) log.error({ purchaseId: purchase.id, paymentIntentId: outcome.paymentIntentId }, 'saved-card charge succeeded but the purchase workflow is not running: reconcile (refund or issue by hand)');
    const sessionId = (await repo.findPurchase(purchase.id, purchase.rootAccountId, purchase.buyerId))?.checkoutSessionId;
    if (sessionId) await expireSession(stripe, purchase.id, sessionId, outcome.paymentIntentId, log);
    return response;
  }

  /** Closes the checkout link so the buyer cannot pay a second time; never fails the request. */
  async function expireSession(stripe: Stripe, purchaseId: number, sessionId: string, paymentIntentId: string, log: Logger): Promise<void> {
    try {
      await stripe.checkout.sessions.expire(sessionId, {}, { idempotencyKey: `purchase-${purchaseId}-expire` });
    } catch (err) {
      const session = await stripe.checkout.sessions.retrieve(sessionId).catch(() => null);
      if (session?.status === 'complete') {
        log.error({ purchaseId, paymentIntentId, checkoutSessionId: sessionId }, 'purchase paid twice (checkout link and saved card): refund one');
      } else if (session?.status !== 'expired') {
        log.warn({ purchaseId, checkoutSessionId: sessionId, type: (err as StripeErrorLike).type }, 'checkout session not expired after a saved-card charge');
      }
    }
  }

  return {
    /**
     * Spec §4.4 step 3 (b): emails the purchase's checkout link to the buyer and returns
     * `{ purchase_id, emailed_to, checkout_session_id, expires_at }`. Each call sends one email.
     */
    async emailCheckoutLink(principal: Principal, req: EmailCheckoutLinkRequest): Promise<EmailCheckoutLinkResponse> {
      const buyer = await deps.verifyBuyer(principal, req.idp_accnt_uuid, req.access_token);
      const purchase = await loadPurchase(principal, buyer, req.purchase_id);
      const live = await repo.liveCharge(purchase.id);
      if (live?.status === 'succeeded' || live?.status === 'processing') throw new AppError('INVALID_REQUEST', `Purchase ${purchase.id} is already paid`);
      if (live) {
        throw new AppError('INVALID_REQUEST', `A saved-card charge of purchase ${purchase.id} has no known outcome yet; call processUserDirectPayprocPayment again to settle it first`);
      }
      assertPayable(purchase, 0);
      const session = await deps.workflows.startCheckout({ purchaseId: purchase.id, buyerEmail: buyer.email });
      const lines = await repo.purchaseLines(purchase.id);
      await deps.mailer.send(
        checkoutLinkEmail({
          to: buyer.email,
          buyerFirstName: buyer.firstName,
          sellerName: purchase.sellerName,
          purchaseId: purchase.id,
          lines,
          amountMinor: session.amount_total,
          currency: session.currency,
          url: session.url,
          expiresAt: session.expires_at,
        }),
      );
      return { purchase_id: purchase.id, emailed_to: buyer.email, checkout_session_id: session.id, expires_at: session.expires_at };
    },

    /**
     * Spec §4.4 step 3 (c), `processUserDirectPayprocPayment`: charges the purchase's total to a
     * saved payment method, off-session, at most once (see the module comment); returns
     * `{ purchase_id, payment_intent, status: 'succeeded' | 'processing' }`. A repeat after a
     * success answers the same payment intent without charging again.
     */
    async chargeSavedCard(principal: Principal, req: DirectPaymentRequest, log: Logger): Promise<DirectPaymentResponse> {
      const buyer = await deps.verifyBuyer(principal, req.idp_accnt_uuid, req.access_token);
      const purchase = await loadPurchase(principal, buyer, req.purchase_id);
      const stripe = deps.payproc.client(purchase.mode);

      // 1. Did an earlier call charge? Settle its attempt before anything else (spec §7.2).
      const live = await repo.liveCharge(purchase.id);
      if (live) {
        if (!live.paymentIntentId) {
          // Re-sending is safe only while the purchase is payable: if the first request never
          // reached the processor, the re-send charges for real.
          try {
            assertPayable(purchase, 0);
          } catch (err) {
            log.error({ purchaseId: purchase.id, idempotencyKey: live.idempotencyKey }, 'saved-card charge of unknown outcome on a purchase no longer payable: reconcile at the processor');
            throw err;
          }
        }
        const earlier = await settle(stripe, live);
        if (earlier.ok) return finish(stripe, purchase, earlier, log);
        if (live.paymentMethodId === req.payment_method_id) throw earlier.error;
        // The earlier card was declined; go on with the one this call names.
      }

      // 2. A new attempt.
      const history = await repo.charges(purchase.id);
      if (history.some((c) => c.paymentMethodId === req.payment_method_id && c.failureKind === 'card_error')) {
        throw new AppError('CARD_ERROR', 'This payment method was already declined for this purchase; retry only with a different card');
      }
      assertPayable(purchase, MIN_TIME_LEFT_MS);
      // The workflow must be running to take the payment; this also yields the session to check.
      const session = await deps.workflows.startCheckout({ purchaseId: purchase.id, buyerEmail: buyer.email });
      await assertSessionOpen(stripe, purchase, session.id);
      const customerId = await ensureCustomer(stripe, buyer, purchase.mode);
      const attempt = (history.at(-1)?.attempt ?? 0) + 1;
      const charge = await repo.insertCharge({
        purchaseId: purchase.id,
        attempt,
        idempotencyKey: directChargeKey(purchase.id, attempt),
        customerId,
        paymentMethodId: req.payment_method_id,
        amountMinor: purchase.totalMinor,
        currency: purchase.currency,
      });
      if (!charge) throw new AppError('INVALID_REQUEST', `Another saved-card charge of purchase ${purchase.id} is in progress; call again to get its outcome`);
      const outcome = await settle(stripe, charge);
      if (!outcome.ok) throw outcome.error;
      return finish(stripe, purchase, outcome, log);
    },
  };
}

export type PaymentService = ReturnType<typeof createPaymentService>;
