/**
 * Root accounts (agencies, MGAs, insurers), their agents, and API keys (spec §5, ARCHITECTURE §4).
 * A key has many secret values over its life: rotation adds a new value and gives the old ones
 * an expiry (the grace period). Only SHA-256 hashes of values are stored.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('root_accounts', (t) => {
    t.increments('id').primary();
    t.string('slug', 64).notNullable().unique();
    t.string('name', 255).notNullable();
    t.string('kind', 16).notNullable().defaultTo('agency');
    t.string('checkout_success_url', 2048).nullable();
    t.string('checkout_cancel_url', 2048).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table root_accounts add constraint root_accounts_kind_check check (kind in ('agency','mga','insurer'))`);

  await knex.schema.createTable('agents', (t) => {
    t.increments('id').primary();
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.string('name', 255).notNullable();
    t.string('email', 320).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['root_account_id', 'email']);
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.increments('id').primary();
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('RESTRICT');
    t.string('name', 255).notNullable();
    t.text('description').notNullable().defaultTo('');
    t.string('mode', 8).notNullable();
    t.integer('agent_id').nullable().references('id').inTable('agents').onDelete('RESTRICT');
    t.integer('platform_fee_bps').nullable();
    t.string('status', 16).notNullable().defaultTo('active');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true }).nullable();
    t.index(['root_account_id']);
  });
  await knex.raw(`alter table api_keys add constraint api_keys_mode_check check (mode in ('live','test'))`);
  await knex.raw(`alter table api_keys add constraint api_keys_status_check check (status in ('active','frozen','deleted'))`);
  await knex.raw(
    `alter table api_keys add constraint api_keys_platform_fee_check check (platform_fee_bps is null or (platform_fee_bps between 0 and 10000))`,
  );

  await knex.schema.createTable('api_key_secrets', (t) => {
    t.increments('id').primary();
    t.integer('api_key_id').notNullable().references('id').inTable('api_keys').onDelete('CASCADE');
    // hex SHA-256 of the full key value; the value itself is never stored.
    t.string('secret_hash', 64).notNullable().unique();
    // first characters (prefix + 4) so a person can tell values apart in a listing.
    t.string('display_prefix', 24).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // null while current; set by rotate to the end of the grace period.
    t.timestamp('expires_at', { useTz: true }).nullable();
    t.index(['api_key_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_key_secrets');
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('agents');
  await knex.schema.dropTable('root_accounts');
}
