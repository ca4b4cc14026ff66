/**
 * The commission rule (src/purchases/commission.ts) as properties: never negative on a sale,
 * never more than the premium, and what any number of partial cancellations give back never
 * exceeds what the sale earned (all of it when everything is cancelled).
 */
import fc from 'fast-check';
import { commissionOf } from '../../src/purchases/commission';

const premium = fc.integer({ min: 0, max: 99_999_999 });
const rate = fc.integer({ min: 0, max: 10_000 });

test('when a sale earns commission, then it is never negative and never more than the premium', () => {
  fc.assert(
    fc.property(premium, rate, (p, bps) => {
      const c = commissionOf(p, bps);
      expect(c).toBeGreaterThanOrEqual(0);
      expect(c).toBeLessThanOrEqual(p);
      expect(commissionOf(0 - p, bps)).toBe(c === 0 ? 0 : 0 - c);
    }),
  );
});

test('when the premium is given back in parts, then the commission given back never exceeds what was earned, and all of it comes back with all the premium', () => {
  fc.assert(
    fc.property(premium, rate, fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 20 }), (p, bps, weights) => {
      const earned = commissionOf(p, bps);
      // Split the premium into parts by the weights (the last part takes the residue).
      const sum = weights.reduce((s, w) => s + w, 0);
      const parts = weights.map((w) => Math.floor((p * w) / sum));
      parts[parts.length - 1]! += p - parts.reduce((s, x) => s + x, 0);
      let returned = 0;
      for (const part of parts) {
        returned += 0 - commissionOf(0 - part, bps);
        expect(returned).toBeLessThanOrEqual(earned);
      }
      expect(0 - commissionOf(0 - p, bps)).toBe(earned);
    }),
  );
});

test('when the worked example is priced, then 120.00 at 1 250 bp earns 15.00 and 40.00 back gives 5.00 back', () => {
  expect(commissionOf(12_000, 1250)).toBe(1500);
  expect(commissionOf(-4000, 1250)).toBe(-500);
  expect(commissionOf(1, 9999)).toBe(0);
  expect(() => commissionOf(1.5, 100)).toThrow(RangeError);
  expect(() => commissionOf(100, 10_001)).toThrow(RangeError);
});
