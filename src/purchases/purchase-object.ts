/**
 * The `purchase` object as agencies see it, in one place: the events carry it (no buyer contact
 * data, since they leave the service) and `GET /api/v1/purchases` extends it with what was paid,
 * what is outstanding and the buyer's email. Amounts in minor units; instants ISO 8601 UTC.
 */
import type { PurchaseRecord } from './repository';

export function purchaseObject(p: PurchaseRecord) {
  return {
    object: 'purchase' as const,
    id: p.id,
    status: p.status,
    livemode: p.mode === 'live',
    billing: p.billing,
    checkout_session_id: p.checkoutSessionId,
    payment_intent: p.paymentIntentId,
    currency: p.currency,
    amount_subtotal: p.subtotalMinor,
    platform_fee: p.platformFeeMinor,
    amount_total: p.totalMinor,
    amount_refunded: p.refundedMinor,
    failure_reason: p.failureReason,
    subscription_id: p.payprocSubscriptionId,
    renewal_of_purchase_id: p.renewalOfPurchaseId,
    agent_id: p.agentId,
    bundle: p.bundle,
    metadata: p.metadata,
    paid_at: p.paidAt?.toISOString() ?? null,
    certificates_issued_at: p.certificatesIssuedAt?.toISOString() ?? null,
    created_at: p.createdAt.toISOString(),
  };
}
