/**
 * Where an insurer's or MGA's adjusters are told of new claims (issue 51, item 3):
 * `root_accounts.claims_notification_email` (null: nobody is emailed), set by the party's own key
 * through `PATCH /api/v1/account` (`settings.claims_notification_email`).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table root_accounts add column claims_notification_email text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table root_accounts drop column claims_notification_email');
}
