/**
 * bordereauWorkflow: generates one premium bordereau's file (activities/reports.ts), id
 * `bordereau-<id>`, started once per bordereau row (asking for the same month again attaches to
 * that row, so one file, never two). The activity is retried without limit, backing off to five
 * minutes between attempts: through a storage or database outage the file appears once they are back.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { ReportActivities } from '../activities/reports';

const { generateBordereau } = proxyActivities<ReportActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

export async function bordereauWorkflow(input: { bordereauId: number }): Promise<{ rows: number; sha256: Record<string, string> }> {
  return generateBordereau(input);
}
