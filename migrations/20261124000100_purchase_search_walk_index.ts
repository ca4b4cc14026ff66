/**
 * Purchase search: the two newest-first scope indexes carry `product_line_ids` (INCLUDE), so a
 * deep page can be walked from the index alone (measured by `npm run bench -- search` at
 * 1 000 000 purchases; figures in docs/decisions.md).
 *
 * A deep page walks the newest rows of a scope in result order and tests each one (the last page
 * of the 10 000-result window of a common product name walks about 21 000 rows). Testing the
 * phrase against `search_doc` needs the table row; when the text matches are few, the service
 * now gathers them first through the trigram index and tests each walked row against those ids
 * and its product lines, both in the index: an index-only scan, 4.5 ms instead of 8 ms for that
 * walk. The indexes are otherwise the same (keys, order, partial condition); each grows by the
 * array (47 → 75 MB at 1 000 000 purchases).
 *
 * Rebuilding both indexes takes a few seconds at 1 000 000 rows, during which writes to the
 * search table (the triggers on purchases, items, certificates and buyers) wait; on an empty
 * database it is instant.
 */
import type { Knex } from 'knex';

const ACCOUNT = '(root_account_id, mode, paid_at desc, purchase_id desc)';
const AGENT = '(root_account_id, agent_id, mode, paid_at desc, purchase_id desc)';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index purchase_search_account_paid_idx');
  await knex.raw(`create index purchase_search_account_paid_idx on purchase_search ${ACCOUNT} include (product_line_ids)`);
  await knex.raw('drop index purchase_search_agent_paid_idx');
  await knex.raw(
    `create index purchase_search_agent_paid_idx on purchase_search ${AGENT} include (product_line_ids) where agent_id is not null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index purchase_search_account_paid_idx');
  await knex.raw(`create index purchase_search_account_paid_idx on purchase_search ${ACCOUNT}`);
  await knex.raw('drop index purchase_search_agent_paid_idx');
  await knex.raw(`create index purchase_search_agent_paid_idx on purchase_search ${AGENT} where agent_id is not null`);
}
