/**
 * Indexes found by `npm run bench -- catalog` (EXPLAIN at 100 000 rows per account):
 * - GET /bundles?test_mode=…&is_recurring=… counted with a sequential scan; the composite
 *   index answers both filters (and the count) from the index.
 * - GET /products?isTestMode=… could not use product_lines_account_mode_created_idx for its
 *   order because is_active sits between the mode and created_at in that index.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'create index bundles_account_mode_recurring_created_idx on bundles (root_account_id, is_test_mode, is_recurring, created_at, id)',
  );
  await knex.raw(
    'create index product_lines_account_testmode_created_idx on product_lines (root_account_id, is_test_mode, created_at desc, id desc)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index bundles_account_mode_recurring_created_idx');
  await knex.raw('drop index product_lines_account_testmode_created_idx');
}
