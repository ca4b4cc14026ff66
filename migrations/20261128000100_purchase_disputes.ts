/**
 * `purchase_disputes`: a buyer's dispute (chargeback) of a purchase's payment, as the processor
 * reports it (`charge.dispute.created` / `.updated` / `.closed`): one row per processor dispute,
 * its amount (minor units), reason and latest status, with the time of the event that set it
 * (`status_at`: an older event arriving late changes nothing). Written only by
 * src/disputes/repository.ts, from the dispute workflow's activity.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('purchase_disputes', (t) => {
    t.increments('id').primary();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.string('payproc_dispute_id', 255).notNullable().unique();
    t.string('payproc_charge_id', 255).nullable();
    t.bigInteger('amount_minor').notNullable();
    t.string('currency', 3).notNullable();
    t.string('reason', 64).notNullable();
    t.string('status', 32).notNullable();
    t.timestamp('opened_at', { useTz: true }).notNullable();
    t.timestamp('closed_at', { useTz: true }).nullable();
    t.timestamp('status_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['purchase_id']);
  });
  await knex.raw(`alter table purchase_disputes add constraint purchase_disputes_amount_check check (amount_minor >= 0)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('purchase_disputes');
}
