/**
 * fast-check arbitraries for the refund rule's tests (src/purchases/refund-rule.ts): a product's
 * cancellation terms and a purchase's items of whole covered days, money in minor units.
 */
import fc from 'fast-check';
import type { CancellationTerms, RuleItem } from '../../src/purchases/refund-rule';

export const DAY = 86_400_000;
/** Local midnight of 1 June 2027 in America/Chicago (05:00 UTC), the first covered day. */
export const DAY1 = Date.parse('2027-06-01T05:00:00Z');

/** Any cancellation terms; `buyerWithdrawal` says whether the buyer's withdrawal right applies. */
export const cancellationTermsArb = (buyerWithdrawal: fc.Arbitrary<boolean>): fc.Arbitrary<CancellationTerms> =>
  fc.record({
    freeLookDays: fc.integer({ min: 0, max: 30 }),
    refundMethod: fc.constantFrom('pro_rata', 'short_rate', 'none'),
    insurerRefundMethod: fc.constantFrom('pro_rata', 'short_rate', 'none'),
    shortRatePenaltyBps: fc.integer({ min: 0, max: 10_000 }),
    platformFeeRefundable: fc.boolean(),
    minimumEarnedPremiumMinor: fc.integer({ min: 0, max: 50_000 }),
    buyerWithdrawal,
  });

/** One item as drawn: its premium and tax (minor units), how many days it covers, its terms. */
export interface ItemDraw {
  premiumMinor: number;
  taxMinor: number;
  units: number;
  terms: CancellationTerms;
}

/** 1–3 items, each at most `maxPremiumMinor` premium, `maxTaxMinor` tax and `maxUnits` days. */
export const itemDrawsArb = (
  limits: { maxPremiumMinor: number; maxTaxMinor: number; maxUnits: number },
  terms: fc.Arbitrary<CancellationTerms>,
): fc.Arbitrary<ItemDraw[]> =>
  fc.array(
    fc.record({
      premiumMinor: fc.integer({ min: 0, max: limits.maxPremiumMinor }),
      taxMinor: fc.integer({ min: 0, max: limits.maxTaxMinor }),
      units: fc.integer({ min: 1, max: limits.maxUnits }),
      terms,
    }),
    { minLength: 1, maxLength: 3 },
  );

/** The drawn items as the rule reads them: ids from 1, nothing refunded yet, unit ids 1… across items, one day each from DAY1. */
export const ruleItemsOf = (draws: ItemDraw[]): RuleItem[] => {
  let next = 1;
  return draws.map((it, k) => ({
    id: k + 1,
    premiumMinor: it.premiumMinor,
    taxMinor: it.taxMinor,
    refundedPremiumMinor: 0,
    units: Array.from({ length: it.units }, (_, i) => ({ id: next++, startsAt: new Date(DAY1 + i * DAY), cancelled: false })),
    terms: it.terms,
  }));
};
