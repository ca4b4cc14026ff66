/**
 * Parties by appointment (issue 49, item 1):
 *
 * - `root_accounts.register_number`: an insurer's NAIC company code or an MGA's register number
 *   (null for an agency, or a party created without one). Written by src/accounts/repository.ts.
 * - `appointments`: an insurer or MGA root account (`party_root_account_id`) appointing an agency
 *   root account (`agency_root_account_id`) to sell for it, once per pair. A product may name only
 *   a party that appointed its agency. Written only by src/parties/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table root_accounts add column register_number varchar(64)');
  await knex.schema.createTable('appointments', (t) => {
    t.increments('id').primary();
    t.integer('party_root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.integer('agency_root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['party_root_account_id', 'agency_root_account_id']);
    t.index(['agency_root_account_id']);
  });
  await knex.raw('alter table appointments add constraint appointments_not_self check (party_root_account_id <> agency_root_account_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('appointments');
  await knex.raw('alter table root_accounts drop column register_number');
}
