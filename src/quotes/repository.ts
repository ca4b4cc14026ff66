/**
 * Queries behind the quote surface: which product lines a key may quote (approved for its root
 * account, active, in the key's mode, with a question set, narrowed by the key's own product
 * list when it has one), which bundles it may quote (the root account's own, in the key's mode,
 * with at least one product and every product quotable) and the root account's idp uuid. Reads only: the priced purchase is
 * written by its owner, `src/purchases/sale-repository.ts`. Amounts are integer minor units.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { pageWithTotal } from '../db/paging';

export interface QuotableScope {
  rootAccountId: number;
  apiKeyId: number;
  testMode: boolean;
}

export interface QuotableProduct {
  id: number;
  customerName: string;
  description: string;
  defaultPriceMinor: number;
  currency: string;
  insurerName: string;
  isRecurring: boolean;
  questionSetId: number;
}

/** A bundle a key may quote: its products in selling order (the primary product first, then as linked). */
export interface QuotableBundle {
  id: number;
  customerName: string;
  description: string;
  productIds: number[];
}

function quotable(db: Db | Knex.Transaction, s: QuotableScope) {
  return db('product_lines as pl')
    .join('product_approvals as pa', (j) => j.on('pa.product_line_id', 'pl.id').andOnVal('pa.root_account_id', s.rootAccountId))
    .where('pl.is_active', true)
    .andWhere('pl.is_test_mode', s.testMode)
    .whereNotNull('pl.question_set_id')
    .andWhere((q) =>
      q
        .whereNotExists(db('api_key_products').where('api_key_id', s.apiKeyId))
        .orWhereExists(db('api_key_products as k').where('k.api_key_id', s.apiKeyId).whereRaw('k.product_line_id = pl.id')),
    );
}

const toQuotable = (r: Record<string, unknown>): QuotableProduct => ({
  id: r.id as number,
  customerName: r.customer_name as string,
  description: r.description as string,
  defaultPriceMinor: Number(r.default_price_minor),
  currency: r.currency as string,
  insurerName: r.insurer_name as string,
  isRecurring: r.is_recurring as boolean,
  questionSetId: r.question_set_id as number,
});

function quotableBundles(db: Db, s: QuotableScope) {
  return db('bundles as b')
    .where('b.root_account_id', s.rootAccountId)
    .andWhere('b.is_test_mode', s.testMode)
    .whereExists(db('bundle_products as bp').whereRaw('bp.bundle_id = b.id'))
    .whereNotExists(
      db('bundle_products as bp').whereRaw('bp.bundle_id = b.id').whereNotIn('bp.product_line_id', quotable(db, s).select('pl.id')),
    );
}

export function createQuotesRepository(db: Db) {
  async function withProducts(rows: Record<string, unknown>[]): Promise<QuotableBundle[]> {
    const links = rows.length
      ? await db('bundle_products')
          .whereIn(
            'bundle_id',
            rows.map((r) => r.id as number),
          )
          .orderBy([{ column: 'is_primary', order: 'desc' }, 'position'])
          .select('bundle_id', 'product_line_id')
      : [];
    return rows.map((r) => ({
      id: r.id as number,
      customerName: r.customer_facing_name as string,
      description: r.bundle_description as string,
      productIds: links.filter((l) => l.bundle_id === r.id).map((l) => l.product_line_id as number),
    }));
  }

  return {
    async idpRootAccountUuid(rootAccountId: number): Promise<string | null> {
      const row = await db('root_accounts').where({ id: rootAccountId }).first('idp_root_account_uuid');
      return row?.idp_root_account_uuid ?? null;
    },

    /** One page of quotable product lines by ascending id, and their total. */
    async listQuotable(s: QuotableScope, limit: number, offset: number): Promise<{ items: QuotableProduct[]; total: number }> {
      const page = await pageWithTotal<Record<string, unknown>>(quotable(db, s), {
        select: (q) => q.select('pl.*'),
        orderBy: [{ column: 'pl.id', order: 'asc' }],
        limit,
        offset,
      });
      return { items: page.rows.map(toQuotable), total: page.total };
    },

    /** One page of quotable bundles by ascending id, and their total. */
    async listQuotableBundles(s: QuotableScope, limit: number, offset: number): Promise<{ items: QuotableBundle[]; total: number }> {
      const [rows, counted] = await Promise.all([
        limit > 0 ? quotableBundles(db, s).select('b.*').orderBy('b.id', 'asc').limit(limit).offset(offset) : Promise.resolve([]),
        quotableBundles(db, s).count<{ count: string }[]>({ count: '*' }),
      ]);
      return { items: await withProducts(rows), total: Number(counted[0]?.count ?? 0) };
    },

    /** The quotable bundles among `ids` (others are simply absent from the map). */
    async findQuotableBundles(s: QuotableScope, ids: number[]): Promise<Map<number, QuotableBundle>> {
      if (!ids.length) return new Map();
      const rows = await quotableBundles(db, s).whereIn('b.id', ids).select('b.*');
      return new Map((await withProducts(rows)).map((b) => [b.id, b]));
    },

    /** The quotable product lines among `ids` (others are simply absent from the map). */
    async findQuotable(s: QuotableScope, ids: number[]): Promise<Map<number, QuotableProduct>> {
      if (!ids.length) return new Map();
      const rows = await quotable(db, s).whereIn('pl.id', ids).select('pl.*');
      return new Map(rows.map((r) => [r.id as number, toQuotable(r)]));
    },
  };
}

export type QuotesRepository = ReturnType<typeof createQuotesRepository>;
