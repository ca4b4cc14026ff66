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
 * - `payClaim` (issue 51, item 4): pays an approved claim what is left of its approved amount by a
 *   transfer to the claimant's connected account at the processor, with the idempotency key
 *   `claim-<id>-payment-<approval change>`: every retry of one approval's payout (an outage, a lost
 *   answer) is the same transfer, so it is made once. A refusal (an account that cannot take it)
 *   fails for good with the processor's error type; the workflow records it
 *   (`recordClaimPayoutFailure`) and the claim stays approved.
 * - Each change that reaches a status publishes its `claim.*` event to the agency's endpoints
 *   (src/events: `claimChanged`) after it is recorded, in the same activity: a retry publishes the
 *   same event (its id names the claim and the change number), once. `announceClaimSubmitted`
 *   publishes `claim.submitted` for the filing (change 0) and emails the adjusters of the insurer
 *   and MGA its product names (their claims notification address).
 * Database and processor outages retry (the workflow's policies have no attempt limit).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../src/db/knex';
import type { Payproc } from '../src/payproc/client';
import { processorFailure } from './purchase';
import { createClaimsRepository, OpenClaimConflict, type ClaimChangeRecord } from '../src/claims/repository';
import type { ClaimActor } from '../workflows/claim-contracts';
import type { EventEmitter } from '../src/events/emitter';
import type { Mailer } from '../src/mail/mailer';
import { createAccountsRepository } from '../src/accounts/repository';
import type { ClaimRecord } from '../src/claims/repository';

/** The email an adjuster gets of a new claim: what was claimed, on which unit and certificate, and its deadline (amounts in major units for reading). */
function claimSubmittedMail(c: ClaimRecord, to: string, messageId: string) {
  const amount = `${(c.amountClaimedMinor / 100).toFixed(2)} ${c.currency.toUpperCase()}`;
  return {
    to,
    messageId,
    subject: `New claim ${c.id}: ${c.claimType.replace(/_/g, ' ')}, ${amount}`,
    text: [
      `Claim ${c.id} was filed on purchase ${c.purchaseId}, a product your company underwrites.`,
      '',
      `Incident: ${c.incidentAt.toISOString()} (local day ${c.incidentDay}), covered unit ${c.coveredUnitId}`,
      `Certificate: ${c.certificateNumber ?? 'being issued'}`,
      `Type: ${c.claimType}`,
      `Amount claimed: ${amount}`,
      `Claimant: ${c.claimant.name} <${c.claimant.email}>`,
      '',
      `Acknowledge it by ${c.acknowledgementDueAt.toISOString()}: POST /api/v1/claims/${c.id}/actions with your company's API key.`,
    ].join('\n'),
  };
}

export function createClaimActivities(deps: {
  db: Db;
  payproc: Payproc;
  events: Pick<EventEmitter, 'claimChanged'>;
  /** Emails adjusters of a new claim (SMTP). */
  mailer: Pick<Mailer, 'send'>;
  /** Domain of the fixed Message-IDs of those emails. */
  messageIdDomain: string;
  countProcessorError?: (operation: string) => void;
}) {
  const claims = createClaimsRepository(deps.db);
  const accounts = createAccountsRepository(deps.db);
  /** Publishes the event of change `seq` of claim `claimId` (none for a change that reaches no status). */
  async function publishChange(claimId: number, seq: number): Promise<void> {
    const [claim, history] = await Promise.all([claims.find(claimId), claims.events(claimId)]);
    const change = history.find((e) => e.seq === seq);
    if (claim && change) await deps.events.claimChanged(claim, change);
  }
  return {
    /**
     * The filing of claim `input.claimId` (change 0): publishes `claim.submitted` and emails the
     * adjusters of the insurer and MGA its product names (each party's claims notification
     * address, when set), each message with a fixed Message-ID so a retry is recognisable as the
     * same message. Safe to repeat.
     */
    async announceClaimSubmitted(input: { claimId: number }): Promise<void> {
      await publishChange(input.claimId, 0);
      const c = await claims.find(input.claimId);
      if (!c) return;
      const parties = await claims.partiesOf(c.productLineId);
      const emails = await accounts.claimsNotificationEmails([parties.insurer, parties.mga].filter((p): p is number => p !== null));
      for (const [party, to] of emails)
        await deps.mailer.send(claimSubmittedMail(c, to, `<claim-${c.id}-submitted-${party}@${deps.messageIdDomain}>`));
    },

    /** Records change `c.seq` of claim `c.claimId` (status, columns, history event) and publishes its event. @throws non-retryable DUPLICATE_CLAIM on a reopen that meets another open claim. */
    async recordClaimChange(c: ClaimChangeRecord): Promise<void> {
      try {
        await claims.recordChange(c);
        await publishChange(c.claimId, c.seq);
      } catch (err) {
        if (err instanceof OpenClaimConflict)
          throw ApplicationFailure.nonRetryable(
            `Claim ${c.claimId} cannot be reopened: claim ${err.openClaimId ?? '(unknown)'} is open on the same covered unit and incident day`,
            'DUPLICATE_CLAIM',
          );
        throw err;
      }
    },

    /**
     * Pays claim `input.claimId` (approved, with a payout account) what is left of its approved
     * amount: a transfer at the processor keyed by `approvalSeq`, the change number of the approval
     * being paid. Answers the transfer's id and amount (minor units), or null when nothing is to be
     * paid (not approved, no payout account, or paid already).
     */
    async payClaim(input: { claimId: number; approvalSeq: number }): Promise<{ transferId: string; amountMinor: number } | null> {
      const c = await claims.find(input.claimId);
      if (!c || c.status !== 'approved' || !c.payoutAccount || c.approvedAmountMinor === null) return null;
      const amount = c.approvedAmountMinor - c.paidAmountMinor;
      if (amount <= 0) return null;
      try {
        const transfer = await deps.payproc.client(c.mode).transfers.create(
          {
            amount,
            currency: c.currency,
            destination: c.payoutAccount,
            transfer_group: `claim-${c.id}`,
            description: `Claim ${c.id} of purchase ${c.purchaseId}`,
            metadata: { claim_id: String(c.id), purchase_id: String(c.purchaseId) },
          },
          { idempotencyKey: `claim-${c.id}-payment-${input.approvalSeq}` },
        );
        return { transferId: transfer.id, amountMinor: amount };
      } catch (err) {
        return processorFailure(err, deps.countProcessorError ?? (() => undefined));
      }
    },

    /** Records that the processor refused claim `c.claimId`'s payout for good (change `c.seq`). */
    async recordClaimPayoutFailure(c: { claimId: number; seq: number; reason: string }): Promise<void> {
      await claims.recordPayoutFailure(c);
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
