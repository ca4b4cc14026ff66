/**
 * Cancellations dated in the future, their rescission, and the test clock:
 * - `policy_transactions.status` gains `scheduled` (accepted with its units taken, waiting for
 *   its effective time; the policy workflow's durable timer then carries it out) and `rescinded`
 *   (withdrawn before its effective time: its units are given back, nothing was refunded);
 *   `rescinded_at` says when.
 * - `purchases.test_clock_at`: a test-mode purchase's frozen "now" for its policy's life (whether
 *   a covered unit has started, when a cancellation takes effect), moved forward only by the test
 *   helper; null for every live purchase (the check forbids one there).
 * Written by src/purchases/repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table policy_transactions drop constraint policy_transactions_check');
  await knex.raw(`alter table policy_transactions add constraint policy_transactions_check check (
    kind in ('cancellation')
    and status in ('scheduled', 'accepted', 'refund_pending', 'completed', 'refund_failed', 'rescinded')
    and premium_minor >= 0 and tax_minor >= 0 and platform_fee_minor >= 0 and total_minor = premium_minor + tax_minor + platform_fee_minor)`);
  await knex.schema.alterTable('policy_transactions', (t) => {
    t.timestamp('rescinded_at', { useTz: true }).nullable();
  });
  await knex.schema.alterTable('purchases', (t) => {
    t.timestamp('test_clock_at', { useTz: true }).nullable();
  });
  await knex.raw(`alter table purchases add constraint purchases_test_clock_check check (test_clock_at is null or mode = 'test')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table purchases drop constraint purchases_test_clock_check');
  await knex.schema.alterTable('purchases', (t) => {
    t.dropColumn('test_clock_at');
  });
  await knex.schema.alterTable('policy_transactions', (t) => {
    t.dropColumn('rescinded_at');
  });
  await knex.raw('alter table policy_transactions drop constraint policy_transactions_check');
  await knex.raw(`alter table policy_transactions add constraint policy_transactions_check check (
    kind in ('cancellation')
    and status in ('accepted', 'refund_pending', 'completed', 'refund_failed')
    and premium_minor >= 0 and tax_minor >= 0 and platform_fee_minor >= 0 and total_minor = premium_minor + tax_minor + platform_fee_minor)`);
}
