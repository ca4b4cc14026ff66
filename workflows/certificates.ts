/**
 * certificatesWorkflow: the child the purchase workflow runs once payment is recorded.
 * Certificate issuance (render, store, zip, verify) is the certificates issue; until it lands,
 * this child records that the purchase is awaiting its certificates, so nothing paid is lost
 * track of: `purchases.status = 'awaiting_certificates'` lists every purchase still owed PDFs.
 */
import { proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { PurchaseActivities } from '../activities/purchase';

const acts = proxyActivities<PurchaseActivities>({ startToCloseTimeout: '10 seconds', retry: { maximumInterval: '30 seconds' } });

export async function certificatesWorkflow(input: { purchaseId: number }): Promise<{ purchaseId: number; status: 'awaiting_certificates' }> {
  await acts.setPurchaseStatus({ purchaseId: input.purchaseId, status: 'awaiting_certificates' });
  upsertSearchAttributes({ PurchaseId: [String(input.purchaseId)], PurchaseStatus: ['awaiting_certificates'] });
  return { purchaseId: input.purchaseId, status: 'awaiting_certificates' };
}
