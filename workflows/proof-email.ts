/**
 * proofOfCoverageEmailWorkflow (spec §4.5 teamEmailProofofCoverage; issue 7): sends the rows of
 * one request, each in its own activity (all at once), retried with backoff (2 s doubling to
 * 1 min, 6 attempts, about 2 minutes in all); a row whose attempts all fail is marked `failed`.
 * Id `proof-email-<first row id>`. Returns how many were sent and failed; the `status` query
 * answers the same counts so far.
 */
import { defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ProofEmailActivities } from '../activities/proof-email';
import { STATUS_QUERY } from './contracts';

/** What the proof-of-coverage email workflow's `status` query answers (counts of its rows). */
export interface ProofEmailStatusView {
  emails: number;
  sent: number;
  failed: number;
}
export const proofEmailStatusQuery = defineQuery<ProofEmailStatusView>(STATUS_QUERY);

const send = proxyActivities<ProofEmailActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 6 },
});
const record = proxyActivities<ProofEmailActivities>({ startToCloseTimeout: '10 seconds', retry: { maximumInterval: '30 seconds' } });

export async function proofOfCoverageEmailWorkflow(input: { emailIds: number[] }): Promise<{ sent: number; failed: number }> {
  const view: ProofEmailStatusView = { emails: input.emailIds.length, sent: 0, failed: 0 };
  setHandler(proofEmailStatusQuery, () => ({ ...view }));
  const outcomes = await Promise.all(
    input.emailIds.map(async (emailId) => {
      try {
        await send.sendProofOfCoverageEmail({ emailId });
        view.sent++;
        return 'sent' as const;
      } catch (err) {
        const cause = (err as { cause?: { message?: string } }).cause;
        await record.markProofOfCoverageEmailFailed({ emailId, reason: cause?.message ?? String(err) });
        view.failed++;
        return 'failed' as const;
      }
    }),
  );
  return { sent: outcomes.filter((o) => o === 'sent').length, failed: outcomes.filter((o) => o === 'failed').length };
}
