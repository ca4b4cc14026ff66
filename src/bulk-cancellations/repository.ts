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

/** Which units of a purchase found by product and date are cancelled: the product's on that date (the default), or every one of the purchase's on that date. */
export type BulkScope = 'product_units' | 'purchase_date';

/**
 * What a batch cancels: named purchases, or every purchase of a product covering a local date
 * (`scope`: absent on batches made before it, which are `product_units`).
 */
export type BulkSelection = { purchase_ids: number[] } | { product_id: number; coverage_date: string; scope?: BulkScope };

/** The covered units of a batch's items, by whether they are of its selected product (see `unitCounts`). */
export interface BulkUnitCounts {
  total: number;
  ofProduct: number;
  purchasesWithOtherProducts: number;
}

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
     * (YYYY-MM-DD), with the units to cancel: those units (`product_units`), or every unit of the
     * purchase, of any product, not taken and on that date (`purchase_date`: a bundle's other
     * products too); at most `limit`, by purchase id.
     */
    async selectByCoverageDate(
      scope: PurchaseScope,
      productId: number,
      date: string,
      limit: number,
      unitScope: BulkScope = 'product_units',
    ): Promise<Array<{ purchaseId: number; coveredUnitIds: number[] }>> {
      const onDate = (q: ReturnType<typeof db>) =>
        q
          .whereNull('cu.cancellation_id')
          .whereRaw('(cu.starts_at at time zone cu.time_zone)::date <= ?::date', [date])
          .whereRaw(`((cu.ends_at - interval '1 microsecond') at time zone cu.time_zone)::date >= ?::date`, [date]);
      const found = onDate(
        db('covered_units as cu')
          .join('purchase_items as i', 'i.id', 'cu.purchase_item_id')
          .join('purchases as p', 'p.id', 'cu.purchase_id')
          .where({ 'p.root_account_id': scope.rootAccountId, 'p.mode': scope.mode, 'i.product_line_id': productId })
          .whereIn('p.status', IN_FORCE_STATUSES),
      )
        .groupBy('cu.purchase_id')
        .orderBy('cu.purchase_id')
        .limit(limit)
        .select('cu.purchase_id', db.raw('array_agg(cu.id order by cu.id) as unit_ids'));
      if (scope.agentId !== null) found.where('p.agent_id', scope.agentId);
      const rows: Array<{ purchase_id: number; unit_ids: number[] }> = await found;
      if (unitScope === 'purchase_date' && rows.length > 0) {
        const all: Array<{ purchase_id: number; unit_ids: number[] }> = await onDate(db('covered_units as cu'))
          .whereIn(
            'cu.purchase_id',
            rows.map((r) => r.purchase_id),
          )
          .groupBy('cu.purchase_id')
          .select('cu.purchase_id', db.raw('array_agg(cu.id order by cu.id) as unit_ids'));
        const byPurchase = new Map(all.map((r) => [r.purchase_id, r.unit_ids]));
        for (const r of rows) r.unit_ids = byPurchase.get(r.purchase_id) ?? r.unit_ids;
      }
      return rows.map((r) => ({ purchaseId: r.purchase_id, coveredUnitIds: r.unit_ids.map(Number) }));
    },

    /**
     * The covered units of batch `id`'s items (each item's selected units; for an item without a
     * selection, the units its accepted cancellation took), how many of them are of product
     * `productId` (null: count none as of the product), and how many purchases have units of
     * another product among them.
     */
    async unitCounts(id: number, productId: number | null): Promise<BulkUnitCounts> {
      const rows: Array<{ purchase_id: number; product_line_id: number; n: string }> = await db('bulk_cancellation_items as b')
        .joinRaw(
          'join covered_units cu on (cu.id = any(b.covered_unit_ids) or (b.covered_unit_ids is null and cu.cancellation_id = b.cancellation_id))',
        )
        .join('purchase_items as i', 'i.id', 'cu.purchase_item_id')
        .where('b.bulk_cancellation_id', id)
        .groupBy('b.purchase_id', 'i.product_line_id')
        .select('b.purchase_id', 'i.product_line_id', db.raw('count(*) as n'));
      const total = rows.reduce((s, r) => s + Number(r.n), 0);
      const ofProduct = rows.filter((r) => r.product_line_id === productId).reduce((s, r) => s + Number(r.n), 0);
      const purchasesWithOtherProducts =
        productId === null ? 0 : new Set(rows.filter((r) => r.product_line_id !== productId).map((r) => r.purchase_id)).size;
      return { total, ofProduct, purchasesWithOtherProducts };
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
