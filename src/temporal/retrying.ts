/**
 * Activities that keep failing, across all running workflows of the namespace (`npm run ops --
 * stuck`): each running workflow is described and its pending activities at or past
 * `minAttempts` attempts are listed with their last failure. Bounded by `limit` workflows
 * (newest first); the purchase id is read from the workflow id (`purchase-<id>`,
 * `certificates-<id>`, `policy-<id>`), the agency (root account id) and
 * mode from the run's AgencyId and Mode search attributes, which event deliveries carry too. Failure messages are stored
 * encoded and encrypted (./failure-converter.ts): they are decoded here with the client's own
 * data converter, so the operator reads the message, not "Encoded failure".
 */
import type { Client } from '@temporalio/client';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { AGENCY_ID, MODE } from '../../workflows/search-attributes';

export interface RetryingActivity {
  workflowId: string;
  workflowType: string;
  purchaseId: number | null;
  /** The run's AgencyId (root account id), or null for a run without it (older runs). */
  rootAccountId: number | null;
  /** The run's Mode, or null. */
  mode: string | null;
  activityType: string;
  attempt: number;
  lastFailure: string | null;
}

export async function findRetryingActivities(
  client: Pick<Client, 'workflow'>,
  options: { minAttempts: number; limit: number },
): Promise<RetryingActivity[]> {
  const out: RetryingActivity[] = [];
  let seen = 0;
  for await (const wf of client.workflow.list({ query: "ExecutionStatus='Running'" })) {
    if (++seen > options.limit) break;
    const described = await client.workflow.getHandle(wf.workflowId, wf.runId).describe();
    for (const a of described.raw.pendingActivities ?? []) {
      const attempt = a.attempt ?? 0;
      if (attempt < options.minAttempts) continue;
      const m = /^(?:purchase|certificates|policy)-(\d+)(?:-|$)/.exec(wf.workflowId);
      out.push({
        workflowId: wf.workflowId,
        workflowType: wf.type,
        purchaseId: m ? Number(m[1]) : null,
        rootAccountId: wf.typedSearchAttributes.get(AGENCY_ID) ? Number(wf.typedSearchAttributes.get(AGENCY_ID)) : null,
        mode: wf.typedSearchAttributes.get(MODE) ?? null,
        activityType: a.activityType?.name ?? 'unknown',
        attempt,
        lastFailure:
          (await decodeOptionalFailureToOptionalError(client.workflow.options.loadedDataConverter, a.lastFailure))?.message ?? null,
      });
    }
  }
  return out.sort((x, y) => y.attempt - x.attempt);
}
