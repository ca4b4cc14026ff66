/**
 * claimWorkflow: the one owner of a claim (id `claim-<claimId>`; issue 51, item 2). The API files
 * the claim (its row `submitted`) and starts this run; from then on every change of the claim's
 * status is an update of this workflow, answered synchronously, taken one at a time:
 *
 *   submitted → acknowledged → under_review → approved (amount ≤ claimed, reason) | denied (code, text)
 *   approved → paid → closed; denied → closed; closed → reopened (reason) → under_review
 *
 * - `claimAction` carries one action of `CLAIM_ACTIONS` (./claim-contracts.ts). Its validator
 *   refuses an action the claim's status does not allow (`CLAIM_TRANSITION_NOT_ALLOWED`) or one
 *   missing what it needs (`VALIDATION_ERROR`: an approval's amount above the amount claimed, a
 *   denial without its code and text, a reopen without a reason), so a refused update never enters
 *   the history. The handler checks again in turn (two updates accepted at once are applied one
 *   after the other) and records the change through `recordClaimChange` (status and history event
 *   in one transaction, keyed by the change number so a retried activity records it once).
 * - `claimComment` adds a comment to the history (any status).
 * - The acknowledgement deadline (`acknowledgementDueAt`, the product's business days from the
 *   filing) is a durable timer: a claim still `submitted` then has the breach recorded
 *   (`recordClaimAcknowledgementOverdue`), once.
 * - An approval of a claim that names a payout account (`payout`) is paid by the workflow after
 *   the update has answered (issue 51, item 4): `payClaim` makes one transfer at the processor,
 *   keyed by the approval's change number, retried without an attempt limit through an outage (at
 *   most every 30 s), then the claim is recorded `paid` with the transfer as its reference, by the
 *   service. A refusal for good is recorded (`payment_failed`) and the claim stays approved for a
 *   payment by hand.
 * - A new claim's run first announces it (`announceClaimSubmitted`: the claim.submitted event);
 *   every recorded change that reaches a status publishes its `claim.*` event in its activity.
 * - A closed claim's run stays open `idleSeconds` for a reopen, then completes; a later reopen
 *   starts a new run from the stored status (update-with-start).
 *
 * Deterministic code only: the activities are seen through `import type`.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  defineQuery,
  defineUpdate,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { ClaimActivities } from '../activities/claims';
import {
  CLAIM_ACTIONS,
  CLAIM_ACTION_UPDATE,
  CLAIM_COMMENT_UPDATE,
  CLAIM_LIMITS,
  CLAIM_STATUS_QUERY,
  claimActionAllowed,
  type ClaimActionInput,
  type ClaimChange,
  type ClaimCommentInput,
  type ClaimStatus,
  type ClaimWorkflowInput,
} from './claim-contracts';

/** One action on the claim (see CLAIM_ACTIONS); answers the claim's status and change number after it. */
export const claimActionUpdate = defineUpdate<ClaimChange, [ClaimActionInput]>(CLAIM_ACTION_UPDATE);
/** A comment added to the claim's history; answers the claim's status and change number after it. */
export const claimCommentUpdate = defineUpdate<ClaimChange, [ClaimCommentInput]>(CLAIM_COMMENT_UPDATE);

/** What the `claimStatus` query answers. */
export interface ClaimStatusView extends ClaimChange {
  acknowledgementOverdue: boolean;
}
export const claimStatusQuery = defineQuery<ClaimStatusView>(CLAIM_STATUS_QUERY);

const DEFAULT_IDLE_SECONDS = 86_400;

const refuse = (message: string, type: string): never => {
  throw ApplicationFailure.nonRetryable(message, type);
};

/** Throws the refusal of `u` on a claim in `status` with `amountClaimedMinor` claimed, or returns when it may be taken. */
function check(u: ClaimActionInput, status: ClaimStatus, amountClaimedMinor: number): void {
  if (!u || typeof u.action !== 'string' || !(u.action in CLAIM_ACTIONS)) refuse('an action is required', 'VALIDATION_ERROR');
  if (!u.actor || typeof u.actor.type !== 'string') refuse('an actor is required', 'VALIDATION_ERROR');
  const text = (s: unknown, max: number) => typeof s === 'string' && s.trim().length > 0 && s.length <= max;
  if (u.reason !== undefined && !text(u.reason, CLAIM_LIMITS.reason))
    refuse(`reason must be 1 to ${CLAIM_LIMITS.reason} characters`, 'VALIDATION_ERROR');
  switch (u.action) {
    case 'approve':
      if (!Number.isInteger(u.amountMinor) || u.amountMinor! < 1)
        refuse('amount must be an integer of minor units >= 1', 'VALIDATION_ERROR');
      if (u.amountMinor! > amountClaimedMinor)
        refuse(`amount ${u.amountMinor} is more than the ${amountClaimedMinor} claimed`, 'VALIDATION_ERROR');
      if (u.reason === undefined) refuse('an approval needs a reason', 'VALIDATION_ERROR');
      break;
    case 'deny':
      if (typeof u.reasonCode !== 'string' || !/^[a-z][a-z0-9_]*$/.test(u.reasonCode) || u.reasonCode.length > CLAIM_LIMITS.reasonCode)
        refuse('a denial needs a reason_code (lower snake case)', 'VALIDATION_ERROR');
      if (u.reason === undefined) refuse('a denial needs a reason text', 'VALIDATION_ERROR');
      break;
    case 'reopen':
      if (u.reason === undefined) refuse('a reopen needs a reason', 'VALIDATION_ERROR');
      break;
    case 'record_payment':
      if (!text(u.reference, CLAIM_LIMITS.reference)) refuse('a payment needs a reference', 'VALIDATION_ERROR');
      break;
    default:
      break;
  }
  if (!claimActionAllowed(u.action, status))
    refuse(
      `A claim that is ${status} cannot be moved by ${u.action} (allowed from: ${CLAIM_ACTIONS[u.action].from.join(', ')})`,
      'CLAIM_TRANSITION_NOT_ALLOWED',
    );
}

