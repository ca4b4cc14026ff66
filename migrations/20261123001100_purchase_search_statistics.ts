/**
 * Purchase search: default statistics targets again for `search_doc` and `search_key` (1 000
 * since 20261122001100 / 20261123001000).
 *
 * The planner estimates every LIKE on a column by running the pattern over the column's
 * histogram: with 1 000 entries that is 0.2–0.35 ms of planning per statement, several
 * statements per search (measured at 1 000 000 purchases), for an estimate that only has to
 * tell a common phrase (read the table in order) from a rare one (use the trigram index),
 * which 100 entries do too. The service no longer reads its trigram sample from the histogram
 * either: it samples the table itself (TABLESAMPLE SYSTEM, about 2 000 rows every 10 minutes).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table purchase_search alter column search_doc set statistics -1, alter column search_key set statistics -1');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table purchase_search alter column search_doc set statistics 1000, alter column search_key set statistics 1000');
}
