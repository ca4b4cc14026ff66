/**
 * A subscription's end, kept on its first purchase (the row that holds the processor
 * subscription; its renewals point at it):
 * - `subscription_cancel_at_period_end`: renewals stop when the paid period ends (asked through
 *   the API, or seen on the processor's `customer.subscription.updated`);
 * - `subscription_ended_at`: when the subscription ended (cancelled at once, or the processor's
 *   `customer.subscription.deleted`: period end reached, unpaid invoice, dashboard);
 * - `subscription_cancelled_by`: `agency` (the API) or `processor` (seen on its events).
 * Written by src/purchases/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.boolean('subscription_cancel_at_period_end').notNullable().defaultTo(false);
    t.timestamp('subscription_ended_at', { useTz: true }).nullable();
    t.string('subscription_cancelled_by', 16).nullable();
  });
  await knex.raw(
    `alter table purchases add constraint purchases_subscription_cancelled_by_check check (subscription_cancelled_by is null or subscription_cancelled_by in ('agency', 'processor'))`,
  );
  await knex.raw(
    `create index purchases_subscriptions_idx on purchases (root_account_id, mode, id desc) where billing = 'subscription' and renewal_of_purchase_id is null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index purchases_subscriptions_idx');
  await knex.raw('alter table purchases drop constraint purchases_subscription_cancelled_by_check');
  await knex.schema.alterTable('purchases', (t) => {
    t.dropColumns('subscription_cancel_at_period_end', 'subscription_ended_at', 'subscription_cancelled_by');
  });
}
