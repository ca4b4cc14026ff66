/**
 * The model-based suite's model (test/model/policy-model.ts), its own rules on small examples:
 * the fee shares and cancellation refunds of docs/lifecycle.md's worked example, statuses,
 * dashboard refunds, the last holder, and the certificates expected in force.
 */
import {
  applyCancellation,
  applyDashboardRefund,
  cancellationRefusal,
  emptyModel,
  expectedCertificatesInForce,
  expectedStatus,
  feeShares,
  holderRemovalRefusal,
  netByPaymentIntent,
  recordSale,
} from '../model/policy-model';

const threeDays = (feeMinor: number) => {
  const model = emptyModel();
  const p = recordSale(model, { id: 1, unitIds: [11, 12, 13], firstDate: '2027-05-01', holderId: 7, paymentIntent: 'pi_1', feeMinor });
  return { model, p };
};

test('when the fee is 7.40 over three days of 20.00, then the shares are 2.47, 2.47, 2.46 (largest remainder, ties to the earliest)', () => {
  expect(feeShares([2000, 2000, 2000], 740)).toEqual([247, 247, 246]);
  expect(feeShares([2000, 2000], 0)).toEqual([0, 0]);
});

test('when the days of the worked example are cancelled one at a time (3, 1, 2), then 22.46, 22.47, 22.47 come back: all that was paid', () => {
  const { model, p } = threeDays(740);
  expect([13, 11, 12].map((id) => applyCancellation(model, p, [id]))).toEqual([2246, 2247, 2247]);
  expect(p.payments[0]!.cancellationRefundedMinor).toBe(6740);
  expect(expectedStatus(p)).toBe('cancelled');
  expect(netByPaymentIntent(model).get('pi_1')).toBe(0);
  expect(cancellationRefusal(p, [])).toBe('NOTHING_TO_CANCEL');
  expect(cancellationRefusal(p, [11])).toBe('NOTHING_TO_CANCEL');
});

test('when one day of three is cancelled, then the purchase is partly cancelled and that day has no certificate in force', () => {
  const { model, p } = threeDays(0);
  expect(applyCancellation(model, p, [12])).toBe(2000);
  expect(expectedStatus(p)).toBe('partly_cancelled');
  expect(expectedCertificatesInForce(p)).toEqual(['11/7', '13/7']);
  expect(netByPaymentIntent(model).get('pi_1')).toBe(4000);
  expect(cancellationRefusal(p, [11, 12])).toBe('COVERED_UNIT_ALREADY_CANCELLED');
  expect(cancellationRefusal(p, [11])).toBeNull();
});

test('when the dashboard refunds part then the rest, then the purchase ends refunded with nothing in force, and no more can be refunded', () => {
  const { model, p } = threeDays(0);
  applyDashboardRefund(model, p, 1500);
  expect([p.partlyRefundedAtProcessor, expectedStatus(p)]).toEqual([true, 'issued']);
  applyDashboardRefund(model, p, 4500);
  expect(expectedStatus(p)).toBe('refunded');
  expect(expectedCertificatesInForce(p)).toEqual([]);
  expect(cancellationRefusal(p, [])).toBe('PURCHASE_ALREADY_CANCELLED');
  expect(() => applyDashboardRefund(model, p, 1)).toThrow(/not refundable/);
});

test('when the last holder is asked to go while a day is active, then it is refused; once another holder is added it may go', () => {
  const { p } = threeDays(0);
  expect(holderRemovalRefusal(p, 7)).toBe('LAST_CERTIFICATE_HOLDER');
  p.holders.push({ id: 8, active: true });
  expect(holderRemovalRefusal(p, 7)).toBeNull();
});
