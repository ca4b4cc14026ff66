/**
 * Checkout state of a purchase and the processor's webhook events (issue: the purchase workflow).
 * payproc_events stores each event once (its id is the primary key), so a redelivered event is
 * recognised; the purchase columns are written only by workflow activities.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.string('checkout_session_id', 255).nullable().unique();
    t.text('checkout_url').nullable();
    t.timestamp('checkout_expires_at', { useTz: true }).nullable();
    t.string('payment_intent_id', 255).nullable();
    t.timestamp('paid_at', { useTz: true }).nullable();
    t.string('buyer_email', 320).nullable();
  });
  await knex.raw('create index purchases_payment_intent_idx on purchases (payment_intent_id) where payment_intent_id is not null');

  await knex.schema.createTable('payproc_events', (t) => {
    t.string('id', 255).primary();
    t.string('type', 128).notNullable();
    t.boolean('livemode').notNullable();
    t.integer('purchase_id').nullable().references('id').inTable('purchases').onDelete('SET NULL');
    t.jsonb('payload').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['purchase_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('payproc_events');
  await knex.raw('drop index purchases_payment_intent_idx');
  await knex.schema.alterTable('purchases', (t) => {
    t.dropColumns('checkout_session_id', 'checkout_url', 'checkout_expires_at', 'payment_intent_id', 'paid_at', 'buyer_email');
  });
}
