/**
 * The buyer's proof-of-coverage email after payment (issue 48, item 9).
 * - `root_accounts.send_buyer_email_after_payment`: the account's setting, on unless turned off
 *   (`PATCH /api/v1/account`): once a purchase's certificates are issued, its buyer is emailed the
 *   proof of coverage (with the withdrawal link when the purchase offers one).
 * - `proof_of_coverage_emails.after_payment`: the row of that email; one per purchase at most
 *   (a partial unique index), so a retried or repeated issuance never sends it twice. Such a row
 *   was requested by no API key (`api_key_id` null).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table root_accounts add column send_buyer_email_after_payment boolean not null default true');
  await knex.raw('alter table proof_of_coverage_emails alter column api_key_id drop not null');
  await knex.raw('alter table proof_of_coverage_emails add column after_payment boolean not null default false');
  await knex.raw(
    'create unique index proof_of_coverage_emails_after_payment_once on proof_of_coverage_emails (purchase_id) where after_payment',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index proof_of_coverage_emails_after_payment_once');
  await knex.raw('alter table proof_of_coverage_emails drop column after_payment');
  await knex.raw('delete from proof_of_coverage_emails where api_key_id is null');
  await knex.raw('alter table proof_of_coverage_emails alter column api_key_id set not null');
  await knex.raw('alter table root_accounts drop column send_buyer_email_after_payment');
}
