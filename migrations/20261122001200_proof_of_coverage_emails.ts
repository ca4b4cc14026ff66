/**
 * Emailed proof of coverage (spec §4.5 teamEmailProofofCoverage; issue 7): one row per
 * recipient of each request, with its delivery status. `status`: `queued` (accepted, the
 * sending workflow runs), `sent` (the relay accepted it; `message_id` and `sent_at` set),
 * `failed` (every attempt failed; `last_error` says why). `attempts` counts SMTP attempts.
 * `delivery`: `attachments` (the PDFs attached) or `links` (signed download links only).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('proof_of_coverage_emails', (t) => {
    t.increments('id').primary();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.integer('api_key_id').notNullable().references('id').inTable('api_keys').onDelete('RESTRICT');
    t.integer('requested_by_agent_id').nullable().references('id').inTable('agents').onDelete('RESTRICT');
    t.string('recipient', 320).notNullable();
    t.text('note').nullable();
    t.string('status', 16).notNullable().defaultTo('queued');
    t.string('delivery', 16).nullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.string('message_id', 255).nullable();
    t.text('last_error').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('sent_at', { useTz: true }).nullable();
    t.index(['purchase_id']);
  });
  await knex.raw(
    `alter table proof_of_coverage_emails add constraint proof_of_coverage_emails_status_check check (status in ('queued','sent','failed'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('proof_of_coverage_emails');
}
