/**
 * The agency portal (served under /portal, staff signed in through the identity provider):
 * - `agents.portal_role`: what a teammate may do there, `admin` (keys, webhook endpoints, return
 *   URLs, lifecycle actions) or `viewer` (read only, the default). Written by
 *   src/accounts/repository.ts.
 * - `portal_sessions`: server-side sessions; the cookie holds only a random session id, stored
 *   here as its SHA-256 (a copy of the table signs nobody in). `data` is the session (teammate,
 *   account, CSRF secret, sign-in time); `expires_at` the idle timeout, pushed forward on every
 *   request. Written by src/accounts/portal-session-repository.ts.
 * - `operator_audit_log.client_address`: from which address a portal change came (null for the
 *   command lines), and an index to list one account's entries newest first.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('agents', (t) => {
    t.string('portal_role', 16).notNullable().defaultTo('viewer');
  });
  await knex.raw(`alter table agents add constraint agents_portal_role_check check (portal_role in ('admin','viewer'))`);
  await knex.schema.createTable('portal_sessions', (t) => {
    t.string('id_hash', 64).primary();
    t.jsonb('data').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['expires_at']);
  });
  await knex.schema.alterTable('operator_audit_log', (t) => {
    t.string('client_address', 64).nullable();
  });
  await knex.raw('create index operator_audit_log_account_idx on operator_audit_log (root_account_id, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists operator_audit_log_account_idx');
  await knex.schema.alterTable('operator_audit_log', (t) => {
    t.dropColumn('client_address');
  });
  await knex.schema.dropTable('portal_sessions');
  await knex.schema.alterTable('agents', (t) => {
    t.dropColumn('portal_role');
  });
}
