/**
 * Cancellation quotes (`POST /api/v1/purchases/{id}/cancellation_quote`): the refund a
 * cancellation of some covered units would give, priced by the purchase's cancellation terms at
 * an effective time, kept so that the cancellation can be carried out at exactly that price while
 * the quote holds (`expires_at`). Amounts in minor units; `breakdown` holds the per-unit premium,
 * earned and refundable amounts. Written only through src/purchases/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('cancellation_quotes', (t) => {
    t.string('id', 40).primary();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.integer('api_key_id').notNullable().references('id').inTable('api_keys').onDelete('RESTRICT');
    t.string('requested_by', 16).notNullable();
    t.text('reason').nullable();
    t.specificType('covered_unit_ids', 'integer[]').notNullable();
    t.timestamp('effective_at', { useTz: true }).notNullable();
    t.string('method', 16).notNullable();
    t.boolean('free_look').notNullable();
    t.boolean('ends_policy').notNullable();
    t.string('currency', 3).notNullable();
    t.bigInteger('premium_minor').notNullable();
    t.bigInteger('tax_minor').notNullable();
    t.bigInteger('platform_fee_minor').notNullable();
    t.bigInteger('total_minor').notNullable();
    t.jsonb('breakdown').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['purchase_id', 'created_at']);
  });
  await knex.raw(`alter table cancellation_quotes add constraint cancellation_quotes_amounts_check check (
    premium_minor >= 0 and tax_minor >= 0 and platform_fee_minor >= 0 and total_minor = premium_minor + tax_minor + platform_fee_minor
    and requested_by in ('buyer', 'agency', 'insurer'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('cancellation_quotes');
}
