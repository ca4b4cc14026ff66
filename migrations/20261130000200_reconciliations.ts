/**
 * Reconciliation with the processor (premium reporting): `reconciliations` keeps each run of
 * `npm run ops -- reconcile --month YYYY-MM` — the month and mode it checked, how many charges and
 * refunds it compared, the ledger's and the processor's totals per currency (minor units), and
 * every difference found with the purchase it belongs to. The worker's metric reads the newest
 * run per mode. Written only by src/reports/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('reconciliations', (t) => {
    t.increments('id').primary();
    t.date('month').notNullable();
    t.string('mode', 8).notNullable();
    t.integer('charges_checked').notNullable();
    t.integer('refunds_checked').notNullable();
    t.integer('difference_count').notNullable();
    t.jsonb('totals').notNullable();
    t.jsonb('differences').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['mode', 'created_at']);
  });
  await knex.raw(`alter table reconciliations add constraint reconciliations_check check (
    mode in ('live', 'test') and charges_checked >= 0 and refunds_checked >= 0 and difference_count >= 0)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('reconciliations');
}
