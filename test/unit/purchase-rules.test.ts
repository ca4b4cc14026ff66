/**
 * The purchase rules (src/purchases/rules.ts), each decided once: payable (the refusal and its
 * message per reason, the margin before the deadline), in force, changeable (per change, and
 * while certificates are being issued), and which covered units may be cancelled, with a property
 * over arbitrary units and clocks.
 */
import fc from 'fast-check';
import {
  cancellableUnits,
  changeRefusal,
  hasStarted,
  IN_FORCE_STATUSES,
  isCancellableUnit,
  isInForce,
  paymentRefusal,
  standingOf,
  type PayableFacts,
} from '../../src/purchases/rules';
import type { PurchaseStatus } from '../../workflows/contracts';

const NOW = new Date('2027-06-01T12:00:00Z');
const ALL_STATUSES: PurchaseStatus[] = [
  'quoted',
  'awaiting_payment',
  'failed',
  'expired',
  'paid',
  'awaiting_certificates',
  'issued',
  'partly_cancelled',
  'cancelled',
  'refunded',
];

describe('paymentRefusal', () => {
  const open: PayableFacts = { id: 7, status: 'awaiting_payment', paidAt: null, checkoutExpiresAt: new Date(NOW.getTime() + 3_600_000) };

  test('when the purchase is quoted or awaiting payment before its deadline, then it can be paid', () => {
    expect(paymentRefusal(open, NOW)).toBeNull();
    expect(paymentRefusal({ ...open, status: 'quoted', checkoutExpiresAt: null }, NOW)).toBeNull();
  });

  test.each(['paid', 'awaiting_certificates', 'issued', 'partly_cancelled', 'cancelled', 'refunded'])(
    'when the purchase is %s, then INVALID_REQUEST "already paid"',
    (status) => {
      expect(paymentRefusal({ ...open, status }, NOW)).toEqual({
        reason: 'already_paid',
        code: 'INVALID_REQUEST',
        message: 'Purchase 7 is already paid',
      });
    },
  );

  test('when it has a paidAt whatever its status, then "already paid" comes first (before an expiry)', () => {
    expect(paymentRefusal({ ...open, status: 'expired', paidAt: NOW }, NOW)?.reason).toBe('already_paid');
  });

  test('when it expired, or its deadline is past, then INVALID_REQUEST "has expired"', () => {
    const expired = {
      reason: 'expired',
      code: 'INVALID_REQUEST',
      message: 'Purchase 7 has expired and can no longer be paid; quote again with adminValidateBuyerResponses',
    };
    expect(paymentRefusal({ ...open, status: 'expired' }, NOW)).toEqual(expired);
    expect(paymentRefusal({ ...open, checkoutExpiresAt: NOW }, NOW)).toEqual(expired);
  });

  test('when the deadline is within the margin, then "has expired"; just outside it, then payable', () => {
    const deadline = new Date(NOW.getTime() + 60_000);
    expect(paymentRefusal({ ...open, checkoutExpiresAt: deadline }, NOW, 60_000)?.reason).toBe('expired');
    expect(paymentRefusal({ ...open, checkoutExpiresAt: deadline }, NOW, 59_999)).toBeNull();
    expect(paymentRefusal({ ...open, checkoutExpiresAt: deadline }, NOW)).toBeNull();
  });

  test('when it failed, then INVALID_REQUEST "not awaiting payment" naming the status', () => {
    expect(paymentRefusal({ ...open, status: 'failed' }, NOW)).toEqual({
      reason: 'not_awaiting_payment',
      code: 'INVALID_REQUEST',
      message: 'Purchase 7 is not awaiting payment (status failed)',
    });
  });
});

describe('isInForce', () => {
  test('when the status is paid, awaiting certificates, issued or partly cancelled, then in force; every other status, not', () => {
    expect(ALL_STATUSES.filter(isInForce)).toEqual(['paid', 'awaiting_certificates', 'issued', 'partly_cancelled']);
    expect([...IN_FORCE_STATUSES]).toEqual(['paid', 'awaiting_certificates', 'issued', 'partly_cancelled']);
  });
});

