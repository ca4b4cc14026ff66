/**
 * Premium tax on an endorsement's added premium (issue 49, item 3): `endorsements.tax_difference_minor`,
 * the tax a quote prices on the premium it adds (at the rates the item's sale was taxed with; 0 for
 * every quote before, none of which charged tax, and never negative), now part of
 * `total_difference_minor` (the check that adds the total up includes it). Written only by
 * src/endorsements/repository.ts. The ledger row of an applied endorsement already has
 * `policy_transactions.tax_minor` (0 until now).
 */
import type { Knex } from 'knex';

const CHECK = (total: string) => `alter table endorsements add constraint endorsements_check check (
    status in ('quoted', 'awaiting_payment', 'applied', 'payment_failed', 'refunded') and (status = 'applied') = (applied_at is not null)
    and total_difference_minor = ${total}
    and (payment_method is null or payment_method in ('saved_card', 'checkout_link')))`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('endorsements', (t) => {
    t.bigInteger('tax_difference_minor').notNullable().defaultTo(0);
  });
  await knex.raw('alter table endorsements drop constraint endorsements_check');
  await knex.raw(CHECK('premium_difference_minor + platform_fee_difference_minor + tax_difference_minor and tax_difference_minor >= 0'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table endorsements drop constraint endorsements_check');
  await knex.schema.alterTable('endorsements', (t) => {
    t.dropColumn('tax_difference_minor');
  });
  await knex.raw(CHECK('premium_difference_minor + platform_fee_difference_minor'));
}
