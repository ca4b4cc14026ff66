/**
 * Question sets, product approvals, per-key product restrictions, and purchases with their
 * items and covered units (spec §4.4 steps 1–2; issue "Buyer connection, quote catalog…").
 *
 * - question_sets: the template a buyer answers, as a JSON definition validated by zod in
 *   src/question-sets/definition.ts; root_account_id null = shared by every account.
 * - product_approvals: which product lines a root account may quote (the owner approves).
 * - api_key_products: when a key has rows here, it may quote only those product lines.
 * - purchases / purchase_items / covered_units: a priced quote; amounts in minor units.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table root_accounts add column idp_root_account_uuid uuid not null unique default gen_random_uuid()');

  await knex.schema.createTable('question_sets', (t) => {
    t.increments('id').primary();
    t.integer('root_account_id').nullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.string('name', 255).notNullable();
    t.jsonb('definition').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('product_approvals', (t) => {
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('CASCADE');
    t.integer('product_line_id').notNullable().references('id').inTable('product_lines').onDelete('CASCADE');
    t.integer('approved_by_root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['root_account_id', 'product_line_id']);
  });

  await knex.schema.createTable('api_key_products', (t) => {
    t.integer('api_key_id').notNullable().references('id').inTable('api_keys').onDelete('CASCADE');
    t.integer('product_line_id').notNullable().references('id').inTable('product_lines').onDelete('CASCADE');
    t.primary(['api_key_id', 'product_line_id']);
  });

  await knex.schema.createTable('purchases', (t) => {
    t.increments('id').primary();
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.integer('api_key_id').notNullable().references('id').inTable('api_keys').onDelete('RESTRICT');
    t.integer('agent_id').nullable().references('id').inTable('agents').onDelete('RESTRICT');
    t.integer('buyer_id').notNullable();
    t.string('mode', 8).notNullable();
    t.string('status', 32).notNullable().defaultTo('quoted');
    t.string('currency', 3).notNullable();
    t.bigInteger('subtotal_minor').notNullable();
    t.integer('platform_fee_bps').nullable();
    t.bigInteger('platform_fee_minor').notNullable().defaultTo(0);
    t.bigInteger('total_minor').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['root_account_id', 'created_at']);
    t.index(['buyer_id']);
  });
  await knex.raw(`alter table purchases add constraint purchases_mode_check check (mode in ('live','test'))`);
  await knex.raw(
    'alter table purchases add constraint purchases_amounts_check check (subtotal_minor >= 0 and platform_fee_minor >= 0 and total_minor = subtotal_minor + platform_fee_minor)',
  );

  await knex.schema.createTable('purchase_items', (t) => {
    t.increments('id').primary();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.integer('product_line_id').notNullable().references('id').inTable('product_lines').onDelete('RESTRICT');
    t.integer('position').notNullable();
    t.boolean('is_trip_excess').notNullable();
    t.bigInteger('unit_price_minor').notNullable();
    t.integer('units').notNullable();
    // product of the chosen dropdown options' price factors
    t.decimal('price_factor', 12, 6).notNullable();
    t.bigInteger('amount_minor').notNullable();
    t.jsonb('answers').notNullable();
    t.jsonb('named_insured').nullable();
    t.jsonb('certificate_holder').nullable();
    t.unique(['purchase_id', 'position']);
  });

  await knex.schema.createTable('covered_units', (t) => {
    t.increments('id').primary();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.integer('purchase_item_id').notNullable().references('id').inTable('purchase_items').onDelete('CASCADE');
    t.integer('unit_index').notNullable();
    t.string('kind', 8).notNullable();
    t.timestamp('starts_at', { useTz: true }).notNullable();
    t.timestamp('ends_at', { useTz: true }).notNullable();
    t.string('time_zone', 64).notNullable();
    // the calendar day (per-day units) or the trip's local start and end, for the certificate
    t.string('local_label', 64).notNullable();
    t.unique(['purchase_item_id', 'unit_index']);
  });
  await knex.raw(`alter table covered_units add constraint covered_units_window_check check (ends_at > starts_at)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('covered_units');
  await knex.schema.dropTable('purchase_items');
  await knex.schema.dropTable('purchases');
  await knex.schema.dropTable('api_key_products');
  await knex.schema.dropTable('product_approvals');
  await knex.schema.dropTable('question_sets');
  await knex.raw('alter table root_accounts drop column idp_root_account_uuid');
}
