/**
 * Kept only for `./workflow-client`'s import of `PurchaseRecord`, which another change is editing:
 * the purchases repository is split by aggregate (./sale-repository, ./subscription-repository,
 * ./ledger-repository, ./attention-repository; read models ./purchase-record and ./ledger-record).
 * Import from those; this file goes once ./workflow-client imports ./purchase-record.
 */
export type { PurchaseRecord } from './purchase-record';
