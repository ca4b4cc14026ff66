/**
 * The cancellation refund rule (src/purchases/refund-rule.ts): the docstring's worked examples,
 * each term (free look, pro rata, short rate, none, the insurer's method, the fee, the minimum
 * earned premium), the refusals, and properties over arbitrary purchases: integers only, the
 * breakdown adds up, never more back than was paid, cancelling more never gives back less.
 */
import fc from 'fast-check';
import {
  DEFAULT_CANCELLATION_TERMS,
  platformFeeShares,
  priceCancellation,
  priceWithdrawal,
  RefundRuleError,
  splitEvenly,
  spreadByWeight,
  type CancellationTerms,
  type RuleInput,
  type RuleItem,
} from '../../src/purchases/refund-rule';
import { cancellationTermsArb, DAY, DAY1, itemDrawsArb, ruleItemsOf } from '../helpers/refund-rule-arbitraries';

const paidAt = new Date(DAY1 - 20 * DAY);

/** 7 days at 10.00 with 12 % tax (8.40): unit ids 1–7. */
function sevenDays(terms: Partial<CancellationTerms> = {}, refundedPremiumMinor = 0): RuleItem {
  return {
    id: 10,
    premiumMinor: 7000,
    taxMinor: 840,
    refundedPremiumMinor,
    units: Array.from({ length: 7 }, (_, i) => ({ id: i + 1, startsAt: new Date(DAY1 + i * DAY), cancelled: false })),
    terms: { ...DEFAULT_CANCELLATION_TERMS, freeLookDays: 0, ...terms },
  };
}

function input(item: RuleItem, over: Partial<RuleInput> = {}): RuleInput {
  return {
    items: [item],
    platformFeeMinor: 200,
    paidAt,
    effectiveAt: new Date(DAY1 + 2 * DAY + 4 * 3_600_000),
    cancelUnitIds: [4, 5, 6, 7],
    requestedBy: 'buyer',
    ...over,
  };
}

const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    if (err instanceof RefundRuleError) return err.code;
    throw err;
  }
  return null;
};

describe('worked examples', () => {
  test('when the buyer cancels on day 3 of 7 days at 10.00 + 12 % tax + 2.00 fee, pro rata, then 44.80 comes back for 4 unstarted days', () => {
    const q = priceCancellation(input(sevenDays()));
    expect(q).toMatchObject({
      method: 'pro_rata',
      freeLook: false,
      premiumMinor: 4000,
      taxMinor: 480,
      platformFeeMinor: 0,
      totalMinor: 4480,
      endsPolicy: false,
    });
    expect(q.units.map((u) => [u.unitId, u.premiumMinor, u.earnedMinor, u.refundableMinor])).toEqual([
      [4, 1000, 0, 1000],
      [5, 1000, 0, 1000],
      [6, 1000, 0, 1000],
      [7, 1000, 0, 1000],
    ]);
  });

  test('when the same cancellation is short rate with a 10 % penalty, then 36.00 premium and 4.32 tax: 40.32', () => {
    const q = priceCancellation(input(sevenDays({ refundMethod: 'short_rate', shortRatePenaltyBps: 1000 })));
    expect(q).toMatchObject({ method: 'short_rate', premiumMinor: 3600, taxMinor: 432, platformFeeMinor: 0, totalMinor: 4032 });
    expect(q.units.map((u) => u.refundableMinor)).toEqual([900, 900, 900, 900]);
    expect(q.units.map((u) => u.earnedMinor)).toEqual([100, 100, 100, 100]);
  });

  test('when everything is cancelled before day 1 within a 14-day free look, then 80.40 comes back, fee included', () => {
    const q = priceCancellation(
      input(sevenDays({ freeLookDays: 14, refundMethod: 'none' }), {
        paidAt: new Date(DAY1 - 3 * DAY),
        effectiveAt: new Date(DAY1 - 2 * DAY),
        cancelUnitIds: [1, 2, 3, 4, 5, 6, 7],
      }),
    );
    expect(q).toMatchObject({
      method: 'free_look',
      freeLook: true,
      premiumMinor: 7000,
      taxMinor: 840,
      platformFeeMinor: 200,
      totalMinor: 8040,
      endsPolicy: true,
    });
  });
});

