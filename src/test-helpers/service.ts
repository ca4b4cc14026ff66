/**
 * Test-mode helpers: pay, fail or expire a test purchase's checkout without a browser and without
 * the platform's webhook secret, the way Stripe's test helpers let an integrator drive objects.
 *
 * Each helper builds the processor event a real checkout would send (`checkout.session.completed`
 * paid, `checkout.session.async_payment_failed`, `checkout.session.expired`), signs it with the
 * service's own webhook secret and hands it to the webhook handling, so it takes exactly the
 * path a real signed event takes: stored once in `payproc_events`, signalled to the purchase's
 * workflow (or recovering a closed run), and nothing else. No money moves: the payment intent
 * of a helper payment is a new made-up id (`pi_testhelper_…`), one per purchase as with the
 * processor's test mode (the local processor, stripe-mock, gives every checkout the same one, and
 * certificate lookups by a shared payment intent answer 409), and the processor's own checkout
 * session is not touched.
 *
 * Errors (AppError): ROUTE_NOT_FOUND (404) for a live key, as if the helpers did not exist;
 * NOT_FOUND (404) for a purchase that is not the key's account's or not in test mode;
 * INVALID_REQUEST (400) for a purchase without a checkout session yet, or one already paid,
 * refunded, expired or failed (nothing to pay or end any more).
 */
import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import { AppError, notFound } from '../http/errors';
import type { Principal } from '../api-keys/service';
import type { PurchaseRecord, PurchasesRepository } from '../purchases/repository';
import type { PurchaseWorkflows } from '../purchases/workflow-client';
import type { WebhookResult, WebhookService } from '../webhooks/service';

export type TestPaymentOutcome = 'paid' | 'failed';

/** What a helper answers: the event it delivered and what the webhook handling did with it. */
export interface TestHelperResult {
  purchase_id: number;
  event: { id: string; type: string };
  /** True when the event reached the purchase's workflow (or started its recovery). */
  relayed: boolean;
  /**
   * The purchase's status once the event has moved it on (`paid`, `awaiting_certificates`,
   * `issued`, `failed`, `expired`), or, if its workflow has not done so within `settleMs`, the
   * status it had when the event was handed over.
   */
  purchase_status: PurchaseRecord['status'];
  /** The payment intent the event reported (a payment), or null (an expiry). */
  payment_intent: string | null;
}

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

