/**
 * planEndorsement's `add_covered_units` (src/endorsements/planning.ts), a pure function: the units
 * added are validated like a quote and priced like one (unit price × units × price factor, rounded
 * once per item and spread evenly; the sale's platform fee rate on that premium).
 */
import { planEndorsement, type EndorsementState } from '../../src/endorsements/planning';
import { chicagoDay } from '../helpers/covered-units';
import { endorsementErrorCode as codeOf, endorsementState, eventItem } from '../helpers/endorsement-state';

const clock = new Date('2027-04-01T12:00:00Z');
const day = chicagoDay;

function state(
  opts: { priceFactor?: number; unitPrice?: number; feeBps?: number | null; billing?: 'one_time' | 'subscription'; max?: number } = {},
): EndorsementState {
  const item = eventItem([day('2027-05-01', 11, 0), day('2027-05-02', 12, 1, 99)], {
    unitPriceMinor: opts.unitPrice,
    priceFactor: opts.priceFactor,
    amountMinor: 4000,
  });
  return endorsementState({ billing: opts.billing ?? 'one_time', platformFeeBps: opts.feeBps ?? null }, [item], {
    maxCoveredUnits: opts.max ?? 366,
  });
}
const add = (start: string, end = start) => ({ type: 'add_covered_units' as const, purchase_item_id: 7, start_date: start, end_date: end });

test('when three days are added at 20.00 with a 1.15 factor and a 2.5 % fee, then the premium is rounded once for the item (69.00), spread 23.00 a day, with a fee of 1.73', () => {
  const plan = planEndorsement(state({ priceFactor: 1.15, feeBps: 250 }), [add('2027-05-03', '2027-05-05')], clock);
  expect(plan.premiumDifferenceMinor).toBe(6900);
  expect(plan.platformFeeDifferenceMinor).toBe(173); // 6900 × 2.5 % = 172.5 → 173 (half up)
  expect(plan.totalDifferenceMinor).toBe(7073);
  expect(plan.additions).toHaveLength(1);
  expect(plan.additions[0]!.units.map((u) => [u.localLabel, u.premiumMinor])).toEqual([
    ['2027-05-03', 2300],
    ['2027-05-04', 2300],
    ['2027-05-05', 2300],
  ]);
  expect(plan.reissues).toEqual([]);
});

test('when the premium does not split evenly, then the residue goes one minor unit each to the earliest days and the shares add up', () => {
  // 1000 × 2 × 1.0005 = 2001: 1001 then 1000.
  const plan = planEndorsement(state({ unitPrice: 1000, priceFactor: 1.0005 }), [add('2027-05-03', '2027-05-04')], clock);
  expect(plan.premiumDifferenceMinor).toBe(2001);
  expect(plan.additions[0]!.units.map((u) => u.premiumMinor)).toEqual([1001, 1000]);
});

test('when a day is one the item already holds, then refused; a day whose unit was cancelled is free again', () => {
  expect(codeOf(() => planEndorsement(state(), [add('2027-05-01')], clock))).toBe('VALIDATION_ERROR');
  expect(planEndorsement(state(), [add('2027-05-02')], clock).premiumDifferenceMinor).toBe(2000);
});

test('when the days are in the past, beyond the item’s most units, of another item, or the purchase is a subscription period, then refused with the code the API answers', () => {
  expect(codeOf(() => planEndorsement(state(), [add('2027-03-30')], clock))).toBe('VALIDATION_ERROR');
  expect(codeOf(() => planEndorsement(state({ max: 3 }), [add('2027-05-03', '2027-05-04')], clock))).toBe('VALIDATION_ERROR');
  expect(planEndorsement(state({ max: 3 }), [add('2027-05-03')], clock).additions[0]!.units).toHaveLength(1);
  expect(codeOf(() => planEndorsement(state(), [{ ...add('2027-05-03'), purchase_item_id: 8 }], clock))).toBe('NOT_FOUND');
  expect(codeOf(() => planEndorsement(state({ billing: 'subscription' }), [add('2027-05-03')], clock))).toBe('PURCHASE_NOT_CHANGEABLE');
  expect(
    codeOf(() =>
      planEndorsement(
        state(),
        [{ type: 'add_covered_units', purchase_item_id: 7, trips: [{ start: '2027-05-03T08:00', end: '2027-05-03T18:00' }] }],
        clock,
      ),
    ),
  ).toBe('VALIDATION_ERROR');
});

test('when two changes add the same day, then the second overlaps the first and is refused', () => {
  expect(codeOf(() => planEndorsement(state(), [add('2027-05-03'), add('2027-05-03')], clock))).toBe('VALIDATION_ERROR');
});
