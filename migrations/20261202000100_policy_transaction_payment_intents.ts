/**
 * A `charge.refunded` event names only a payment intent: an endorsement's charge is found by the
 * payment intent its ledger row keeps, so that column gets an index (partial: most rows, the
 * cancellations, have none). `refund` rows (dashboard refunds) now keep the payment intent they
 * were made on too; those written before are the sale's. Written only by src/purchases/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'create index policy_transactions_payment_intent_idx on policy_transactions (payment_intent_id) where payment_intent_id is not null',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index policy_transactions_payment_intent_idx');
}
