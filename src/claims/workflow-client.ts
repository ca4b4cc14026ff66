/**
 * The API's client of the claim workflows (`claim-<id>`, workflows/claim.ts): starts a filed
 * claim's owner, and sends it each change as an update answered synchronously, with start, so a
 * claim whose run completed (closed, then idle) gets a new run from its stored status. A refusal
 * whose type is an API error code (CLAIM_TRANSITION_NOT_ALLOWED, VALIDATION_ERROR, DUPLICATE_CLAIM)
 * becomes that AppError; no answer within `timeoutMs` (default 30 000 ms) a 503 CONNECTION_ERROR.
 */
import { type Client, WithStartWorkflowOperation } from '@temporalio/client';
import { claimWorkflow } from '../../workflows/claim';
import {
  CLAIM_ACTION_UPDATE,
  CLAIM_COMMENT_UPDATE,
  claimWorkflowId,
  type ClaimActionInput,
  type ClaimChange,
  type ClaimCommentInput,
  type ClaimWorkflowInput,
} from '../../workflows/claim-contracts';
import { rethrowUpdateFailure } from '../temporal/update-refusal';
import { withDeadline } from '../purchases/workflow-starts';
import type { ClaimRecord } from './repository';

export interface ClaimWorkflowDeps {
  client: Client;
  taskQueue: string;
  /** How long a call waits for the workflow's answer, in ms (default 30 000). */
  timeoutMs?: number;
}

/** The run's input from the claim as stored. */
function inputOf(c: ClaimRecord): ClaimWorkflowInput {
  return {
    claimId: c.id,
    status: c.status,
    seq: c.seq,
    amountClaimedMinor: c.amountClaimedMinor,
    acknowledgementDueAt: c.acknowledgementDueAt.toISOString(),
    acknowledgementOverdueRecorded: c.acknowledgementOverdueAt !== null,
    payout: c.payoutAccount !== null,
  };
}

export function createClaimWorkflows(deps: ClaimWorkflowDeps) {
  const timeoutMs = deps.timeoutMs ?? 30_000;
  const startOptions = (c: ClaimRecord) => ({
    workflowId: claimWorkflowId(c.id),
    taskQueue: deps.taskQueue,
    args: [inputOf(c)] as [ClaimWorkflowInput],
    staticSummary: `Claim ${c.id} · purchase ${c.purchaseId} · agency ${c.rootAccountId} · ${c.mode}`,
    workflowIdReusePolicy: 'ALLOW_DUPLICATE' as const,
    workflowIdConflictPolicy: 'USE_EXISTING' as const,
  });

  async function update<A>(c: ClaimRecord, name: string, arg: A): Promise<ClaimChange> {
    try {
      return await withDeadline(
        deps.client.workflow.executeUpdateWithStart<typeof claimWorkflow, ClaimChange, [A]>(name, {
          args: [arg],
          startWorkflowOperation: new WithStartWorkflowOperation(claimWorkflow, startOptions(c)),
        }),
        timeoutMs,
        'The claim’s change was not answered in time; read the claim to see whether it was made',
      );
    } catch (err) {
      rethrowUpdateFailure(err);
    }
  }

  return {
    /** Starts the owner of filed claim `c` (attaches to its run when one is open). */
    async start(c: ClaimRecord): Promise<void> {
      await deps.client.workflow.start(claimWorkflow, startOptions(c));
    },
    /** Takes action `input` on claim `c` through its workflow; answers its status after. Errors: see the module. */
    act(c: ClaimRecord, input: ClaimActionInput): Promise<ClaimChange> {
      return update(c, CLAIM_ACTION_UPDATE, input);
    },
    /** Adds a comment to claim `c`'s history through its workflow. */
    comment(c: ClaimRecord, input: ClaimCommentInput): Promise<ClaimChange> {
      return update(c, CLAIM_COMMENT_UPDATE, input);
    },
  };
}

export type ClaimWorkflows = ReturnType<typeof createClaimWorkflows>;
