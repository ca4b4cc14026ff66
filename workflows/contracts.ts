/**
 * Names shared by the API, the worker and workflow code: task queue, workflow-id helpers and
 * search attributes (ARCHITECTURE §3). No runtime imports, so any side may import it.
 */

/** Default task queue of the worker (overridable with TEMPORAL_TASK_QUEUE). */
export const DEFAULT_TASK_QUEUE = 'insurance';

/** Workflow ids are business ids, so a duplicate start attaches instead of buying twice. */
export function purchaseWorkflowId(purchaseId: number): string {
  return `purchase-${purchaseId}`;
}

/** Search attributes registered on the Temporal server by `npm run dev` and the test setup. */
export const SEARCH_ATTRIBUTES = ['PurchaseId', 'PaymentIntentId', 'PurchaseStatus', 'BuyerEmail'] as const;
export type SearchAttributeName = (typeof SEARCH_ATTRIBUTES)[number];
