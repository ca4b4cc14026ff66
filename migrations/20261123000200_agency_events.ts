/**
 * Signed events to the agency: its webhook endpoints, the events this service records about its
 * purchases, and each event's delivery to each endpoint with every attempt.
 *
 * - webhook_endpoints: per root account and key mode; `url`, `enabled_events` (event types, or
 *   `*`), the endpoint's own signing secret (`whsec_…`, needed to sign, so stored; shown to the
 *   agency once), status `enabled` | `disabled` | `failing` (a delivery gave up after its retry
 *   window), `deleted_at` (deleted endpoints keep their delivery history).
 * - agency_events: `evt_…` ids, derived from what happened so a retried step records the same
 *   event once; type, livemode, the purchase, and the object as sent (`data`).
 * - event_deliveries: one per (event, endpoint), status `pending` | `succeeded` | `failed`,
 *   `resends` counts manual resends (each runs its own delivery workflow).
 * - event_delivery_attempts: one per HTTP attempt: status code or error, duration in ms.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.increments('id').primary();
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('CASCADE');
    t.string('mode', 8).notNullable();
    t.text('url').notNullable();
    t.specificType('enabled_events', 'text[]').notNullable();
    t.string('description', 500).notNullable().defaultTo('');
    t.string('secret', 100).notNullable();
    t.string('status', 16).notNullable().defaultTo('enabled');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true }).nullable();
    t.index(['root_account_id', 'mode']);
  });
  await knex.raw(`alter table webhook_endpoints add constraint webhook_endpoints_mode_check check (mode in ('live','test'))`);
  await knex.raw(
    `alter table webhook_endpoints add constraint webhook_endpoints_status_check check (status in ('enabled','disabled','failing'))`,
  );

  await knex.schema.createTable('agency_events', (t) => {
    t.string('id', 64).primary();
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts').onDelete('CASCADE');
    t.string('mode', 8).notNullable();
    t.string('type', 64).notNullable();
    t.integer('purchase_id').nullable().references('id').inTable('purchases').onDelete('SET NULL');
    t.jsonb('data').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['root_account_id', 'mode', 'created_at']);
  });

  await knex.schema.createTable('event_deliveries', (t) => {
    t.increments('id').primary();
    t.string('event_id', 64).notNullable().references('id').inTable('agency_events').onDelete('CASCADE');
    t.integer('endpoint_id').notNullable().references('id').inTable('webhook_endpoints').onDelete('CASCADE');
    t.string('status', 16).notNullable().defaultTo('pending');
    t.integer('resends').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.unique(['event_id', 'endpoint_id']);
  });
  await knex.raw(
    `alter table event_deliveries add constraint event_deliveries_status_check check (status in ('pending','succeeded','failed'))`,
  );

  await knex.schema.createTable('event_delivery_attempts', (t) => {
    t.increments('id').primary();
    t.integer('delivery_id').notNullable().references('id').inTable('event_deliveries').onDelete('CASCADE');
    t.timestamp('attempted_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.integer('response_status').nullable();
    t.string('error', 500).nullable();
    t.integer('duration_ms').notNullable();
    t.index(['delivery_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('event_delivery_attempts');
  await knex.schema.dropTable('event_deliveries');
  await knex.schema.dropTable('agency_events');
  await knex.schema.dropTable('webhook_endpoints');
}
