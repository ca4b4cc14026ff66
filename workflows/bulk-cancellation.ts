/**
 * bulkCancellationWorkflow: one batch of cancellations (an event called off), id
 * `bulk-cancellation-<id>`. Takes the batch's pending purchases and cancels each exactly once
 * (`cancelBulkItem`, idempotent per purchase and quote), `concurrency` at a time; each goes
 * through its purchase's own policy workflow, whose refunds pass the rate-capped refunds queue.
 * Then marks the batch completed. The `status` query answers its progress. A new run (after an
 * operator restarts one) picks up the items still pending.
 */
import { defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BulkCancellationActivities } from '../activities/bulk-cancellation';
import { STATUS_QUERY, type BulkCancellationInput } from './contracts';

export interface BulkCancellationProgress {
  bulkId: number;
  total: number;
  accepted: number;
  skipped: number;
  failed: number;
}
export const bulkCancellationStatusQuery = defineQuery<BulkCancellationProgress>(STATUS_QUERY);

export async function bulkCancellationWorkflow(input: BulkCancellationInput): Promise<BulkCancellationProgress> {
  // Each item may wait up to 30 s for its purchase's policy workflow to answer; retried without an attempt limit.
  const acts = proxyActivities<BulkCancellationActivities>({ startToCloseTimeout: '90 seconds', retry: { maximumInterval: '30 seconds' } });
  const progress: BulkCancellationProgress = { bulkId: input.bulkId, total: 0, accepted: 0, skipped: 0, failed: 0 };
  setHandler(bulkCancellationStatusQuery, () => ({ ...progress }));
  const queue = await acts.pendingBulkItems({ bulkId: input.bulkId });
  progress.total = queue.length;
  const lane = async () => {
    for (let purchaseId = queue.shift(); purchaseId !== undefined; purchaseId = queue.shift()) {
      const outcome = await acts.cancelBulkItem({ bulkId: input.bulkId, purchaseId });
      if (outcome === 'accepted') progress.accepted++;
      else if (outcome === 'failed') progress.failed++;
      else progress.skipped++;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, input.concurrency ?? 8) }, lane));
  await acts.completeBulkCancellation({ bulkId: input.bulkId });
  return progress;
}
