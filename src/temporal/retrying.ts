/**
 * Activities that keep failing, across all running workflows of the namespace (`npm run ops --
 * stuck`): each running workflow is described and its pending activities at or past
 * `minAttempts` attempts are listed with their last failure. Bounded by `limit` workflows
 * (newest first); the purchase id is read from the workflow id (`purchase-<id>`,
 * `certificates-<id>`, `renewal-<id>-…`, `refund-<id>-…`).
 */
import type { Client } from '@temporalio/client';

export interface RetryingActivity {
  workflowId: string;
  workflowType: string;
  purchaseId: number | null;
  activityType: string;
  attempt: number;
  lastFailure: string | null;
}

export async function findRetryingActivities(client: Pick<Client, 'workflow'>, options: { minAttempts: number; limit: number }): Promise<RetryingActivity[]> {
  const out: RetryingActivity[] = [];
  let seen = 0;
  for await (const wf of client.workflow.list({ query: "ExecutionStatus='Running'" })) {
    if (++seen > options.limit) break;
    const described = await client.workflow.getHandle(wf.workflowId, wf.runId).describe();
    for (const a of described.raw.pendingActivities ?? []) {
      const attempt = a.attempt ?? 0;
      if (attempt < options.minAttempts) continue;
      const m = /^(?:purchase|certificates|renewal|refund)-(\d+)(?:-|$)/.exec(wf.workflowId);
      out.push({
        workflowId: wf.workflowId,
        workflowType: wf.type,
        purchaseId: m ? Number(m[1]) : null,
        activityType: a.activityType?.name ?? 'unknown',
        attempt,
        lastFailure: a.lastFailure?.message ?? null,
      });
    }
  }
  return out.sort((x, y) => y.attempt - x.attempt);
}
