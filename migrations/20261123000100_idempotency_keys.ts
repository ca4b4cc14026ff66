/**
 * Idempotency keys: the first response to a POST or PATCH sent with an `Idempotency-Key` header,
 * kept for 24 hours per (root account, key mode, idempotency key) so a retry replays it instead
 * of running again.
 *
 * - state `in_progress` while the first request runs (the row is the lock: its primary key lets
 *   one request of a key run at a time), then `completed` with response_status/response_body.
 * - request_hash: SHA-256 of method, path with query and raw body; a retry must match it.
 * - lock_token: which request holds an `in_progress` row, so a request taken over after it
 *   stalled (locked_at older than the takeover limit) cannot overwrite its successor's result.
 * - expires_at: 24 h after the first request; expired rows are pruned and never replayed.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('CASCADE');
    t.string('mode', 8).notNullable();
    t.string('idempotency_key', 255).notNullable();
    t.string('method', 8).notNullable();
    t.text('path').notNullable();
    t.string('request_hash', 64).notNullable();
    t.string('state', 16).notNullable().defaultTo('in_progress');
    t.uuid('lock_token').notNullable();
    t.timestamp('locked_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.integer('response_status').nullable();
    t.text('response_body').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['root_account_id', 'mode', 'idempotency_key']);
    t.index(['expires_at']);
  });
  await knex.raw(`alter table idempotency_keys add constraint idempotency_keys_state_check check (state in ('in_progress','completed'))`);
  await knex.raw(`alter table idempotency_keys add constraint idempotency_keys_mode_check check (mode in ('live','test'))`);
  await knex.raw(
    `alter table idempotency_keys add constraint idempotency_keys_response_check check ((state = 'completed') = (response_status is not null and response_body is not null))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idempotency_keys');
}
