/**
 * The model-based suite's model (test/model/policy-model.ts), its own rules on small examples:
 * the fee shares and cancellation refunds of docs/lifecycle.md's worked example, statuses,
 * dashboard refunds, the last holder, the certificates expected in force, a bundle, an added day,
 * and the days of a subscription's renewals.
 */
import {
  addMonths,
  applyAddedUnit,
  applyCancellation,
  applyDashboardRefund,
  cancellationRefusal,
  coversWholeMonth,
  emptyModel,
  expectedCertificatesInForce,
  expectedStatus,
  feeShares,
  holderRemovalRefusal,
  netByPaymentIntent,
  recordSale,
  renewalDates,
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

test('when a bundle of two days is bought, then the fee spreads over both items, each answered holder covers its own item, and an added one covers both', () => {
  const model = emptyModel();
  const p = recordSale(model, {
    id: 2,
    unitIds: [21, 22],
    bundledUnitIds: [23, 24],
    firstDate: '2027-05-01',
    holderId: 7,
    bundledHolderId: 8,
    paymentIntent: 'pi_2',
    feeMinor: 200, // 3.33 % of 60.00
  });
  expect(p.payments[0]!.chargedMinor).toBe(6200);
  expect(feeShares([2000, 2000, 1000, 1000], 200)).toEqual([67, 67, 33, 33]);
  expect(applyCancellation(model, p, [21, 23])).toBe(2000 + 67 + 1000 + 33);
  expect(expectedCertificatesInForce(p)).toEqual(['22/7', '24/8']);
  // The equipment's answered holder is its item's last while a day is active.
  expect(holderRemovalRefusal(p, 8)).toBe('LAST_CERTIFICATE_HOLDER');
  p.holders.push({ id: 9, active: true });
  expect(expectedCertificatesInForce(p)).toEqual(['22/7', '22/9', '24/8', '24/9']);
  expect(holderRemovalRefusal(p, 8)).toBeNull();
  expect(applyCancellation(model, p, [22, 24])).toBe(2000 + 1000 + 100); // the last: all the fee still held
  expect(netByPaymentIntent(model).get('pi_2')).toBe(0);
});

test('when a day is added with its own payment, then the fee spreads over all three days and refunds come from the newest payment first', () => {
  const model = emptyModel();
  const p = recordSale(model, { id: 3, unitIds: [31, 32], firstDate: '2027-05-01', holderId: 7, paymentIntent: 'pi_sale', feeMinor: 133 });
  applyAddedUnit(model, p, { unitId: 33, date: '2027-07-01', item: 0, premiumMinor: 2000, feeMinor: 67, paymentIntent: 'pi_added' });
  expect(feeShares([2000, 2000, 2000], 200)).toEqual([67, 67, 66]);
  expect(applyCancellation(model, p, [33])).toBe(2066);
  expect(p.payments.map((x) => x.cancellationRefundedMinor)).toEqual([0, 2066]);
  // The last cancellation: both days and all the fee still held (200 − 66), 1 left of the added day's payment, then the sale's.
  expect(applyCancellation(model, p, [31, 32])).toBe(4134);
  expect(p.payments.map((x) => x.cancellationRefundedMinor)).toEqual([4133, 2067]);
  expect([netByPaymentIntent(model).get('pi_sale'), netByPaymentIntent(model).get('pi_added')]).toEqual([0, 0]);
});

test('when a subscription renews, then a whole first month renews as every day of the next (Jan 31 → Feb 28 → Mar 31), chosen days as the same days of the month', () => {
  expect(addMonths('2027-01-31', 1)).toBe('2027-02-28');
  expect(addMonths('2027-01-31', 2)).toBe('2027-03-31');
  expect(addMonths('2027-11-15', 3)).toBe('2028-02-15');
  const january = Array.from({ length: 31 }, (_, k) => `2027-01-${String(k + 1).padStart(2, '0')}`);
  expect(coversWholeMonth(january)).toBe(true);
  const february = renewalDates(january, 1);
  expect([february.length, february[0], february.at(-1)]).toEqual([28, '2027-02-01', '2027-02-28']);
  expect(renewalDates(['2027-01-30', '2027-01-31'], 1)).toEqual(['2027-02-28']);
  expect(renewalDates(['2027-05-10', '2027-05-11'], 2)).toEqual(['2027-07-10', '2027-07-11']);
});
