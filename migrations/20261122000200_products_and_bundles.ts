/**
 * Product lines and bundles (spec §2.1–2.3). Money is stored as integer minor units with a
 * currency (ARCHITECTURE §4). Indexes serve the list filters, sorts and the case-insensitive
 * substring search of GET /bundles at 100 000 rows (pg_trgm GIN over the searchable text).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pg_trgm');

  await knex.schema.createTable('product_lines', (t) => {
    t.increments('id').primary();
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.string('customer_name', 255).notNullable();
    t.string('internal_name', 255).notNullable();
    t.text('description').notNullable().defaultTo('');
    t.bigInteger('default_price_minor').notNullable();
    t.string('currency', 3).notNullable().defaultTo('usd');
    t.string('insurer_name', 255).notNullable().defaultTo('');
    t.string('claims_phone_number', 64).notNullable().defaultTo('');
    t.string('video_url', 2048).notNullable().defaultTo('');
    t.string('master_policy_number', 128).notNullable().defaultTo('');
    t.string('policy_number_two', 128).notNullable().defaultTo('');
    t.bigInteger('deductible_minor').notNullable().defaultTo(0);
    t.boolean('is_recurring').notNullable().defaultTo(false);
    t.boolean('is_test_mode').notNullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    t.integer('question_set_id').nullable();
    t.integer('mga_root_account_id').nullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.integer('insurer_root_account_id').nullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.string('payproc_product_id', 255).nullable();
    t.string('payproc_price_id', 255).nullable();
    // bumped on every update; part of processor idempotency keys so a retried update is one call
    t.integer('version').notNullable().defaultTo(1);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    'alter table product_lines add constraint product_lines_price_check check (default_price_minor >= 0 and deductible_minor >= 0)',
  );
  await knex.raw('create index product_lines_account_created_idx on product_lines (root_account_id, created_at desc, id desc)');
  await knex.raw(
    'create index product_lines_account_mode_created_idx on product_lines (root_account_id, is_test_mode, is_active, created_at desc, id desc)',
  );

  await knex.schema.createTable('bundles', (t) => {
    t.increments('id').primary();
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.string('bundle_name', 255).notNullable();
    t.string('customer_facing_name', 255).notNullable();
    t.string('internally_facing_name', 255).notNullable();
    t.text('bundle_description').notNullable().defaultTo('');
    t.boolean('is_recurring').notNullable().defaultTo(false);
    t.boolean('is_test_mode').notNullable();
    t.integer('product_line_count').notNullable().defaultTo(0);
    t.integer('root_insurer_db_id').nullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.integer('root_mga_db_id').nullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.integer('root_seller_db_id').nullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.integer('question_set_id').nullable();
    t.string('youtube_link', 2048).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('alter table bundles add constraint bundles_count_check check (product_line_count >= 0)');
  for (const col of ['created_at', 'updated_at', 'customer_facing_name', 'bundle_name', 'product_line_count']) {
    await knex.raw(`create index bundles_account_${col}_idx on bundles (root_account_id, ${col}, id)`);
  }
  await knex.raw(
    `create index bundles_search_trgm_idx on bundles using gin ((lower(bundle_name || ' ' || customer_facing_name || ' ' || internally_facing_name || ' ' || bundle_description)) gin_trgm_ops)`,
  );

  await knex.schema.createTable('bundle_products', (t) => {
    t.integer('bundle_id').notNullable().references('id').inTable('bundles').onDelete('CASCADE');
    t.integer('product_line_id').notNullable().references('id').inTable('product_lines').onDelete('RESTRICT');
    t.boolean('is_primary').notNullable().defaultTo(false);
    t.integer('position').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['bundle_id', 'product_line_id']);
    t.index(['product_line_id']);
  });
  await knex.raw('create unique index bundle_products_one_primary_idx on bundle_products (bundle_id) where is_primary');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('bundle_products');
  await knex.schema.dropTable('bundles');
  await knex.schema.dropTable('product_lines');
}
