/**
 * What a processor event means for a purchase, and which of its workflows it goes to: the routing
 * of the payment webhook (src/webhooks/service.ts verifies and stores each event, then hands it
 * here). `route` finds the purchase an event names (stored with the event) and answers a
 * `handOver` that sends it on:
 * - a checkout session paid, failed or expired, and `payment_intent.succeeded`: to the sale
 *   (`purchase-<id>`); a payment for a purchase whose run has closed is never dropped: unless its
 *   certificates are issued or it was refunded, a new run records it and issues them (logged at warn);
 * - `charge.refunded` and `charge.dispute.*`: to the purchase's owner `policy-<id>`, which records
 *   them in turn with the purchase's other changes (the purchase found by metadata or by the
 *   charge's payment intent, the sale's or a priced endorsement's);
 * - a subscription's billing-cycle `invoice.paid`: to the owner of the period in force, which makes
 *   the next period's purchase (the subscription found by metadata or by its id);
 * - the processor's own end of a subscription (`customer.subscription.deleted`, or `.updated` that
 *   ends it or sets it to end at the period's end): to the owner of the period in force;
 * - the payment of an endorsement's difference (metadata `endorsement_quote_id`): a paid checkout
 *   session to the purchase's owner (`endorsementPaid`), a refund of an applied endorsement's
 *   charge to the owner; its other events are stored only.
 * Every other type is stored and acknowledged. Each hand-over happens also for a redelivered
 * event: every receiver ignores a repeat, so a first delivery stored but not handed over is not lost.
 * Reads purchases only (the sale's and subscriptions' repositories); amounts are minor units.
 */
import type Stripe from 'stripe';
import { idOf } from '../payproc/ids';
import type { DisputeInput, PaymentEvent } from '../../workflows/contracts';
import type { Logger } from '../logger';
import { currentPeriodOf } from './subscription-object';
import type { PurchaseWorkflows } from './workflow-client';
import type { PurchaseRecord } from './purchase-record';
import type { SaleRepository } from './sale-repository';
import type { SubscriptionRepository } from './subscription-repository';

/** What a processor event means for a purchase workflow, or null when it means nothing. */
export function toPaymentEvent(event: Stripe.Event): PaymentEvent | null {
  const obj = event.data.object as unknown as Record<string, unknown>;
  switch (event.type) {
    case 'checkout.session.completed':
      return obj.payment_status === 'paid' || obj.payment_status === 'no_payment_required'
        ? {
            eventId: event.id,
            outcome: 'paid',
            paymentIntentId: idOf(obj.payment_intent),
            ...(idOf(obj.subscription) ? { subscriptionId: idOf(obj.subscription) } : {}),
          }
        : null;
    case 'checkout.session.async_payment_succeeded':
      return { eventId: event.id, outcome: 'paid', paymentIntentId: idOf(obj.payment_intent) };
    case 'checkout.session.async_payment_failed':
      return { eventId: event.id, outcome: 'failed', paymentIntentId: idOf(obj.payment_intent) };
    case 'checkout.session.expired':
      return { eventId: event.id, outcome: 'expired', paymentIntentId: null };
    case 'payment_intent.succeeded':
      return { eventId: event.id, outcome: 'paid', paymentIntentId: String(obj.id) };
    default:
      return null;
  }
}

/**
 * The endorsement an event's object pays for (its metadata `endorsement_quote_id` and
 * `endorsed_purchase_id`, set on an endorsement's checkout session and payment intent), or null.
 */
export function endorsementPaymentOf(event: Stripe.Event): { quoteId: string; purchaseId: number } | null {
  const metadata = (event.data.object as { metadata?: Record<string, string> | null }).metadata;
  const quoteId = metadata?.endorsement_quote_id;
  const purchase = metadata?.endorsed_purchase_id;
  if (typeof quoteId !== 'string' || !/^eq_[0-9a-f]{24}$/.test(quoteId)) return null;
  if (typeof purchase !== 'string' || !/^[1-9]\d{0,9}$/.test(purchase)) return null;
  return { quoteId, purchaseId: Number(purchase) };
}

