/**
 * Partial indexes for the selective filters of GET /bundles (spec §4.1) and for test-mode keys,
 * which always filter on `is_test_mode`. The per-sort indexes of 20261122000200 already keep
 * each page short, but the list's exact `total` must count every match: without these, that
 * count is a scan of the whole account (about 50 ms at 100 000 bundles, under 1 ms with them).
 * They are partial, so they stay small: most bundles have no insurer or MGA and are live-mode.
 */
import type { Knex } from 'knex';

const INDEXES = [
  ['bundles_account_insurer_created_idx', '(root_account_id, root_insurer_db_id, created_at, id) where root_insurer_db_id is not null'],
  ['bundles_account_mga_created_idx', '(root_account_id, root_mga_db_id, created_at, id) where root_mga_db_id is not null'],
  ['bundles_account_seller_created_idx', '(root_account_id, root_seller_db_id, created_at, id) where root_seller_db_id is not null'],
  ['bundles_account_test_created_idx', '(root_account_id, created_at, id) where is_test_mode'],
] as const;

export async function up(knex: Knex): Promise<void> {
  for (const [name, definition] of INDEXES) await knex.raw(`create index ${name} on bundles ${definition}`);
}

export async function down(knex: Knex): Promise<void> {
  for (const [name] of INDEXES) await knex.raw(`drop index if exists ${name}`);
}
