/**
 * holderNoticesWorkflow: emails the cancellation notices of one cancellation to the certificate
 * holders that asked for them, each in its own activity, retried with backoff (2 s doubling to
 * 1 min, 6 attempts, about 2 minutes in all, like proof-of-coverage emails); a notice whose
 * attempts all fail is marked `failed`. Started by the policy workflow after the cancellation
 * completed, as a child it does not wait for (an SMTP outage never holds the purchase's changes).
 * Id `holder-notices-<cancellationId>`. Returns how many were sent and failed.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { CertificateHolderActivities } from '../activities/certificate-holders';

const send = proxyActivities<CertificateHolderActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 6 },
});
const record = proxyActivities<CertificateHolderActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumInterval: '30 seconds' },
});

export async function holderNoticesWorkflow(input: { noticeIds: number[] }): Promise<{ sent: number; failed: number }> {
  const outcomes = await Promise.all(
    input.noticeIds.map(async (noticeId) => {
      try {
        await send.sendHolderCancellationNotice({ noticeId });
        return 'sent' as const;
      } catch (err) {
        const cause = (err as { cause?: { message?: string } }).cause;
        await record.markHolderCancellationNoticeFailed({ noticeId, reason: cause?.message ?? String(err) });
        return 'failed' as const;
      }
    }),
  );
  return { sent: outcomes.filter((o) => o === 'sent').length, failed: outcomes.filter((o) => o === 'failed').length };
}
