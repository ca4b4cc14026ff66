import { priceQuote } from '../../src/quotes/pricing';

describe('priceQuote', () => {
  test('when two products are priced with factors and a platform fee, then each line, the fee and the total are exact minor units', () => {
    const q = priceQuote(
      [
        { unitPriceMinor: 4950, units: 3, priceFactor: 1.25 }, // 49.50 × 3 × 1.25 = 185.625 → 185.63
        { unitPriceMinor: 1200, units: 3, priceFactor: 1 },
      ],
      250, // 2.5 %
    );
    expect(q.lines.map((l) => l.amountMinor)).toEqual([18563, 3600]);
    expect(q.subtotalMinor).toBe(22163);
    expect(q.platformFeeMinor).toBe(554); // 221.63 × 2.5 % = 5.54075
    expect(q.totalMinor).toBe(22717);
  });

  test('when factors multiply with binary noise, then rounding is still half-up on the exact value', () => {
    const q = priceQuote([{ unitPriceMinor: 100, units: 1, priceFactor: 1.1 * 1.1 }], null);
    expect(q.lines[0]!.amountMinor).toBe(121);
    expect(q.platformFeeMinor).toBe(0);
    expect(q.totalMinor).toBe(121);
  });
});
