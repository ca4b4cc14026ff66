/**
 * The one writer of `bulk_cancellations` and `bulk_cancellation_items` (migration
 * 20261126000700). A batch is created with its items in one transaction; each item then moves
 * once from `pending` to `accepted` (its cancellation), `skipped` (nothing to cancel: not this
 * key's purchase, not paid, every unit started or taken) or `failed` (refused otherwise), and the
 * batch to `completed` when none is pending. Selection reads the purchases domain's tables.
 */
import type { Db } from '../db/knex';
import type { PurchaseScope } from '../purchases/purchase-record';
import { IN_FORCE_STATUSES } from '../purchases/rules';

export type BulkItemStatus = 'pending' | 'accepted' | 'skipped' | 'failed';

/** What a batch cancels: named purchases, or every purchase of a product covering a local date. */
export type BulkSelection = { purchase_ids: number[] } | { product_id: number; coverage_date: string };

export interface BulkCancellationRecord {
  id: number;
  rootAccountId: number;
  mode: 'live' | 'test';
  agentId: number | null;
  apiKeyId: number;
  selection: BulkSelection;
  requestedBy: 'agency' | 'insurer';
  reason: string | null;
  status: 'running' | 'completed';
  createdAt: Date;
  completedAt: Date | null;
}

export interface BulkItemRecord {
  purchaseId: number;
  /** Units to cancel; null: every unit not started. */
  coveredUnitIds: number[] | null;
  status: BulkItemStatus;
  quoteId: string | null;
  cancellationId: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** The status of the cancellation it became (from policy_transactions), null before. */
  cancellationStatus: string | null;
  refundTotalMinor: number | null;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const toItem = (r: Record<string, any>): BulkItemRecord => ({
  purchaseId: r.purchase_id,
  coveredUnitIds: r.covered_unit_ids ? r.covered_unit_ids.map(Number) : null,
  status: r.status,
  quoteId: r.quote_id ?? null,
  cancellationId: r.cancellation_id ?? null,
  errorCode: r.error_code ?? null,
  errorMessage: r.error_message ?? null,
  cancellationStatus: r.cancellation_status ?? null,
  refundTotalMinor: r.total_minor === null || r.total_minor === undefined ? null : Number(r.total_minor),
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const toBulk = (r: Record<string, any>): BulkCancellationRecord => ({
  id: r.id,
  rootAccountId: r.root_account_id,
  mode: r.mode,
  agentId: r.agent_id ?? null,
  apiKeyId: r.api_key_id,
  selection: r.selection,
  requestedBy: r.requested_by,
  reason: r.reason ?? null,
  status: r.status,
  createdAt: r.created_at,
  completedAt: r.completed_at ?? null,
});

export function createBulkCancellationsRepository(db: Db) {
  /** A batch's item rows with the status and refund of the cancellation each became. */
  const itemRows = (id: number) =>
    db('bulk_cancellation_items as b')
      .leftJoin('policy_transactions as t', 't.id', 'b.cancellation_id')
      .where('b.bulk_cancellation_id', id)
      .select('b.*', 't.status as cancellation_status', 't.total_minor');
  return {
    /**
     * The purchases of `scope` in force whose items of product `productId` have a covered unit,
     * not taken by a cancellation, whose local span (in its own time zone) includes `date`
     * (YYYY-MM-DD), with those units; at most `limit`, by purchase id.
     */
    async selectByCoverageDate(
      scope: PurchaseScope,
      productId: number,
      date: string,
      limit: number,
    ): Promise<Array<{ purchaseId: number; coveredUnitIds: number[] }>> {
      const q = db('covered_units as cu')
        .join('purchase_items as i', 'i.id', 'cu.purchase_item_id')
        .join('purchases as p', 'p.id', 'cu.purchase_id')
        .where({ 'p.root_account_id': scope.rootAccountId, 'p.mode': scope.mode, 'i.product_line_id': productId })
        .whereIn('p.status', IN_FORCE_STATUSES)
        .whereNull('cu.cancellation_id')
        .whereRaw('(cu.starts_at at time zone cu.time_zone)::date <= ?::date', [date])
        .whereRaw(`((cu.ends_at - interval '1 microsecond') at time zone cu.time_zone)::date >= ?::date`, [date])
        .groupBy('cu.purchase_id')
        .orderBy('cu.purchase_id')
        .limit(limit)
        .select('cu.purchase_id', db.raw('array_agg(cu.id order by cu.id) as unit_ids'));
      if (scope.agentId !== null) q.where('p.agent_id', scope.agentId);
      return (await q).map((r: { purchase_id: number; unit_ids: number[] }) => ({
        purchaseId: r.purchase_id,
        coveredUnitIds: r.unit_ids.map(Number),
      }));
    },

    /** Creates a batch with its items (each purchase once), `running`. */
    async create(
      b: Omit<BulkCancellationRecord, 'id' | 'status' | 'createdAt' | 'completedAt'>,
      items: Array<{ purchaseId: number; coveredUnitIds: number[] | null }>,
    ): Promise<BulkCancellationRecord> {
      return db.transaction(async (trx) => {
        const [row] = await trx('bulk_cancellations')
          .insert({
            root_account_id: b.rootAccountId,
            mode: b.mode,
            agent_id: b.agentId,
            api_key_id: b.apiKeyId,
            selection: JSON.stringify(b.selection),
            requested_by: b.requestedBy,
            reason: b.reason,
          })
          .returning('*');
        if (items.length) {
          await trx('bulk_cancellation_items')
            .insert(items.map((i) => ({ bulk_cancellation_id: row.id, purchase_id: i.purchaseId, covered_unit_ids: i.coveredUnitIds })))
            .onConflict(['bulk_cancellation_id', 'purchase_id'])
            .ignore();
        }
        return toBulk(row);
      });
    },

    async findById(id: number): Promise<BulkCancellationRecord | undefined> {
      const row = await db('bulk_cancellations').where({ id }).first();
      return row ? toBulk(row) : undefined;
    },

    /** The batch if `scope` may read it (another account's, mode's or teammate's reads as absent). */
    async findInScope(id: number, scope: PurchaseScope): Promise<BulkCancellationRecord | undefined> {
      const q = db('bulk_cancellations').where({ id, root_account_id: scope.rootAccountId, mode: scope.mode });
      if (scope.agentId !== null) q.where('agent_id', scope.agentId);
      const row = await q.first();
      return row ? toBulk(row) : undefined;
    },

    /** Its items by purchase id, each with the state of the cancellation it became. */
    async items(id: number): Promise<BulkItemRecord[]> {
      return (await itemRows(id).orderBy('b.purchase_id')).map(toItem);
    },

    /** One of its items (one row, not the whole batch: called once per purchase of a batch of up to 1000). */
    async item(id: number, purchaseId: number): Promise<BulkItemRecord | undefined> {
      const row = await itemRows(id).where('b.purchase_id', purchaseId).first();
      return row ? toItem(row) : undefined;
    },

    /** Purchase ids of its items still `pending`. */
    async pendingPurchaseIds(id: number): Promise<number[]> {
      return (
        await db('bulk_cancellation_items')
          .where({ bulk_cancellation_id: id, status: 'pending' })
          .orderBy('purchase_id')
          .select('purchase_id')
      ).map((r) => r.purchase_id as number);
    },

    /** Keeps the quote an item carries out (null: none, price again). */
    async setQuote(id: number, purchaseId: number, quoteId: string | null): Promise<void> {
      await db('bulk_cancellation_items')
        .where({ bulk_cancellation_id: id, purchase_id: purchaseId, status: 'pending' })
        .update({ quote_id: quoteId, updated_at: db.fn.now() });
    },

    /** Settles a pending item once (a settled one stays as it is). */
    async settle(
      id: number,
      purchaseId: number,
      outcome: { status: Exclude<BulkItemStatus, 'pending'>; cancellationId?: number; errorCode?: string; errorMessage?: string },
    ): Promise<void> {
      await db('bulk_cancellation_items')
        .where({ bulk_cancellation_id: id, purchase_id: purchaseId, status: 'pending' })
        .update({
          status: outcome.status,
          cancellation_id: outcome.cancellationId ?? null,
          error_code: outcome.errorCode ?? null,
          error_message: outcome.errorMessage?.slice(0, 1000) ?? null,
          updated_at: db.fn.now(),
        });
    },

    /** The batch is done once nothing is pending. */
    async complete(id: number): Promise<void> {
      await db('bulk_cancellations')
        .where({ id, status: 'running' })
        .whereNotExists(db('bulk_cancellation_items').where({ bulk_cancellation_id: id, status: 'pending' }))
        .update({ status: 'completed', completed_at: db.fn.now() });
    },
  };
}

export type BulkCancellationsRepository = ReturnType<typeof createBulkCancellationsRepository>;