describe('the platform fee in free look (worked example: 3 days at 20.00, fee 7.40)', () => {
  /** 3 days at 20.00, no tax, 14-day free look, short rate 10 %: unit ids 1–3. */
  const threeDays = (terms: Partial<CancellationTerms> = {}): RuleItem => ({
    id: 10,
    premiumMinor: 6000,
    taxMinor: 0,
    refundedPremiumMinor: 0,
    units: Array.from({ length: 3 }, (_, i) => ({ id: i + 1, startsAt: new Date(DAY1 + i * DAY), cancelled: false })),
    terms: { ...DEFAULT_CANCELLATION_TERMS, freeLookDays: 14, refundMethod: 'short_rate', shortRatePenaltyBps: 1000, ...terms },
  });
  const dayZero = { platformFeeMinor: 740, paidAt: new Date(DAY1 - 5 * DAY), effectiveAt: new Date(DAY1 - 4 * DAY) };

  test('the fee is spread by premium, largest remainder, ties to the earliest: 2.47, 2.47, 2.46', () => {
    expect([...platformFeeShares([threeDays()], 740)]).toEqual([
      [1, 247],
      [2, 247],
      [3, 246],
    ]);
  });

  test('when one day of three is cancelled in free look, then its premium and its fee share come back', () => {
    const q = priceCancellation({ items: [threeDays()], ...dayZero, cancelUnitIds: [3], requestedBy: 'buyer' });
    expect(q).toMatchObject({ method: 'free_look', premiumMinor: 2000, platformFeeMinor: 246, totalMinor: 2246, endsPolicy: false });
  });

  test('when the days are cancelled one at a time, then the parts (22.46 + 22.47 + 22.47) add up to cancelling all at once (67.40)', () => {
    const item = threeDays();
    const whole = priceCancellation({ items: [item], ...dayZero, cancelUnitIds: [1, 2, 3], requestedBy: 'buyer' });
    expect(whole.totalMinor).toBe(6740);
    let refundedPlatformFeeMinor = 0;
    const parts = [3, 1, 2].map((id) => {
      const q = priceCancellation({ items: [item], ...dayZero, cancelUnitIds: [id], requestedBy: 'buyer', refundedPlatformFeeMinor });
      item.units.find((u) => u.id === id)!.cancelled = true;
      item.refundedPremiumMinor += q.premiumMinor;
      refundedPlatformFeeMinor += q.platformFeeMinor;
      return q.totalMinor;
    });
    expect(parts).toEqual([2246, 2247, 2247]);
    expect(parts.reduce((a, b) => a + b, 0)).toBe(whole.totalMinor);
  });

  test('when one day is cancelled after the free look, then its fee share stays (the method applies)', () => {
    const q = priceCancellation({
      items: [threeDays()],
      ...dayZero,
      paidAt: new Date(DAY1 - 20 * DAY),
      cancelUnitIds: [3],
      requestedBy: 'buyer',
    });
    expect(q).toMatchObject({ method: 'short_rate', premiumMinor: 1800, platformFeeMinor: 0 });
  });
});

describe('withdrawal (the buyer’s own, through the withdrawal link)', () => {
  /** Terms that would make a cancellation cost: no free look, short rate 10 %, 5.00 minimum earned. */
  const strict = { freeLookDays: 0, refundMethod: 'short_rate' as const, shortRatePenaltyBps: 1000, minimumEarnedPremiumMinor: 500 };
  const threeDays = (): RuleItem => ({
    id: 10,
    premiumMinor: 6000,
    taxMinor: 600,
    refundedPremiumMinor: 0,
    units: Array.from({ length: 3 }, (_, i) => ({ id: i + 1, startsAt: new Date(DAY1 + i * DAY), cancelled: false })),
    terms: { ...DEFAULT_CANCELLATION_TERMS, ...strict },
  });
  const base = { platformFeeMinor: 740, paidAt: new Date(DAY1 - 5 * DAY), effectiveAt: new Date(DAY1 - 4 * DAY), cancelUnitIds: [1, 2, 3] };

  test('when nothing has started, then everything comes back, premium, tax and fee, whatever the terms (a cancellation would give 54.00 + 5.40)', () => {
    expect(priceCancellation({ items: [threeDays()], ...base, requestedBy: 'buyer' })).toMatchObject({
      method: 'short_rate',
      totalMinor: 5940,
    });
    expect(priceWithdrawal({ items: [threeDays()], ...base })).toMatchObject({
      method: 'withdrawal',
      premiumMinor: 6000,
      taxMinor: 600,
      platformFeeMinor: 740,
      totalMinor: 7340,
      endsPolicy: true,
    });
  });

  test('when a day has started (cover provided at the buyer’s request), then it stays in force at its share and the rest comes back in full', () => {
    const q = priceWithdrawal({ items: [threeDays()], ...base, effectiveAt: new Date(DAY1 + 3_600_000), cancelUnitIds: [2, 3] });
    expect(q).toMatchObject({ method: 'withdrawal', premiumMinor: 4000, taxMinor: 400, platformFeeMinor: 493, endsPolicy: false });
    expect(q.units.every((u) => u.earnedMinor === 0)).toBe(true);
  });

  test('when the 14-day withdrawal period has passed, then the link cancels under the terms', () => {
    const q = priceWithdrawal({ items: [threeDays()], ...base, paidAt: new Date(DAY1 - 20 * DAY), effectiveAt: new Date(DAY1 - 5 * DAY) });
    expect(q).toMatchObject({ method: 'short_rate', premiumMinor: 5400, platformFeeMinor: 0 });
    const atDay14 = priceWithdrawal({
      items: [threeDays()],
      ...base,
      paidAt: new Date(DAY1 - 20 * DAY),
      effectiveAt: new Date(DAY1 - 6 * DAY),
    });
    expect(atDay14.method).toBe('withdrawal');
  });
});

