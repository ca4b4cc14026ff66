/**
 * The saved-card charge of a purchase (`processUserDirectPayprocPayment`), run by the purchase
 * workflow's `chargeSavedCard` update through an activity, never by the API: the workflow owns
 * the purchase's payment.
 *
 * One-time purchases: an off-session payment intent, created and confirmed with the payment
 * method saved on the buyer's processor customer, for the purchase's total (minor units).
 * Subscription purchases: a processor subscription on that payment method (billed monthly,
 * charged off-session at once, `payment_behavior: error_if_incomplete`), so renewals follow as
 * for a subscription bought through checkout.
 *
 * A charge must never be sent blind twice, so every attempt is recorded before the processor is
 * called (idempotency key `purchase-<id>-direct-charge`, `…-direct-charge-<n>` for the n-th
 * attempt after a definitive decline) and its payment intent id is stored as soon as it is known.
 * A repeated call first settles the earlier attempt: it retrieves the stored payment intent, or
 * — when the response was lost — re-sends the identical request with the same idempotency key,
 * which the processor answers with the original result instead of charging again. Only a
 * definitively failed attempt lets a new one start.
 *
 * Returns a `SavedCardChargeResult`: definitive outcomes (charged, processing, declined, refused)
 * as data; unknown outcomes (connection, processor 5xx, rate limit) throw, and the activity is
 * retried with the same attempt.
 */
import type Stripe from 'stripe';
import type { BuyersRepository } from '../buyers/repository';
import { AppError } from '../shared/errors';
import type { Payproc } from '../payproc/client';
import { RECURRING_INTERVAL } from '../payproc/catalog';
import { customerBuyerOf, ensureBuyerCustomer } from '../payproc/customers';
import { isProcessorError, mapProcessorError, withProcessorErrors } from '../payproc/errors';
import { idOf } from '../payproc/ids';
import type { SaleRepository } from '../purchases/sale-repository';
import type { SavedCardChargeResult } from '../../workflows/contracts';
import type { DirectCharge, PaymentsRepository } from './repository';

interface StripeErrorLike {
  type?: string;
  statusCode?: number;
  code?: string;
  decline_code?: string;
  payment_intent?: { id?: string };
}

/** The idempotency key of attempt `attempt` of the purchase's saved-card charge. */
export const directChargeKey = (purchaseId: number, attempt: number) =>
  attempt === 1 ? `purchase-${purchaseId}-direct-charge` : `purchase-${purchaseId}-direct-charge-${attempt}`;

type Failure = Extract<SavedCardChargeResult, { ok: false }>;

const refused = (
  paymentMethodId: string,
  code: Failure['code'],
  message: string,
  extra: { declineCode?: string | null; paymentIntentId?: string | null } = {},
): Failure => ({
  ok: false,
  paymentMethodId,
  code,
  message,
  ...extra,
});

