/**
 * refundWorkflow: records one `charge.refunded` event against its purchase (id
 * `refund-<purchaseId>-<eventId>`, so a redelivered event is not handled twice). Refunds arrive
 * after the purchase workflow has completed, hence a workflow of their own; the activity is
 * retried until the database takes the write. Voiding certificates on the verification page
 * joins with the certificates issue. The `status` query answers `RefundStatusView`.
 */
import { defineQuery, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { PurchaseActivities } from '../activities/purchase';
import { STATUS_QUERY, type RefundInput } from './contracts';

/** What the refund workflow's `status` query answers: `recording` until the refund is written. */
export interface RefundStatusView {
  purchaseId: number;
  phase: 'recording' | 'recorded';
  /** Total refunded on the charge, minor currency units (from the event). */
  amountRefundedMinor: number;
  /** After recording: whether the purchase is now fully refunded. */
  refunded: boolean | null;
}
export const refundStatusQuery = defineQuery<RefundStatusView>(STATUS_QUERY);

const acts = proxyActivities<PurchaseActivities>({ startToCloseTimeout: '10 seconds', retry: { maximumInterval: '30 seconds' } });

export async function refundWorkflow(input: RefundInput): Promise<{ refundedMinor: number; refunded: boolean }> {
  const view: RefundStatusView = {
    purchaseId: input.purchaseId,
    phase: 'recording',
    amountRefundedMinor: input.amountRefundedMinor,
    refunded: null,
  };
  setHandler(refundStatusQuery, () => ({ ...view }));
  upsertSearchAttributes({ PurchaseId: [String(input.purchaseId)] });
  const result = await acts.recordRefund(input);
  Object.assign(view, { phase: 'recorded', refunded: result.refunded });
  if (result.refunded) upsertSearchAttributes({ PurchaseStatus: ['refunded'] });
  return result;
}
