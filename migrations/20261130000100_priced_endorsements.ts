/**
 * Priced endorsements (policy lifecycle II: covered units added after the sale, the difference
 * collected before the change takes effect) and refunds across several payments of one purchase.
 *
 * - `endorsements.status` gains `awaiting_payment` (a positive difference is being collected: a
 *   saved card being charged, or a checkout link sent), `payment_failed` (the card was declined;
 *   nothing changed) and `refunded` (paid through a link after the purchase changed so that the
 *   quote no longer holds: the payment went back, nothing changed). The payment columns say how
 *   it was collected (`payment_method` `saved_card` | `checkout_link`, the card's payment method,
 *   the payment intent, the checkout session and its link), and `policy_transaction_id` the
 *   ledger row of an endorsement that moved premium, `additions` the units it adds as quoted
 *   (per item, each with its premium). Written by src/endorsements/repository.ts.
 * - `policy_transactions.kind` gains `endorsement` (premium collected, minor units, with the
 *   payment intent that collected it and the units it added in `covered_unit_ids`/`breakdown`);
 *   `refunds` records how a cancellation's refund was split over the purchase's payment intents
 *   ([{ paymentIntentId, amountMinor, refundId }], planned once, then created one by one).
 * - `covered_units.added_by_transaction_id`: the endorsement that added a unit (null: sold with the
 *   purchase). Written by src/purchases/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table endorsements drop constraint endorsements_check');
  await knex.schema.alterTable('endorsements', (t) => {
    t.string('payment_method', 16).nullable();
    t.string('payment_method_id', 255).nullable();
    t.string('payment_intent_id', 255).nullable();
    t.string('checkout_session_id', 255).nullable().unique();
    t.text('checkout_url').nullable();
    t.timestamp('checkout_expires_at', { useTz: true }).nullable();
    t.timestamp('paid_at', { useTz: true }).nullable();
    t.string('failure_code', 64).nullable();
    t.text('failure_message').nullable();
    t.integer('policy_transaction_id').nullable().references('id').inTable('policy_transactions').onDelete('RESTRICT');
    t.jsonb('additions').nullable();
  });
  await knex.raw(`alter table endorsements add constraint endorsements_check check (
    status in ('quoted', 'awaiting_payment', 'applied', 'payment_failed', 'refunded') and (status = 'applied') = (applied_at is not null)
    and total_difference_minor = premium_difference_minor + platform_fee_difference_minor
    and (payment_method is null or payment_method in ('saved_card', 'checkout_link')))`);
  await knex.raw('alter table policy_transactions drop constraint policy_transactions_check');
  await knex.raw(`alter table policy_transactions add constraint policy_transactions_check check (
    kind in ('cancellation', 'endorsement')
    and status in ('scheduled', 'accepted', 'refund_pending', 'completed', 'refund_failed', 'rescinded')
    and premium_minor >= 0 and tax_minor >= 0 and platform_fee_minor >= 0 and total_minor = premium_minor + tax_minor + platform_fee_minor)`);
  await knex.schema.alterTable('policy_transactions', (t) => {
    t.string('payment_intent_id', 255).nullable();
    t.jsonb('refunds').nullable();
  });
  await knex.schema.alterTable('covered_units', (t) => {
    t.integer('added_by_transaction_id').nullable().references('id').inTable('policy_transactions').onDelete('RESTRICT');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('covered_units', (t) => {
    t.dropColumn('added_by_transaction_id');
  });
  await knex.schema.alterTable('policy_transactions', (t) => {
    t.dropColumns('payment_intent_id', 'refunds');
  });
  await knex.raw('alter table policy_transactions drop constraint policy_transactions_check');
  await knex.raw(`alter table policy_transactions add constraint policy_transactions_check check (
    kind in ('cancellation')
    and status in ('scheduled', 'accepted', 'refund_pending', 'completed', 'refund_failed', 'rescinded')
    and premium_minor >= 0 and tax_minor >= 0 and platform_fee_minor >= 0 and total_minor = premium_minor + tax_minor + platform_fee_minor)`);
  await knex.raw('alter table endorsements drop constraint endorsements_check');
  await knex.schema.alterTable('endorsements', (t) => {
    t.dropColumns(
      'payment_method',
      'payment_method_id',
      'payment_intent_id',
      'checkout_session_id',
      'checkout_url',
      'checkout_expires_at',
      'paid_at',
      'failure_code',
      'failure_message',
      'policy_transaction_id',
      'additions',
    );
  });
  await knex.raw(`alter table endorsements add constraint endorsements_check check (
    status in ('quoted', 'applied') and (status = 'applied') = (applied_at is not null)
    and total_difference_minor = premium_difference_minor + platform_fee_difference_minor)`);
}
