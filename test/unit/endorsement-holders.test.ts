/**
 * planEndorsement's `certificate_holder_endorsements` (src/endorsements/planning.ts), a pure
 * function: naming a holder additional insured or waiving subrogation costs the product's premium
 * per covered unit still active for the holder; removing it gives back what was collected for it on
 * the units not started; units added later pay it for holders that have it.
 */
import { planEndorsement, type EndorsementState } from '../../src/endorsements/planning';
import type { LedgerUnitPremium } from '../../src/purchases/ledger-record';
import type { CertificateHolderRecord } from '../../src/certificate-holders/repository';
import type { StoredEndorsementTerms } from '../../src/products/repository';
import { chicagoDay } from '../helpers/covered-units';
import { endorsementErrorCode as codeOf, endorsementState, eventItem } from '../helpers/endorsement-state';

// 2027-05-02 12:00 America/Chicago: day 1 (May 1) has ended, day 2 has started, days 3 and 4 have not.
const clock = new Date('2027-05-02T17:00:00Z');
const day = chicagoDay;

const holder = (over: Partial<CertificateHolderRecord> = {}): CertificateHolderRecord => ({
  id: 50,
  purchaseId: 42,
  purchaseItemId: null,
  source: 'api',
  name: 'Lakeside Pavilion',
  address: { line1: '1 Shore Rd', city: 'Chicago', region: 'IL', postal_code: '60601', country: 'US' },
  email: null,
  additionalInsured: false,
  waiverOfSubrogation: false,
  descriptionOfOperations: null,
  notifyOnCancellation: false,
  requestKey: 'k',
  createdAt: new Date('2027-04-01T00:00:00Z'),
  removedAt: null,
  ...over,
});

const terms = (over: Partial<StoredEndorsementTerms> = {}): StoredEndorsementTerms => ({
  allowsAdditionalInsured: true,
  allowsWaiverOfSubrogation: true,
  additionalInsuredPremiumMinor: 500,
  waiverOfSubrogationPremiumMinor: 150,
  isDefault: false,
  updatedAt: null,
  ...over,
});

function state(
  opts: { holder?: Partial<CertificateHolderRecord>; terms?: Partial<StoredEndorsementTerms>; ledger?: LedgerUnitPremium[] } = {},
): EndorsementState {
  const units = [
    day('2027-05-01', 11, 0),
    day('2027-05-02', 12, 1),
    day('2027-05-03', 13, 2),
    day('2027-05-04', 14, 3),
    day('2027-05-05', 15, 4, 99),
  ];
  return endorsementState({ billing: 'one_time', platformFeeBps: 250 }, [eventItem(units, { amountMinor: 10000 })], {
    holders: [holder(opts.holder)],
    endorsementTerms: new Map([[3, terms(opts.terms)]]),
    holderPremiums: opts.ledger ?? [],
  });
}
const mark = (c: { additional_insured?: boolean; waiver_of_subrogation?: boolean }) => ({
  type: 'certificate_holder_endorsements' as const,
  certificate_holder_id: 50,
  ...c,
});

test('when a holder is named additional insured at 5.00 a unit, then it pays for the units still active for it (day 2 started, days 3 and 4), not the ended or cancelled ones, with the platform fee rate on top', () => {
  const plan = planEndorsement(state(), [mark({ additional_insured: true })], clock);
  expect(plan.holderPremiums.map((h) => [h.unitId, h.endorsement, h.premiumMinor])).toEqual([
    [12, 'additional_insured', 500],
    [13, 'additional_insured', 500],
    [14, 'additional_insured', 500],
  ]);
  expect(plan.premiumDifferenceMinor).toBe(1500);
  expect(plan.platformFeeDifferenceMinor).toBe(38); // 1500 × 2.5 % = 37.5 → 38 (half up)
  expect(plan.totalDifferenceMinor).toBe(1538);
  expect(plan.holderMarks).toEqual([{ certificateHolderId: 50, additionalInsured: true, waiverOfSubrogation: false }]);
  expect(plan.supersede.holderIds).toEqual([50]);
});