describe('changeRefusal', () => {
  const issued = { id: 9, status: 'issued' as PurchaseStatus, certificatesIssuedAt: NOW };

  test('when the purchase is in force with its certificates issued, then it can change', () => {
    for (const status of IN_FORCE_STATUSES) {
      expect(changeRefusal({ ...issued, status }, 'endorsement')).toBeNull();
      expect(changeRefusal({ ...issued, status }, 'certificate_holders')).toBeNull();
    }
  });

  test.each(ALL_STATUSES.filter((s) => !isInForce(s)))(
    'when the purchase is %s, then PURCHASE_NOT_CHANGEABLE naming the change',
    (status) => {
      expect(changeRefusal({ ...issued, status }, 'endorsement')).toEqual({
        reason: 'not_in_force',
        code: 'PURCHASE_NOT_CHANGEABLE',
        message: `Purchase 9 is ${status}: only a paid purchase in force can be endorsed`,
      });
      expect(changeRefusal({ ...issued, status }, 'certificate_holders')).toEqual({
        reason: 'not_in_force',
        code: 'PURCHASE_NOT_CHANGEABLE',
        message: `Purchase 9 is ${status}: only a paid purchase in force can change its certificate holders`,
      });
    },
  );

  test('when it is in force but its certificates are being issued, then certificates_issuing', () => {
    expect(changeRefusal({ ...issued, status: 'awaiting_certificates', certificatesIssuedAt: null }, 'endorsement')).toEqual({
      reason: 'certificates_issuing',
      code: 'PURCHASE_NOT_CHANGEABLE',
      message: "Purchase 9's certificates are still being issued: ask again in a few seconds",
    });
  });

  test('when it is refunded and was never issued, then not_in_force comes first', () => {
    expect(changeRefusal({ ...issued, status: 'refunded', certificatesIssuedAt: null }, 'certificate_holders')?.reason).toBe(
      'not_in_force',
    );
  });
});

describe('cancellable units', () => {
  const at = (iso: string) => new Date(iso);

  test('when a unit starts exactly at the clock, then it has started; a millisecond later, then not', () => {
    expect(hasStarted(NOW, NOW)).toBe(true);
    expect(hasStarted(new Date(NOW.getTime() + 1), NOW)).toBe(false);
  });

  test('when a unit is held by a cancellation or has started, then it is not cancellable', () => {
    expect(isCancellableUnit({ cancelled: false, started: false })).toBe(true);
    expect(isCancellableUnit({ cancelled: true, started: false })).toBe(false);
    expect(isCancellableUnit({ cancelled: false, started: true })).toBe(false);
  });

  test('when units are stored, then those not held and not started by the clock come back in their order', () => {
    const units = [
      { id: 1, cancellationId: null, startsAt: at('2027-06-01T05:00:00Z') },
      { id: 2, cancellationId: null, startsAt: at('2027-06-02T05:00:00Z') },
      { id: 3, cancellationId: 40, startsAt: at('2027-06-03T05:00:00Z') },
      { id: 4, cancellationId: null, startsAt: at('2027-06-04T05:00:00Z') },
    ];
    expect(cancellableUnits(units, (u) => standingOf(u, NOW)).map((u) => u.id)).toEqual([2, 4]);
  });

  test('when no unit may be cancelled, then an empty list', () => {
    expect(cancellableUnits([{ cancelled: true, started: false }], (u) => u)).toEqual([]);
  });

  test('property: no unit returned has started by the clock or is held; every unit neither is returned, in order', () => {
    const unitArb = fc.record({
      id: fc.integer({ min: 1, max: 1_000_000 }),
      cancellationId: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: null }),
      startsAt: fc.date({ min: new Date('2027-01-01T00:00:00Z'), max: new Date('2027-12-31T00:00:00Z'), noInvalidDate: true }),
    });
    fc.assert(
      fc.property(
        fc.array(unitArb, { maxLength: 30 }),
        fc.date({ min: new Date('2026-12-01T00:00:00Z'), max: new Date('2028-01-31T00:00:00Z'), noInvalidDate: true }),
        (units, clock) => {
          const picked = cancellableUnits(units, (u) => standingOf(u, clock));
          for (const u of picked) {
            expect(u.cancellationId).toBeNull();
            expect(u.startsAt.getTime()).toBeGreaterThan(clock.getTime());
          }
          const expected = units.filter((u) => u.cancellationId === null && u.startsAt.getTime() > clock.getTime());
          expect(picked).toEqual(expected);
        },
      ),
    );
  });
});
