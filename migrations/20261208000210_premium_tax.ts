/**
 * Premium tax (issue 49, item 3):
 * - `premium_tax_rates`: published rates by jurisdiction (country, region or ''), line of business
 *   ('*': every line), tax and method, effective-dated, with their source; loaded here from the
 *   versioned data file src/taxes/premium-tax-rates.json as it is today, and re-synchronised from
 *   it by `npm run ops -- tax-rates sync` (src/taxes/repository.ts, the table's one writer).
 * - `product_tax_settings`: a product's line of business and where its risk is (the named
 *   insured's or the venue's address); a product without a row is not taxed (written only by
 *   src/products/pricing-terms-repository.ts).
 * - the tax each purchase item was charged (`tax_minor`, `tax_lines`: the lines with their rates,
 *   kept at the sale) and the purchase's sum (`purchases.tax_minor`), now part of its total.
 */
import type { Knex } from 'knex';
import data from '../src/taxes/premium-tax-rates.json';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('premium_tax_rates', (t) => {
    t.increments('id').primary();
    t.string('country', 2).notNullable();
    t.string('region', 8).notNullable().defaultTo('');
    t.string('line_of_business', 32).notNullable();
    t.string('tax', 64).notNullable();
    t.string('method', 24).notNullable();
    t.integer('rate_bps').nullable();
    t.bigInteger('amount_minor').nullable();
    t.string('currency', 3).nullable();
    t.text('label').notNullable();
    t.date('effective_from').notNullable();
    t.date('effective_to').nullable();
    t.jsonb('source').notNullable();
    t.string('data_version', 32).notNullable();
    t.unique(['country', 'region', 'line_of_business', 'tax', 'effective_from']);
  });
  await knex.raw(`alter table premium_tax_rates add constraint premium_tax_rates_method check (
    (method in ('premium_rate', 'stamping_fee') and rate_bps between 0 and 10000 and amount_minor is null)
    or (method = 'fixed_per_policy' and amount_minor >= 0 and currency is not null and rate_bps is null))`);
  await knex.schema.createTable('product_tax_settings', (t) => {
    t.integer('product_line_id').primary().references('id').inTable('product_lines').onDelete('CASCADE');
    t.string('line_of_business', 32).notNullable();
    t.string('risk_location', 16).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `alter table product_tax_settings add constraint product_tax_settings_location check (risk_location in ('named_insured', 'venue'))`,
  );
  await knex.schema.alterTable('purchase_items', (t) => {
    t.bigInteger('tax_minor').notNullable().defaultTo(0);
    t.jsonb('tax_lines').nullable();
  });
  await knex.raw('alter table purchase_items add constraint purchase_items_tax check (tax_minor >= 0)');
  await knex.schema.alterTable('purchases', (t) => {
    t.bigInteger('tax_minor').notNullable().defaultTo(0);
  });
  await knex.raw('alter table purchases drop constraint purchases_amounts_check');
  await knex.raw(
    'alter table purchases add constraint purchases_amounts_check check (subtotal_minor >= 0 and platform_fee_minor >= 0 and tax_minor >= 0 and total_minor = subtotal_minor + platform_fee_minor + tax_minor)',
  );
  await knex('premium_tax_rates').insert(
    data.rates.map((r) => ({
      country: r.country,
      region: r.region,
      line_of_business: r.line_of_business,
      tax: r.tax,
      method: r.method,
      rate_bps: 'rate_bps' in r ? r.rate_bps : null,
      amount_minor: 'amount_minor' in r ? r.amount_minor : null,
      currency: 'currency' in r ? r.currency : null,
      label: r.label,
      effective_from: r.effective_from,
      effective_to: r.effective_to,
      source: JSON.stringify(r.source),
      data_version: data.version,
    })),
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table purchases drop constraint purchases_amounts_check');
  await knex.raw(
    'alter table purchases add constraint purchases_amounts_check check (subtotal_minor >= 0 and platform_fee_minor >= 0 and total_minor = subtotal_minor + platform_fee_minor)',
  );
  await knex.schema.alterTable('purchases', (t) => {
    t.dropColumn('tax_minor');
  });
  await knex.raw('alter table purchase_items drop constraint purchase_items_tax');
  await knex.schema.alterTable('purchase_items', (t) => {
    t.dropColumn('tax_minor');
    t.dropColumn('tax_lines');
  });
  await knex.schema.dropTable('product_tax_settings');
  await knex.schema.dropTable('premium_tax_rates');
}
