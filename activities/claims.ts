/**
 * Activities of the claim workflow (workflows/claim.ts): its only writes of a claim's status and
 * history, through the claims repository (src/claims/repository.ts), each keyed by the workflow's
 * change number so a retried step records its change once.
 *
 * - `recordClaimChange`: an action's new status, its columns and its history event. A reopen that
 *   meets another open claim on the same covered unit and incident day fails for good with type
 *   DUPLICATE_CLAIM (the API answers 409 naming the open claim).
 * - `recordClaimComment`: a comment in the history.
 * - `recordClaimAcknowledgementOverdue`: the acknowledgement deadline passed with the claim still
 *   submitted.
 * Database outages retry (the workflow's policy has no attempt limit).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../src/db/knex';
import { createClaimsRepository, OpenClaimConflict, type ClaimChangeRecord } from '../src/claims/repository';
import type { ClaimActor } from '../workflows/claim-contracts';

export function createClaimActivities(deps: { db: Db }) {
  const claims = createClaimsRepository(deps.db);
  return {
    /** Records change `c.seq` of claim `c.claimId` (status, columns, history event). @throws non-retryable DUPLICATE_CLAIM on a reopen that meets another open claim. */
    async recordClaimChange(c: ClaimChangeRecord): Promise<void> {
      try {
        await claims.recordChange(c);
      } catch (err) {
        if (err instanceof OpenClaimConflict)
          throw ApplicationFailure.nonRetryable(
            `Claim ${c.claimId} cannot be reopened: claim ${err.openClaimId ?? '(unknown)'} is open on the same covered unit and incident day`,
            'DUPLICATE_CLAIM',
          );
        throw err;
      }
    },

    /** Records comment `c.seq` of claim `c.claimId` in its history. */
    async recordClaimComment(c: { claimId: number; seq: number; actor: ClaimActor; text: string }): Promise<void> {
      await claims.recordComment(c);
    },

    /** Records that claim `c.claimId` passed its acknowledgement deadline still submitted (change `c.seq`). */
    async recordClaimAcknowledgementOverdue(c: { claimId: number; seq: number }): Promise<void> {
      await claims.recordAcknowledgementOverdue(c);
    },
  };
}

export type ClaimActivities = ReturnType<typeof createClaimActivities>;