function purchaseIdOf(event: Stripe.Event): number | null {
  const metadata = (event.data.object as { metadata?: Record<string, string> | null }).metadata;
  const raw = metadata?.purchase_id;
  return raw && /^[1-9]\d{0,9}$/.test(raw) ? Number(raw) : null;
}

/** A charge's payment intent id, to find its purchase when the charge carries no metadata. */
function paymentIntentOf(event: Stripe.Event): string | null {
  return idOf((event.data.object as { payment_intent?: unknown }).payment_intent);
}

/**
 * A paid billing-cycle invoice of a subscription (`invoice.paid` with billing reason
 * `subscription_cycle`): its ids, read from both the older invoice shape (`subscription`,
 * `payment_intent`) and the newer one (`parent.subscription_details`, `payments`). Null for any
 * other event, including the subscription's first invoice (its checkout session pays for it).
 */
export function renewalInvoiceOf(
  event: Stripe.Event,
): { invoiceId: string; subscriptionId: string | null; paymentIntentId: string | null; purchaseId: number | null } | null {
  if (event.type !== 'invoice.paid') return null;
  const inv = event.data.object as unknown as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (inv.billing_reason !== 'subscription_cycle' || typeof inv.id !== 'string') return null;
  const details = inv.parent?.subscription_details ?? inv.subscription_details ?? null;
  const rawPurchase = details?.metadata?.purchase_id;
  return {
    invoiceId: inv.id,
    subscriptionId: idOf(inv.subscription) ?? idOf(details?.subscription),
    paymentIntentId: idOf(inv.payment_intent) ?? idOf(inv.payments?.data?.[0]?.payment?.payment_intent),
    purchaseId: typeof rawPurchase === 'string' && /^[1-9]\d{0,9}$/.test(rawPurchase) ? Number(rawPurchase) : null,
  };
}

/**
 * The processor's own change of a subscription: `customer.subscription.deleted` (it ended: period
 * end reached after cancel_at_period_end, an unpaid invoice, the dashboard) or
 * `customer.subscription.updated` that ends it (`status: canceled`) or sets it to end
 * (`cancel_at_period_end: true`). Null for any other event or an update that changes neither.
 */
export function subscriptionChangeOf(
  event: Stripe.Event,
): { subscriptionId: string; ended: boolean; cancelAtPeriodEnd: boolean; endedAt: string | null } | null {
  if (event.type !== 'customer.subscription.deleted' && event.type !== 'customer.subscription.updated') return null;
  const sub = event.data.object as unknown as {
    id?: unknown;
    status?: unknown;
    cancel_at_period_end?: unknown;
    ended_at?: unknown;
    canceled_at?: unknown;
  };
  if (typeof sub.id !== 'string') return null;
  const ended = event.type === 'customer.subscription.deleted' || sub.status === 'canceled';
  const cancelAtPeriodEnd = sub.cancel_at_period_end === true;
  if (!ended && !cancelAtPeriodEnd) return null;
  const at = typeof sub.ended_at === 'number' ? sub.ended_at : typeof sub.canceled_at === 'number' ? sub.canceled_at : null;
  return { subscriptionId: sub.id, ended, cancelAtPeriodEnd, endedAt: ended && at !== null ? new Date(at * 1000).toISOString() : null };
}

/**
 * A dispute event (`charge.dispute.created`, `.updated`, `.closed`, `.funds_withdrawn`,
 * `.funds_reinstated`): the processor's dispute, read as the purchase's owner records it (amounts in
 * minor units, instants ISO 8601 UTC), with its payment intent to find the purchase by. Null for
 * any other event or a dispute object without an id.
 */
