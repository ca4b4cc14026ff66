/**
 * The `purchase` object as agencies see it, in one place: the events carry it (no buyer contact
 * data, since they leave the service) and `GET /api/v1/purchases` extends it with what was paid,
 * what is outstanding and the buyer's email. Amounts in minor units; instants ISO 8601 UTC.
 */
import type { PurchaseItemDetail, PurchaseRecord } from './purchase-record';
import type { StoredDispute } from '../disputes/repository';

/**
 * An item as both the events and `GET /api/v1/purchases/{id}` show it: product, premium (minor
 * units) and each covered unit's window (instants ISO 8601 UTC); the API adds parties, states and
 * certificates to it.
 */
export function itemObject(i: PurchaseItemDetail) {
  return {
    id: i.id,
    product_id: i.productLineId,
    product_name: i.productName,
    in_bundle: i.inBundle,
    unit_price: i.unitPriceMinor,
    price_factor: i.priceFactor,
    amount: i.amountMinor,
    covered_units: i.units.map((u) => ({
      id: u.id,
      index: u.index,
      kind: u.kind,
      starts_at: u.startsAt.toISOString(),
      ends_at: u.endsAt.toISOString(),
      time_zone: u.timeZone,
      local_label: u.localLabel,
    })),
  };
}

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
    amount_tax: p.taxMinor ?? 0, // a record built before tax was kept has none
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

/**
 * A dispute of the purchase's payment as `GET /api/v1/purchases/{id}` and the dispute events give
 * it, after its id: the processor's charge, the amount disputed (minor units of `currency`), the
 * processor's reason and status, and when it opened and closed (ISO 8601 UTC; `closed_at` null
 * while open).
 */
export function disputeFacts(d: StoredDispute) {
  return {
    charge: d.chargeId,
    amount: d.amountMinor,
    currency: d.currency,
    reason: d.reason,
    status: d.status,
    opened_at: d.openedAt.toISOString(),
    closed_at: d.closedAt?.toISOString() ?? null,
  };
}
