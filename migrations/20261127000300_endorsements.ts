/**
 * Endorsements (mid-term changes of a purchase, policy lifecycle II): `endorsements` holds each
 * quoted change (`eq_…`, its preview: the premium difference in minor units, the certificates it
 * would reissue, the purchase's state fingerprint it was priced on, when it expires) and, once
 * carried out through the purchase's policy workflow, `applied` with the certificate numbers it
 * reissued (old → new). Written only by src/endorsements/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('endorsements', (t) => {
    t.increments('id').primary();
    t.string('quote_id', 40).notNullable().unique();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.integer('api_key_id').nullable();
    t.string('status', 16).notNullable();
    t.jsonb('changes').notNullable();
    t.string('currency', 3).notNullable();
    t.bigInteger('premium_difference_minor').notNullable();
    t.bigInteger('platform_fee_difference_minor').notNullable();
    t.bigInteger('total_difference_minor').notNullable();
    t.jsonb('reissues').notNullable();
    t.string('fingerprint', 64).notNullable();
    t.jsonb('reissued').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('applied_at', { useTz: true }).nullable();
    t.index(['purchase_id', 'created_at']);
  });
  await knex.raw(`alter table endorsements add constraint endorsements_check check (
    status in ('quoted', 'applied') and (status = 'applied') = (applied_at is not null)
    and total_difference_minor = premium_difference_minor + platform_fee_difference_minor)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('endorsements');
}
