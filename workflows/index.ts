/**
 * The workflow bundle's entry: every workflow the worker runs is exported from here.
 * Deterministic code only (STYLE practice 1).
 */
export { purchaseWorkflow, createCheckoutUpdate, chargeSavedCardUpdate, paymentEventSignal, statusQuery } from './purchase';
export { certificatesWorkflow } from './certificates';
export { proofOfCoverageEmailWorkflow } from './proof-email';
export { eventDeliveryWorkflow } from './event-delivery';
export { policyWorkflow, cancelUpdate, retryFailedCancellationsUpdate } from './policy';
export { bulkCancellationWorkflow } from './bulk-cancellation';
export { bordereauWorkflow, monthlyBordereauxWorkflow } from './bordereau';
export { holderNoticesWorkflow } from './holder-notices';
export { storedDocumentsSweepWorkflow } from './document-sweep';
export { claimWorkflow } from './claim';