describe('terms', () => {
  test('when the free look has passed (day 15), then the method applies and the fee stays', () => {
    const item = sevenDays({ freeLookDays: 14 });
    const q = priceCancellation(
      input(item, { paidAt: new Date(DAY1 - 20 * DAY), effectiveAt: new Date(DAY1 - 5 * DAY), cancelUnitIds: [1, 2, 3, 4, 5, 6, 7] }),
    );
    expect(q).toMatchObject({
      method: 'pro_rata',
      freeLook: false,
      premiumMinor: 7000,
      taxMinor: 840,
      platformFeeMinor: 0,
      totalMinor: 7840,
    });
  });

  test('when a unit has started, then there is no free look even within its days', () => {
    const q = priceCancellation(input(sevenDays({ freeLookDays: 14 }), { paidAt: new Date(DAY1 - DAY) }));
    expect(q.freeLook).toBe(false);
    expect(q.method).toBe('pro_rata');
  });

  test('when free look is 0 days (a short cover exempt from withdrawal), then a cancellation on the day of payment is priced by the method', () => {
    const q = priceCancellation(
      input(sevenDays({ freeLookDays: 0, refundMethod: 'none' }), {
        paidAt: new Date(DAY1 - 3 * DAY),
        effectiveAt: new Date(DAY1 - 3 * DAY + 60_000),
        cancelUnitIds: [1, 2, 3, 4, 5, 6, 7],
      }),
    );
    expect(q).toMatchObject({ method: 'none', freeLook: false, totalMinor: 0, platformFeeMinor: 0 });
    expect(q.units.every((u) => u.earnedMinor === u.premiumMinor)).toBe(true);
  });

  test('when the insurer cancels, then its own method applies (short rate for the insured, pro rata for the insurer)', () => {
    const item = sevenDays({ refundMethod: 'short_rate', insurerRefundMethod: 'pro_rata', shortRatePenaltyBps: 2500 });
    expect(priceCancellation(input(item, { requestedBy: 'buyer' })).premiumMinor).toBe(3000);
    expect(priceCancellation(input(item, { requestedBy: 'agency' })).premiumMinor).toBe(3000);
    expect(priceCancellation(input(item, { requestedBy: 'insurer' }))).toMatchObject({ method: 'pro_rata', premiumMinor: 4000 });
  });

  test('when the whole rest of the policy is cancelled and the fee is refundable, then the fee comes back; partially outside free look, never', () => {
    const before = { paidAt: new Date(DAY1 - 30 * DAY), effectiveAt: new Date(DAY1 - DAY) };
    const all = [1, 2, 3, 4, 5, 6, 7];
    expect(priceCancellation(input(sevenDays({ platformFeeRefundable: true }), { ...before, cancelUnitIds: all })).platformFeeMinor).toBe(
      200,
    );
    expect(priceCancellation(input(sevenDays({ platformFeeRefundable: true }), { ...before, cancelUnitIds: [7] })).platformFeeMinor).toBe(
      0,
    );
    expect(priceCancellation(input(sevenDays({ platformFeeRefundable: false }), { ...before, cancelUnitIds: all })).platformFeeMinor).toBe(
      0,
    );
    // The last active units of a policy whose other units an earlier cancellation took.
    const item = sevenDays({ platformFeeRefundable: true });
    item.units.slice(0, 5).forEach((u) => (u.cancelled = true));
    expect(priceCancellation(input(item, { ...before, cancelUnitIds: [6, 7] }))).toMatchObject({ endsPolicy: true, platformFeeMinor: 200 });
  });

  test('when a minimum earned premium is set, then the item never gives back below it, earlier refunds included', () => {
    // 70.00 premium, 50.00 minimum earned: at most 20.00 back in all.
    expect(priceCancellation(input(sevenDays({ minimumEarnedPremiumMinor: 5000 }))).premiumMinor).toBe(2000);
    expect(priceCancellation(input(sevenDays({ minimumEarnedPremiumMinor: 5000 }, 1500), { cancelUnitIds: [7] })).premiumMinor).toBe(500);
    expect(priceCancellation(input(sevenDays({ minimumEarnedPremiumMinor: 5000 }, 2000), { cancelUnitIds: [7] })).totalMinor).toBe(0);
    // A minimum above the premium keeps all of it.
    expect(priceCancellation(input(sevenDays({ minimumEarnedPremiumMinor: 999_999 }))).totalMinor).toBe(0);
  });

  test('when an item does not divide evenly, then the residue sits on the earliest units and the shares add up', () => {
    const item: RuleItem = { ...sevenDays(), premiumMinor: 1000, taxMinor: 100, units: sevenDays().units.slice(0, 3) };
    const q = priceCancellation(input(item, { effectiveAt: new Date(DAY1 - DAY), cancelUnitIds: [1, 2, 3] }));
    expect(q.units.map((u) => u.premiumMinor)).toEqual([334, 333, 333]);
    expect(q).toMatchObject({ premiumMinor: 1000, taxMinor: 100 });
  });
});

