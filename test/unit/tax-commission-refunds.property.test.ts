/**
 * Refunds of tax and commission never exceed what was charged (issue 49): over arbitrary taxed
 * purchases (seeded fast-check), every covered unit cancelled one at a time, in any order, by any
 * requester under any terms, through the refund rule (src/purchases/refund-rule.ts, which gives
 * tax back at the item's own rate) and the commission rule (src/purchases/commission.ts, on the
 * premium each cancellation returns): per item, the tax and commission given back are never
 * negative and never more than the item was charged. The tax endorsements charge on premium they
 * add (src/taxes/premium-tax.ts `taxOnAddedPremium`) is never negative and is spread over their items
 * exactly (src/purchases/cancellation-pricing.ts `endorsementTaxByItem`), so an item's tax, sale's
 * and endorsements', is what it was charged. Minor units.
 */
import fc from 'fast-check';
import { priceCancellation, type CancellationRequester } from '../../src/purchases/refund-rule';
import { commissionOf } from '../../src/purchases/commission';
import { cancellationTermsArb, DAY, DAY1, itemDrawsArb, ruleItemsOf } from '../helpers/refund-rule-arbitraries';
import { endorsementTaxByItem } from '../../src/purchases/cancellation-pricing';
import { taxOnAddedPremium, type TaxLine } from '../../src/taxes/premium-tax';

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

test('when endorsements add premium to taxed items, then the tax on it is never negative and what each charged is spread over its items exactly (the items’ tax a cancellation gives back from)', () => {
  const line = (method: TaxLine['method'], rateBps: number | null): TaxLine => ({
    tax: method,
    method,
    label: method,
    jurisdiction: 'US-TX',
    rateBps,
    amountMinor: 0,
    source: 'test',
  });
  const lines = fc.array(
    fc.oneof(
      fc.integer({ min: 0, max: 3_000 }).map((bps) => line('premium_rate', bps)),
      fc.integer({ min: 0, max: 100 }).map((bps) => line('stamping_fee', bps)),
      fc.constant(line('fixed_per_policy', null)),
    ),
    { maxLength: 3 },
  );
  const charge = fc.array(
    fc.record({ itemId: fc.integer({ min: 1, max: 4 }), unitId: fc.nat(50), premiumMinor: fc.integer({ min: -50_000, max: 500_000 }) }),
    { minLength: 1, maxLength: 6 },
  );
  fc.assert(
    fc.property(lines, fc.array(charge, { maxLength: 4 }), (taxLines, breakdowns) => {
      const charges = breakdowns.map((breakdown) => {
        const added = new Map<number, number>();
        for (const u of breakdown) added.set(u.itemId, (added.get(u.itemId) ?? 0) + u.premiumMinor);
        const taxMinor = [...added.values()].reduce((s, p) => s + taxOnAddedPremium(p, taxLines), 0);
        expect(taxMinor).toBeGreaterThanOrEqual(0);
        return { breakdown, taxMinor };
      });
      const byItem = endorsementTaxByItem(charges);
      for (const share of byItem.values()) expect(share).toBeGreaterThanOrEqual(0);
      const charged = charges.filter((c) => c.breakdown.some((u) => u.premiumMinor > 0)).reduce((s, c) => s + c.taxMinor, 0);
      expect([...byItem.values()].reduce((s, v) => s + v, 0)).toBe(charged);
    }),
    { seed: 4914, numRuns: 300 },
  );
});
