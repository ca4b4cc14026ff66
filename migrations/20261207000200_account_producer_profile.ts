/**
 * The agency's producer block (issue 50, item 1): `root_accounts.producer_profile`, JSON
 * `{ address, phone, email, licence_number }` (wire names, each null when unset; the column is null
 * until first set through `PATCH /api/v1/account`), printed in every certificate's producer box.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table root_accounts add column producer_profile jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table root_accounts drop column producer_profile');
}