export function disputeOf(event: Stripe.Event): { paymentIntentId: string | null; dispute: DisputeInput['dispute'] } | null {
  if (!event.type.startsWith('charge.dispute.')) return null;
  const d = event.data.object as unknown as Record<string, unknown>;
  if (typeof d.id !== 'string' || typeof d.amount !== 'number') return null;
  return {
    paymentIntentId: idOf(d.payment_intent),
    dispute: {
      id: d.id,
      chargeId: idOf(d.charge),
      amountMinor: d.amount,
      currency: typeof d.currency === 'string' ? d.currency : 'usd',
      reason: typeof d.reason === 'string' ? d.reason : 'general',
      status: typeof d.status === 'string' ? d.status : 'needs_response',
      openedAt: new Date((typeof d.created === 'number' ? d.created : event.created) * 1000).toISOString(),
    },
  };
}

/** A processor event routed to a purchase: the purchase it names (null: none of this service's) and its hand-over. */
export interface RoutedProcessorEvent {
  /** The purchase the event names, stored with the event; null when it names none. */
  purchaseId: number | null;
  /** Sends the event to the workflow it is for; answers the purchase it went to and whether it was sent. */
  handOver(): Promise<{ purchaseId: number | null; relayed: boolean }>;
}

/** The router over the purchases' reads and their workflow clients (see the module's comment for where each event goes). */
export function createProcessorEventRouter(deps: {
  /** Reads of the purchase an event names (the router never writes purchases). */
  sales: Pick<SaleRepository, 'findById' | 'findByChargePaymentIntent'>;
  subscriptions: Pick<SubscriptionRepository, 'findBySubscription' | 'subscriptionPeriods'>;
  workflows: Pick<
    PurchaseWorkflows,
    'signalPayment' | 'processorRefund' | 'renewalPaid' | 'resumePurchase' | 'subscriptionChanged' | 'processorDispute' | 'endorsementPaid'
  >;
  log: Logger;
}) {
  /**
   * Hands a `charge.refunded` event of `purchase` to the purchase's owner, with the charge's
   * payment intent (the sale's or an endorsement's). Signalled even for a duplicate delivery: the
   * owner records a refund total, so a repeat changes nothing.
   */
  const relayChargeRefund = async (event: Stripe.Event, purchase: PurchaseRecord): Promise<void> => {
    const charge = event.data.object as Stripe.Charge;
    const paymentIntentId = paymentIntentOf(event);
    await deps.workflows.processorRefund(purchase, {
      purchaseId: purchase.id,
      eventId: event.id,
      chargeId: charge.id,
      amountRefundedMinor: charge.amount_refunded,
      fullyRefunded: charge.refunded,
      ...(paymentIntentId ? { paymentIntentId } : {}),
    });
  };
  return {
    /** Finds the purchase a verified `event` names and answers its hand-over (called before the event is stored). */
    async route(event: Stripe.Event): Promise<RoutedProcessorEvent> {
      const endorsement = endorsementPaymentOf(event);
      if (endorsement) {
        // The payment of an endorsement's difference: to the purchase's policy workflow, never its purchase workflow.
        const endorsed = await deps.sales.findById(endorsement.purchaseId);
        return {
          purchaseId: endorsed ? endorsed.id : null,
          handOver: async () => {
            const pi = event.type === 'charge.refunded' ? paymentIntentOf(event) : null;
            if (endorsed && pi && (await deps.sales.findByChargePaymentIntent(pi))?.id === endorsed.id) {
              // The charge of an applied endorsement refunded (in the processor's dashboard, or by a refund of
              // ours). A link paid too late was never applied: its full refund (ours) is only stored.
              await relayChargeRefund(event, endorsed);
              return { purchaseId: endorsed.id, relayed: true };
            }
            const paid = toPaymentEvent(event);
            if (!endorsed || !event.type.startsWith('checkout.session.') || paid?.outcome !== 'paid')
              return { purchaseId: endorsed?.id ?? null, relayed: false };
            await deps.workflows.endorsementPaid(endorsed, endorsement.quoteId);
            return { purchaseId: endorsed.id, relayed: true };
          },
        };
      }
      const renewal = renewalInvoiceOf(event);
      let purchaseId = purchaseIdOf(event) ?? renewal?.purchaseId ?? null;
      if (purchaseId === null && renewal?.subscriptionId)
        purchaseId = (await deps.subscriptions.findBySubscription(renewal.subscriptionId))?.id ?? null;
      let purchase = purchaseId !== null ? await deps.sales.findById(purchaseId) : undefined;
      const dispute = disputeOf(event);
      if (!purchase && (event.type === 'charge.refunded' || dispute)) {
        // A charge or dispute carries no metadata of ours: its payment intent names the purchase (the
        // charge refunded or disputed may be the sale's or an endorsement's).
        const pi = dispute ? dispute.paymentIntentId : paymentIntentOf(event);
        purchase = pi ? await deps.sales.findByChargePaymentIntent(pi) : undefined;
      }
      purchaseId = purchase?.id ?? null;
      return {
        purchaseId,
        handOver: async () => {
          if (event.type === 'charge.refunded' && purchase) {
            await relayChargeRefund(event, purchase);
            return { purchaseId: purchase.id, relayed: true };
          }
          if (dispute && purchase) {
            // Signalled even for a duplicate delivery: the owner keeps the newest state of the dispute, so a repeat changes nothing.
            await deps.workflows.processorDispute(purchase, {
              purchaseId: purchase.id,
              eventId: event.id,
              eventCreatedAt: new Date(event.created * 1000).toISOString(),
              dispute: dispute.dispute,
            });
            return { purchaseId: purchase.id, relayed: true };
          }
          if (renewal && purchase) {
            // To the owner of the period in force (the newest paid one), like the subscription's other
            // changes; signalled even for a duplicate delivery (the renewal is keyed by its invoice).
            const current = currentPeriodOf(purchase, await deps.subscriptions.subscriptionPeriods(purchase.id));
            await deps.workflows.renewalPaid(current, {
              purchaseId: purchase.id,
              invoiceId: renewal.invoiceId,
              subscriptionId: renewal.subscriptionId,
              paymentIntentId: renewal.paymentIntentId,
            });
            return { purchaseId: purchase.id, relayed: true };
          }
          const subscriptionChange = subscriptionChangeOf(event);
          if (subscriptionChange) {
            const first = await deps.subscriptions.findBySubscription(subscriptionChange.subscriptionId);
            if (!first) return { purchaseId: null, relayed: false };
            // To the policy workflow of the period in force (the newest paid one), which records it in turn.
            const periods = await deps.subscriptions.subscriptionPeriods(first.id);
            const current = currentPeriodOf(first, periods);
            const { subscriptionId: _id, ...change } = subscriptionChange;
            await deps.workflows.subscriptionChanged(current, { subscriptionPurchaseId: first.id, ...change });
            return { purchaseId: first.id, relayed: true };
          }
          const payment = toPaymentEvent(event);
          if (purchaseId === null || payment === null || !purchase) {
            if (payment !== null)
              deps.log.warn({ eventId: event.id, eventType: event.type }, 'payment event names no purchase of this service: not relayed');
            return { purchaseId, relayed: false };
          }
          // Signalled even for a duplicate: if the first delivery stored the event but failed to
          // signal, the processor's retry must still reach the workflow (which ignores repeats).
          if (await deps.workflows.signalPayment(purchaseId, payment)) return { purchaseId, relayed: true };
          // No open run: a payment must never be dropped. Unless its certificates are issued already
          // (a late duplicate) or it was refunded, a new run of the purchase records it and issues them.
          if (payment.outcome !== 'paid' || purchase.certificatesIssuedAt || purchase.status === 'refunded') {
            return { purchaseId, relayed: false };
          }
          const resumed = await deps.workflows.resumePurchase({ purchase, event: payment });
          deps.log.warn(
            { purchaseId, eventId: event.id, eventType: event.type, purchaseStatus: purchase.status, resumed },
            'payment event for a purchase whose workflow run had closed: a new run records the payment and issues the certificates',
          );
          return { purchaseId, relayed: true };
        },
      };
    },
  };
}

export type ProcessorEventRouter = ReturnType<typeof createProcessorEventRouter>;
