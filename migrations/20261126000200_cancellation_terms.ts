/**
 * Cancellation terms per product (src/products/cancellation-terms.ts): free-look days, the refund
 * method for the buyer or agency and for the insurer, the short-rate penalty (basis points),
 * whether the platform fee is refundable, and a minimum earned premium (minor units). A product
 * without a row has the defaults. Written only through src/products/repository.ts.
 *
 * Each purchase item keeps the terms in force when it was bought (`purchase_items.cancellation_terms`,
 * written with the item by src/purchases/repository.ts): a later change of the product's terms
 * never reprices a policy already sold. Null on items bought before: the defaults.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('product_cancellation_terms', (t) => {
    t.integer('product_line_id').primary().references('id').inTable('product_lines').onDelete('CASCADE');
    t.integer('free_look_days').notNullable();
    t.string('refund_method', 16).notNullable();
    t.string('insurer_refund_method', 16).notNullable();
    t.integer('short_rate_penalty_bps').notNullable();
    t.boolean('platform_fee_refundable').notNullable();
    t.bigInteger('minimum_earned_premium_minor').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table product_cancellation_terms add constraint product_cancellation_terms_check check (
    free_look_days between 0 and 60
    and refund_method in ('pro_rata', 'short_rate', 'none')
    and insurer_refund_method in ('pro_rata', 'short_rate', 'none')
    and short_rate_penalty_bps between 0 and 10000
    and minimum_earned_premium_minor >= 0)`);
  await knex.schema.alterTable('purchase_items', (t) => {
    t.jsonb('cancellation_terms').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchase_items', (t) => {
    t.dropColumn('cancellation_terms');
  });
  await knex.schema.dropTable('product_cancellation_terms');
}
