/**
 * Bulk cancellations for the agency's server: many purchases cancelled as one durable batch
 * (an event called off). `create` resolves the selection now (named purchases, or every purchase
 * in force of a product with a covered unit on a local date: that product's units on that date, or,
 * with scope `purchase_date`, every unit of those purchases on that date), stores the batch with
 * each purchase once, and starts its workflow (workflows/bulk-cancellation.ts); `get` shows its
 * progress, with the units it cancels counted by product.
 *
 * Tenancy: a batch sees only the key's purchases (account, mode, teammate); a named purchase that
 * is not one of them is skipped as NOT_FOUND, exactly like one that does not exist. Errors
 * (AppError): VALIDATION_ERROR (a bad body; a product and date selecting more than 1000
 * purchases); NOTHING_TO_CANCEL (409: the product and date select no purchase in force);
 * NOT_FOUND (get: another key's batch).
 */
import type { Principal } from '../api-keys/service';
import { AppError, notFound } from '../shared/errors';
import { purchaseScopeOf } from '../purchases/service';
import type { BulkCancellationRecord, BulkCancellationsRepository, BulkItemRecord, BulkUnitCounts } from './repository';
import { BULK_CANCELLATION_MAX, type BulkCancellation, type CreateBulkCancellationRequest } from './schemas';

/**
 * The API's view of batch `b` with its `items` and the `units` they cancel (counted by the
 * repository's `unitCounts`); a selection by product and date shows its scope (`product_units`
 * for a batch made before scopes).
 */
export function toBulkCancellation(b: BulkCancellationRecord, items: BulkItemRecord[], units: BulkUnitCounts): BulkCancellation {
  const count = (s: BulkItemRecord['status']) => items.filter((i) => i.status === s).length;
  const byDate = 'product_id' in b.selection;
  return {
    object: 'bulk_cancellation',
    id: b.id,
    status: b.status,
    selection: 'product_id' in b.selection ? { ...b.selection, scope: b.selection.scope ?? 'product_units' } : b.selection,
    requested_by: b.requestedBy,
    reason: b.reason,
    counts: {
      total: items.length,
      pending: count('pending'),
      accepted: count('accepted'),
      skipped: count('skipped'),
      failed: count('failed'),
      refunded: items.filter((i) => i.cancellationStatus === 'completed').length,
      units: {
        total: units.total,
        of_product: byDate ? units.ofProduct : null,
        of_other_products: byDate ? units.total - units.ofProduct : null,
      },
      purchases_with_other_products: units.purchasesWithOtherProducts,
    },
    items: items.map((i) => ({
      purchase_id: i.purchaseId,
      status: i.status,
      covered_unit_ids: i.coveredUnitIds,
      cancellation_id: i.cancellationId,
      cancellation_status: i.cancellationStatus,
      refund_total: i.refundTotalMinor,
      error: i.errorCode ? { code: i.errorCode, message: i.errorMessage ?? '' } : null,
    })),
    created_at: b.createdAt.toISOString(),
    completed_at: b.completedAt?.toISOString() ?? null,
  };
}

export function createBulkCancellationService(deps: { repo: BulkCancellationsRepository; start: (bulkId: number) => Promise<void> }) {
  const view = async (b: BulkCancellationRecord) =>
    toBulkCancellation(
      b,
      await deps.repo.items(b.id),
      await deps.repo.unitCounts(b.id, 'product_id' in b.selection ? b.selection.product_id : null),
    );
  return {
    async create(principal: Principal, body: CreateBulkCancellationRequest): Promise<BulkCancellation> {
      const scope = purchaseScopeOf(principal);
      let items: Array<{ purchaseId: number; coveredUnitIds: number[] | null }>;
      let selection: BulkCancellationRecord['selection'];
      if (body.purchase_ids) {
        items = body.purchase_ids.map((purchaseId) => ({ purchaseId, coveredUnitIds: null }));
        selection = { purchase_ids: body.purchase_ids };
      } else {
        const unitScope = body.scope ?? 'product_units';
        const found = await deps.repo.selectByCoverageDate(
          scope,
          body.product_id!,
          body.coverage_date!,
          BULK_CANCELLATION_MAX + 1,
          unitScope,
        );
        if (found.length > BULK_CANCELLATION_MAX) {
          throw new AppError(
            'VALIDATION_ERROR',
            `More than ${BULK_CANCELLATION_MAX} purchases cover that date: send them in batches by purchase_ids`,
            { details: [{ path: 'coverage_date', message: `selects more than ${BULK_CANCELLATION_MAX} purchases` }] },
          );
        }
        if (found.length === 0)
          throw new AppError(
            'NOTHING_TO_CANCEL',
            `No purchase in force of product ${body.product_id} has a covered unit on ${body.coverage_date} left to cancel`,
          );
        items = found;
        selection = { product_id: body.product_id!, coverage_date: body.coverage_date!, scope: unitScope };
      }
      const batch = await deps.repo.create(
        {
          rootAccountId: principal.rootAccountId,
          mode: principal.mode,
          agentId: principal.agentId,
          apiKeyId: principal.apiKeyId,
          selection,
          requestedBy: body.requested_by,
          reason: body.reason ?? null,
        },
        items,
      );
      await deps.start(batch.id);
      return view(batch);
    },

    async get(principal: Principal, id: number): Promise<BulkCancellation> {
      const batch = await deps.repo.findInScope(id, purchaseScopeOf(principal));
      if (!batch) throw notFound('bulk cancellation', id);
      return view(batch);
    },
  };
}

export type BulkCancellationService = ReturnType<typeof createBulkCancellationService>;
