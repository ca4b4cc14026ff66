/**
 * The premium bordereaux' workflows (activities/reports.ts):
 *
 * - bordereauWorkflow generates one bordereau's files, id `bordereau-<id>`, started once per
 *   bordereau row (asking for the same month again attaches to that row: one file, never two).
 * - monthlyBordereauxWorkflow is what the `monthly-bordereaux` Schedule starts on the 1st of each
 *   month (src/reports/schedule.ts): for the month before its start (UTC, by workflow time), or
 *   `input.month` when given, it asks for a bordereau of every agency, party and mode with a
 *   transaction recorded in that month, then reconciles that month with the processor in both
 *   modes (the runs it keeps feed the `reconciliation_differences` metric and its alert).
 *
 * Activities are retried without limit, backing off to five minutes between attempts: through a
 * storage or database outage the files appear once they are back.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { ReportActivities } from '../activities/reports';

const { generateBordereau, requestMonthlyBordereaux, reconcileMonth } = proxyActivities<ReportActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

export async function bordereauWorkflow(input: { bordereauId: number }): Promise<{ rows: number; sha256: Record<string, string> }> {
  return generateBordereau(input);
}

/** `YYYY-MM` of the month before `at` (UTC). */
export function previousMonth(at: Date): string {
  const d = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - 1, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

export async function monthlyBordereauxWorkflow(
  input: { month?: string } = {},
): Promise<{ month: string; bordereaux: number[]; reconciliationDifferences: { live: number; test: number } }> {
  // Workflow time: the same on replay.
  const month = input.month ?? previousMonth(new Date());
  const bordereaux = await requestMonthlyBordereaux({ month });
  const [live, test] = await Promise.all([reconcileMonth({ month, mode: 'live' }), reconcileMonth({ month, mode: 'test' })]);
  return { month, bordereaux, reconciliationDifferences: { live, test } };
}
