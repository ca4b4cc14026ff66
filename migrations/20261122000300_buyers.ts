/**
 * Buyers, their connections to sellers (root accounts) and short-lived buyer access tokens
 * (spec §4.3, §5.5, §5.7; ARCHITECTURE §3 step 1).
 *
 * - buyers: one global row per person, keyed for clients by `idp_accnt_uuid`. Emails are stored
 *   normalised (trimmed, lower case) and unique case-insensitively (`lower(email)`), so
 *   `INSERT … ON CONFLICT ((lower(email)))` makes concurrent creates of one buyer collapse.
 * - buyer_connections: the buyer known to one seller account, with the attribution of the first
 *   connect (API key, the key's agent, the attribution code `query_param`); unique per pair.
 * - buyer_access_tokens: only the hex SHA-256 of each token, bound to a buyer and the root
 *   account of the key that obtained it; `expires_at` enforces the TTL.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('buyers', (t) => {
    t.increments('id').primary();
    t.uuid('idp_accnt_uuid').notNullable().unique().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('email').notNullable();
    t.text('first_name').notNullable();
    t.text('last_name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index buyers_email_lower_unique on buyers (lower(email))');

  await knex.schema.createTable('buyer_connections', (t) => {
    t.increments('id').primary();
    t.integer('buyer_id').notNullable().references('id').inTable('buyers').onDelete('RESTRICT');
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.integer('api_key_id').nullable().references('id').inTable('api_keys').onDelete('RESTRICT');
    // the agent attached to the key at connect time (spec §5.1), for attribution
    t.integer('agent_id').nullable().references('id').inTable('agents').onDelete('RESTRICT');
    // the attribution code sent with the first connect (spec §4.3)
    t.text('query_param').notNullable().defaultTo('');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['buyer_id', 'root_account_id']);
    t.index(['root_account_id']);
  });

  await knex.schema.createTable('buyer_access_tokens', (t) => {
    t.bigIncrements('id').primary();
    t.integer('buyer_id').notNullable().references('id').inTable('buyers').onDelete('CASCADE');
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('CASCADE');
    // hex SHA-256 of the token; the token itself is never stored
    t.specificType('token_hash', 'char(64)').notNullable().unique();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['buyer_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('buyer_access_tokens');
  await knex.schema.dropTable('buyer_connections');
  await knex.schema.dropTable('buyers');
}
