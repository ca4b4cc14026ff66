/**
 * renewalWorkflow (issue 5 "Subscription products"): one per paid billing-cycle invoice of a
 * subscription, id `renewal-<purchaseId>-<invoiceId>` (a redelivered `invoice.paid` attaches to
 * nothing new). Creates the renewal purchase for the next period, then runs the certificate
 * child for it like any paid purchase. Returns the renewal's id and status; the `status` query
 * answers `RenewalStatusView`.
 */
import { defineQuery, executeChild, proxyActivities, setHandler } from '@temporalio/workflow';
import type { RenewalActivities } from '../activities/renewal';
import { STATUS_QUERY, certificatesWorkflowId, type RenewalInput } from './contracts';
import { certificatesWorkflow, type CertificatesResult } from './certificates';

/** What the renewal workflow's `status` query answers. */
export interface RenewalStatusView {
  purchaseId: number;
  invoiceId: string;
  phase: 'creating_renewal' | 'issuing_certificates' | 'issued';
  /** The renewal purchase, once created. */
  renewalPurchaseId: number | null;
}
export const renewalStatusQuery = defineQuery<RenewalStatusView>(STATUS_QUERY);

const acts = proxyActivities<RenewalActivities>({ startToCloseTimeout: '30 seconds', retry: { maximumInterval: '30 seconds' } });

export async function renewalWorkflow(input: RenewalInput): Promise<CertificatesResult & { period: number }> {
  const view: RenewalStatusView = {
    purchaseId: input.purchaseId,
    invoiceId: input.invoiceId,
    phase: 'creating_renewal',
    renewalPurchaseId: null,
  };
  setHandler(renewalStatusQuery, () => ({ ...view }));
  const renewal = await acts.createRenewalPurchase(input);
  Object.assign(view, { phase: 'issuing_certificates', renewalPurchaseId: renewal.purchaseId });
  const issued = await executeChild(certificatesWorkflow, {
    workflowId: certificatesWorkflowId(renewal.purchaseId),
    args: [{ purchaseId: renewal.purchaseId }],
  });
  view.phase = 'issued';
  return { ...issued, period: renewal.period };
}
