/**
 * Refunds (issue: the purchase workflow, `charge.refunded`): how much of a purchase has been
 * refunded, in minor units, and when it became fully refunded.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.bigInteger('refunded_minor').notNullable().defaultTo(0);
    t.timestamp('refunded_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.dropColumns('refunded_minor', 'refunded_at');
  });
}