export async function claimWorkflow(input: ClaimWorkflowInput): Promise<ClaimChange> {
  const db = proxyActivities<ClaimActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { maximumInterval: `${input.retryMaxIntervalSeconds ?? 300} seconds` },
  });
  // Processor calls retry at least every 30 s, so a payout goes out soon after an outage ends.
  const money = proxyActivities<ClaimActivities>({
    startToCloseTimeout: '60 seconds',
    retry: { maximumInterval: `${Math.min(input.retryMaxIntervalSeconds ?? 30, 30)} seconds` },
  });
  const claimId = input.claimId;
  /** The change number of an approval still to be paid (by the main loop, after the update answered), or null. */
  let payoutDue: number | null = null;
  let status: ClaimStatus = input.status;
  let seq = input.seq;
  let overdue = input.acknowledgementOverdueRecorded;
  /** Bumped by every recorded change, so the idle wait of a closed claim starts again. */
  let version = 0;
  let chain: Promise<unknown> = Promise.resolve();
  /** Runs `step` after every change accepted before it (one change at a time). */
  const inTurn = <T>(step: () => Promise<T>): Promise<T> => {
    const run = chain.then(step);
    chain = run.catch(() => undefined);
    return run;
  };
  const answer = (): ClaimChange => ({ claimId, status, seq });

  setHandler(
    claimActionUpdate,
    (u) =>
      inTurn(async () => {
        check(u, status, input.amountClaimedMinor);
        const to = CLAIM_ACTIONS[u.action].to;
        await db.recordClaimChange({
          claimId,
          seq: seq + 1,
          action: u.action,
          from: status,
          to,
          actor: u.actor,
          ...(u.amountMinor !== undefined ? { amountMinor: u.amountMinor } : {}),
          ...(u.reason !== undefined ? { reason: u.reason.trim() } : {}),
          ...(u.reasonCode !== undefined ? { reasonCode: u.reasonCode } : {}),
          ...(u.reference !== undefined ? { reference: u.reference.trim() } : {}),
        });
        seq += 1;
        status = to;
        version += 1;
        if (u.action === 'approve' && input.payout) payoutDue = seq;
        return answer();
      }),
    { validator: (u) => check(u, status, input.amountClaimedMinor) },
  );

  const commentCheck = (c: ClaimCommentInput) => {
    if (!c?.actor || typeof c.text !== 'string' || c.text.trim().length === 0 || c.text.length > CLAIM_LIMITS.comment)
      refuse(`a comment needs 1 to ${CLAIM_LIMITS.comment} characters of text`, 'VALIDATION_ERROR');
  };
  setHandler(
    claimCommentUpdate,
    (c) =>
      inTurn(async () => {
        await db.recordClaimComment({ claimId, seq: seq + 1, actor: c.actor, text: c.text.trim() });
        seq += 1;
        version += 1;
        return answer();
      }),
    { validator: commentCheck },
  );

  setHandler(claimStatusQuery, () => ({ ...answer(), acknowledgementOverdue: overdue }));

  // The filing's event (claim.submitted), before any change's.
  if (input.seq === 0) await inTurn(() => db.announceClaimSubmitted({ claimId }));

  // The acknowledgement deadline: a durable timer from the filing.
  if (status === 'submitted' && !overdue) {
    const waitMs = Date.parse(input.acknowledgementDueAt) - Date.now();
    const acknowledged = waitMs > 0 ? await condition(() => status !== 'submitted', waitMs) : false;
    if (!acknowledged)
      await inTurn(async () => {
        if (status !== 'submitted') return;
        await db.recordClaimAcknowledgementOverdue({ claimId, seq: seq + 1 });
        seq += 1;
        overdue = true;
      });
  }

  /** Pays approval `approvalSeq`, in turn with the claim's other changes (a change since then, paid by hand, leaves nothing to pay). */
  const pay = (approvalSeq: number) =>
    inTurn(async () => {
      if (status !== 'approved') return;
      let paid: { transferId: string; amountMinor: number } | null;
      try {
        paid = await money.payClaim({ claimId, approvalSeq });
      } catch (err) {
        const reason = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.message : String(err);
        await db.recordClaimPayoutFailure({ claimId, seq: seq + 1, reason });
        seq += 1;
        return;
      }
      if (!paid) return;
      await db.recordClaimChange({
        claimId,
        seq: seq + 1,
        action: 'record_payment',
        from: status,
        to: 'paid',
        actor: { type: 'system', id: null },
        amountMinor: paid.amountMinor,
        reference: paid.transferId,
      });
      seq += 1;
      status = 'paid';
      version += 1;
    });

  // Open until closed and idle for `idleSeconds`; a change in the meantime (a reopen) starts the wait again.
  const idleMs = (input.idleSeconds ?? DEFAULT_IDLE_SECONDS) * 1000;
  for (;;) {
    await condition(() => status === 'closed' || payoutDue !== null);
    if (payoutDue !== null) {
      const approvalSeq = payoutDue;
      payoutDue = null;
      await pay(approvalSeq);
      continue;
    }
    const seen = version;
    const changed = await condition(() => version !== seen, idleMs);
    if (!changed) break;
  }
  await condition(allHandlersFinished);
  return answer();
}
