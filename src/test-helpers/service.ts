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
 * After the payment, three more helpers drive what the processor reports later, through the same
 * webhook handling: `refund` (`charge.refunded` of the purchase's charge, full or partial: the
 * refund workflow records it, a full one ends the purchase `refunded` and voids its
 * certificates), `renew` (a subscription's paid billing-cycle invoice, `invoice.paid` with
 * billing reason `subscription_cycle`: the renewal workflow creates the next period's purchase
 * and issues its certificates), and `dispute` (the buyer disputes the payment with their bank:
 * `charge.dispute.created`, then `charge.dispute.closed` when an outcome is asked for: the
 * dispute workflow records it and tells the agency). Amounts are integer minor units of the
 * purchase's currency.
 *
 * Errors (AppError): ROUTE_NOT_FOUND (404) for a live key, as if the helpers did not exist;
 * NOT_FOUND (404) for a purchase that is not the key's account's or not in test mode;
 * INVALID_REQUEST (400) for a purchase without a checkout session yet, or one already paid,
 * refunded, expired or failed (nothing to pay or end any more); for `refund`, one not paid or
 * fully refunded, and VALIDATION_ERROR (400) for an amount above what is left to refund; for
 * `renew`, one that is not a paid subscription whose subscription is still running, and
 * SUBSCRIPTION_ENDING (409) for one set to cancel at its period's end; for
 * `dispute`, one not paid, and VALIDATION_ERROR (400) for an amount above the total.
 */
import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import { AppError, notFound } from '../shared/errors';
import type { Principal } from '../api-keys/service';
import type { PurchaseRecord } from '../purchases/purchase-record';
import type { SaleRepository } from '../purchases/sale-repository';
import type { SubscriptionRepository } from '../purchases/subscription-repository';
import { currentPeriodOf } from '../purchases/subscription-object';
import { subscriptionPeriodWindow } from '../purchases/renewal-period';
import type { PurchaseWorkflows } from '../purchases/workflow-client';
import type { WebhookResult, WebhookService } from '../webhooks/service';
import type { DisputesRepository } from '../disputes/repository';

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

/** What the refund helper answers: the event and the purchase's refunds after it (minor units). */
export interface TestRefundResult {
  purchase_id: number;
  event: { id: string; type: string };
  relayed: boolean;
  /** This refund, minor units. */
  amount: number;
  /** Refunded on the purchase's charge in all, this refund included (minor units), once recorded. */
  amount_refunded: number;
  /** Whether the whole charge is refunded now (the purchase is `refunded`, its certificates void). */
  refunded: boolean;
  purchase_status: PurchaseRecord['status'];
}

/** What the renewal helper answers: the event and the next period's purchase once created. */
export interface TestRenewalResult {
  purchase_id: number;
  event: { id: string; type: string };
  relayed: boolean;
  /** The made-up invoice that paid the period (`in_testhelper_…`) and its payment intent. */
  invoice: string;
  payment_intent: string;
  /** The new period's purchase, once the renewal workflow created it (null if not within moments). */
  renewal_purchase_id: number | null;
  /** Its period number (1: the first renewal), with the purchase. */
  renewal_period: number | null;
}

/** What the dispute helper answers: the processor's dispute it made up and the events it delivered, in order. */
export interface TestDisputeResult {
  purchase_id: number;
  /** The made-up processor dispute (`dp_testhelper_…`). */
  dispute: string;
  events: Array<{ id: string; type: string }>;
  relayed: boolean;
  /** The dispute's status as recorded once the events were handled (null if not within moments). */
  status: string | null;
}

/** The dispute outcomes the helper plays: left open, or decided for the agency (won) or the buyer (lost). */
export type TestDisputeOutcome = 'open' | 'won' | 'lost';

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

