/**
 * `purchases.metadata`: the agency's own key-value pairs given with the quote (at most 20 keys of
 * up to 40 characters, string values of up to 500), returned on the purchase and in its events,
 * copied to each renewal. Never read by the service. Written only by src/purchases/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.jsonb('metadata').notNullable().defaultTo('{}');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.dropColumn('metadata');
  });
}
