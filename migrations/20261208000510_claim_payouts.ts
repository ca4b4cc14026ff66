/**
 * Claim payouts (issue 51, item 4): `claims.payout_account` is the claimant's connected account at
 * the processor (`acct_…`; null: the payment is recorded by hand), `paid_amount_minor` what has
 * been paid on the claim (minor units), `payout_failure` the processor's refusal of the last
 * payout, if any (the claim stays approved).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('claims', (t) => {
    t.string('payout_account', 64).nullable();
    t.bigInteger('paid_amount_minor').notNullable().defaultTo(0);
    t.text('payout_failure').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('claims', (t) => {
    t.dropColumn('payout_failure');
    t.dropColumn('paid_amount_minor');
    t.dropColumn('payout_account');
  });
}
