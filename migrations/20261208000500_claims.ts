/**
 * Claims (issue 51, items 1 and 2): a first notice of loss against one covered unit of a paid
 * purchase, owned by its workflow `claim-<id>` from then on.
 *
 * - `product_claim_settings`: a product line's claim types and acknowledgement deadline (business
 *   days); a product without a row uses the defaults (src/claims/rules.ts).
 * - `claims`: one row per claim; `status` is written by the claim's workflow (its activities) after
 *   the filing; amounts in minor units of the purchase's currency. `incident_day` is the incident's
 *   local calendar day in the unit's time zone: at most one open (not closed) claim per covered
 *   unit and day (`claims_open_unit_day`), so a duplicate is refused naming the open one.
 *   `request_key` names the API request that filed it (a retry with the same Idempotency-Key
 *   answers the same claim).
 * - `claim_events`: the claim's history, who did what and when; `seq` is the claim workflow's
 *   change number, so a retried activity records its change once.
 * - `claim_attachments`: files the claimant uploads straight to storage by signed URL; `status`
 *   `awaiting_upload` until the stored object is found within the declared type and size limits.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('product_claim_settings', (t) => {
    t.integer('product_line_id').primary().references('id').inTable('product_lines').onDelete('CASCADE');
    t.jsonb('claim_types').notNullable();
    t.integer('acknowledgement_business_days').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    'alter table product_claim_settings add constraint product_claim_settings_days_check check (acknowledgement_business_days between 1 and 30)',
  );

  await knex.schema.createTable('claims', (t) => {
    t.increments('id').primary();
    t.integer('root_account_id').notNullable().references('id').inTable('root_accounts');
    t.string('mode', 8).notNullable();
    t.integer('agent_id').nullable();
    t.integer('api_key_id').nullable();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.integer('covered_unit_id').notNullable().references('id').inTable('covered_units').onDelete('CASCADE');
    t.integer('product_line_id').notNullable();
    t.string('certificate_number', 64).nullable();
    t.timestamp('incident_at', { useTz: true }).notNullable();
    t.string('incident_day', 10).notNullable();
    t.string('claim_type', 64).notNullable();
    t.text('description').notNullable();
    t.jsonb('claimant').notNullable();
    t.bigInteger('amount_claimed_minor').notNullable();
    t.string('currency', 3).notNullable();
    t.string('status', 20).notNullable().defaultTo('submitted');
    t.bigInteger('approved_amount_minor').nullable();
    t.text('decision_reason').nullable();
    t.string('denial_code', 64).nullable();
    t.string('payment_reference', 255).nullable();
    t.timestamp('acknowledgement_due_at', { useTz: true }).notNullable();
    t.timestamp('acknowledgement_overdue_at', { useTz: true }).nullable();
    t.timestamp('acknowledged_at', { useTz: true }).nullable();
    t.timestamp('decided_at', { useTz: true }).nullable();
    t.timestamp('paid_at', { useTz: true }).nullable();
    t.timestamp('closed_at', { useTz: true }).nullable();
    t.integer('seq').notNullable().defaultTo(0);
    t.string('request_key', 64).nullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['purchase_id', 'id']);
    t.index(['root_account_id', 'mode', 'status']);
  });
  await knex.raw(
    `alter table claims add constraint claims_status_check check (status in ('submitted','acknowledged','under_review','approved','denied','paid','closed','reopened'))`,
  );
  await knex.raw('alter table claims add constraint claims_amount_check check (amount_claimed_minor > 0)');
  await knex.raw(
    'alter table claims add constraint claims_approved_amount_check check (approved_amount_minor is null or (approved_amount_minor >= 0 and approved_amount_minor <= amount_claimed_minor))',
  );
  await knex.raw(`create unique index claims_open_unit_day on claims (covered_unit_id, incident_day) where status <> 'closed'`);

  await knex.schema.createTable('claim_events', (t) => {
    t.bigIncrements('id').primary();
    t.integer('claim_id').notNullable().references('id').inTable('claims').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.string('kind', 40).notNullable();
    t.string('from_status', 20).nullable();
    t.string('to_status', 20).nullable();
    t.string('actor_type', 20).notNullable();
    t.string('actor_id', 64).nullable();
    t.text('note').nullable();
    t.jsonb('data').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['claim_id', 'seq']);
  });

  await knex.schema.createTable('claim_attachments', (t) => {
    t.increments('id').primary();
    t.integer('claim_id').notNullable().references('id').inTable('claims').onDelete('CASCADE');
    t.string('file_name', 255).notNullable();
    t.string('content_type', 100).notNullable();
    t.integer('declared_size_bytes').notNullable();
    t.string('storage_key', 512).notNullable().unique();
    t.string('status', 20).notNullable().defaultTo('awaiting_upload');
    t.integer('size_bytes').nullable();
    t.string('rejection_reason', 255).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('checked_at', { useTz: true }).nullable();
    t.index(['claim_id', 'id']);
  });
  await knex.raw(
    `alter table claim_attachments add constraint claim_attachments_status_check check (status in ('awaiting_upload','received','rejected'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('claim_attachments');
  await knex.schema.dropTable('claim_events');
  await knex.schema.dropTable('claims');
  await knex.schema.dropTable('product_claim_settings');
}
