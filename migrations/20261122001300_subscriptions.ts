/**
 * Subscription purchases (spec §4.4 "subscription product"; issue 5 "Subscription products").
 *
 * - purchases.billing: `one_time` (a payment-mode checkout) or `subscription` (a subscription-mode
 *   checkout of recurring products, billed monthly).
 * - purchases.payproc_subscription_id: the processor subscription, recorded from the paid
 *   checkout session's event; renewals are found by it.
 * - purchases.payproc_invoice_id: the processor invoice a purchase was paid by, when known
 *   (every renewal; unique, so a redelivered `invoice.paid` never makes a second renewal).
 * - purchases.renewal_of_purchase_id / renewal_period: a renewal is a purchase of its own (its
 *   payment, its certificates, its zips) made from the original one for billing period
 *   `renewal_period` (1 = the first renewal after the checkout's period).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.string('billing', 16).notNullable().defaultTo('one_time');
    t.string('payproc_subscription_id', 255).nullable();
    t.string('payproc_invoice_id', 255).nullable().unique();
    t.integer('renewal_of_purchase_id').nullable().references('id').inTable('purchases').onDelete('RESTRICT');
    t.integer('renewal_period').nullable();
    t.unique(['renewal_of_purchase_id', 'renewal_period']);
  });
  await knex.raw(`alter table purchases add constraint purchases_billing_check check (billing in ('one_time','subscription'))`);
  await knex.raw(
    `alter table purchases add constraint purchases_renewal_check check ((renewal_of_purchase_id is null) = (renewal_period is null) and (renewal_period is null or renewal_period >= 1))`,
  );
  await knex.raw(
    'create index purchases_subscription_idx on purchases (payproc_subscription_id) where payproc_subscription_id is not null',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index purchases_subscription_idx');
  await knex.raw('alter table purchases drop constraint purchases_renewal_check');
  await knex.raw('alter table purchases drop constraint purchases_billing_check');
  await knex.schema.alterTable('purchases', (t) => {
    t.dropUnique(['renewal_of_purchase_id', 'renewal_period']);
    t.dropColumns('billing', 'payproc_subscription_id', 'payproc_invoice_id', 'renewal_of_purchase_id', 'renewal_period');
  });
}
