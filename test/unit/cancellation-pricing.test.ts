/**
 * The cancellation price of a stored purchase without servers: what is still refundable when the
 * sale's payment was partly refunded in the processor's dashboard and a paid holder endorsement's
 * premium (another payment) was given back. Amounts in minor units.
 */
import { priceCancellationOf, type EndorsementCharge } from '../../src/purchases/cancellation-pricing';
import type { PurchaseItemDetail, PurchaseRecord } from '../../src/purchases/purchase-record';
import { DEFAULT_CANCELLATION_TERMS } from '../../src/products/cancellation-terms';
import type { StoredCancellation } from '../../src/purchases/ledger-record';

const paidAt = new Date('2027-01-01T12:00:00Z');
const day = (n: number) => new Date(Date.UTC(2027, 5, n, 5));
/** A sale of two days at 20.00, no platform fee, refunded 2.00 so far as the processor reports it. */
const sale = { id: 1, totalMinor: 4000, refundedMinor: 200, platformFeeMinor: 0, paidAt, createdAt: paidAt } as unknown as PurchaseRecord;
const items = [
  {
    id: 10,
    amountMinor: 4000,
    cancellationTerms: DEFAULT_CANCELLATION_TERMS,
    units: [1, 2].map((id) => ({
      id,
      index: id - 1,
      kind: 'day',
      startsAt: day(id),
      endsAt: day(id + 1),
      cancellationId: null,
      cancelledAt: null,
    })),
  },
] as unknown as PurchaseItemDetail[];
/** A holder's waiver at 7.50 a day paid by its own payment, then removed: the 15.00 given back. */
const holderCharges: EndorsementCharge[] = [
  { totalMinor: 1500, platformFeeMinor: 0, breakdown: [1, 2].map((unitId) => ({ unitId, itemId: 10, premiumMinor: 750 })) },
  { totalMinor: -1500, platformFeeMinor: 0, breakdown: [1, 2].map((unitId) => ({ unitId, itemId: 10, premiumMinor: -750 })) },
];
const ask = { requestedBy: 'buyer' as const, effectiveAt: new Date('2027-01-02T12:00:00Z') };

test('when the sale was refunded 2.00 in the dashboard and a holder endorsement’s 15.00 went back, then a full cancellation gives back the 38.00 the payments still hold', () => {
  const priced = priceCancellationOf(sale, items, [], ask, holderCharges, 200);
  expect(priced.totalMinor).toBe(3800);
  expect(priced.units.map((u) => u.refundableMinor).reduce((a, b) => a + b, 0)).toBe(3800);
});

test('when the purchase’s refunded amount is greater than the ledger knows (an event from before dashboard refunds were kept), then that amount counts, once', () => {
  expect(priceCancellationOf({ ...sale, refundedMinor: 2000 }, items, [], ask, holderCharges, 0).totalMinor).toBe(3500);
  expect(priceCancellationOf({ ...sale, refundedMinor: 0 }, items, [], ask, [], 0).totalMinor).toBe(4000);
});

test('when an earlier free-look cancellation gave back its day’s fee share, then the cancellation that ends the policy gives back the rest of the fee, not all of it', () => {
  // Two days at 20.00 with a 3.01 fee (shares 1.51, 1.50); day 2 was cancelled in free look (20.00 + 1.50).
  const withFee = { ...sale, totalMinor: 4301, refundedMinor: 0, platformFeeMinor: 301 } as PurchaseRecord;
  const earlier = {
    status: 'completed',
    totalMinor: 2150,
    platformFeeMinor: 150,
    breakdown: [{ unitId: 2, itemId: 10, premiumMinor: 2000, earnedMinor: 0, refundableMinor: 2000 }],
  } as unknown as StoredCancellation;
  const rest = [{ ...items[0]!, units: items[0]!.units.map((u) => (u.id === 2 ? { ...u, cancellationId: 1 } : u)) }];
  const priced = priceCancellationOf(withFee, rest, [earlier], { ...ask, unitIds: [1] });
  expect(priced).toMatchObject({ method: 'free_look', endsPolicy: true, premiumMinor: 2000, platformFeeMinor: 151, totalMinor: 2151 });
});
