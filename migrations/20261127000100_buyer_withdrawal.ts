/**
 * The buyer's own online withdrawal (src/withdrawals/):
 * - `product_cancellation_terms.buyer_withdrawal`: whether a product's buyers may withdraw on
 *   their own through the signed link (default true; rows written before keep the default). Each
 *   purchase item's snapshot (`purchase_items.cancellation_terms`, JSON) carries it as
 *   `buyerWithdrawal`; snapshots taken before read as the default.
 * - `buyer_withdrawal_quotes`: the cancellation quotes the withdrawal page showed, one per render
 *   of the page. A confirm must name one of its own purchase's (the form's per-render nonce), and
 *   the link counts as used once a cancellation carries one of them out. Written only by
 *   src/withdrawals/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('product_cancellation_terms', (t) => {
    t.boolean('buyer_withdrawal').notNullable().defaultTo(true);
  });
  await knex.schema.createTable('buyer_withdrawal_quotes', (t) => {
    t.string('quote_id', 40).primary().references('id').inTable('cancellation_quotes').onDelete('CASCADE');
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['purchase_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('buyer_withdrawal_quotes');
  await knex.schema.alterTable('product_cancellation_terms', (t) => {
    t.dropColumn('buyer_withdrawal');
  });
}
