/**
 * Persistence of bundles and their product links (tables `bundles`, `bundle_products`,
 * read-only `product_lines` and `root_accounts`). Returns plain objects; no HTTP concerns and
 * no business rules beyond what the queries need (tenancy filters are passed in as `Scope`).
 *
 * Prices come back in integer minor units; timestamps as `Date`.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { RootAccountKind } from '../accounts/repository';

/** Which bundles a caller may see: one account, and only test-mode ones for a test key. */
export interface Scope {
  rootAccountId: number;
  testModeOnly: boolean;
}

/** The columns a create or update may write (everything but ids, counts and timestamps). */
export interface BundleFields {
  bundleName: string;
  customerFacingName: string;
  internallyFacingName: string;
  bundleDescription: string;
  isRecurring: boolean;
  isTestMode: boolean;
  rootInsurerDbId: number | null;
  rootMgaDbId: number | null;
  rootSellerDbId: number | null;
  questionSetId: number | null;
}

export interface BundleRecord extends BundleFields {
  id: number;
  rootAccountId: number;
  productLineCount: number;
  youtubeLink: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One linked product, as shown inside a bundle. */
export interface BundleLink {
  productLineId: number;
  productName: string;
  defaultPriceMinor: number;
  isPrimary: boolean;
  linkedAt: Date;
}

export interface BundleWithLinks extends BundleRecord {
  /** Ordered by position (the order of `product_ids`). */
  links: BundleLink[];
}

/** What the link checks need to know about a product line. */
export interface ProductLineRef {
  id: number;
  rootAccountId: number;
  isTestMode: boolean;
}

export type SortColumn = 'created_at' | 'updated_at' | 'customer_facing_name' | 'bundle_name' | 'product_line_count';

export interface ListFilter {
  isTestMode?: boolean;
  isRecurring?: boolean;
  rootInsurerDbId?: number;
  rootMgaDbId?: number;
  rootSellerDbId?: number;
  /** Raw text to find; LIKE wildcards in it are matched literally. Empty or absent: no filter. */
  search?: string;
}

export interface ListOptions {
  filter: ListFilter;
  sort: SortColumn;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

interface BundleRow {
  id: number;
  root_account_id: number;
  bundle_name: string;
  customer_facing_name: string;
  internally_facing_name: string;
  bundle_description: string;
  is_recurring: boolean;
  is_test_mode: boolean;
  product_line_count: number;
  root_insurer_db_id: number | null;
  root_mga_db_id: number | null;
  root_seller_db_id: number | null;
  question_set_id: number | null;
  youtube_link: string | null;
  created_at: Date;
  updated_at: Date;
}

const toRecord = (r: BundleRow): BundleRecord => ({
  id: r.id,
  rootAccountId: r.root_account_id,
  bundleName: r.bundle_name,
  customerFacingName: r.customer_facing_name,
  internallyFacingName: r.internally_facing_name,
  bundleDescription: r.bundle_description,
  isRecurring: r.is_recurring,
  isTestMode: r.is_test_mode,
  productLineCount: r.product_line_count,
  rootInsurerDbId: r.root_insurer_db_id,
  rootMgaDbId: r.root_mga_db_id,
  rootSellerDbId: r.root_seller_db_id,
  questionSetId: r.question_set_id,
  youtubeLink: r.youtube_link,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toColumns = (f: Partial<BundleFields>) => {
  const cols: Partial<Omit<BundleRow, 'id' | 'created_at' | 'updated_at'>> = {};
  if (f.bundleName !== undefined) cols.bundle_name = f.bundleName;
  if (f.customerFacingName !== undefined) cols.customer_facing_name = f.customerFacingName;
  if (f.internallyFacingName !== undefined) cols.internally_facing_name = f.internallyFacingName;
  if (f.bundleDescription !== undefined) cols.bundle_description = f.bundleDescription;
  if (f.isRecurring !== undefined) cols.is_recurring = f.isRecurring;
  if (f.isTestMode !== undefined) cols.is_test_mode = f.isTestMode;
  if (f.rootInsurerDbId !== undefined) cols.root_insurer_db_id = f.rootInsurerDbId;
  if (f.rootMgaDbId !== undefined) cols.root_mga_db_id = f.rootMgaDbId;
  if (f.rootSellerDbId !== undefined) cols.root_seller_db_id = f.rootSellerDbId;
  if (f.questionSetId !== undefined) cols.question_set_id = f.questionSetId;
  return cols;
};

/**
 * The searchable text, written exactly as the expression of `bundles_search_trgm_idx`
 * (migration 20261122000200) so that PostgreSQL can answer the LIKE from the trigram index.
 */
export const SEARCH_EXPRESSION = `lower(bundle_name || ' ' || customer_facing_name || ' ' || internally_facing_name || ' ' || bundle_description)`;

/** `abc%_\` → `%abc\%\_\\%`: a LIKE pattern (with ESCAPE '\') that finds the text literally. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function scoped(q: Knex.QueryBuilder, scope: Scope): Knex.QueryBuilder {
  q.where('bundles.root_account_id', scope.rootAccountId);
  if (scope.testModeOnly) q.where('bundles.is_test_mode', true);
  return q;
}

export function createBundlesRepository(db: Db) {
  async function linksOf(conn: Knex | Knex.Transaction, bundleId: number): Promise<BundleLink[]> {
    const rows = await conn('bundle_products as bp')
      .join('product_lines as pl', 'pl.id', 'bp.product_line_id')
      .where('bp.bundle_id', bundleId)
      .orderBy('bp.position', 'asc')
      .select('pl.id', 'pl.customer_name', 'pl.default_price_minor', 'bp.is_primary', 'bp.created_at');
    return rows.map((r) => ({
      productLineId: r.id,
      productName: r.customer_name,
      // bigint arrives as a string; prices stay far below 2^53
      defaultPriceMinor: Number(r.default_price_minor),
      isPrimary: r.is_primary,
      linkedAt: r.created_at,
    }));
  }

  /**
   * The two statements behind `list`, unexecuted: the page and the count of everything that
   * matches. Exposed so that tests can `EXPLAIN` exactly what the API runs.
   */
  function listQueries(scope: Scope, opts: ListOptions): { page: Knex.QueryBuilder; count: Knex.QueryBuilder } {
    const base = () => applyFilter(scoped(db('bundles'), scope), opts.filter);
    return {
      page: base()
        .select('*')
        .orderBy([
          { column: opts.sort, order: opts.order },
          { column: 'id', order: opts.order },
        ])
        .limit(opts.limit)
        .offset(opts.offset),
      count: base().count({ count: '*' }),
    };
  }

  return {
    /** Runs `work` in one transaction; commits when it resolves, rolls back when it throws. */
    transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
      return db.transaction(work);
    },

    /** The bundle with its links, or null when it does not exist or lies outside `scope`. */
    async findById(scope: Scope, id: number, conn: Knex | Knex.Transaction = db): Promise<BundleWithLinks | null> {
      const row = await scoped(conn<BundleRow>('bundles').where('bundles.id', id), scope).first();
      if (!row) return null;
      return { ...toRecord(row), links: await linksOf(conn, id) };
    },

    /** Locks the bundle row (`for update`) so concurrent writes to it run one after another. */
    async lockById(trx: Knex.Transaction, scope: Scope, id: number): Promise<BundleWithLinks | null> {
      const row = await scoped(trx<BundleRow>('bundles').where('bundles.id', id), scope).forUpdate().first();
      if (!row) return null;
      return { ...toRecord(row), links: await linksOf(trx, id) };
    },

    /** Inserts a bundle owned by `rootAccountId` with no links; `youtube_link` stays null. */
    async insert(trx: Knex.Transaction, rootAccountId: number, fields: BundleFields): Promise<number> {
      const [row] = await trx('bundles')
        .insert({ root_account_id: rootAccountId, ...toColumns(fields), product_line_count: 0 })
        .returning('id');
      return (row as { id: number }).id;
    },

    /** Writes the given columns and bumps `updated_at`. */
    async update(trx: Knex.Transaction, id: number, fields: Partial<BundleFields>): Promise<void> {
      await trx('bundles')
        .where({ id })
        .update({ ...toColumns(fields), updated_at: trx.fn.now() });
    },

    /**
     * Makes `productLineIds` (in order, first = primary) the bundle's links and sets
     * `product_line_count` to match, in the caller's transaction. Links to products that stay
     * keep their `created_at`; the others are removed.
     */
    async replaceLinks(trx: Knex.Transaction, bundleId: number, productLineIds: number[]): Promise<void> {
      // Clear the primary flag first: `bundle_products_one_primary_idx` is checked row by row,
      // so moving the flag inside one upsert could briefly see two primaries.
      await trx('bundle_products').where({ bundle_id: bundleId, is_primary: true }).update({ is_primary: false });
      await trx('bundle_products').where({ bundle_id: bundleId }).whereNotIn('product_line_id', productLineIds).delete();
      if (productLineIds.length > 0) {
        await trx('bundle_products')
          .insert(productLineIds.map((pid, i) => ({ bundle_id: bundleId, product_line_id: pid, position: i, is_primary: i === 0 })))
          .onConflict(['bundle_id', 'product_line_id'])
          .merge(['position', 'is_primary']);
      }
      await trx('bundles').where({ id: bundleId }).update({ product_line_count: productLineIds.length });
    },

    /** Deletes the bundle (links go by FK cascade); false when nothing in `scope` matched. */
    async delete(scope: Scope, id: number): Promise<boolean> {
      const n = await scoped(db('bundles').where('bundles.id', id), scope).delete();
      return n > 0;
    },

    listQueries,

    /**
     * One page of bundles in `scope` and the total matching the filter. Two statements, not
     * `count(*) over()`: the page stays a short index scan that stops after `limit` rows, and
     * a page past the end still gets its total.
     */
    async list(scope: Scope, opts: ListOptions): Promise<{ rows: BundleRecord[]; total: number }> {
      const q = listQueries(scope, opts);
      const [rows, counted] = (await Promise.all([q.page, q.count])) as [BundleRow[], { count: string }[]];
      return { rows: rows.map(toRecord), total: Number(counted[0]?.count ?? 0) };
    },

    /** Product lines among `ids` that are not archived (any account: the caller decides what is visible). */
    async findProductLines(conn: Knex | Knex.Transaction, ids: number[]): Promise<ProductLineRef[]> {
      if (ids.length === 0) return [];
      const rows = await conn('product_lines').whereIn('id', ids).whereNull('archived_at').select('id', 'root_account_id', 'is_test_mode');
      return rows.map((r) => ({ id: r.id, rootAccountId: r.root_account_id, isTestMode: r.is_test_mode }));
    },

    /** The kind of each existing root account among `ids`. */
    async rootAccountKinds(conn: Knex | Knex.Transaction, ids: number[]): Promise<Map<number, RootAccountKind>> {
      if (ids.length === 0) return new Map();
      const rows = await conn('root_accounts').whereIn('id', ids).select('id', 'kind');
      return new Map(rows.map((r) => [r.id as number, r.kind as RootAccountKind]));
    },
  };
}

function applyFilter(q: Knex.QueryBuilder, f: ListFilter): Knex.QueryBuilder {
  if (f.isTestMode !== undefined) q.where('is_test_mode', f.isTestMode);
  if (f.isRecurring !== undefined) q.where('is_recurring', f.isRecurring);
  if (f.rootInsurerDbId !== undefined) q.where('root_insurer_db_id', f.rootInsurerDbId);
  if (f.rootMgaDbId !== undefined) q.where('root_mga_db_id', f.rootMgaDbId);
  if (f.rootSellerDbId !== undefined) q.where('root_seller_db_id', f.rootSellerDbId);
  if (f.search) q.whereRaw(`${SEARCH_EXPRESSION} like lower(?) escape '\\'`, [containsPattern(f.search)]);
  return q;
}

export type BundlesRepository = ReturnType<typeof createBundlesRepository>;
