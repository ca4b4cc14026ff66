/**
 * The client of the workflows that are not one purchase's: proof-of-coverage emails, bordereaux
 * and bulk cancellations, each started once per business id.
 */
import {
  bulkCancellationWorkflowId,
  bordereauWorkflowId,
  type BulkCancellationInput,
  proofEmailWorkflowId,
} from '../../workflows/contracts';
import { proofOfCoverageEmailWorkflow } from '../../workflows/proof-email';
import { bordereauWorkflow } from '../../workflows/bordereau';
import { bulkCancellationWorkflow } from '../../workflows/bulk-cancellation';
import { startOnce, type WorkflowClientDeps } from './workflow-starts';

export function createBatchWorkflowClient(deps: WorkflowClientDeps) {
  return {
    /** Starts the workflow that sends the recorded proof-of-coverage emails `emailIds` (spec §4.5). */
    async startProofOfCoverageEmail(emailIds: number[]): Promise<void> {
      await deps.client.workflow.start(proofOfCoverageEmailWorkflow, {
        workflowId: proofEmailWorkflowId(emailIds[0]!),
        taskQueue: deps.taskQueue,
        args: [{ emailIds }],
      });
    },

    /** Starts bordereau `bordereauId`'s generation once (`bordereau-<id>`; asked again, nothing new starts). */
    async startBordereau(bordereauId: number): Promise<void> {
      await startOnce(deps, bordereauWorkflow, bordereauWorkflowId(bordereauId), { bordereauId });
    },

    /** Starts the workflow of bulk cancellation `bulkId` (once; a repeat attaches to nothing new). */
    async startBulkCancellation(bulkId: number): Promise<void> {
      await startOnce(deps, bulkCancellationWorkflow, bulkCancellationWorkflowId(bulkId), { bulkId } satisfies BulkCancellationInput);
    },
  };
}
