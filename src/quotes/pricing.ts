/**
 * Quote pricing (issue: default price × covered units × dropdown factors, plus the key's
 * platform fee as its own line). All amounts are integer minor units; each line is rounded
 * half-up once, and the fee is rounded once on the subtotal. The total is what the checkout
 * charges and may not exceed the processor's single-charge limit.
 */

/** The processor's largest single charge in minor units (999 999.99 in major units). */
export const MAX_CHARGE_MINOR = 99_999_999;

export interface PricedLine {
  unitPriceMinor: number;
  units: number;
  priceFactor: number;
  amountMinor: number;
}

export interface PricedQuote {
  lines: PricedLine[];
  subtotalMinor: number;
  platformFeeBps: number | null;
  platformFeeMinor: number;
  totalMinor: number;
}

/** Rounds half away from zero after removing binary noise (1.1 × 1.1 = 1.2100000000000002). */
function roundMinor(x: number): number {
  return Math.round(Number(x.toPrecision(15)));
}

export function priceQuote(items: Omit<PricedLine, 'amountMinor'>[], platformFeeBps: number | null): PricedQuote {
  const lines = items.map((i) => ({ ...i, amountMinor: roundMinor(i.unitPriceMinor * i.units * i.priceFactor) }));
  const subtotalMinor = lines.reduce((s, l) => s + l.amountMinor, 0);
  const platformFeeMinor = platformFeeBps ? roundMinor((subtotalMinor * platformFeeBps) / 10_000) : 0;
  return { lines, subtotalMinor, platformFeeBps, platformFeeMinor, totalMinor: subtotalMinor + platformFeeMinor };
}
