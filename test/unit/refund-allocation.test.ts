/**
 * Splitting a cancellation's refund over the purchase's payments (src/purchases/refund-allocation.ts):
 * newest payment first, net of what earlier cancellations took, integers only, and a refusal when
 * the payments cannot cover the refund.
 */
import { allocateRefund, RefundNotCoveredError } from '../../src/purchases/refund-allocation';

const none = new Map<string, number>();
const sale = { paymentIntentId: 'pi_sale', amountMinor: 8040 };
const endorsement = { paymentIntentId: 'pi_end1', amountMinor: 2000 };
const secondEndorsement = { paymentIntentId: 'pi_end2', amountMinor: 1000 };

describe('allocateRefund', () => {
  test('when the purchase has one payment, then one entry refunds the whole amount from it', () => {
    expect(allocateRefund(4480, [sale], none)).toEqual([{ paymentIntentId: 'pi_sale', amountMinor: 4480 }]);
  });

  test('when the refund is the newest payment exactly, then only the newest payment is refunded', () => {
    expect(allocateRefund(2000, [sale, endorsement], none)).toEqual([{ paymentIntentId: 'pi_end1', amountMinor: 2000 }]);
  });

  test('when the refund is larger than the newest payment, then the rest spills over to the older one', () => {
    expect(allocateRefund(3000, [sale, endorsement], none)).toEqual([
      { paymentIntentId: 'pi_end1', amountMinor: 2000 },
      { paymentIntentId: 'pi_sale', amountMinor: 1000 },
    ]);
  });

  test('when the refund is every payment in full, then each payment is refunded in full, newest first', () => {
    expect(allocateRefund(11_040, [sale, endorsement, secondEndorsement], none)).toEqual([
      { paymentIntentId: 'pi_end2', amountMinor: 1000 },
      { paymentIntentId: 'pi_end1', amountMinor: 2000 },
      { paymentIntentId: 'pi_sale', amountMinor: 8040 },
    ]);
  });

  test('when earlier cancellations took part of a payment, then only what is left of it is taken', () => {
    const earlier = new Map([['pi_end1', 500]]);
    expect(allocateRefund(3000, [sale, endorsement], earlier)).toEqual([
      { paymentIntentId: 'pi_end1', amountMinor: 1500 },
      { paymentIntentId: 'pi_sale', amountMinor: 1500 },
    ]);
  });

  test('when earlier cancellations took a payment in full, then it gets no entry (no zero entries)', () => {
    const earlier = new Map([['pi_end2', 1000]]);
    expect(allocateRefund(1500, [sale, endorsement, secondEndorsement], earlier)).toEqual([
      { paymentIntentId: 'pi_end1', amountMinor: 1500 },
    ]);
  });

  test('when the refund is 0, then nothing is allocated', () => {
    expect(allocateRefund(0, [sale, endorsement], none)).toEqual([]);
  });

  test('when the payments less earlier refunds cannot cover the refund, then it throws RefundNotCoveredError with what is left', () => {
    const earlier = new Map([['pi_sale', 8000]]);
    let thrown: unknown;
    try {
      allocateRefund(2100, [sale, endorsement], earlier);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(RefundNotCoveredError);
    expect(thrown).toMatchObject({ totalMinor: 2100, availableMinor: 2040 });
  });

  test('when the purchase has no payment, then any refund above 0 is not covered', () => {
    expect(() => allocateRefund(1, [], none)).toThrow(RefundNotCoveredError);
  });

  test('when an amount is not a non-negative integer, then it throws RangeError', () => {
    expect(() => allocateRefund(10.5, [sale], none)).toThrow(RangeError);
    expect(() => allocateRefund(-1, [sale], none)).toThrow(RangeError);
    expect(() => allocateRefund(10, [{ paymentIntentId: 'pi_x', amountMinor: 1.5 }], none)).toThrow(RangeError);
    expect(() => allocateRefund(10, [sale], new Map([['pi_sale', -3]]))).toThrow(RangeError);
  });

  test('when any split is made, then the entries add up to the refund and never exceed what is left of a payment', () => {
    const payments = [sale, endorsement, secondEndorsement];
    const earlier = new Map([
      ['pi_sale', 40],
      ['pi_end2', 999],
    ]);
    for (let total = 0; total <= 11_040 - 1039; total += 97) {
      const out = allocateRefund(total, payments, earlier);
      expect(out.reduce((s, e) => s + e.amountMinor, 0)).toBe(total);
      for (const e of out) {
        const paid = payments.find((p) => p.paymentIntentId === e.paymentIntentId)!.amountMinor;
        expect(Number.isInteger(e.amountMinor) && e.amountMinor > 0).toBe(true);
        expect(e.amountMinor).toBeLessThanOrEqual(paid - (earlier.get(e.paymentIntentId) ?? 0));
      }
    }
  });
});
