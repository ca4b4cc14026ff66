/**
 * disputeWorkflow: records one `charge.dispute.*` event (a buyer disputed, or the processor
 * decided, a purchase's payment) against its purchase, id `dispute-<purchaseId>-<eventId>`, so a
 * redelivered event is not handled twice. Disputes arrive after the purchase workflow has
 * finished, hence a workflow of their own, like refunds; the activity is retried until the
 * database takes the write, and tells the agency (`dispute.opened`, `dispute.closed`).
 */
import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { DisputeActivities } from '../activities/disputes';
import type { DisputeInput } from './contracts';

const acts = proxyActivities<DisputeActivities>({ startToCloseTimeout: '10 seconds', retry: { maximumInterval: '30 seconds' } });

export async function disputeWorkflow(input: DisputeInput): Promise<{ status: string; opened: boolean; closed: boolean }> {
  upsertSearchAttributes({ PurchaseId: [String(input.purchaseId)] });
  return acts.recordDispute(input);
}
