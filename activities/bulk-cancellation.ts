/**
 * Activities of a bulk cancellation (workflows/bulk-cancellation.ts): each purchase of the batch
 * is cancelled exactly once, through its own policy workflow like any cancellation (so the
 * refund goes through the rate-capped refunds queue and changes to one purchase stay one at a
 * time).
 *
 * `cancelBulkItem` prices the item's units (or every unit not started) as the batch's requester,
 * keeps the quote on the item, and hands it to the purchase's policy workflow (update-with-start;
 * the same quote again answers the same cancellation, so a retried activity never cancels
 * twice). An item that cannot be cancelled is settled `skipped` (not this batch's account's
 * purchase, not in force, nothing left: its units started or were taken) or `failed` (refused
 * otherwise) with the API's error code; a slow answer (the purchase's certificates still being
 * issued, Temporal busy) is retried. Amounts in minor units.
 */
import { AppError } from '../src/shared/errors';
import type { Db } from '../src/db/knex';
import { createBulkCancellationsRepository, type BulkItemStatus } from '../src/bulk-cancellations/repository';
import { createSaleRepository } from '../src/purchases/sale-repository';
import { createLedgerRepository } from '../src/purchases/ledger-repository';
import { policyClock, storeCancellationQuote } from '../src/purchases/cancellation-pricing';
import { isInForce } from '../src/purchases/rules';
import { RefundRuleError } from '../src/purchases/refund-rule';
import type { PurchaseStartFacts } from '../src/purchases/workflow-starts';
import type { CancellationAccepted } from '../workflows/contracts';

/** Codes that mean "nothing to cancel here" rather than a refusal. */
const SKIPPED = new Set([
  'NOT_FOUND',
  'PURCHASE_NOT_CANCELLABLE',
  'PURCHASE_ALREADY_CANCELLED',
  'NOTHING_TO_CANCEL',
  'COVERED_UNIT_STARTED',
  'COVERED_UNIT_ALREADY_CANCELLED',
  'UNKNOWN_COVERED_UNIT',
]);

/**
 * What a bulk cancellation asks of each purchase's owner: carry out one cancellation quote (the
 * owner workflow client's `cancel`, src/purchases/owner-workflow-client.ts). Named by its shape,
 * not by the client's type: the client starts this activity's workflow by reference.
 */
export interface CancelThroughOwner {
  cancel(purchase: PurchaseStartFacts, quoteId: string): Promise<CancellationAccepted>;
}

export function createBulkCancellationActivities(deps: { db: Db; workflows: CancelThroughOwner; now?: () => Date }) {
  const bulk = createBulkCancellationsRepository(deps.db);
  const sales = createSaleRepository(deps.db);
  const ledger = createLedgerRepository(deps.db);
  const now = deps.now ?? (() => new Date());

  return {
    /** The purchase ids of the batch still to do. */
    async pendingBulkItems(input: { bulkId: number }): Promise<number[]> {
      return bulk.pendingPurchaseIds(input.bulkId);
    },

    /** Cancels one purchase of the batch (once); answers how its item ended. */
    async cancelBulkItem(input: { bulkId: number; purchaseId: number }): Promise<BulkItemStatus> {
      const [batch, item] = await Promise.all([bulk.findById(input.bulkId), bulk.item(input.bulkId, input.purchaseId)]);
      if (!batch || !item) return 'skipped';
      if (item.status !== 'pending') return item.status;
      const settle = async (status: 'skipped' | 'failed', errorCode: string, errorMessage: string) => {
        await bulk.settle(batch.id, item.purchaseId, { status, errorCode, errorMessage });
        return status;
      };
      const p = await sales.findById(item.purchaseId);
      if (
        !p ||
        p.rootAccountId !== batch.rootAccountId ||
        p.mode !== batch.mode ||
        (batch.agentId !== null && p.agentId !== batch.agentId)
      ) {
        return settle('skipped', 'NOT_FOUND', `no purchase ${item.purchaseId} for this key`);
      }
      if (p.status === 'refunded') return settle('skipped', 'PURCHASE_ALREADY_CANCELLED', `purchase ${p.id} was refunded in full`);
      if (p.status === 'cancelled')
        return settle('skipped', 'NOTHING_TO_CANCEL', `purchase ${p.id} is cancelled: every covered unit was cancelled already`);
      if (!isInForce(p.status)) return settle('skipped', 'PURCHASE_NOT_CANCELLABLE', `purchase ${p.id} is ${p.status}`);

      let quoteId = item.quoteId;
      if (!quoteId || ((await ledger.findCancellationQuote(quoteId))?.expiresAt.getTime() ?? 0) <= now().getTime()) {
        // No quote yet, or one past its time: price again, unless that quote was accepted already (a retry after the answer was lost).
        const accepted = quoteId ? await ledger.findCancellationByQuote(quoteId) : undefined;
        if (!accepted) {
          const realNow = now();
          const clock = policyClock(p, realNow);
          try {
            const quote = await storeCancellationQuote(
              { sales, ledger },
              p,
              {
                unitIds: item.coveredUnitIds ?? undefined,
                requestedBy: batch.requestedBy,
                effectiveAt: clock,
                apiKeyId: batch.apiKeyId,
                reason: batch.reason,
              },
              clock,
              realNow,
            );
            quoteId = quote.id;
            await bulk.setQuote(batch.id, item.purchaseId, quoteId);
          } catch (err) {
            if (err instanceof RefundRuleError) return settle(SKIPPED.has(err.code) ? 'skipped' : 'failed', err.code, err.message);
            throw err;
          }
        }
      }
      try {
        const accepted = await deps.workflows.cancel(p, quoteId!);
        await bulk.settle(batch.id, item.purchaseId, { status: 'accepted', cancellationId: accepted.cancellationId });
        return 'accepted';
      } catch (err) {
        if (err instanceof AppError && err.code !== 'CONNECTION_ERROR') {
          if (err.code === 'CANCELLATION_QUOTE_EXPIRED' || err.code === 'CANCELLATION_QUOTE_STALE') {
            // Something changed since it was priced (time, another change, a dashboard refund): retried with a fresh quote.
            await bulk.setQuote(batch.id, item.purchaseId, null);
            throw err;
          }
          return settle(SKIPPED.has(err.code) ? 'skipped' : 'failed', err.code, err.message);
        }
        throw err;
      }
    },

    /** Marks the batch completed once no item is pending. */
    async completeBulkCancellation(input: { bulkId: number }): Promise<void> {
      await bulk.complete(input.bulkId);
    },
  };
}

export type BulkCancellationActivities = ReturnType<typeof createBulkCancellationActivities>;
