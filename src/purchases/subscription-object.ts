/**
 * The `subscription` object as agencies see it, in one place for `GET /api/v1/subscriptions` and
 * the `subscription.cancelled` event. A subscription is named by its first purchase's id (the
 * purchase whose checkout created it at the processor); each later period is a renewal purchase
 * of its own. No buyer contact data (events leave the service). Amounts in minor units; instants
 * ISO 8601 UTC.
 *
 * Status: `incomplete` until the first period is paid, `active` while it renews (possibly with
 * `cancel_at_period_end`: renewals stop when the paid period ends), `cancelled` once it ended.
 */
import type { PurchaseRecord } from './purchase-record';

export type SubscriptionStatus = 'incomplete' | 'active' | 'cancelled';

export function subscriptionStatusOf(first: PurchaseRecord): SubscriptionStatus {
  if (first.subscriptionEndedAt) return 'cancelled';
  return first.paidAt ? 'active' : 'incomplete';
}

/** The period in force: the newest paid one (the first purchase until one is paid). `periods` in order. */
export function currentPeriodOf(first: PurchaseRecord, periods: PurchaseRecord[]): PurchaseRecord {
  return periods.filter((p) => p.paidAt).at(-1) ?? first;
}

/**
 * @param first the subscription's first purchase
 * @param periods its periods in order (the first purchase, then each renewal)
 */
export function subscriptionObject(first: PurchaseRecord, periods: PurchaseRecord[]) {
  const current = currentPeriodOf(first, periods);
  return {
    object: 'subscription' as const,
    id: first.id,
    status: subscriptionStatusOf(first),
    livemode: first.mode === 'live',
    processor_subscription_id: first.payprocSubscriptionId,
    currency: first.currency,
    amount_per_period: first.totalMinor,
    cancel_at_period_end: first.subscriptionCancelAtPeriodEnd,
    ended_at: first.subscriptionEndedAt?.toISOString() ?? null,
    cancelled_by: first.subscriptionCancelledBy,
    current_period_purchase_id: current.id,
    periods: periods.map((p, i) => ({ period: i + 1, purchase_id: p.id, status: p.status, paid_at: p.paidAt?.toISOString() ?? null })),
    agent_id: first.agentId,
    created_at: first.createdAt.toISOString(),
  };
}

export type SubscriptionObject = ReturnType<typeof subscriptionObject>;
