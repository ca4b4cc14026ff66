/**
 * storedDocumentsSweepWorkflow (issue 52, item 2): what the `stored-documents-sweep` Schedule
 * starts every day (src/certificates/sweep-schedule.ts), and what can be started by hand. It runs
 * the sweep one page at a time (`sweepStoredDocuments`, activities/document-sweep.ts: each page's
 * certificates and zips read back, hashed, compared with their records, and the damaged or missing
 * ones issued again) and returns the summed report (`SweepReport`: checked, found, repaired,
 * not_repaired, and each finding). A page is retried until storage and the database answer; a long
 * sweep continues as new after `PAGES_PER_RUN` pages, carrying its cursor and totals so far.
 */
import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { DocumentSweepActivities } from '../activities/document-sweep';
import type { SweepCursor, SweepPage, SweepReport } from '../src/certificates/document-sweep';

const { sweepStoredDocuments } = proxyActivities<DocumentSweepActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** Pages one run holds before it continues as new (its history stays small). */
export const PAGES_PER_RUN = 100;

export interface StoredDocumentsSweepInput {
  /** Only this root account's purchases. */
  rootAccountId?: number;
  /** Certificates and zips each per page (default 200). */
  pageSize?: number;
  /** Set by continue-as-new: where to go on, and what was found so far. */
  cursor?: SweepCursor;
  sofar?: SweepReport;
}

const EMPTY: SweepReport = { checked: { certificates: 0, archives: 0 }, found: 0, repaired: 0, not_repaired: 0, findings: [] };

export async function storedDocumentsSweepWorkflow(input: StoredDocumentsSweepInput = {}): Promise<SweepReport> {
  let report = input.sofar ?? EMPTY;
  let cursor: SweepCursor | null = input.cursor ?? { afterCertificateId: 0, afterArchiveId: 0 };
  const options = {
    ...(input.rootAccountId === undefined ? {} : { rootAccountId: input.rootAccountId }),
    ...(input.pageSize === undefined ? {} : { pageSize: input.pageSize }),
  };
  for (let pages = 0; cursor; pages++) {
    if (pages === PAGES_PER_RUN) return continueAsNew<typeof storedDocumentsSweepWorkflow>({ ...input, cursor, sofar: report });
    const page: SweepPage = await sweepStoredDocuments({ cursor, ...options });
    report = {
      checked: {
        certificates: report.checked.certificates + page.checked.certificates,
        archives: report.checked.archives + page.checked.archives,
      },
      found: report.found + page.found,
      repaired: report.repaired + page.repaired,
      not_repaired: report.not_repaired + page.not_repaired,
      findings: [...report.findings, ...page.findings],
    };
    cursor = page.next;
  }
  return report;
}
