/**
 * Refunds of tax and commission never exceed what was charged (issue 49): over arbitrary taxed
 * purchases (seeded fast-check), every covered unit cancelled one at a time, in any order, by any
 * requester under any terms, through the refund rule (src/purchases/refund-rule.ts, which gives
 * tax back at the item's own rate) and the commission rule (src/purchases/commission.ts, on the
 * premium each cancellation returns): per item, the tax and commission given back are never
 * negative and never more than the item was charged. Minor units.
 */
import fc from 'fast-check';
import { priceCancellation, type CancellationRequester } from '../../src/purchases/refund-rule';
import { commissionOf } from '../../src/purchases/commission';
import { cancellationTermsArb, DAY, DAY1, itemDrawsArb, ruleItemsOf } from '../helpers/refund-rule-arbitraries';

test('when every unit of a taxed purchase with commission is cancelled one at a time, then tax and commission given back stay within what was charged, per item', () => {
  fc.assert(
    fc.property(
      itemDrawsArb({ maxPremiumMinor: 2_000_000, maxTaxMinor: 400_000, maxUnits: 8 }, cancellationTermsArb(fc.boolean())),
      fc.integer({ min: 0, max: 10_000 }),
      fc.array(fc.nat(), { minLength: 24, maxLength: 24 }),
      fc.constantFrom<CancellationRequester>('buyer', 'agency', 'insurer'),
      fc.boolean(),
      (draws, bps, order, requestedBy, withdrawal) => {
        const items = ruleItemsOf(draws);
        const paidAt = new Date(DAY1 - 2 * DAY);
        const effectiveAt = new Date(DAY1 - DAY);
        const ids = items.flatMap((it) => it.units.map((u) => u.id));
        const sequence = ids.map((id, k) => ({ id, key: order[k % order.length]! })).sort((a, b) => a.key - b.key || a.id - b.id);
        const taxBack = new Map<number, number>();
        const commissionBack = new Map<number, number>();
        for (const { id } of sequence) {
          const q = priceCancellation({ items, platformFeeMinor: 0, paidAt, effectiveAt, cancelUnitIds: [id], requestedBy, withdrawal });
          const item = items.find((it) => it.units.some((u) => u.id === id))!;
          const premium = q.units.reduce((s, u) => s + u.refundableMinor, 0);
          expect(q.taxMinor).toBeGreaterThanOrEqual(0);
          taxBack.set(item.id, (taxBack.get(item.id) ?? 0) + q.taxMinor);
          commissionBack.set(item.id, (commissionBack.get(item.id) ?? 0) - commissionOf(0 - premium, bps));
          item.refundedPremiumMinor += premium;
          item.units.find((u) => u.id === id)!.cancelled = true;
        }
        for (const item of items) {
          expect(taxBack.get(item.id) ?? 0).toBeLessThanOrEqual(item.taxMinor);
          const earned = commissionOf(item.premiumMinor, bps);
          expect(commissionOf(item.premiumMinor, bps)).toBeGreaterThanOrEqual(0);
          expect(commissionBack.get(item.id) ?? 0).toBeGreaterThanOrEqual(0);
          expect(commissionBack.get(item.id) ?? 0).toBeLessThanOrEqual(earned);
        }
      },
    ),
    { seed: 4913, numRuns: 300 },
  );
});
