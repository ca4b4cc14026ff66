/**
 * Priced holder endorsements:
 * - a product's endorsement terms gain the premium of naming a certificate holder additional
 *   insured and of waiving subrogation against one, each in integer minor units of the product's
 *   currency per covered unit (day or trip) the holder's certificates cover (0: free, the terms as
 *   they were); written only by src/products/repository.ts;
 * - an endorsement quote keeps the holder premiums it prices (`holder_premiums`, per unit: positive
 *   collected, negative given back); written only by src/endorsements/repository.ts;
 * - an endorsement in the ledger may give premium back (a holder's endorsement removed): its
 *   premium and total are then negative, with no platform fee;
 * - the ledger gains `refund` rows: money the processor reports refunded on the sale's charge that
 *   no cancellation or endorsement of ours explains (a refund made in the processor's dashboard),
 *   recorded when its `charge.refunded` event arrives;
 *   both written only by src/purchases/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('product_endorsement_terms', (t) => {
    t.integer('additional_insured_premium_minor').notNullable().defaultTo(0);
    t.integer('waiver_of_subrogation_premium_minor').notNullable().defaultTo(0);
  });
  await knex.raw(`alter table product_endorsement_terms add constraint product_endorsement_terms_premiums_check check (
    additional_insured_premium_minor >= 0 and waiver_of_subrogation_premium_minor >= 0)`);
  await knex.schema.alterTable('endorsements', (t) => {
    t.jsonb('holder_premiums').nullable();
  });
  await knex.raw('alter table policy_transactions drop constraint policy_transactions_check');
  await knex.raw(`alter table policy_transactions add constraint policy_transactions_check check (
    kind in ('cancellation', 'endorsement', 'refund')
    and status in ('scheduled', 'accepted', 'refund_pending', 'completed', 'refund_failed', 'rescinded')
    and tax_minor >= 0 and platform_fee_minor >= 0 and total_minor = premium_minor + tax_minor + platform_fee_minor
    and (premium_minor >= 0 or (kind = 'endorsement' and platform_fee_minor = 0)))`);
}

/**
 * Undoes the migration. Refuses (throws, changing nothing: the migration runs in a transaction)
 * while the ledger holds an endorsement that gave premium back (negative premium): the earlier
 * schema cannot hold it, and deleting it would lose the record of money refunded to a buyer.
 * `refund` rows (the processor dashboard's refunds) are deleted, as they have no earlier form.
 */
export async function down(knex: Knex): Promise<void> {
  const negative = await knex('policy_transactions').where({ kind: 'endorsement' }).where('premium_minor', '<', 0).count('* as n').first();
  if (Number(negative?.n ?? 0) > 0)
    throw new Error(
      `cannot roll back priced holder endorsements: ${negative!.n} endorsement row(s) in policy_transactions gave premium back ` +
        '(premium_minor < 0), which the earlier schema cannot hold; nothing was changed',
    );
  await knex('policy_transactions').where({ kind: 'refund' }).delete();
  await knex.raw('alter table policy_transactions drop constraint policy_transactions_check');
  await knex.raw(`alter table policy_transactions add constraint policy_transactions_check check (
    kind in ('cancellation', 'endorsement')
    and status in ('scheduled', 'accepted', 'refund_pending', 'completed', 'refund_failed', 'rescinded')
    and premium_minor >= 0 and tax_minor >= 0 and platform_fee_minor >= 0 and total_minor = premium_minor + tax_minor + platform_fee_minor)`);
  await knex.schema.alterTable('endorsements', (t) => {
    t.dropColumn('holder_premiums');
  });
  await knex.raw('alter table product_endorsement_terms drop constraint product_endorsement_terms_premiums_check');
  await knex.schema.alterTable('product_endorsement_terms', (t) => {
    t.dropColumn('additional_insured_premium_minor');
    t.dropColumn('waiver_of_subrogation_premium_minor');
  });
}
