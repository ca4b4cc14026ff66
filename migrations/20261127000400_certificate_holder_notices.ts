/**
 * `certificate_holder_notices`: the emails telling a certificate holder (one that asked,
 * `notify_on_cancellation`, with an email) that a cancellation voided certificates issued to it; one
 * per holder and cancellation, sent by the holder-notices workflow (queued → sent, or failed after
 * its retries). Written only by src/certificate-holders/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('certificate_holder_notices', (t) => {
    t.increments('id').primary();
    t.integer('certificate_holder_id').notNullable().references('id').inTable('certificate_holders').onDelete('CASCADE');
    t.integer('cancellation_id').notNullable().references('id').inTable('policy_transactions').onDelete('CASCADE');
    t.string('recipient', 320).notNullable();
    t.string('status', 16).notNullable().defaultTo('queued');
    t.integer('attempts').notNullable().defaultTo(0);
    t.string('message_id', 255).nullable();
    t.text('last_error').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('sent_at', { useTz: true }).nullable();
    t.unique(['certificate_holder_id', 'cancellation_id']);
  });
  await knex.raw(
    `alter table certificate_holder_notices add constraint certificate_holder_notices_status_check check (status in ('queued', 'sent', 'failed'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('certificate_holder_notices');
}
