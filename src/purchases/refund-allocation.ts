/**
 * How a cancellation's refund is split over the payments of its purchase. A purchase is paid by
 * the sale's payment intent and then by one payment intent per priced endorsement that added
 * covered units; a refund larger than one of them must be taken from several. Pure: no I/O,
 * integers only (minor units).
 *
 * Shapes: `payments` are the purchase's payments oldest first, `[{ paymentIntentId, amountMinor }]`
 * (the amount each payment intent collected); `alreadyRefunded` maps a payment intent to the minor
 * units earlier cancellations of the purchase already take from it. The answer is
 * `[{ paymentIntentId, amountMinor }]`, newest payment first, with no zero entries, adding up to
 * `totalMinor` exactly (empty for a refund of 0).
 *
 * The rule: the refund is taken from the newest payment first (the units added last were paid
 * last), each payment up to its amount less what earlier cancellations already took from it, then
 * from the next older one. A purchase with one payment gives one entry for the whole refund.
 * Worked example: a sale of 80.40 (pi_A) and an endorsement of 20.00 (pi_B), an earlier
 * cancellation already took 5.00 from pi_B; a refund of 30.00 → [{ pi_B, 15.00 }, { pi_A, 15.00 }].
 *
 * @throws {RefundNotCoveredError} when what is left of the payments is less than `totalMinor`.
 * @throws {RangeError} when an amount is not a non-negative safe integer.
 */

/** One payment of a purchase (or one refund taken from it): a payment intent and minor units. */
export interface PaymentShare {
  paymentIntentId: string;
  amountMinor: number;
}

/** The payments of a purchase cannot cover a refund (minor units). */
export class RefundNotCoveredError extends Error {
  constructor(
    readonly totalMinor: number,
    readonly availableMinor: number,
  ) {
    super(`the purchase's payments can give back ${availableMinor} more, not ${totalMinor}`);
    this.name = 'RefundNotCoveredError';
  }
}

const mustBeMinor = (what: string, n: number): void => {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} must be a non-negative integer of minor units, not ${n}`);
};

/** Splits `totalMinor` over `payments` (oldest first), newest first, net of `alreadyRefunded`: see the module docstring. */
export function allocateRefund(
  totalMinor: number,
  payments: readonly PaymentShare[],
  alreadyRefunded: ReadonlyMap<string, number>,
): PaymentShare[] {
  mustBeMinor('totalMinor', totalMinor);
  // What earlier cancellations took from a payment intent, still to be set against its payments
  // (newest first, as they took it): a payment intent listed twice is drained once, not twice.
  const owed = new Map<string, number>();
  for (const [paymentIntentId, minor] of alreadyRefunded) {
    mustBeMinor(`already refunded from ${paymentIntentId}`, minor);
    owed.set(paymentIntentId, minor);
  }
  const out: PaymentShare[] = [];
  let left = totalMinor;
  let available = 0;
  for (const { paymentIntentId, amountMinor } of [...payments].reverse()) {
    mustBeMinor(`payment ${paymentIntentId}`, amountMinor);
    const taken = Math.min(amountMinor, owed.get(paymentIntentId) ?? 0);
    owed.set(paymentIntentId, (owed.get(paymentIntentId) ?? 0) - taken);
    const free = amountMinor - taken;
    available += free;
    const share = Math.min(free, left);
    if (share > 0) {
      out.push({ paymentIntentId, amountMinor: share });
      left -= share;
    }
  }
  if (left > 0) throw new RefundNotCoveredError(totalMinor, available);
  return out;
}
