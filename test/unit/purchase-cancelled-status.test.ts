/**
 * The status an issued purchase's cancellations give it (issue 48 item 6): `statusAfterCancellations`
 * and the status rules it moves through (src/purchases/purchase-record.ts). A seeded property test:
 * cancelling a purchase's units one completed cancellation at a time, in any order and grouping,
 * always reaches a status the rules allow from the one before, ends `cancelled` exactly when every
 * unit is, and never goes back to `issued`.
 */
import fc from 'fast-check';
import { canTransition, statusAfterCancellations } from '../../src/purchases/purchase-record';
import { isInForce } from '../../src/purchases/rules';
import type { PurchaseStatus } from '../../workflows/contracts';

describe('statusAfterCancellations', () => {
  test('when no unit, some units or every unit is cancelled, then it answers issued, partly_cancelled, cancelled', () => {
    expect(statusAfterCancellations([])).toBe('issued');
    expect(statusAfterCancellations([{ cancelled: false }, { cancelled: false }])).toBe('issued');
    expect(statusAfterCancellations([{ cancelled: true }, { cancelled: false }])).toBe('partly_cancelled');
    expect(statusAfterCancellations([{ cancelled: true }, { cancelled: true }])).toBe('cancelled');
  });

  test('when a partly cancelled purchase is asked about, then it is still in force; a cancelled one is not, and stays cancelled', () => {
    expect(isInForce('partly_cancelled')).toBe(true);
    expect(isInForce('cancelled')).toBe(false);
    for (const to of ['issued', 'partly_cancelled', 'refunded'] as PurchaseStatus[]) expect(canTransition('cancelled', to)).toBe(false);
    expect(canTransition('partly_cancelled', 'issued')).toBe(false);
    expect(canTransition('partly_cancelled', 'refunded')).toBe(true);
  });

  test('when a purchase’s units are cancelled in batches in any order, then each status follows the rules and it ends cancelled only once all are', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 12 })
          .chain((n) =>
            fc.tuple(
              fc.constant(n),
              fc.shuffledSubarray([...Array(n).keys()], { minLength: 0, maxLength: n }),
              fc.integer({ min: 1, max: 4 }),
            ),
          ),
        ([n, order, batch]) => {
          const cancelled = new Array<boolean>(n).fill(false);
          let status: PurchaseStatus = 'issued';
          for (let i = 0; i < order.length; i += batch) {
            for (const k of order.slice(i, i + batch)) cancelled[k] = true;
            const next = statusAfterCancellations(cancelled.map((c) => ({ cancelled: c })));
            expect(canTransition(status, next)).toBe(true);
            status = next;
          }
          expect(status).toBe(order.length === 0 ? 'issued' : order.length === n ? 'cancelled' : 'partly_cancelled');
        },
      ),
      { seed: 48_006, numRuns: 300 },
    );
  });
});
