/**
 * Paging for the repositories' lists: one page of a filtered query and the total it matches,
 * the two statements the paged `/api/v1` lists (products, purchases, subscriptions, events,
 * webhook endpoints, bordereaux, the quote catalog) all ran.
 * Two statements, not `count(*) over()`: the page stays a short index scan that stops after
 * `limit` rows, and a page past the end still gets its total.
 */
import type { Knex } from 'knex';

/** Columns to order by, first one first. */
export type OrderBy = { column: string; order: 'asc' | 'desc' }[];

/** Newest first (`created_at`, then `id` for rows created in the same instant). */
export const NEWEST_FIRST: OrderBy = [
  { column: 'created_at', order: 'desc' },
  { column: 'id', order: 'desc' },
];

/** Which page: its order, its size (`limit` rows) and where it starts (`offset` rows skipped). */
export interface PageRequest {
  orderBy: OrderBy;
  limit: number;
  offset: number;
  /** What the page selects from the filtered query: every column (`select *`) unless said. */
  select?: (filtered: Knex.QueryBuilder) => Knex.QueryBuilder;
}

/**
 * One page of what `filtered` matches, and how many rows it matches in all. `filtered` holds the
 * filters only (no select, order or limit); each statement works on its own clone, and both run
 * at once. `total` is the count as a number (0 when nothing matches); `rows` are the raw rows,
 * for the repository to map.
 */
export async function pageWithTotal<Row>(filtered: Knex.QueryBuilder, page: PageRequest): Promise<{ rows: Row[]; total: number }> {
  const select = page.select ?? ((q: Knex.QueryBuilder) => q.select('*'));
  const [rows, counted] = await Promise.all([
    select(filtered.clone()).orderBy(page.orderBy).limit(page.limit).offset(page.offset),
    filtered.clone().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as Row[], total: Number(counted[0]?.count ?? 0) };
}
