/**
 * The agency event of a purchase's status (src/events/emitter.ts, `purchaseStatus`): statuses
 * that announce an event read the purchase's buyer and items and publish it once; the others
 * (a paid purchase passes `awaiting_certificates` on its way to `issued`) read nothing more than
 * the purchase and publish nothing. A unit test of that one function, with the repository and
 * the publisher replaced by recorders.
 */
import { createEventEmitter } from '../../src/events/emitter';
import type { StoredEvent } from '../../src/events/repository';
import { purchaseRecord } from '../helpers/purchase-record';
import type { PurchaseStatus } from '../../workflows/contracts';

/** A purchase in `status`, with the fields that status implies. */
function purchase(status: PurchaseStatus) {
  const at = new Date('2026-11-20T10:00:00Z');
  const unpaid = status === 'quoted' || status === 'awaiting_payment';
  return purchaseRecord({
    id: 41,
    status,
    paymentIntentId: unpaid ? null : 'pi_1',
    paidAt: unpaid ? null : at,
    certificatesIssuedAt: status === 'issued' ? at : null,
    failureReason: status === 'failed' ? 'card_declined' : null,
    failedAt: status === 'failed' ? at : null,
  });
}

/** An emitter over one purchase in `status`, recording what it reads and publishes. */
function emitterFor(status: PurchaseStatus) {
  const reads: string[] = [];
  const published: StoredEvent[] = [];
  const record = purchase(status);
  const emitter = createEventEmitter({
    sales: {
      findById: async (id: number) => (reads.push('purchase'), id === record.id ? record : null),
      buyerIdpAccntUuid: async () => (reads.push('buyer'), 'idp-buyer-1'),
      itemDetails: async () => (reads.push('items'), []),
    } as never,
    subscriptions: { subscriptionPeriods: async () => [] } as never,
    certificates: { getCertificates: async () => [] } as never,
    publisher: {
      publish: async (stored: StoredEvent) => (published.push(stored), { recorded: true, deliveries: 0 }),
    },
  });
  return { emitter, reads, published };
}

describe('the event of a purchase status', () => {
  test.each([
    ['awaiting_payment', 'purchase.checkout_created'],
    ['paid', 'purchase.paid'],
    ['expired', 'purchase.expired'],
    ['failed', 'purchase.failed'],
  ] as const)('when a purchase moves to %s, then its buyer and items are read and %s is published once', async (status, type) => {
    const { emitter, reads, published } = emitterFor(status);
    await emitter.purchaseStatus(41);
    expect(reads.sort()).toEqual(['buyer', 'items', 'purchase']);
    expect(published.map((e) => e.event.type)).toEqual([type]);
  });

  test.each(['quoted', 'awaiting_certificates', 'issued'] as const)(
    'when a purchase moves to %s, then only the purchase is read and nothing is published',
    async (status) => {
      const { emitter, reads, published } = emitterFor(status);
      await emitter.purchaseStatus(41);
      expect(reads).toEqual(['purchase']);
      expect(published).toEqual([]);
    },
  );

  test('when the purchase does not exist, then nothing is published', async () => {
    const { emitter, reads, published } = emitterFor('paid');
    await emitter.purchaseStatus(404);
    expect(reads).toEqual(['purchase']);
    expect(published).toEqual([]);
  });
});
