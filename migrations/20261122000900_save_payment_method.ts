/**
 * Whether checkout should save the buyer's card for later off-session charges (issue: payment
 * options — "checkout saves the card for later off-session use when the agent asks for it").
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.boolean('save_payment_method').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.dropColumn('save_payment_method');
  });
}
