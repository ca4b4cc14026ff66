/**
 * The buyer's proof-of-coverage email after payment (issue 48, item 9): once a purchase's
 * certificates are issued, its buyer is emailed the proof of coverage through the same path as an
 * email an agent asks for (a `proof_of_coverage_emails` row, sent by `proof-email-<row id>`), so it
 * carries the certificates and, since it goes to the buyer, the withdrawal link when the purchase
 * offers one. Sent once per purchase: a retried or repeated issuance finds the row queued before
 * and starts nothing new for a row already sent. The account's `send_buyer_email_after_payment`
 * (`PATCH /api/v1/account`, on by default) turns it off; a purchase with no buyer email gets none.
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { ProofOfCoverageEmailsRepository } from './repository';

export function createBuyerEmailAfterPayment(deps: {
  /** The one writer of the email rows. */
  emails: Pick<ProofOfCoverageEmailsRepository, 'queueAfterPayment'>;
  /** Starts the sending workflow of the rows (`proof-email-<first id>`). */
  startSending: (emailIds: number[]) => Promise<void>;
}) {
  return {
    /**
     * Queues and starts the buyer's email of issued purchase `purchaseId` unless it was queued
     * before, the account turned it off or the purchase has no buyer email. Answers the email's id
     * (`GET /api/v1/proof_of_coverage_emails/{id}`) or null. Safe to repeat.
     */
    async send(purchaseId: number): Promise<number | null> {
      const row = await deps.emails.queueAfterPayment(purchaseId);
      if (!row) return null;
      if (row.status === 'queued') {
        try {
          await deps.startSending([row.id]);
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err; // started by an earlier try
        }
      }
      return row.id;
    },
  };
}
