/**
 * Bulk cancellations (an event called off: many policies cancelled together):
 * - `bulk_cancellations`: one batch, scoped like the key that asked (account, mode, teammate),
 *   with what it selects (`selection`: purchase ids, or a product and a coverage date), who asks
 *   and why, and its progress (`running` → `completed`).
 * - `bulk_cancellation_items`: each purchase of the batch exactly once (primary key), the covered
 *   units it cancels (null: every unit not started), the quote carried out, the cancellation it
 *   became, or why it was skipped or failed.
 * Written by src/bulk-cancellations/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('bulk_cancellations', (t) => {
    t.increments('id').primary();
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('CASCADE');
    t.string('mode', 8).notNullable();
    t.integer('agent_id').nullable();
    t.integer('api_key_id').notNullable().references('id').inTable('api_keys').onDelete('RESTRICT');
    t.jsonb('selection').notNullable();
    t.string('requested_by', 16).notNullable();
    t.text('reason').nullable();
    t.string('status', 16).notNullable().defaultTo('running');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('completed_at', { useTz: true }).nullable();
    t.index(['root_account_id', 'mode', 'id']);
  });
  await knex.raw(`alter table bulk_cancellations add constraint bulk_cancellations_check check (
    mode in ('live', 'test') and status in ('running', 'completed') and requested_by in ('agency', 'insurer'))`);
  await knex.schema.createTable('bulk_cancellation_items', (t) => {
    t.integer('bulk_cancellation_id').notNullable().references('id').inTable('bulk_cancellations').onDelete('CASCADE');
    t.integer('purchase_id').notNullable();
    t.specificType('covered_unit_ids', 'integer[]').nullable();
    t.string('status', 16).notNullable().defaultTo('pending');
    t.string('quote_id', 40).nullable();
    t.integer('cancellation_id').nullable().references('id').inTable('policy_transactions').onDelete('RESTRICT');
    t.string('error_code', 64).nullable();
    t.text('error_message').nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['bulk_cancellation_id', 'purchase_id']);
  });
  await knex.raw(
    `alter table bulk_cancellation_items add constraint bulk_cancellation_items_check check (status in ('pending', 'accepted', 'skipped', 'failed'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('bulk_cancellation_items');
  await knex.schema.dropTable('bulk_cancellations');
}