export function createSavedCardCharges(deps: {
  /** Reads the buyer the processor customer is made for. */
  buyers: Pick<BuyersRepository, 'findById'>;
  repo: PaymentsRepository;
  sales: Pick<SaleRepository, 'findById' | 'checkoutContext'>;
  payproc: Payproc;
}) {
  const { repo } = deps;

  /** A create failure after which nothing was charged, so the attempt may be closed; else null. */
  function definitiveFailure(
    err: unknown,
    paymentMethodId: string,
  ): { kind: string; code: string | null; paymentIntentId: string | null; result: Failure } | null {
    if (!isProcessorError(err)) return null;
    const e = err as StripeErrorLike;
    const mapped = mapProcessorError(err) as AppError;
    const paymentIntentId = e.payment_intent?.id ?? null;
    if (e.type === 'StripeCardError') {
      const declineCode = e.decline_code || e.code || null;
      return {
        kind: 'card_error',
        code: declineCode,
        paymentIntentId,
        result: refused(paymentMethodId, 'CARD_ERROR', mapped.message, { declineCode, paymentIntentId }),
      };
    }
    // 400/404: the request was refused (e.g. a payment method not saved on this customer). A 409
    // (the same key still in flight) is not a failure of the charge and stays pending.
    if (e.type === 'StripeInvalidRequestError' && (e.statusCode === 400 || e.statusCode === 404)) {
      return {
        kind: 'invalid_request',
        code: e.code ?? null,
        paymentIntentId,
        result: refused(paymentMethodId, 'INVALID_REQUEST', mapped.message),
      };
    }
    if (e.type === 'StripeAuthenticationError' || e.type === 'StripePermissionError') {
      return {
        kind: 'authentication',
        code: e.code ?? null,
        paymentIntentId: null,
        result: refused(paymentMethodId, 'AUTHENTICATION_ERROR', mapped.message),
      };
    }
    return null;
  }

  /** The subscription for a saved-card subscription purchase (one item per line, plus the fee). */
  async function createSubscription(
    stripe: Stripe,
    charge: DirectCharge,
  ): Promise<{ paymentIntent: Stripe.PaymentIntent | null; subscription: Stripe.Subscription }> {
    const context = await deps.sales.checkoutContext(charge.purchaseId);
    if (!context) throw new AppError('INVALID_REQUEST', `Purchase ${charge.purchaseId} does not exist`);
    const { purchase, lines } = context;
    const recurring = { interval: RECURRING_INTERVAL };
    // Subscription prices need a processor product: the product line's, else one made for this purchase.
    const productFor = async (name: string, id: string | null, n: number) =>
      id ??
      (
        await stripe.products.create(
          { name, metadata: { purchase_id: String(purchase.id) } },
          { idempotencyKey: `purchase-${purchase.id}-subscription-product-${n}` },
        )
      ).id;
    const items: Stripe.SubscriptionCreateParams.Item[] = [];
    for (const [n, line] of lines.entries()) {
      items.push({
        quantity: 1,
        price_data: {
          currency: purchase.currency,
          unit_amount: line.amountMinor,
          recurring,
          product: await productFor(line.name, line.payprocProductId, n),
        },
      });
    }
    if (purchase.platformFeeMinor > 0) {
      items.push({
        quantity: 1,
        price_data: {
          currency: purchase.currency,
          unit_amount: purchase.platformFeeMinor,
          recurring,
          product: await productFor('Platform fee', null, lines.length),
        },
      });
    }
    const subscription = await stripe.subscriptions.create(
      {
        customer: charge.customerId,
        default_payment_method: charge.paymentMethodId,
        items,
        off_session: true,
        payment_behavior: 'error_if_incomplete',
        // The subscription (and through it each period's invoice) carries the purchase id.
        metadata: { purchase_id: String(purchase.id), direct_charge_attempt: String(charge.attempt) },
        expand: ['latest_invoice.payments'],
      },
      { idempotencyKey: charge.idempotencyKey, maxNetworkRetries: 0 },
    );
    const invoice = subscription.latest_invoice as (Stripe.Invoice & { payment_intent?: unknown }) | string | null;
    const piId =
      typeof invoice === 'object' && invoice
        ? (idOf(invoice.payment_intent) ??
          idOf((invoice.payments?.data?.[0]?.payment as { payment_intent?: unknown } | undefined)?.payment_intent))
        : null;
    return { subscription, paymentIntent: piId ? await stripe.paymentIntents.retrieve(piId) : null };
  }

  /** What an attempt did: retrieves its payment intent, or (no id yet) sends the create once more. */
  async function settle(stripe: Stripe, charge: DirectCharge, billing: 'one_time' | 'subscription'): Promise<SavedCardChargeResult> {
    let pi: Stripe.PaymentIntent;
    let subscriptionId: string | null = null;
    if (charge.paymentIntentId) {
      pi = await withProcessorErrors(() => stripe.paymentIntents.retrieve(charge.paymentIntentId!));
    } else {
      try {
        if (billing === 'subscription') {
          const created = await createSubscription(stripe, charge);
          subscriptionId = created.subscription.id;
          if (!created.paymentIntent) {
            // Nothing to confirm (e.g. a zero first invoice): an active subscription is paid.
            const active = created.subscription.status === 'active' || created.subscription.status === 'trialing';
            if (!active) throw new AppError('API_ERROR', `subscription ${created.subscription.id} is ${created.subscription.status}`);
            await repo.recordIntent(charge.id, created.subscription.id, 'succeeded');
            return {
              ok: true,
              paymentMethodId: charge.paymentMethodId,
              paymentIntentId: created.subscription.id,
              status: 'succeeded',
              subscriptionId,
            };
          }
          pi = created.paymentIntent;
        } else {
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
        }
      } catch (err) {
        if (err instanceof AppError) throw err;
        const failure = definitiveFailure(err, charge.paymentMethodId);
        if (!failure) throw mapProcessorError(err);
        await repo.markFailed(charge.id, { paymentIntentId: failure.paymentIntentId, kind: failure.kind, code: failure.code });
        return failure.result;
      }
      // Stored at once: from here on a retry retrieves this payment intent.
      await repo.recordIntent(charge.id, pi.id, 'pending');
    }
    const status = pi.status === 'succeeded' ? 'succeeded' : pi.status === 'processing' ? 'processing' : null;
    if (status) {
      await repo.recordIntent(charge.id, pi.id, status);
      return { ok: true, paymentMethodId: charge.paymentMethodId, paymentIntentId: pi.id, status, subscriptionId };
    }
    // requires_payment_method (declined), requires_action (the buyer must authenticate, which an
    // off-session charge cannot do), canceled, …: nothing was captured.
    const code = pi.last_payment_error?.decline_code ?? pi.last_payment_error?.code ?? pi.status;
    const cardProblem = pi.status === 'requires_payment_method' || pi.status === 'requires_action';
    await repo.markFailed(charge.id, { paymentIntentId: pi.id, kind: cardProblem ? 'card_error' : 'not_completed', code });
    const reason =
      pi.status === 'requires_action'
        ? 'the card needs the buyer to authenticate; send the checkout link instead'
        : `the payment was not completed (${code})`;
    return refused(charge.paymentMethodId, 'CARD_ERROR', `Payment processor: ${reason}`, { declineCode: code, paymentIntentId: pi.id });
  }

  return {
    /**
     * Charges purchase `purchaseId` to `paymentMethodId` at most once (see the module comment).
     * Throws on an unknown outcome (retry the same call); a refusal that the caller can act on
     * comes back as `{ ok: false, code }`.
     */
    async charge(purchaseId: number, paymentMethodId: string): Promise<SavedCardChargeResult> {
      const purchase = await deps.sales.findById(purchaseId);
      if (!purchase) return refused(paymentMethodId, 'INVALID_REQUEST', `Purchase ${purchaseId} does not exist`);
      const stripe = deps.payproc.client(purchase.mode);
      try {
        // 1. Did an earlier call charge? Settle its attempt before anything else.
        const live = await repo.liveCharge(purchaseId);
        if (live) {
          const earlier = await settle(stripe, live, purchase.billing);
          if (earlier.ok || live.paymentMethodId === paymentMethodId) return earlier;
          // The earlier card was declined; go on with the one this call names.
        }
        // 2. A new attempt.
        const history = await repo.charges(purchaseId);
        if (history.some((c) => c.paymentMethodId === paymentMethodId && c.failureKind === 'card_error')) {
          return refused(
            paymentMethodId,
            'CARD_ERROR',
            'This payment method was already declined for this purchase; retry only with a different card',
          );
        }
        if (purchase.checkoutSessionId) {
          // Never charge a purchase whose checkout link was paid (or closed) meanwhile.
          const s = await withProcessorErrors(() => stripe.checkout.sessions.retrieve(purchase.checkoutSessionId!));
          if (s.status === 'complete')
            return refused(paymentMethodId, 'INVALID_REQUEST', `Purchase ${purchaseId} was already paid through its checkout link`);
          if (s.status === 'expired')
            return refused(paymentMethodId, 'INVALID_REQUEST', `Purchase ${purchaseId} has expired and can no longer be paid`);
        }
        const buyer = (await deps.buyers.findById(purchase.buyerId))!;
        const customerId = await ensureBuyerCustomer(repo, stripe, customerBuyerOf(buyer), purchase.mode);
        const attempt = (history.at(-1)?.attempt ?? 0) + 1;
        const charge = await repo.insertCharge({
          purchaseId,
          attempt,
          idempotencyKey: directChargeKey(purchaseId, attempt),
          customerId,
          paymentMethodId,
          amountMinor: purchase.totalMinor,
          currency: purchase.currency,
        });
        // A concurrent attempt took the number: the next try settles that one.
        if (!charge) throw new AppError('API_ERROR', `another saved-card charge of purchase ${purchaseId} is being recorded`);
        return await settle(stripe, charge, purchase.billing);
      } catch (err) {
        // The processor's definitive refusals outside the charge itself (customer creation, session read).
        if (
          err instanceof AppError &&
          (err.code === 'INVALID_REQUEST' || err.code === 'AUTHENTICATION_ERROR' || err.code === 'CARD_ERROR')
        ) {
          return refused(paymentMethodId, err.code, err.message);
        }
        throw err;
      }
    },
  };
}

export type SavedCardCharges = ReturnType<typeof createSavedCardCharges>;
