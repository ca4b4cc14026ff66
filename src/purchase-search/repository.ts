/**
 * SQL of the purchase search (spec §4.5 searchTeammatePurchasedProducts), over the
 * `purchase_search` table that migration 20261122001100 keeps in step with purchases, items,
 * certificates and buyers by triggers (one row per paid purchase: scope columns, product line
 * ids, and `search_doc`, the normalised buyer name, emails and certificate numbers, one a line;
 * 20261123001000 adds `search_key`, the same without punctuation, for the trigram index).
 *
 * Every statement is limited to one scope: the root account, the key's mode and, on the
 * teammate surface, the teammate (`purchase_search.agent_id`). All text is bound as parameters.
 * A match is: the phrase is a substring of `search_doc` (LIKE with `%`, `_` and `\` escaped,
 * so nothing in it is a wildcard), or the purchase holds one of the product lines whose name
 * contains it (ids looked up first, then matched through the GIN index on `product_line_ids`). The trigram index is
 * reached through `probe`, a part of the phrase whose folded form `search_key` must then hold
 * (see ./probe.ts), cheaper to look up than the whole phrase. Order: `paid_at desc,
 * purchase_id desc` (the scope indexes').
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { SampleScope } from './probe';

/** Whose purchases a search covers: one root account and mode, narrowed to one teammate unless `agentId` is null. */
export interface SearchScope {
  rootAccountId: number;
  agentId: number | null;
  mode: 'live' | 'test';
}

/** What a non-empty search matches (see the module comment). */
export interface SearchMatch {
  /** The normalised search text (matched lower-cased, as a plain substring). */
  phrase: string;
  /** Part of the phrase the trigram index looks up (folded in SQL); null: no index can help. */
  probe: string | null;
  /** Product lines (of the scope's mode) whose normalised name contains the phrase. */
  productLineIds: number[];
  /**
   * Every purchase of the scope whose document holds the phrase, when they were gathered first
   * (`textMatches`): a walk then tests ids and product lines, both in the scope indexes, instead
   * of reading each row's document.
   */
  textIds?: number[];
}

/** One hydrated result row (instants as Date). */
export interface PurchaseSearchRow {
  purchaseId: number;
  paymentIntentId: string | null;
  paidAt: Date;
  status: string;
  teammate: { idpTeammateUuid: string; name: string } | null;
  buyer: { idpAccntUuid: string; name: string; email: string };
  products: Array<{ productLineId: number; productName: string }>;
  /** The bundle it was sold as (its id is null once deleted), or null. */
  bundle: { id: number | null; name: string } | null;
  certificateCount: number;
  /** The first `listedCertificates` numbers, product then unit order. */
  certificateNumbers: string[];
  matchedCertificateNumber: string | null;
}

interface HydratedRow {
  id: number;
  payment_intent_id: string | null;
  paid_at: Date;
  status: string;
  idp_teammate_uuid: string | null;
  agent_name: string | null;
  idp_accnt_uuid: string | null;
  first_name: string | null;
  last_name: string | null;
  buyer_email: string | null;
  products: Array<{ id: number; name: string }>;
  bundle_id: number | null;
  bundle_name: string | null;
  certificate_count: number;
  certificate_numbers: string[];
  matched_certificate_number: string | null;
}

interface Fragment {
  sql: string;
  bindings: Knex.Value[];
}

/** `text` as a LIKE pattern matching it anywhere; `\`, `%` and `_` match only themselves. */
export function likePattern(text: string): string {
  return `%${escapeLike(text)}%`;
}

/** `text` with the LIKE metacharacters `\`, `%` and `_` escaped by `\`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function scopeWhere(scope: SearchScope): Fragment {
  if (scope.agentId === null) {
    return { sql: 's.root_account_id = ? and s.mode = ?', bindings: [scope.rootAccountId, scope.mode] };
  }
  return { sql: 's.root_account_id = ? and s.agent_id = ? and s.mode = ?', bindings: [scope.rootAccountId, scope.agentId, scope.mode] };
}

/**
 * Scope plus the match. `indexable`: written so the planner can use the trigram and product
 * indexes (to gather matches); otherwise written so it cannot, which leaves the newest-first
 * scope index as the only path (to walk it, testing each row, cheapest test first).
 *
 * Per-row costs measured at 1 000 000 purchases (walking 21 000 rows): the phrase is tested
 * with LIKE rather than `strpos` (same answer once escaped, 0.14 against 0.17 µs: no search
 * table set up per call); the product test first looks at the first and second product lines
 * through a hash of the ids (0.17 µs each), and runs the general `&&`, whose cost grows with
 * both arrays (0.4 µs against 107 ids), only for purchases of more lines. With `textIds` the
 * text test is a hashed id test too, and every test reads only columns of the scope index, so
 * the walk never reads the table: the deep page of a product matched by 107 lines walks in
 * 4.5 ms instead of 8.
 */