export function createTestHelperService(deps: {
  purchases: Pick<PurchasesRepository, 'findById' | 'advanceTestClock'>;
  /** Tells a purchase's policy workflow its test clock moved. */
  workflows: Pick<PurchaseWorkflows, 'testClockAdvanced'>;
  webhooks: Pick<WebhookService, 'handle'>;
  /** Signs the event like the processor does (Stripe's `webhooks.generateTestHeaderString`). */
  stripe: Pick<Stripe, 'webhooks'>;
  /** The secret the webhook route verifies with (the primary one). */
  webhookSecret: string;
  /** How long (ms) an answer waits for the purchase's workflow to move its status on (default 5000). */
  settleMs?: number;
}) {
  const settleMs = deps.settleMs ?? 5000;

  /** The purchase's status once it differs from `from`, polled every 100 ms for up to `settleMs`; else `from`. */
  async function statusAfter(purchaseId: number, from: PurchaseRecord['status']): Promise<PurchaseRecord['status']> {
    const deadline = Date.now() + settleMs;
    for (;;) {
      const now = (await deps.purchases.findById(purchaseId))?.status ?? from;
      if (now !== from || Date.now() >= deadline) return now;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The purchase the key may drive: its account's, in test mode, with an open checkout. */
  async function openTestPurchase(principal: Principal, purchaseId: number): Promise<PurchaseRecord> {
    if (principal.mode !== 'test') throw new AppError('ROUTE_NOT_FOUND', 'Test helpers answer test-mode API keys only');
    const purchase = await deps.purchases.findById(purchaseId);
    if (!purchase || purchase.rootAccountId !== principal.rootAccountId || purchase.mode !== 'test') throw notFound('Purchase', purchaseId);
    if (!purchase.checkoutSessionId) throw new AppError('INVALID_REQUEST', `Purchase ${purchaseId} has no checkout session yet`);
    if (purchase.status !== 'awaiting_payment') {
      throw new AppError('INVALID_REQUEST', `Purchase ${purchaseId} is ${purchase.status}, not awaiting payment: there is no checkout left to pay or end`);
    }
    return purchase;
  }

  async function deliver(purchase: PurchaseRecord, type: string, object: Record<string, unknown>): Promise<TestHelperResult> {
    const payload = JSON.stringify({
      id: randomId('evt_testhelper'),
      object: 'event',
      type,
      livemode: false,
      created: Math.floor(Date.now() / 1000),
      data: {
        object: {
          id: purchase.checkoutSessionId,
          object: 'checkout.session',
          livemode: false,
          mode: purchase.billing === 'subscription' ? 'subscription' : 'payment',
          client_reference_id: String(purchase.id),
          metadata: { purchase_id: String(purchase.id) },
          ...object,
        },
      },
    });
    const signature = deps.stripe.webhooks.generateTestHeaderString({ payload, secret: deps.webhookSecret });
    const result: WebhookResult = await deps.webhooks.handle(payload, signature);
    const event = JSON.parse(payload) as { id: string; type: string };
    const paymentIntent = typeof object.payment_intent === 'string' ? object.payment_intent : null;
    // Answer what the event did, not the status from before it (the workflow applies it within moments).
    const status = result.relayed ? await statusAfter(purchase.id, purchase.status) : purchase.status;
    return { purchase_id: purchase.id, event: { id: event.id, type: event.type }, relayed: result.relayed, purchase_status: status, payment_intent: paymentIntent };
  }

  /** The key's own test purchase, whatever its status. */
  async function ownTestPurchase(principal: Principal, purchaseId: number): Promise<PurchaseRecord> {
    if (principal.mode !== 'test') throw new AppError('ROUTE_NOT_FOUND', 'Test helpers answer test-mode API keys only');
    const purchase = await deps.purchases.findById(purchaseId);
    const teammateOk = principal.agentId === null || purchase?.agentId === principal.agentId;
    if (!purchase || purchase.rootAccountId !== principal.rootAccountId || purchase.mode !== 'test' || !teammateOk) throw notFound('Purchase', purchaseId);
    return purchase;
  }

  return {
    /**
     * The key's own test purchase, whatever its status. Errors: ROUTE_NOT_FOUND (404) for a live
     * key; NOT_FOUND (404) for another account's (or teammate's) purchase, a live one, or none.
     */
    ownTestPurchase,

    /**
     * Moves a test purchase's test clock forward to `frozenTime`, like the processor's test
     * clocks: from then on the purchase's "now" for its policy's life (whether a covered unit has
     * started, a cancellation's default effective time, whether one is due) is that instant, not
     * the real time, until moved again. Cancellations scheduled up to it are carried out (the
     * purchase's policy workflow is told). Errors: VALIDATION_ERROR (400) for a time before the
     * clock (or before the real now, for a first move) or more than 5 years ahead; ROUTE_NOT_FOUND
     * for a live key; NOT_FOUND for a purchase that is not the key's test purchase.
     * @returns the clock as stored (ISO 8601 UTC) and whether a policy workflow was open to tell.
     */
    async advanceTestClock(principal: Principal, purchaseId: number, frozenTime: Date): Promise<{ purchase_id: number; test_clock: string; policy_notified: boolean }> {
      const purchase = await ownTestPurchase(principal, purchaseId);
      const from = purchase.testClockAt ?? new Date();
      if (frozenTime.getTime() < from.getTime() - 1000) {
        throw new AppError('VALIDATION_ERROR', `frozen_time: a test clock only moves forward (it stands at ${from.toISOString()})`, { details: [{ path: 'frozen_time', message: `must be ${from.toISOString()} or later` }] });
      }
      if (frozenTime.getTime() > Date.now() + 5 * 366 * 86_400_000) {
        throw new AppError('VALIDATION_ERROR', 'frozen_time: at most 5 years ahead', { details: [{ path: 'frozen_time', message: 'at most 5 years from now' }] });
      }
      const stored = await deps.purchases.advanceTestClock(purchase.id, frozenTime);
      if (!stored) throw notFound('Purchase', purchaseId);
      const notified = await deps.workflows.testClockAdvanced(purchase.id, stored);
      return { purchase_id: purchase.id, test_clock: stored.toISOString(), policy_notified: notified };
    },

    /**
     * Reports the test purchase's checkout paid (`outcome: 'paid'`, default) or its payment failed
     * after checkout (`'failed'`: the purchase ends `failed` with the reason).
     */
    async pay(principal: Principal, purchaseId: number, outcome: TestPaymentOutcome): Promise<TestHelperResult> {
      const purchase = await openTestPurchase(principal, purchaseId);
      // Its own payment intent, never the one the local processor gives every checkout.
      const paymentIntent = randomId('pi_testhelper');
      if (outcome === 'failed') {
        return deliver(purchase, 'checkout.session.async_payment_failed', { status: 'complete', payment_status: 'unpaid', payment_intent: paymentIntent });
      }
      return deliver(purchase, 'checkout.session.completed', { status: 'complete', payment_status: 'paid', payment_intent: paymentIntent });
    },

    /** Reports the test purchase's checkout expired: the purchase ends `expired`. */
    async expire(principal: Principal, purchaseId: number): Promise<TestHelperResult> {
      const purchase = await openTestPurchase(principal, purchaseId);
      return deliver(purchase, 'checkout.session.expired', { status: 'expired', payment_status: 'unpaid', payment_intent: null });
    },
  };
}

export type TestHelperService = ReturnType<typeof createTestHelperService>;
