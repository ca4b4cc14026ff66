/**
 * Properties of the refund rule (src/purchases/refund-rule.ts) for the buyer's withdrawal and
 * the platform fee, over arbitrary purchases (seeded fast-check): a refund never exceeds what was
 * paid; cancelling every unit one at a time (free look or withdrawal) gives back exactly what
 * cancelling them all at once does, fee included; a withdrawal never gives back less than a
 * pro-rata cancellation of the same units, whatever the product's terms. Minor units.
 */
import fc from 'fast-check';
import { priceCancellation, priceWithdrawal, type RefundQuote, type RuleInput, type RuleItem } from '../../src/purchases/refund-rule';
import { cancellationTermsArb, DAY, DAY1, itemDrawsArb, ruleItemsOf } from '../helpers/refund-rule-arbitraries';

const SEED = 4811;

/** A purchase of 1–3 items of 1–10 days from DAY1, paid `paidDaysBefore` days before DAY1, and the units to cancel. */
const purchaseArb = fc
  .record({
    items: itemDrawsArb({ maxPremiumMinor: 2_000_000, maxTaxMinor: 200_000, maxUnits: 10 }, cancellationTermsArb(fc.constant(true))),
    fee: fc.integer({ min: 0, max: 100_000 }),
    paidDaysBefore: fc.integer({ min: 1, max: 13 }),
    /** Days after payment the cancellation takes effect (0 … 13: within the withdrawal period). */
    afterPayment: fc.integer({ min: 0, max: 13 }),
    pick: fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }),
    order: fc.array(fc.nat(), { minLength: 30, maxLength: 30 }),
    cap: fc.option(fc.integer({ min: 0, max: 10_000_000 })),
  })
  .map((c) => {
    const items = ruleItemsOf(c.items);
    const paidAt = new Date(DAY1 - c.paidDaysBefore * DAY - 3_600_000);
    const effectiveAt = new Date(paidAt.getTime() + c.afterPayment * DAY);
    const open = items.flatMap((it) => it.units).filter((u) => u.startsAt.getTime() > effectiveAt.getTime());
    return {
      items,
      platformFeeMinor: c.fee,
      paidAt,
      effectiveAt,
      open,
      some: open.filter((u) => c.pick[u.id % 30]).map((u) => u.id),
      order: c.order,
      cap: c.cap ?? undefined,
    };
  });

const paid = (items: RuleItem[], fee: number) => items.reduce((s, it) => s + it.premiumMinor + it.taxMinor, 0) + fee;
const deepItems = (items: RuleItem[]): RuleItem[] => items.map((it) => ({ ...it, units: it.units.map((u) => ({ ...u })) }));

/** Cancels every unit of `items` one at a time in the order `order` picks, each priced by `price`; the totals. */
function onePerCancellation(
  items: RuleItem[],
  order: number[],
  price: (input: Omit<RuleInput, 'requestedBy'>) => RefundQuote,
  base: Pick<RuleInput, 'platformFeeMinor' | 'paidAt' | 'effectiveAt'>,
): number[] {
  const own = deepItems(items);
  const ids = own.flatMap((it) => it.units.map((u) => u.id));
  const sequence = ids.map((id, k) => ({ id, key: order[k % order.length]! })).sort((a, b) => a.key - b.key || a.id - b.id);
  let refundedPlatformFeeMinor = 0;
  return sequence.map(({ id }) => {
    const q = price({ ...base, items: own, cancelUnitIds: [id], refundedPlatformFeeMinor });
    const item = own.find((it) => it.units.some((u) => u.id === id))!;
    item.units.find((u) => u.id === id)!.cancelled = true;
    item.refundedPremiumMinor += q.premiumMinor;
    refundedPlatformFeeMinor += q.platformFeeMinor;
    return q.totalMinor;
  });
}

