/**
 * `product_endorsement_terms`: whether a product allows a certificate holder to be named additional
 * insured, and a waiver of subrogation in a holder's favour (both allowed without a row). Written
 * only by src/products/repository.ts; read when a holder is added.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('product_endorsement_terms', (t) => {
    t.integer('product_line_id').primary().references('id').inTable('product_lines').onDelete('CASCADE');
    t.boolean('allows_additional_insured').notNullable().defaultTo(true);
    t.boolean('allows_waiver_of_subrogation').notNullable().defaultTo(true);
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('product_endorsement_terms');
}