function matchWhere(scope: SearchScope, match: SearchMatch | null, indexable: boolean): Fragment {
  const s = scopeWhere(scope);
  if (!match) return s;
  const t = matchTest(match, indexable);
  return { sql: `${s.sql} and ${t.sql}`, bindings: [...s.bindings, ...t.bindings] };
}

/** The match alone (see matchWhere); rows already limited to the scope need no more. */
function matchTest(match: SearchMatch, indexable: boolean): Fragment {
  let text: Fragment =
    !indexable && match.textIds
      ? { sql: 's.purchase_id = any (?::int[])', bindings: [match.textIds as unknown as Knex.Value] }
      : { sql: "s.search_doc like lower(?) escape '\\'", bindings: [likePattern(match.phrase)] };
  if (indexable && match.probe) {
    // The folded probe holds letters and digits only, so nothing in the pattern is a wildcard.
    text = {
      sql: `(s.search_key like '%' || purchase_search_fold(lower(?)) || '%' and ${text.sql})`,
      bindings: [match.probe, ...text.bindings],
    };
  }
  if (match.productLineIds.length === 0) return text;
  const ids = match.productLineIds as unknown as Knex.Value;
  // Plain `&&` where the GIN index may answer it: a longer test changes the planner's estimate
  // and, for 'wedding' (8 lines, 5 % of rows), its choice, to a bitmap scan twice as slow.
  if (indexable) return { sql: `(${text.sql} or s.product_line_ids && ?::int[])`, bindings: [...text.bindings, ids] };
  return {
    sql: `(s.product_line_ids[1] = any (?::int[]) or s.product_line_ids[2] = any (?::int[]) or (cardinality(s.product_line_ids) > 2 and s.product_line_ids && ?::int[]) or ${text.sql})`,
    bindings: [ids, ids, ids, ...text.bindings],
  };
}

/** A row's place in result order: `paid_at desc, purchase_id desc`. */
export interface Edge {
  paidAt: Date;
  purchaseId: number;
}

/** Keyset conditions the scope indexes answer: at or before `from`, after `after` (result order). */
function keysetBounds(bounds: { from?: Edge | null; after?: Edge }): Fragment[] {
  const out: Fragment[] = [];
  if (bounds.from)
    out.push({ sql: '(s.paid_at, s.purchase_id) >= (?::timestamptz, ?::int)', bindings: [bounds.from.paidAt, bounds.from.purchaseId] });
  if (bounds.after)
    out.push({ sql: '(s.paid_at, s.purchase_id) < (?::timestamptz, ?::int)', bindings: [bounds.after.paidAt, bounds.after.purchaseId] });
  return out;
}

/** The columns a walk reads from each row (order and match tests); the document only when the text is tested on it. */
function walkedColumns(match: SearchMatch | null): string {
  return match && !match.textIds
    ? 's.purchase_id, s.paid_at, s.search_doc, s.product_line_ids'
    : 's.purchase_id, s.paid_at, s.product_line_ids';
}

/** The fragments joined by `and`. */
function and(fragments: Fragment[]): Fragment {
  return { sql: fragments.map((f) => f.sql).join(' and '), bindings: fragments.flatMap((f) => f.bindings) };
}

/** `purchase_id` other than `id` (the exact certificate hit listed first), or nothing to test. */
function excluding(id: number | null): Fragment | null {
  return id === null ? null : { sql: 's.purchase_id <> ?::int', bindings: [id] };
}

/** Statement names by SQL text (see `prepared`); the texts are a handful of fixed variants. */
const statementNames = new Map<string, string>();

/**
 * `db.raw(sql, bindings)` as a named prepared statement (the name derived from the text), for a
 * statement whose best plan does not depend on its parameters' values: PostgreSQL plans it for
 * its first five runs on a connection, then reuses a generic plan when that costs no more. The
 * hydration of a page: planning 0.9–1.2 ms → 0.03 ms. Not for a statement testing the phrase
 * (its plan follows how many rows the phrase matches).
 */
