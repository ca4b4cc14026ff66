/**
 * Emailed checkout links (`emailCheckoutLink`), one row per email sent to a buyer: which purchase,
 * which checkout session and address, and when. A call within CHECKOUT_LINK_EMAIL_DEDUPE_SECONDS
 * of a send of the same session to the same address answers that send instead of mailing again
 * (an agency's retry or double click must not flood a buyer). Written only through
 * src/payments/repository.ts; a row is written before the email goes out and removed if it
 * could not be sent.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('checkout_link_emails', (t) => {
    t.bigIncrements('id').primary();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('RESTRICT');
    t.string('checkout_session_id', 255).notNullable();
    t.string('recipient', 320).notNullable();
    t.timestamp('sent_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // The newest send of a purchase's session to an address (the dedupe lookup).
  await knex.raw(
    'create index checkout_link_emails_lookup_idx on checkout_link_emails (purchase_id, checkout_session_id, recipient, sent_at desc)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('checkout_link_emails');
}
