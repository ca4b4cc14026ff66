/**
 * Personal-data erasure and retention (issue 52, item 3).
 * - `root_accounts.personal_data_retention_years`: how long after a policy's last coverage ends
 *   the names on it are kept once its buyer asked to be erased (default 7 years, 1 to 30), then
 *   pseudonymised.
 * - `buyer_erasures`: one row per buyer, account and mode whose erasure the agency asked for
 *   (`POST /api/v1/buyers/{id}/erasure`), written only by src/buyers/erasure-repository.ts.
 *   `retained`: the names on the policies as they were (purchase item id → named insured name),
 *   the insurance record's copy kept out of every answer and page until `retention_ends_at`;
 *   `pseudonymised_at`: when that copy was dropped (null until then).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table root_accounts add column personal_data_retention_years smallint not null default 7');
  await knex.raw(
    'alter table root_accounts add constraint root_accounts_retention_years_check check (personal_data_retention_years between 1 and 30)',
  );
  await knex.schema.createTable('buyer_erasures', (t) => {
    t.increments('id').primary();
    t.integer('buyer_id').notNullable().references('id').inTable('buyers').onDelete('RESTRICT');
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('CASCADE');
    t.string('mode', 8).notNullable();
    t.integer('api_key_id').nullable();
    t.timestamp('erased_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.integer('purchases').notNullable();
    t.jsonb('retained').notNullable();
    t.timestamp('retention_ends_at', { useTz: true }).notNullable();
    t.timestamp('pseudonymised_at', { useTz: true }).nullable();
    t.unique(['buyer_id', 'root_account_id', 'mode']);
    t.index(['retention_ends_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('buyer_erasures');
  await knex.raw('alter table root_accounts drop column personal_data_retention_years');
}