function prepared(db: Db, sql: string, bindings: readonly Knex.Value[]) {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `purchase_search_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
    statementNames.set(sql, name);
  }
  return db.raw(sql, bindings).options({ name });
}

export function createPurchaseSearchRepository(db: Db) {
  return {
    /**
     * What a phrase's search needs first, in one statement: the purchase in scope holding a
     * certificate whose number equals `phrase` (as sent, or upper case: numbers are issued upper
     * case; served by the unique index on the number), looked for only when `certificate`; and
     * the ids of the product lines of the scope's mode whose normalised customer-facing name
     * (`search_name`, stored with the line) contains `phrase`.
     */
    async lookups(
      scope: SearchScope,
      phrase: string,
      certificate: boolean,
    ): Promise<{ hit: { purchaseId: number; certificateNumber: string } | null; productLineIds: number[] }> {
      const s = scopeWhere(scope);
      const hit: Fragment = certificate
        ? {
            sql: `(select json_build_object('purchaseId', c.purchase_id, 'certificateNumber', c.certificate_number)
                     from certificates c join purchase_search s on s.purchase_id = c.purchase_id
                    where c.certificate_number in (?, upper(?)) and ${s.sql}
                    limit 1)`,
            bindings: [phrase, phrase, ...s.bindings],
          }
        : { sql: 'null::json', bindings: [] };
      const { rows } = await prepared(
        db,
        `select ${hit.sql} as hit,
                array(select id from product_lines
                       where search_name like lower(?) escape '\\' and is_test_mode = ?
                       order by id limit 10000) as product_line_ids`,
        [...hit.bindings, likePattern(phrase), scope.mode === 'test'],
      );
      return { hit: rows[0].hit ?? null, productLineIds: rows[0].product_line_ids as number[] };
    },

    /**
     * About 2 000 rows (`search_key`, `product_line_ids`, and whose the row is) from
     * pages picked at random over the whole table (TABLESAMPLE SYSTEM, sized from the table's
     * size in pages: about 70 pages of 30 rows), and the table's estimated row count (rows
     * sampled / share of pages sampled), or null when the table is empty.
     */
    async tableSample(): Promise<{ keys: string[]; productLineIds: number[][]; scopes: SampleScope[]; tableRows: number } | null> {
      const { rows } = await db.raw(
        `select s.search_key, s.product_line_ids, s.root_account_id, s.agent_id, s.mode, p.share
           from (select least(1, 70 / greatest(pg_relation_size('purchase_search') / 8192.0, 1))::real as share) p,
                purchase_search s tablesample system ((select (100 * least(1, 70 / greatest(pg_relation_size('purchase_search') / 8192.0, 1)))::real))
          limit 4000`,
      );
      if (rows.length === 0) return null;
      return {
        keys: rows.map((r: { search_key: string }) => r.search_key),
        productLineIds: rows.map((r: { product_line_ids: number[] }) => r.product_line_ids),
        scopes: rows.map((r: { root_account_id: number; agent_id: number | null; mode: string }) => ({
          rootAccountId: r.root_account_id,
          agentId: r.agent_id,
          mode: r.mode,
        })),
        tableRows: Math.round(rows.length / Number(rows[0].share)),
      };
    },

    /**
     * Gathers at most `cap` matches through the indexes and returns how many there were, and —
     * when that is fewer than `cap`, so they are all of them — one slice of them in result order
     * (leaving out `excludePurchaseId`). One statement: the gathered rows are sorted in memory.
     */
    async countAndCollect(
      scope: SearchScope,
      match: SearchMatch,
      cap: number,
      slice: { offset: number; limit: number; excludePurchaseId: number | null },
    ): Promise<{ count: number; ids: number[] | null }> {
      const m = matchWhere(scope, match, true);
      const { rows } = await db.raw(
        `with m as materialized (select s.purchase_id, s.paid_at from purchase_search s where ${m.sql} limit ?)
         select (select count(*)::int from m) as n,
                case when (select count(*) from m) < ? then array(
                  select purchase_id from m where purchase_id is distinct from ?::int
                   order by paid_at desc, purchase_id desc limit ? offset ?) end as ids`,
        [...m.bindings, cap, cap, slice.excludePurchaseId, slice.limit, slice.offset],
      );
      return { count: rows[0].n as number, ids: (rows[0].ids as number[] | null) ?? null };
    },

    /**
     * The ids of every purchase of the scope whose document holds `match.phrase` (product lines
     * aside), through the trigram index (`match.probe`, which must not be null), in no order;
     * null when there are more than `cap` of them.
     */
    async textMatches(scope: SearchScope, match: SearchMatch, cap: number): Promise<number[] | null> {
      const w = and([scopeWhere(scope), matchTest({ phrase: match.phrase, probe: match.probe, productLineIds: [] }, true)]);
      const { rows } = await db.raw(`select s.purchase_id from purchase_search s where ${w.sql} limit ?`, [...w.bindings, cap + 1]);
      return rows.length > cap ? null : rows.map((r: { purchase_id: number }) => r.purchase_id);
    },

    /** How many purchases are in scope (no phrase), counting no further than `cap`. */
    async countAll(scope: SearchScope, cap: number): Promise<number> {
      const s = scopeWhere(scope);
      const { rows } = await prepared(db, `select count(*)::int as n from (select 1 from purchase_search s where ${s.sql} limit ?) x`, [
        ...s.bindings,
        cap,
      ]);
      return rows[0].n as number;
    },

    /**
     * One slice of the matches (all of the scope when `match` is null) in result order, leaving
     * out `excludePurchaseId`, by walking the newest-first scope index and testing each row; it
     * stops as soon as the slice is full. `bounds` limits the rows looked at: `from`, only rows
     * at or before that row in result order (`paid_at`, `purchase_id`; an index condition, so
     * the walk is one plain index scan); `after`, only rows after that one; `rows`, only the
     * first that many (a subquery, 0.16 µs a row dearer than `from`).
     */
    async walk(
      scope: SearchScope,
      match: SearchMatch | null,
      slice: { offset: number; limit: number; excludePurchaseId: number | null },
      bounds: { from?: Edge | null; after?: Edge; rows?: number } = {},
    ): Promise<number[]> {
      if (slice.limit <= 0) return [];
      const s = and([scopeWhere(scope), ...keysetBounds(bounds)]);
      const order = 'order by s.paid_at desc, s.purchase_id desc';
      // Only the tests the rows still need: rows of the subquery are already in scope.
      const tests = [match ? matchTest(match, false) : null, excluding(slice.excludePurchaseId)].filter((f): f is Fragment => f !== null);
      let q: Fragment;
      if (bounds.rows === undefined) {
        const w = and([s, ...tests]);
        q = {
          sql: `select s.purchase_id from purchase_search s where ${w.sql} ${order} limit ? offset ?`,
          bindings: [...w.bindings, slice.limit, slice.offset],
        };
      } else {
        const w = tests.length > 0 ? and(tests) : { sql: 'true', bindings: [] };
        q = {
          sql: `select s.purchase_id from (select ${walkedColumns(match)} from purchase_search s where ${s.sql} ${order} limit ?) s where ${w.sql} ${order} limit ? offset ?`,
          bindings: [...s.bindings, bounds.rows, ...w.bindings, slice.limit, slice.offset],
        };
      }
      const { rows } = await db.raw(q.sql, q.bindings);
      return rows.map((r: { purchase_id: number }) => r.purchase_id);
    },

    /**
     * The `window`-th newest row of the scope (`paid_at`, `purchase_id`): where a walk of the
     * newest `window` rows ends. Null when the scope has fewer rows. Index only, 0.12 µs a row.
     */
    async edgeAt(scope: SearchScope, window: number): Promise<Edge | null> {
      const s = scopeWhere(scope);
      const { rows } = await prepared(
        db,
        `/* window edge */ select s.paid_at, s.purchase_id from purchase_search s where ${s.sql} order by s.paid_at desc, s.purchase_id desc limit 1 offset ?`,
        [...s.bindings, window - 1],
      );
      return rows[0] ? { paidAt: rows[0].paid_at, purchaseId: rows[0].purchase_id } : null;
    },

    /**
     * How many of the newest `rows` rows of the scope match, counting no further than `cap`: a
     * walk in result order (index only when `match.textIds` is set) that stops at the cap.
     */
    async countNewest(scope: SearchScope, match: SearchMatch, cap: number, rows: number): Promise<number> {
      const s = scopeWhere(scope);
      const t = matchTest(match, false);
      const { rows: out } = await db.raw(
        `select count(*)::int as n from (
           select 1 from (select ${walkedColumns(match)} from purchase_search s where ${s.sql} order by s.paid_at desc, s.purchase_id desc limit ?) s
            where ${t.sql} limit ?) x`,
        [...s.bindings, rows, ...t.bindings, cap],
      );
      return out[0].n as number;
    },

    /** How many rows of the scope at or before `from` in result order match, leaving out `excludePurchaseId`. */
    async countFrom(scope: SearchScope, match: SearchMatch, from: Edge, excludePurchaseId: number | null): Promise<number> {
      const w = and([
        scopeWhere(scope),
        ...keysetBounds({ from }),
        matchTest(match, false),
        ...[excluding(excludePurchaseId)].filter((f): f is Fragment => f !== null),
      ]);
      const { rows } = await db.raw(`select count(*)::int as n from purchase_search s where ${w.sql}`, w.bindings);
      return rows[0].n as number;
    },

    /**
     * One slice of the matches older than `edge` (after it in result order), gathered through
     * the indexes and sorted: the continuation of a windowed `walk` that came up short. `count`
     * is how many older matches there are in all (leaving out `excludePurchaseId`): they are
     * all gathered for the sort, so counting them costs nothing more.
     */
    async olderMatches(
      scope: SearchScope,
      match: SearchMatch,
      edge: Edge,
      slice: { offset: number; limit: number; excludePurchaseId: number | null },
    ): Promise<{ ids: number[]; count: number }> {
      const m = matchWhere(scope, match, true);
      const { rows } = await db.raw(
        `with m as materialized (
           select s.purchase_id, s.paid_at from purchase_search s
            where ${m.sql} and (s.paid_at, s.purchase_id) < (?::timestamptz, ?::int) and s.purchase_id is distinct from ?::int)
         select (select count(*)::int from m) as n,
                array(select purchase_id from m order by paid_at desc, purchase_id desc limit ? offset ?) as ids`,
        [...m.bindings, edge.paidAt, edge.purchaseId, slice.excludePurchaseId, slice.limit, slice.offset],
      );
      return { ids: rows[0].ids as number[], count: rows[0].n as number };
    },

    /**
     * The result rows of `purchaseIds`, in that order. `matchedCertificateNumber` is the
     * shortest certificate number of the purchase containing `phrase` (an exact number is the
     * shortest), null for an empty phrase or none.
     */
    async hydrate(purchaseIds: number[], phrase: string, listedCertificates: number): Promise<PurchaseSearchRow[]> {
      if (purchaseIds.length === 0) return [];
      // A phrase of printable ASCII without spaces is inside the normalised number exactly when it is
      // inside the lower-cased one (normalising only collapses and trims whitespace and control
      // characters), and lower() spares a regular expression per certificate.
      const numberText = /^[\x21-\x7e]*$/.test(phrase) ? 'lower(c.certificate_number)' : 'purchase_search_normalize(c.certificate_number)';
      const { rows } = await prepared(
        db,
        `select p.id, p.payment_intent_id, p.paid_at, p.status, p.bundle_id, p.bundle_name,
                a.idp_teammate_uuid, a.name as agent_name,
                b.idp_accnt_uuid, b.first_name, b.last_name, coalesce(p.buyer_email, b.email) as buyer_email,
                coalesce((select json_agg(json_build_object('id', x.product_line_id, 'name', x.customer_name) order by x.position)
                            from (select i.product_line_id, pl.customer_name, min(i.position) as position
                                    from purchase_items i join product_lines pl on pl.id = i.product_line_id
                                   where i.purchase_id = p.id group by i.product_line_id, pl.customer_name) x), '[]') as products,
                (select count(*)::int from certificates c where c.purchase_id = p.id) as certificate_count,
                array(select c.certificate_number
                        from certificates c
                        join purchase_items i on i.id = c.purchase_item_id
                        join covered_units cu on cu.id = c.covered_unit_id
                       where c.purchase_id = p.id
                       order by i.position, cu.unit_index limit ?) as certificate_numbers,
                case when ? = '' then null else
                  (select c.certificate_number from certificates c
                    where c.purchase_id = p.id and strpos(${numberText}, lower(?)) > 0
                    order by length(c.certificate_number), c.id limit 1) end as matched_certificate_number
           from purchases p
           left join buyers b on b.id = p.buyer_id
           left join agents a on a.id = p.agent_id
          where p.id = any (?::int[])
          order by array_position(?::int[], p.id)`,
        [listedCertificates, phrase, phrase, purchaseIds as unknown as Knex.Value, purchaseIds as unknown as Knex.Value],
      );
      return (rows as HydratedRow[]).map((r): PurchaseSearchRow => ({
        purchaseId: r.id,
        paymentIntentId: r.payment_intent_id,
        paidAt: r.paid_at,
        status: r.status,
        teammate: r.idp_teammate_uuid ? { idpTeammateUuid: r.idp_teammate_uuid, name: r.agent_name ?? '' } : null,
        buyer: {
          idpAccntUuid: r.idp_accnt_uuid ?? '',
          name: [r.first_name, r.last_name].filter(Boolean).join(' '),
          email: r.buyer_email ?? '',
        },
        products: r.products.map((x) => ({ productLineId: x.id, productName: x.name })),
        bundle: r.bundle_name ? { id: r.bundle_id, name: r.bundle_name } : null,
        certificateCount: r.certificate_count,
        certificateNumbers: r.certificate_numbers,
        matchedCertificateNumber: r.matched_certificate_number,
      }));
    },
  };
}

export type PurchaseSearchRepository = ReturnType<typeof createPurchaseSearchRepository>;
