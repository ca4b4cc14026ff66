/**
 * The claim rules (src/claims/rules.ts) and the claim's state table (workflows/claim-contracts.ts):
 * business-day deadlines skip weekends, an incident falls in a unit from its start (inclusive) to
 * its end (exclusive), an uploaded attachment is judged by its stored type and size, and each
 * action is allowed only from its statuses.
 */
import fc from 'fast-check';
import { addBusinessDays, attachmentVerdict, incidentDayOf, unitsCovering, type UnitWindow } from '../../src/claims/rules';
import { CLAIM_ACTIONS, CLAIM_ACTION_NAMES, claimActionAllowed, type ClaimStatus } from '../../workflows/claim-contracts';

const STATUSES: ClaimStatus[] = ['submitted', 'acknowledged', 'under_review', 'approved', 'denied', 'paid', 'closed', 'reopened'];

test('when business days are added, then weekends are skipped: Friday + 2 is Tuesday, Wednesday + 2 is Friday, Saturday + 1 is Monday', () => {
  expect(addBusinessDays(new Date('2026-12-04T15:00:00Z'), 2).toISOString()).toBe('2026-12-08T15:00:00.000Z');
  expect(addBusinessDays(new Date('2026-12-02T15:00:00Z'), 2).toISOString()).toBe('2026-12-04T15:00:00.000Z');
  expect(addBusinessDays(new Date('2026-12-05T10:00:00Z'), 1).toISOString()).toBe('2026-12-07T10:00:00.000Z');
});

test('when any start and number of business days is taken, then the deadline is a weekday, at least that many days later and at most that many plus the weekends between', () => {
  fc.assert(
    fc.property(
      fc.date({ min: new Date('2020-01-01'), max: new Date('2035-01-01'), noInvalidDate: true }),
      fc.integer({ min: 1, max: 30 }),
      (from, days) => {
        const due = addBusinessDays(from, days);
        const elapsed = (due.getTime() - from.getTime()) / 86_400_000;
        expect(Number.isInteger(elapsed)).toBe(true);
        expect(elapsed).toBeGreaterThanOrEqual(days);
        expect(elapsed).toBeLessThanOrEqual(days + 2 * Math.ceil(days / 5) + 2);
        expect([0, 6]).not.toContain(due.getUTCDay());
      },
    ),
  );
});

test('when an incident is matched to units, then the start is inside and the end outside, and its day is local to the unit', () => {
  const unit: UnitWindow = {
    id: 1,
    productLineId: 1,
    startsAt: new Date('2027-05-01T05:00:00Z'),
    endsAt: new Date('2027-05-02T05:00:00Z'),
    timeZone: 'America/Chicago',
    localLabel: '2027-05-01',
    cancelled: false,
  };
  expect(unitsCovering([unit], new Date('2027-05-01T05:00:00Z'))).toEqual([unit]);
  expect(unitsCovering([unit], new Date('2027-05-02T04:59:59Z'))).toEqual([unit]);
  expect(unitsCovering([unit], new Date('2027-05-02T05:00:00Z'))).toEqual([]);
  expect(incidentDayOf(new Date('2027-05-02T04:30:00Z'), 'America/Chicago')).toBe('2027-05-01');
});

test('when a stored attachment is judged, then a missing one is still awaited, and a wrong type, a larger or empty file is rejected', () => {
  const declared = { contentType: 'image/jpeg', declaredSizeBytes: 100 };
  expect(attachmentVerdict(declared, null)).toBeNull();
  expect(attachmentVerdict(declared, { size: 100, contentType: 'image/jpeg' })).toEqual({ status: 'received', sizeBytes: 100 });
  expect(attachmentVerdict(declared, { size: 101, contentType: 'image/jpeg' })).toMatchObject({ status: 'rejected' });
  expect(attachmentVerdict(declared, { size: 10, contentType: 'text/html' })).toMatchObject({ status: 'rejected' });
  expect(attachmentVerdict(declared, { size: 0, contentType: 'image/jpeg' })).toMatchObject({ status: 'rejected' });
});

test('when the state table is read, then every status but a final closed one is left by some action, and each action is allowed exactly from its statuses', () => {
  for (const action of CLAIM_ACTION_NAMES)
    for (const status of STATUSES) expect(claimActionAllowed(action, status)).toBe(CLAIM_ACTIONS[action].from.includes(status));
  for (const status of STATUSES) expect(CLAIM_ACTION_NAMES.some((a) => claimActionAllowed(a, status))).toBe(true);
  expect(CLAIM_ACTION_NAMES.filter((a) => claimActionAllowed(a, 'closed'))).toEqual(['reopen']);
});
