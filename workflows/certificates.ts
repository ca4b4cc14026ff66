/**
 * certificatesWorkflow (ARCHITECTURE §3 step 7; issue 6), id `certificates-<purchaseId>`: the
 * child a renewal runs and the run an operator's `reissue` starts (a purchase's own run issues
 * through the same `issueCertificateRounds` itself).
 *
 * Rounds of: plan one certificate per covered unit → render and store the pending ones in
 * batches (`CERTIFICATE_BATCH_SIZE` per activity, `PARALLEL_BATCHES` at once; the worker's page
 * pool bounds actual rendering) → build the zips → verify that everything getCertificates
 * returns exists. A round that finds something missing (e.g. an object storage lost) is
 * followed, after a backoff of 1 s doubling to 5 min, by another; then the purchase is marked
 * `issued`. Returns `{ purchaseId, status }`.
 *
 * The heavy steps (render and store, zips, verification) run on `certificatesTaskQueue` of the
 * workflow's task queue, polled with a concurrency of its own (CERTIFICATE_ACTIVITY_CONCURRENCY).
 * A round with at most `CERTIFICATE_BATCH_SIZE` certificates pending runs them as one activity,
 * `issueCertificatesAndArchives` (larger purchases as three steps).
 *
 * The `status` query answers `CertificatesStatusView` (phase, round, batches done of total); the
 * backoff timer is named for the UI. The short database steps (status, plan, marking issued) run
 * as local activities.
 */
import {
  defineQuery,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { PurchaseActivities } from '../activities/purchase';
import type { CertificateActivities } from '../activities/certificates';
import { STATUS_QUERY, certificatesTaskQueue, type CertificatesStatusView, type PurchaseStatus } from './contracts';

/** Certificates one `issueCertificates` activity renders (its retry and heartbeat unit). */
export const CERTIFICATE_BATCH_SIZE = 10;
/** Batches in flight at once. */
export const PARALLEL_BATCHES = 4;

const ACTS_OPTIONS = { startToCloseTimeout: '10 seconds', retry: { maximumInterval: '30 seconds' } } as const;
const QUICK_OPTIONS = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} as const;
/** The short database steps (status, plan, issued) as local activities: one marker event each. */
const localActs = proxyLocalActivities<PurchaseActivities>(ACTS_OPTIONS);
/** Planning (`planCertificates`) as a local activity; the purchase workflow plans its issuance with it too. */
export const localQuick = proxyLocalActivities<CertificateActivities>(QUICK_OPTIONS);
/** Rendering, zips and verification, on the certificates task queue of the workflow's own queue. */
export const heavyActivities = (taskQueue = certificatesTaskQueue(workflowInfo().taskQueue)) =>
  proxyActivities<CertificateActivities>({
    taskQueue,
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '15 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
  });

export interface CertificatesResult {
  purchaseId: number;
  status: PurchaseStatus;
}

/** What the certificates workflow's `status` query answers (defined with the workflow contracts). */
export type { CertificatesStatusView };

export const certificatesStatusQuery = defineQuery<CertificatesStatusView>(STATUS_QUERY);

export async function certificatesWorkflow(input: { purchaseId: number }): Promise<CertificatesResult> {
  const { purchaseId } = input;
  const view: CertificatesStatusView = { purchaseId, phase: 'planning', round: 0, batchesDone: 0, batchesTotal: 0 };
  setHandler(certificatesStatusQuery, () => ({ ...view }));
  await localActs.setPurchaseStatus({ purchaseId, status: 'awaiting_certificates' });
  upsertSearchAttributes({ PurchaseId: [String(purchaseId)], PurchaseStatus: ['awaiting_certificates'] });

  await issueAndMarkIssued(purchaseId, view, { heavy: heavyActivities(), plan: localQuick, oneStep: true, db: localActs });
  upsertSearchAttributes({ PurchaseStatus: ['issued'] });
  return { purchaseId, status: 'issued' };
}

/**
 * A purchase's first issuance to the end: `issueCertificateRounds` until everything is stored,
 * then the purchase marked issued through `steps.db` (which also publishes its issued event) and
 * `view.phase` set to `issued`. Shared by the certificates workflow and the purchase workflow's
 * own issuance; the search attributes stay with each caller (each has its own).
 */
export async function issueAndMarkIssued(
  purchaseId: number,
  view: CertificatesStatusView,
  steps: Parameters<typeof issueCertificateRounds>[2] & { db: Pick<PurchaseActivities, 'markCertificatesIssued'> },
): Promise<void> {
  await issueCertificateRounds(purchaseId, view, steps);
  await steps.db.markCertificatesIssued({ purchaseId });
  view.phase = 'issued';
}

/**
 * The issuance rounds of purchase `purchaseId`, until verification finds everything stored: plan
 * (one current certificate per covered unit and holder) → render and store the pending ones in
 * batches → zips → verification, with a backoff of 1 s doubling to 5 min between rounds. Shared by
 * the certificates workflow and the policy workflow (a holder added, certificates reissued), so
 * both issue through the same steps. `oneStep`: a round with at most `oneStepMax` certificates
 * pending (default one batch, `CERTIFICATE_BATCH_SIZE`) runs as one heavy activity, which zips the
 * PDFs it just rendered from memory. Progress goes into `view`.
 */
export async function issueCertificateRounds(
  purchaseId: number,
  view: CertificatesStatusView,
  steps: {
    heavy: ReturnType<typeof heavyActivities>;
    plan: Pick<CertificateActivities, 'planCertificates'>;
    oneStep: boolean;
    oneStepMax?: number;
  },
): Promise<void> {
  const { heavy, plan, oneStep } = steps;
  const oneStepMax = steps.oneStepMax ?? CERTIFICATE_BATCH_SIZE;
  /** Waits before another round after a check found storage incomplete: 1 s doubling to 5 min. */
  const backoff = (round: number) => {
    view.phase = 'waiting';
    return sleep(Math.min(1000 * 2 ** round, 5 * 60_000), { summary: 'backoff before the next issuance round (storage incomplete)' });
  };
  for (let round = 0; ; round++) {
    Object.assign(view, { phase: 'planning', round, batchesDone: 0, batchesTotal: 0 });
    const { pendingIds } = await plan.planCertificates({ purchaseId });
    if (oneStep && pendingIds.length <= oneStepMax) {
      Object.assign(view, { phase: 'rendering', batchesTotal: 1 });
      const check = await heavy.issueCertificatesAndArchives({ purchaseId, certificateIds: pendingIds });
      view.batchesDone = 1;
      if (check.complete) return;
      await backoff(round);
      continue;
    }
    const batches: number[][] = [];
    for (let i = 0; i < pendingIds.length; i += CERTIFICATE_BATCH_SIZE) batches.push(pendingIds.slice(i, i + CERTIFICATE_BATCH_SIZE));
    Object.assign(view, { phase: 'rendering', batchesTotal: batches.length });
    let next = 0;
    const lane = async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        await heavy.issueCertificates({ purchaseId, certificateIds: batch });
        view.batchesDone++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_BATCHES, batches.length) }, lane));
    view.phase = 'archiving';
    await heavy.buildCertificateArchives({ purchaseId });
    view.phase = 'verifying';
    const check = await heavy.verifyCertificates({ purchaseId });
    if (check.complete) return;
    await backoff(round);
  }
}
