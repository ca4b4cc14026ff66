/**
 * proofOfCoverageEmailWorkflow (spec §4.5 teamEmailProofofCoverage; issue 7): sends the rows of
 * one request, each in its own activity (all at once), retried with backoff (2 s doubling to
 * 1 min, 6 attempts, about 2 minutes in all); a row whose attempts all fail is marked `failed`.
 * Id `proof-email-<first row id>`. Returns how many were sent and failed.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { ProofEmailActivities } from '../activities/proof-email';

const send = proxyActivities<ProofEmailActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 6 },
});
const record = proxyActivities<ProofEmailActivities>({ startToCloseTimeout: '10 seconds', retry: { maximumInterval: '30 seconds' } });

export async function proofOfCoverageEmailWorkflow(input: { emailIds: number[] }): Promise<{ sent: number; failed: number }> {
  const outcomes = await Promise.all(
    input.emailIds.map(async (emailId) => {
      try {
        await send.sendProofOfCoverageEmail({ emailId });
        return 'sent' as const;
      } catch (err) {
        const cause = (err as { cause?: { message?: string } }).cause;
        await record.markProofOfCoverageEmailFailed({ emailId, reason: cause?.message ?? String(err) });
        return 'failed' as const;
      }
    }),
  );
  return { sent: outcomes.filter((o) => o === 'sent').length, failed: outcomes.filter((o) => o === 'failed').length };
}
