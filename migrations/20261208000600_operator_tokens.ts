/**
 * Operators named (issue 55, item 8): who runs `npm run ops` and who decodes Temporal payloads is
 * known, not declared.
 *
 * - `operator_tokens`: one per person (`name`: their email or handle), issued and revoked with
 *   `npm run ops -- issue-operator-token | revoke-operator-token`. Only the token's hex SHA-256 is
 *   stored (`token_hash`, unique), like API keys; `prefix` (`opk_` and four characters) names it in
 *   listings. `created_by` / `revoked_by` are the operators who issued and revoked it; `revoked_at`
 *   set means it no longer names anyone; `last_used_at` is its latest use (a command or a decode).
 *   At most one live token per name (case-insensitive). Written only by src/operators/repository.ts.
 * - `operator_audit_log.actor_via`: how the actor was identified (`operator_token`, `os_user`,
 *   `codec_token`, `temporal_ui`; null for the portal and key CLI rows, which name their actor
 *   their own way).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('operator_tokens', (t) => {
    t.increments('id').primary();
    t.string('name', 200).notNullable();
    t.string('token_hash', 64).notNullable().unique();
    t.string('prefix', 16).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.string('created_by', 200).notNullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.string('revoked_by', 200).nullable();
    t.timestamp('last_used_at', { useTz: true }).nullable();
  });
  await knex.raw(`alter table operator_tokens add constraint operator_tokens_name_check check (btrim(name) <> '')`);
  await knex.raw('create unique index operator_tokens_live_name_idx on operator_tokens (lower(name)) where revoked_at is null');
  await knex.schema.alterTable('operator_audit_log', (t) => {
    t.string('actor_via', 32).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('operator_audit_log', (t) => {
    t.dropColumn('actor_via');
  });
  await knex.schema.dropTable('operator_tokens');
}
