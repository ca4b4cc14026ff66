/**
 * The API's doorway to the workflows (routes and services call this, never the Temporal client):
 * one client per workflow, composed. The sale (`purchase-<id>`: checkout, saved card, payment
 * events, resume, reissue) in ./sale-workflow-client.ts; the purchase's owner (`policy-<id>`: every
 * change after payment and the processor's events) in ./owner-workflow-client.ts; emails,
 * bordereaux and bulk cancellations in ./batch-workflow-client.ts.
 */
import { createBatchWorkflowClient } from './batch-workflow-client';
import { createOwnerWorkflowClient } from './owner-workflow-client';
import { createSaleWorkflowClient } from './sale-workflow-client';
import type { WorkflowClientDeps } from './workflow-starts';

export type { PurchaseStartFacts, WorkflowClientDeps } from './workflow-starts';

/** The three clients over one Temporal client and one set of settings (`WorkflowClientDeps`). */
export function createPurchaseWorkflows(deps: WorkflowClientDeps) {
  return { ...createSaleWorkflowClient(deps), ...createOwnerWorkflowClient(deps), ...createBatchWorkflowClient(deps) };
}

export type PurchaseWorkflows = ReturnType<typeof createPurchaseWorkflows>;
