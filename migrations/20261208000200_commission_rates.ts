/**
 * Commission (issue 49, item 2): the agency's commission rate per product and party (the
 * product's insurer or MGA), in basis points, effective-dated (`product_commission_rates`, written
 * only by src/products/pricing-terms-repository.ts: a change is a new row from its date on, never an
 * edit). Each purchase item keeps the rate in force at its sale and the commission it earned
 * (`purchase_items.commission_*`, written with the item by src/purchases/sale-insert-repository.ts):
 * a later rate never reprices what was sold. Null on items sold without a rate (and before).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('product_commission_rates', (t) => {
    t.increments('id').primary();
    t.integer('product_line_id').notNullable().references('id').inTable('product_lines').onDelete('CASCADE');
    t.integer('party_root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.integer('rate_bps').notNullable();
    t.timestamp('effective_from', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['product_line_id', 'party_root_account_id', 'effective_from']);
  });
  await knex.raw('alter table product_commission_rates add constraint product_commission_rates_bps check (rate_bps between 0 and 10000)');
  await knex.schema.alterTable('purchase_items', (t) => {
    t.integer('commission_party_root_account_id').nullable();
    t.integer('commission_bps').nullable();
    t.bigInteger('commission_minor').nullable();
  });
  await knex.raw(`alter table purchase_items add constraint purchase_items_commission check (
    (commission_bps is null and commission_minor is null)
    or (commission_bps between 0 and 10000 and commission_minor >= 0 and commission_minor <= greatest(amount_minor, 0)))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table purchase_items drop constraint purchase_items_commission');
  await knex.schema.alterTable('purchase_items', (t) => {
    t.dropColumn('commission_party_root_account_id');
    t.dropColumn('commission_bps');
    t.dropColumn('commission_minor');
  });
  await knex.schema.dropTable('product_commission_rates');
}
