/**
 * When each API key value was last used (issue 53, item 6): `api_key_secrets.last_used_at`, set
 * by the gateway when the value authenticates a request, at most once a minute per value and
 * app process (so the portal shows "last used" to the minute); null until the first use.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table api_key_secrets add column last_used_at timestamptz');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table api_key_secrets drop column last_used_at');
}
