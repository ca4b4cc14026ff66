/**
 * The purchase status rules, written once in src/purchases/purchase-record.ts: a purchase moves
 * forward only, refunded is final, and a payment after expiry or failure is honoured.
 */
import { PURCHASE_TRANSITIONS, canTransition, predecessorsOf } from '../../src/purchases/purchase-record';
import type { PurchaseStatus } from '../../workflows/contracts';

const ALL = Object.keys(PURCHASE_TRANSITIONS) as PurchaseStatus[];

describe('purchase status rules', () => {
  test('when a purchase is refunded, then no status can replace it', () => {
    for (const to of ALL.filter((s) => s !== 'refunded')) expect(canTransition('refunded', to)).toBe(false);
  });

  test('when a payment is reported after the purchase expired or failed, then it may still become paid', () => {
    expect(canTransition('expired', 'paid')).toBe(true);
    expect(canTransition('failed', 'paid')).toBe(true);
  });

  test('when issuance has finished, then a late step cannot move the purchase back', () => {
    expect(canTransition('issued', 'awaiting_certificates')).toBe(false);
    expect(canTransition('issued', 'paid')).toBe(false);
    expect(canTransition('paid', 'awaiting_payment')).toBe(false);
    expect(canTransition('expired', 'awaiting_payment')).toBe(false);
  });

  test('when a status moves to itself, then that is allowed (a retried step changes nothing)', () => {
    for (const s of ALL) expect(canTransition(s, s)).toBe(true);
  });

  test('when the predecessors of a status are asked, then they are exactly the statuses that may move to it', () => {
    expect(predecessorsOf('refunded').sort()).toEqual(['awaiting_certificates', 'issued', 'paid', 'partly_cancelled', 'refunded']);
    expect(predecessorsOf('failed').sort()).toEqual(['awaiting_payment', 'failed', 'quoted']);
    for (const to of ALL) for (const from of ALL) expect(predecessorsOf(to).includes(from)).toBe(canTransition(from, to));
  });
});
