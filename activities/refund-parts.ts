/**
 * Creates a ledger transaction's planned refund at the processor, part by part: shared by a
 * cancellation's refund (activities/policy.ts) and the refund of an endorsement that gave premium
 * back (activities/endorsements.ts). The plan is the split over the purchase's payments
 * (src/purchases/refund-allocation.ts), stored before the first part is created, so every retry
 * sends the same requests.
 */
import type Stripe from 'stripe';
import { processorFailure } from './purchase';

/** The idempotency key of part `index` (from 0) of transaction `transactionId`'s refund: `policy-transaction-<id>-refund`, then `…-refund-<index + 1>`. */
export const refundPartKey = (transactionId: number, index: number): string =>
  index === 0 ? `policy-transaction-${transactionId}-refund` : `policy-transaction-${transactionId}-refund-${index + 1}`;

/**
 * Creates, in order, each part of `plan` ({ paymentIntentId, amountMinor (minor units), refundId })
 * that has no refund id yet, with `metadata` and its `refundPartKey`, and `record`s each refund id
 * as soon as it exists. Returns the first part's refund id (null for an empty plan).
 * @throws an ApplicationFailure (non-retryable) when the processor refuses a part for good (a card
 *   or invalid-request error), and the processor's error as is when it is unreachable or fails
 *   (the activity is retried with the same keys); `count` counts the latter under the activity.
 */
export async function createRefundParts(
  refunds: Stripe.RefundResource,
  transactionId: number,
  plan: ReadonlyArray<{ paymentIntentId: string; amountMinor: number; refundId: string | null }>,
  metadata: Record<string, string>,
  record: (index: number, refundId: string) => Promise<void>,
  count: (operation: string) => void,
): Promise<string | null> {
  let first = plan[0]?.refundId ?? null;
  for (const [index, part] of plan.entries()) {
    if (part.refundId) continue;
    let refund: Stripe.Refund;
    try {
      refund = await refunds.create(
        { payment_intent: part.paymentIntentId, amount: part.amountMinor, reason: 'requested_by_customer', metadata },
        { idempotencyKey: refundPartKey(transactionId, index) },
      );
    } catch (err) {
      return processorFailure(err, count);
    }
    await record(index, refund.id);
    if (index === 0) first = refund.id;
  }
  return first;
}