test('for any purchase and any units, neither a cancellation nor a withdrawal gives back more than was paid, or more than the cap', () => {
  fc.assert(
    fc.property(
      purchaseArb.filter((c) => c.some.length > 0),
      fc.constantFrom('buyer', 'agency', 'insurer' as const),
      (c, requestedBy) => {
        const input = { ...c, cancelUnitIds: c.some, refundableMinor: c.cap };
        for (const q of [priceCancellation({ ...input, requestedBy }), priceWithdrawal(input)]) {
          expect(q.totalMinor).toBeLessThanOrEqual(paid(c.items, c.platformFeeMinor));
          expect(q.platformFeeMinor).toBeLessThanOrEqual(c.platformFeeMinor);
          expect(q.units.every((u) => u.refundableMinor >= 0 && u.refundableMinor <= u.premiumMinor)).toBe(true);
          if (c.cap !== undefined) expect(q.totalMinor).toBeLessThanOrEqual(c.cap);
        }
      },
    ),
    { numRuns: 400, seed: SEED },
  );
});

test('for any purchase cancelled one unit at a time before cover starts, the parts add up to the whole-purchase refund: in free look and for a withdrawal', () => {
  fc.assert(
    fc.property(
      purchaseArb.map((c) => ({ ...c, effectiveAt: new Date(c.paidAt.getTime() + 60_000) })),
      (c) => {
        const base = { platformFeeMinor: c.platformFeeMinor, paidAt: c.paidAt, effectiveAt: c.effectiveAt };
        const all = c.items.flatMap((it) => it.units.map((u) => u.id));
        // Withdrawal: whatever the terms.
        const whole = priceWithdrawal({ ...base, items: c.items, cancelUnitIds: all });
        expect(whole.totalMinor).toBe(paid(c.items, c.platformFeeMinor));
        const parts = onePerCancellation(c.items, c.order, (i) => priceWithdrawal(i), base);
        expect(parts.reduce((a, b) => a + b, 0)).toBe(whole.totalMinor);
        // Free look: the same purchase with a 14-day free look on every item.
        const looked = c.items.map((it) => ({ ...it, terms: { ...it.terms, freeLookDays: 14 } }));
        const wholeLook = priceCancellation({ ...base, items: looked, cancelUnitIds: all, requestedBy: 'buyer' });
        expect(wholeLook).toMatchObject({ method: 'free_look', totalMinor: paid(c.items, c.platformFeeMinor) });
        const partsLook = onePerCancellation(looked, c.order, (i) => priceCancellation({ ...i, requestedBy: 'buyer' }), base);
        expect(partsLook.reduce((a, b) => a + b, 0)).toBe(wholeLook.totalMinor);
      },
    ),
    { numRuns: 300, seed: SEED },
  );
});

test('for any purchase within the withdrawal period, a withdrawal gives back at least the pro-rata refund of the same units, and at least the terms’ own', () => {
  fc.assert(
    fc.property(
      purchaseArb.filter((c) => c.some.length > 0),
      (c) => {
        const input = { ...c, cancelUnitIds: c.some, refundableMinor: c.cap };
        const withdrawal = priceWithdrawal(input);
        const proRata = priceCancellation({
          ...input,
          items: c.items.map((it) => ({ ...it, terms: { ...it.terms, refundMethod: 'pro_rata' as const, minimumEarnedPremiumMinor: 0 } })),
          requestedBy: 'buyer',
        });
        const asTerms = priceCancellation({ ...input, requestedBy: 'buyer' });
        expect(withdrawal.method).toBe('withdrawal');
        expect(withdrawal.totalMinor).toBeGreaterThanOrEqual(proRata.totalMinor);
        expect(withdrawal.totalMinor).toBeGreaterThanOrEqual(asTerms.totalMinor);
        // Uncapped: every part at least the pro-rata one, and nothing of a unit not started is kept.
        if (c.cap === undefined) {
          expect(withdrawal.premiumMinor).toBeGreaterThanOrEqual(proRata.premiumMinor);
          expect(withdrawal.taxMinor).toBeGreaterThanOrEqual(proRata.taxMinor);
          expect(withdrawal.platformFeeMinor).toBeGreaterThanOrEqual(proRata.platformFeeMinor);
          expect(withdrawal.units.every((u) => u.earnedMinor === 0)).toBe(true);
        }
      },
    ),
    { numRuns: 400, seed: SEED },
  );
});
