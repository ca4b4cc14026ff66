/**
 * The purchase's single owner (issue 13).
 *
 * - purchases.status: constrained to the known statuses; `failed` is new (a processor refused the
 *   purchase for good: declined or invalid request), with `failure_reason` and `failed_at`.
 * - purchases.return_token: an unguessable token (32 random bytes, base64url) that the buyer's
 *   success and cancel pages carry, so a page shows one purchase and cannot be enumerated by id.
 *   Existing rows get one too.
 * - api_keys.checkout_success_url / checkout_cancel_url: where the processor sends the buyer
 *   after paying or cancelling, per key (agent); the root account's columns are the default,
 *   and the service's own pages when neither is set.
 * - purchases_checkout_session_idx already exists (unique); getCertificates by purchase id uses
 *   the primary key.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.text('failure_reason').nullable();
    t.timestamp('failed_at', { useTz: true }).nullable();
    t.string('return_token', 64).nullable().unique();
  });
  // Two v4 UUIDs (PostgreSQL 13+ built-in): 244 random bits; new rows get 32 random bytes from Node.
  await knex.raw(
    `update purchases set return_token = replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '') where return_token is null`,
  );
  await knex.schema.alterTable('api_keys', (t) => {
    t.string('checkout_success_url', 2048).nullable();
    t.string('checkout_cancel_url', 2048).nullable();
  });
  await knex.raw(
    `alter table purchases add constraint purchases_status_check check (status in ('quoted','awaiting_payment','paid','awaiting_certificates','issued','expired','failed','refunded'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table purchases drop constraint purchases_status_check');
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropColumn('checkout_cancel_url');
    t.dropColumn('checkout_success_url');
  });
  await knex.schema.alterTable('purchases', (t) => {
    t.dropColumn('return_token');
    t.dropColumn('failed_at');
    t.dropColumn('failure_reason');
  });
}