describe('what is left to refund', () => {
  test('when part was already refunded (a dashboard refund), then the refund stops at what is left, premium cut first', () => {
    // 44.80 due, 30.00 left of the 80.40 paid: premium 40.00 → 25.20, tax 4.80 kept.
    const q = priceCancellation(input(sevenDays(), { refundableMinor: 3000 }));
    expect(q).toMatchObject({ premiumMinor: 2520, taxMinor: 480, platformFeeMinor: 0, totalMinor: 3000 });
    expect(q.units.reduce((s, u) => s + u.refundableMinor, 0)).toBe(2520);
    expect(q.units.every((u) => u.earnedMinor + u.refundableMinor === u.premiumMinor)).toBe(true);
    expect(priceCancellation(input(sevenDays(), { refundableMinor: 0 })).totalMinor).toBe(0);
    expect(priceCancellation(input(sevenDays(), { refundableMinor: 10_000 })).totalMinor).toBe(4480);
  });
});

describe('refusals', () => {
  test.each([
    ['a unit of another purchase', [99], 'UNKNOWN_COVERED_UNIT'],
    ['the same unit twice', [5, 5], 'DUPLICATE_COVERED_UNIT'],
    ['a unit that has started', [3], 'COVERED_UNIT_STARTED'],
    ['no unit', [], 'NOTHING_TO_CANCEL'],
  ])('when the list holds %s (%j), then %s', (_what, ids, code) => {
    expect(codeOf(() => priceCancellation(input(sevenDays(), { cancelUnitIds: ids })))).toBe(code);
  });

  test('when a unit is already cancelled, then COVERED_UNIT_ALREADY_CANCELLED', () => {
    const item = sevenDays();
    item.units[6]!.cancelled = true;
    expect(codeOf(() => priceCancellation(input(item)))).toBe('COVERED_UNIT_ALREADY_CANCELLED');
  });

  test('when a day starts exactly at the effective time, then it has started', () => {
    expect(codeOf(() => priceCancellation(input(sevenDays(), { effectiveAt: new Date(DAY1 + 3 * DAY), cancelUnitIds: [4] })))).toBe(
      'COVERED_UNIT_STARTED',
    );
    expect(
      codeOf(() => priceCancellation(input(sevenDays(), { effectiveAt: new Date(DAY1 + 3 * DAY - 1), cancelUnitIds: [4] }))),
    ).toBeNull();
  });
});

