/**
 * renewalWorkflow (issue 5 "Subscription products"): one per paid billing-cycle invoice of a
 * subscription, id `renewal-<purchaseId>-<invoiceId>` (a redelivered `invoice.paid` attaches to
 * nothing new). Creates the renewal purchase for the next period, then runs the certificate
 * child for it like any paid purchase. Returns the renewal's id and status.
 */
import { executeChild, proxyActivities } from '@temporalio/workflow';
import type { RenewalActivities } from '../activities/renewal';
import { certificatesWorkflowId, type RenewalInput } from './contracts';
import { certificatesWorkflow, type CertificatesResult } from './certificates';

const acts = proxyActivities<RenewalActivities>({ startToCloseTimeout: '30 seconds', retry: { maximumInterval: '30 seconds' } });

export async function renewalWorkflow(input: RenewalInput): Promise<CertificatesResult & { period: number }> {
  const renewal = await acts.createRenewalPurchase(input);
  const issued = await executeChild(certificatesWorkflow, {
    workflowId: certificatesWorkflowId(renewal.purchaseId),
    args: [{ purchaseId: renewal.purchaseId }],
  });
  return { ...issued, period: renewal.period };
}