test('when both endorsements are asked at once, then each is priced on each unit', () => {
  const plan = planEndorsement(state(), [mark({ additional_insured: true, waiver_of_subrogation: true })], clock);
  expect(plan.premiumDifferenceMinor).toBe(3 * (500 + 150));
});

test('when additional insured is removed, then what was collected for it comes back on the units not started only (day 2 started: earned), with no platform fee', () => {
  const ledger: LedgerUnitPremium[] = [12, 13, 14].map((unitId) => ({
    unitId,
    itemId: 7,
    certificateHolderId: 50,
    endorsement: 'additional_insured' as const,
    premiumMinor: 400, // collected when the premium was 4.00: what comes back is what was paid, not today's price
  }));
  const plan = planEndorsement(state({ holder: { additionalInsured: true }, ledger }), [mark({ additional_insured: false })], clock);
  expect(plan.holderPremiums.map((h) => [h.unitId, h.premiumMinor])).toEqual([
    [13, -400],
    [14, -400],
  ]);
  expect(plan.premiumDifferenceMinor).toBe(-800);
  expect(plan.platformFeeDifferenceMinor).toBe(0);
  expect(plan.totalDifferenceMinor).toBe(-800);
});

test('when a removal follows an earlier refund of the same unit, then only the net is given back (nothing twice)', () => {
  const ledger: LedgerUnitPremium[] = [
    { unitId: 13, itemId: 7, certificateHolderId: 50, endorsement: 'waiver_of_subrogation', premiumMinor: 150 },
    { unitId: 13, itemId: 7, certificateHolderId: 50, endorsement: 'waiver_of_subrogation', premiumMinor: -150 },
    { unitId: 14, itemId: 7, certificateHolderId: 50, endorsement: 'waiver_of_subrogation', premiumMinor: 150 },
  ];
  const plan = planEndorsement(state({ holder: { waiverOfSubrogation: true }, ledger }), [mark({ waiver_of_subrogation: false })], clock);
  expect(plan.totalDifferenceMinor).toBe(-150);
});

test('when the premium is 0, then the mark changes with nothing to collect, and its certificates are reissued', () => {
  const plan = planEndorsement(state({ terms: { additionalInsuredPremiumMinor: 0 } }), [mark({ additional_insured: true })], clock);
  expect(plan.totalDifferenceMinor).toBe(0);
  expect(plan.holderPremiums).toEqual([]);
  expect(plan.holderMarks).toHaveLength(1);
});

test('when covered days are added to an item whose holder is additional insured, then each new day pays the holder’s premium too', () => {
  const plan = planEndorsement(
    state({ holder: { additionalInsured: true } }),
    [{ type: 'add_covered_units', purchase_item_id: 7, start_date: '2027-05-06', end_date: '2027-05-07' }],
    clock,
  );
  expect(plan.additions[0]!.units.map((u) => [u.premiumMinor, u.holderPremiums])).toEqual([
    [2000, [{ certificateHolderId: 50, endorsement: 'additional_insured', premiumMinor: 500 }]],
    [2000, [{ certificateHolderId: 50, endorsement: 'additional_insured', premiumMinor: 500 }]],
  ]);
  expect(plan.premiumDifferenceMinor).toBe(2 * 2500);
});

test('when the product does not allow it, the holder already has it, or the holder is not active, then refused with the code the API answers', () => {
  expect(
    codeOf(() => planEndorsement(state({ terms: { allowsWaiverOfSubrogation: false } }), [mark({ waiver_of_subrogation: true })], clock)),
  ).toBe('ENDORSEMENT_NOT_ALLOWED');
  expect(codeOf(() => planEndorsement(state({ holder: { additionalInsured: true } }), [mark({ additional_insured: true })], clock))).toBe(
    'NOTHING_TO_ENDORSE',
  );
  expect(codeOf(() => planEndorsement(state({ holder: { removedAt: clock } }), [mark({ additional_insured: true })], clock))).toBe(
    'NOT_FOUND',
  );
});