export function createTestHelperService(deps: {
  sales: Pick<SaleRepository, 'findById' | 'advanceTestClock'>;
  subscriptions: Pick<SubscriptionRepository, 'subscriptionPeriods' | 'firstPeriodUnits'>;
  /** Reads the purchase's disputes (to answer the recorded status). */
  disputes: Pick<DisputesRepository, 'listForPurchase'>;
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

  /** The purchase the key may drive: its account's, in test mode, with an open checkout. */
  async function openTestPurchase(principal: Principal, purchaseId: number): Promise<PurchaseRecord> {
    if (principal.mode !== 'test') throw new AppError('ROUTE_NOT_FOUND', 'Test helpers answer test-mode API keys only');
    const purchase = await deps.sales.findById(purchaseId);
    if (!purchase || purchase.rootAccountId !== principal.rootAccountId || purchase.mode !== 'test') throw notFound('Purchase', purchaseId);
    if (!purchase.checkoutSessionId) throw new AppError('INVALID_REQUEST', `Purchase ${purchaseId} has no checkout session yet`);
    // Not the payable rule (../purchases/rules.ts `paymentRefusal`): the helper plays the processor on an open
    // checkout session, so it asks for `awaiting_payment` (not `quoted`), whatever the deadline.
    if (purchase.status !== 'awaiting_payment') {
      throw new AppError(
        'INVALID_REQUEST',
        `Purchase ${purchaseId} is ${purchase.status}, not awaiting payment: there is no checkout left to pay or end`,
      );
    }
    return purchase;
  }

  /** Signs event `type` about `object` as the processor would and hands it to the webhook handling. */
  async function sendEvent(
    type: string,
    object: Record<string, unknown>,
  ): Promise<{ event: { id: string; type: string }; result: WebhookResult }> {
    const event = { id: randomId('evt_testhelper'), type };
    const payload = JSON.stringify({
      ...event,
      object: 'event',
      livemode: false,
      created: Math.floor(Date.now() / 1000),
      data: { object },
    });
    const signature = deps.stripe.webhooks.generateTestHeaderString({ payload, secret: deps.webhookSecret });
    return { event, result: await deps.webhooks.handle(payload, signature) };
  }

  /** Polls `read` every 100 ms until `done` holds or `settleMs` passed; answers the last value read. */
  async function settle<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    const deadline = Date.now() + settleMs;
    for (;;) {
      const value = await read();
      if (done(value) || Date.now() >= deadline) return value;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function deliver(purchase: PurchaseRecord, type: string, object: Record<string, unknown>): Promise<TestHelperResult> {
    const { event, result } = await sendEvent(type, {
      id: purchase.checkoutSessionId,
      object: 'checkout.session',
      livemode: false,
      mode: purchase.billing === 'subscription' ? 'subscription' : 'payment',
      client_reference_id: String(purchase.id),
      metadata: { purchase_id: String(purchase.id) },
      ...object,
    });
    const paymentIntent = typeof object.payment_intent === 'string' ? object.payment_intent : null;
    // Answer what the event did, not the status from before it (the workflow applies it within moments).
    const status = result.relayed
      ? await settle(
          async () => (await deps.sales.findById(purchase.id))?.status ?? purchase.status,
          (now) => now !== purchase.status,
        )
      : purchase.status;
    return {
      purchase_id: purchase.id,
      event: { id: event.id, type: event.type },
      relayed: result.relayed,
      purchase_status: status,
      payment_intent: paymentIntent,
    };
  }

  /** The key's own test purchase, whatever its status. */
  async function ownTestPurchase(principal: Principal, purchaseId: number): Promise<PurchaseRecord> {
    if (principal.mode !== 'test') throw new AppError('ROUTE_NOT_FOUND', 'Test helpers answer test-mode API keys only');
    const purchase = await deps.sales.findById(purchaseId);
    const teammateOk = principal.agentId === null || purchase?.agentId === principal.agentId;
    if (!purchase || purchase.rootAccountId !== principal.rootAccountId || purchase.mode !== 'test' || !teammateOk)
      throw notFound('Purchase', purchaseId);
    return purchase;
  }

  /** The key's own test purchase once paid (it has a payment intent); else INVALID_REQUEST saying `nothing`. */
  async function paidTestPurchase(
    principal: Principal,
    purchaseId: number,
    nothing: string,
  ): Promise<PurchaseRecord & { paymentIntentId: string }> {
    const purchase = await ownTestPurchase(principal, purchaseId);
    if (!purchase.paidAt || !purchase.paymentIntentId)
      throw new AppError('INVALID_REQUEST', `Purchase ${purchaseId} is ${purchase.status} and not paid: ${nothing}`);
    return { ...purchase, paymentIntentId: purchase.paymentIntentId };
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
    async advanceTestClock(
      principal: Principal,
      purchaseId: number,
      frozenTime: Date,
    ): Promise<{ purchase_id: number; test_clock: string; policy_notified: boolean }> {
      const purchase = await ownTestPurchase(principal, purchaseId);
      const from = purchase.testClockAt ?? new Date();
      if (frozenTime.getTime() < from.getTime() - 1000) {
        throw new AppError('VALIDATION_ERROR', `frozen_time: a test clock only moves forward (it stands at ${from.toISOString()})`, {
          details: [{ path: 'frozen_time', message: `must be ${from.toISOString()} or later` }],
        });
      }
      if (frozenTime.getTime() > Date.now() + 5 * 366 * 86_400_000) {
        throw new AppError('VALIDATION_ERROR', 'frozen_time: at most 5 years ahead', {
          details: [{ path: 'frozen_time', message: 'at most 5 years from now' }],
        });
      }
      const stored = await deps.sales.advanceTestClock(purchase.id, frozenTime);
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
        return deliver(purchase, 'checkout.session.async_payment_failed', {
          status: 'complete',
          payment_status: 'unpaid',
          payment_intent: paymentIntent,
        });
      }
      return deliver(purchase, 'checkout.session.completed', { status: 'complete', payment_status: 'paid', payment_intent: paymentIntent });
    },

    /**
     * Refunds `amountMinor` (default: all that is left) of the paid test purchase's charge, as the
     * processor reports a refund made in its dashboard: a signed `charge.refunded` of the purchase's
     * made-up charge (`ch_testhelper_<purchase id>`), whose `amount_refunded` is the running total
     * (earlier refunds plus this one) and `refunded` whether the whole total is refunded now. The
     * refund workflow records it; a full refund ends the purchase `refunded` and voids its
     * certificates. No money moves. Refunds of one purchase are meant one after another: two sent
     * at once both read the same earlier total, and count as one, as two processor events carrying
     * the same running total would.
     * Errors: INVALID_REQUEST (400) for a purchase not paid (no payment intent) or fully refunded;
     * VALIDATION_ERROR (400, path `amount`) for more than is left; ROUTE_NOT_FOUND, NOT_FOUND (404).
     */
    async refund(principal: Principal, purchaseId: number, amountMinor?: number): Promise<TestRefundResult> {
      const purchase = await paidTestPurchase(principal, purchaseId, 'there is no charge to refund');
      const left = purchase.totalMinor - purchase.refundedMinor;
      if (purchase.status === 'refunded' || left <= 0)
        throw new AppError('INVALID_REQUEST', `Purchase ${purchaseId} is refunded in full: there is nothing left to refund`);
      const amount = amountMinor ?? left;
      if (amount > left) {
        throw new AppError('VALIDATION_ERROR', `amount: at most ${left} (minor units) is left to refund of purchase ${purchaseId}`, {
          details: [{ path: 'amount', message: `must be at most ${left}` }],
        });
      }
      const total = purchase.refundedMinor + amount;
      const { event, result } = await sendEvent('charge.refunded', {
        id: `ch_testhelper_${purchase.id}`,
        object: 'charge',
        livemode: false,
        amount: purchase.totalMinor,
        amount_captured: purchase.totalMinor,
        amount_refunded: total,
        refunded: total >= purchase.totalMinor,
        currency: purchase.currency,
        paid: true,
        status: 'succeeded',
        payment_intent: purchase.paymentIntentId,
        metadata: { purchase_id: String(purchase.id) },
      });
      const after = result.relayed
        ? await settle(
            () => deps.sales.findById(purchase.id),
            // The refund is recorded first and a full one then ends the purchase (the workflow's
            // step): answer once both show, so `refunded` and `purchase_status` say the same.
            (p) => (p?.refundedMinor ?? 0) >= total && (total < purchase.totalMinor || p?.status === 'refunded'),
          )
        : purchase;
      return {
        purchase_id: purchase.id,
        event,
        relayed: result.relayed,
        amount,
        amount_refunded: after?.refundedMinor ?? purchase.refundedMinor,
        refunded: after?.status === 'refunded',
        purchase_status: after?.status ?? purchase.status,
      };
    },

    /**
     * Pays the next billing period of a test subscription, as the processor reports its
     * billing-cycle invoice paid: a signed `invoice.paid` (billing reason `subscription_cycle`, a
     * made-up invoice `in_testhelper_…` and payment intent `pi_testhelper_…`, for the subscription's
     * total) naming the subscription's first purchase. The renewal workflow creates the next
     * period's purchase (its covered units a month on) and issues its certificates, as for a real
     * renewal. `purchaseId` may be any period of the subscription. No money moves.
     * Errors: INVALID_REQUEST (400) for a purchase that is not a subscription, not paid, or whose
     * subscription has ended; SUBSCRIPTION_ENDING (409) for one set to cancel at its period's end
     * (the processor would send no invoice); ROUTE_NOT_FOUND, NOT_FOUND (404).
     */
    async renew(principal: Principal, purchaseId: number): Promise<TestRenewalResult> {
      const named = await ownTestPurchase(principal, purchaseId);
      if (named.billing !== 'subscription')
        throw new AppError('INVALID_REQUEST', `Purchase ${purchaseId} is a one-time purchase: only a subscription renews`);
      const first = named.renewalOfPurchaseId === null ? named : await deps.sales.findById(named.renewalOfPurchaseId);
      if (!first) throw notFound('Purchase', purchaseId);
      if (!first.paidAt)
        throw new AppError(
          'INVALID_REQUEST',
          `Purchase ${first.id} is ${first.status}: a subscription renews only after its first period is paid`,
        );
      if (first.subscriptionEndedAt || first.status === 'refunded')
        throw new AppError('INVALID_REQUEST', `The subscription of purchase ${first.id} has ended: it renews no more`);
      const periods0 = await deps.subscriptions.subscriptionPeriods(first.id);
      if (first.subscriptionCancelAtPeriodEnd) {
        // The processor sends no further invoice once it is set to cancel at the period's end: the
        // subscription ends when the period in force does.
        const current = currentPeriodOf(first, periods0);
        const window = subscriptionPeriodWindow(
          await deps.subscriptions.firstPeriodUnits(first.id),
          Math.max(0, periods0.indexOf(current)),
        );
        throw new AppError(
          'SUBSCRIPTION_ENDING',
          `Subscription ${first.id} is cancelled at the end of its current period${window ? ` (${window.lastDay})` : ''}: the processor sends no further invoice, so it does not renew`,
        );
      }
      const before = periods0.length;
      const invoice = randomId('in_testhelper');
      const paymentIntent = randomId('pi_testhelper');
      const { event, result } = await sendEvent('invoice.paid', {
        id: invoice,
        object: 'invoice',
        livemode: false,
        billing_reason: 'subscription_cycle',
        status: 'paid',
        amount_paid: first.totalMinor,
        currency: first.currency,
        parent: {
          type: 'subscription_details',
          subscription_details: { subscription: first.payprocSubscriptionId, metadata: { purchase_id: String(first.id) } },
        },
        payments: {
          object: 'list',
          data: [{ object: 'invoice_payment', payment: { type: 'payment_intent', payment_intent: paymentIntent } }],
        },
      });
      const periods = result.relayed
        ? await settle(
            () => deps.subscriptions.subscriptionPeriods(first.id),
            (all) => all.length > before,
          )
        : [];
      const renewal = periods.length > before ? (periods.find((p) => p.paymentIntentId === paymentIntent) ?? null) : null;
      return {
        purchase_id: first.id,
        event,
        relayed: result.relayed,
        invoice,
        payment_intent: paymentIntent,
        renewal_purchase_id: renewal?.id ?? null,
        renewal_period: renewal ? periods.indexOf(renewal) : null,
      };
    },

    /**
     * Plays a dispute of the paid test purchase's payment, as the processor reports one: a signed
     * `charge.dispute.created` (status `needs_response`, for `amountMinor`, default the whole
     * total, with `reason`) about the purchase's payment intent, and for `outcome` `won` or `lost`
     * then `charge.dispute.closed` with that status. The dispute workflow records each and sends
     * the agency `dispute.opened` and `dispute.closed`. No money moves; the policy stays as it is.
     * Errors: INVALID_REQUEST (400) for a purchase not paid; VALIDATION_ERROR (400, path `amount`)
     * for more than the total; ROUTE_NOT_FOUND, NOT_FOUND (404).
     */
    async dispute(
      principal: Principal,
      purchaseId: number,
      opts: { outcome: TestDisputeOutcome; reason: string; amountMinor?: number },
    ): Promise<TestDisputeResult> {
      const purchase = await paidTestPurchase(principal, purchaseId, 'there is no payment to dispute');
      const amount = opts.amountMinor ?? purchase.totalMinor;
      if (amount > purchase.totalMinor) {
        throw new AppError('VALIDATION_ERROR', `amount: at most ${purchase.totalMinor} (minor units), the purchase's total`, {
          details: [{ path: 'amount', message: `must be at most ${purchase.totalMinor}` }],
        });
      }
      const id = randomId('dp_testhelper');
      const opened = Math.floor(Date.now() / 1000);
      const object = (status: string) => ({
        id,
        object: 'dispute',
        livemode: false,
        amount,
        currency: purchase.currency,
        charge: `ch_testhelper_${purchase.id}`,
        payment_intent: purchase.paymentIntentId,
        reason: opts.reason,
        status,
        created: opened,
        metadata: {},
      });
      const sent = [await sendEvent('charge.dispute.created', object('needs_response'))];
      if (opts.outcome !== 'open') sent.push(await sendEvent('charge.dispute.closed', object(opts.outcome)));
      const relayed = sent.every((s) => s.result.relayed);
      const wanted = opts.outcome === 'open' ? 'needs_response' : opts.outcome;
      const recorded = relayed
        ? await settle(
            async () => (await deps.disputes.listForPurchase(purchase.id)).find((d) => d.payprocDisputeId === id) ?? null,
            (d) => d?.status === wanted,
          )
        : null;
      return { purchase_id: purchase.id, dispute: id, events: sent.map((s) => s.event), relayed, status: recorded?.status ?? null };
    },

    /** Reports the test purchase's checkout expired: the purchase ends `expired`. */
    async expire(principal: Principal, purchaseId: number): Promise<TestHelperResult> {
      const purchase = await openTestPurchase(principal, purchaseId);
      return deliver(purchase, 'checkout.session.expired', { status: 'expired', payment_status: 'unpaid', payment_intent: null });
    },
  };
}

export type TestHelperService = ReturnType<typeof createTestHelperService>;