describe('splitting', () => {
  test('splitEvenly and spreadByWeight add up exactly, residue first', () => {
    expect(splitEvenly(1000, 3)).toEqual([334, 333, 333]);
    expect(splitEvenly(5, 0)).toEqual([]);
    expect(spreadByWeight(100, [1, 1, 1])).toEqual([34, 33, 33]);
    expect(spreadByWeight(7, [0, 0])).toEqual([7, 0]);
    expect(spreadByWeight(10, [3, 1])).toEqual([8, 2]);
  });
});

describe('properties', () => {
  const caseArb = fc
    .record({
      items: itemDrawsArb({ maxPremiumMinor: 5_000_000, maxTaxMinor: 500_000, maxUnits: 30 }, cancellationTermsArb(fc.boolean())),
      fee: fc.integer({ min: 0, max: 100_000 }),
      paidDaysBefore: fc.integer({ min: 0, max: 40 }),
      effectiveDay: fc.integer({ min: -10, max: 35 }),
      requestedBy: fc.constantFrom('buyer', 'agency', 'insurer' as const),
      pick: fc.array(fc.boolean(), { minLength: 90, maxLength: 90 }),
      cap: fc.option(fc.integer({ min: 0, max: 20_000_000 })),
    })
    .map((c) => {
      const items = ruleItemsOf(c.items);
      const effectiveAt = new Date(DAY1 + c.effectiveDay * DAY - 3_600_000);
      const open = items.flatMap((it) => it.units).filter((u) => u.startsAt.getTime() > effectiveAt.getTime());
      const cancelUnitIds = open.filter((u) => c.pick[u.id % 90]).map((u) => u.id);
      return {
        items,
        platformFeeMinor: c.fee,
        paidAt: new Date(DAY1 - c.paidDaysBefore * DAY),
        effectiveAt,
        requestedBy: c.requestedBy,
        cancelUnitIds,
        open,
        refundableMinor: c.cap ?? undefined,
      };
    })
    .filter((c) => c.cancelUnitIds.length > 0);

  test('for any purchase: integers, the breakdown adds up, never more than the cancelled units paid, the fee only when the policy ends', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const q = priceCancellation(c);
        const all = [
          q.premiumMinor,
          q.taxMinor,
          q.platformFeeMinor,
          q.totalMinor,
          ...q.units.flatMap((u) => [u.premiumMinor, u.earnedMinor, u.refundableMinor]),
        ];
        expect(all.every((n) => Number.isSafeInteger(n) && n >= 0)).toBe(true);
        expect(q.totalMinor).toBe(q.premiumMinor + q.taxMinor + q.platformFeeMinor);
        expect(q.units.reduce((s, u) => s + u.refundableMinor, 0)).toBe(q.premiumMinor);
        expect(q.units.every((u) => u.earnedMinor + u.refundableMinor === u.premiumMinor)).toBe(true);
        expect(q.units.map((u) => u.unitId).sort((a, b) => a - b)).toEqual([...c.cancelUnitIds].sort((a, b) => a - b));
        expect(q.premiumMinor).toBeLessThanOrEqual(q.units.reduce((s, u) => s + u.premiumMinor, 0));
        expect(q.taxMinor).toBeLessThanOrEqual(c.items.reduce((s, it) => s + it.taxMinor, 0));
        // Before the policy ends, the fee comes back only as the cancelled units' free-look shares.
        const shares = platformFeeShares(c.items, c.platformFeeMinor);
        if (!q.endsPolicy) expect(q.platformFeeMinor).toBeLessThanOrEqual(c.cancelUnitIds.reduce((s, id) => s + shares.get(id)!, 0));
        if (!q.endsPolicy && !c.items.some((it) => it.terms.freeLookDays > 0)) expect(q.platformFeeMinor).toBe(0);
        if (c.refundableMinor !== undefined) expect(q.totalMinor).toBeLessThanOrEqual(c.refundableMinor);
      }),
      { numRuns: 500 },
    );
  });

  test('for any purchase: cancelling every open unit gives back at least as much as cancelling some of them', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const some = priceCancellation(c);
        const every = priceCancellation({ ...c, cancelUnitIds: c.open.map((u) => u.id) });
        expect(every.totalMinor).toBeGreaterThanOrEqual(some.totalMinor);
      }),
      { numRuns: 500 },
    );
  });
});
