/**
 * refundWorkflow: records one `charge.refunded` event against its purchase (id
 * `refund-<purchaseId>-<eventId>`, so a redelivered event is not handled twice). Refunds arrive
 * after the purchase workflow has completed, hence a workflow of their own; the activity is
 * retried until the database takes the write. Voiding certificates on the verification page
 * joins with the certificates issue.
 */
import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { PurchaseActivities } from '../activities/purchase';
import type { RefundInput } from './contracts';

const acts = proxyActivities<PurchaseActivities>({ startToCloseTimeout: '10 seconds', retry: { maximumInterval: '30 seconds' } });

export async function refundWorkflow(input: RefundInput): Promise<{ refundedMinor: number; refunded: boolean }> {
  upsertSearchAttributes({ PurchaseId: [String(input.purchaseId)] });
  const result = await acts.recordRefund(input);
  if (result.refunded) upsertSearchAttributes({ PurchaseStatus: ['refunded'] });
  return result;
}
