/**
 * A purchase record as the purchases repository reads it, for unit tests of code that takes one
 * (event payloads, the status event): a paid 75.00 test-mode purchase with a 1.88 platform fee
 * (amounts in minor units), `overrides` on top.
 */
import type { PurchaseRecord } from '../../src/purchases/purchase-record';

/** A purchase as the repository reads it (a partial record cast: a field the builders start reading shows up as missing). */
export function purchaseRecord(overrides: Partial<PurchaseRecord> = {}): PurchaseRecord {
  const record: Partial<PurchaseRecord> = {
    id: 42,
    rootAccountId: 3,
    apiKeyId: 9,
    agentId: 5,
    buyerId: 11,
    buyerEmail: 'jordan@example.com',
    mode: 'test',
    billing: 'one_time',
    status: 'paid',
    currency: 'usd',
    subtotalMinor: 7500,
    platformFeeMinor: 188,
    totalMinor: 7688,
    savePaymentMethod: false,
    checkoutSessionId: 'cs_test_1',
    checkoutUrl: 'https://checkout.example/cs_test_1',
    checkoutExpiresAt: new Date('2026-11-23T11:58:40.000Z'),
    paymentIntentId: 'pi_1',
    paidAt: new Date('2026-11-22T12:00:05.000Z'),
    certificatesIssuedAt: null,
    refundedAt: null,
    refundedMinor: 0,
    failureReason: null,
    failedAt: null,
    payprocSubscriptionId: null,
    renewalOfPurchaseId: null,
    returnToken: null,
    testClockAt: null,
    subscriptionCancelAtPeriodEnd: false,
    subscriptionEndedAt: null,
    subscriptionCancelledBy: null,
    bundle: null,
    metadata: { order_id: 'ORD-1' },
    createdAt: new Date('2026-11-22T11:58:40.000Z'),
    ...overrides,
  };
  return record as PurchaseRecord;
}
