/**
 * The API's doorway to the workflows (routes and services call this, never the Temporal client):
 * one client per workflow, composed. The sale (`purchase-<id>`: checkout, saved card, payment
 * events, resume, reissue) in ./sale-workflow-client.ts; the purchase's owner (`policy-<id>`: every
 * change after payment and the processor's events) in ./owner-workflow-client.ts; emails,
 * bordereaux and bulk cancellations in ./batch-workflow-client.ts.
 */
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { createBatchWorkflowClient } from './batch-workflow-client';
import { createOwnerWorkflowClient } from './owner-workflow-client';
import { createSaleWorkflowClient } from './sale-workflow-client';
import type { WorkflowClientDeps } from './workflow-starts';

export type { PurchaseStartFacts, WorkflowClientDeps } from './workflow-starts';

/** The three clients over one Temporal client and one set of settings (`WorkflowClientDeps`). */
export function createPurchaseWorkflows(deps: WorkflowClientDeps) {
  return { ...createSaleWorkflowClient(deps), ...createOwnerWorkflowClient(deps), ...createBatchWorkflowClient(deps) };
}

/**
 * The three clients over `client` with the settings of `config` (TEMPORAL_TASK_QUEUE, the checkout
 * session and poll durations in seconds, the processor retry cap, BUYER_EMAIL_HASH_KEY): what the
 * API's container and the operator commands build alike.
 */
export function createPurchaseWorkflowsFromConfig(client: Client, config: Config) {
  return createPurchaseWorkflows({
    client,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    sessionTtlSeconds: config.CHECKOUT_SESSION_TTL_SECONDS,
    pollIntervalSeconds: config.CHECKOUT_POLL_INTERVAL_SECONDS,
    retryMaxIntervalSeconds: config.PURCHASE_RETRY_MAX_INTERVAL_SECONDS,
    buyerEmailHashKey: config.BUYER_EMAIL_HASH_KEY,
  });
}

export type PurchaseWorkflows = ReturnType<typeof createPurchaseWorkflows>;
