/**
 * Changes to a policy after its sale, kept, never edited away (ARCHITECTURE: the policy after the
 * sale): `policy_transactions`, one row per change (today: a cancellation) with its premium
 * movement in minor units (the refund: premium, tax, platform fee, total; per unit in `breakdown`), its effective time,
 * who asked and why, the quote it carries out, and its progress (`accepted` → `refund_pending` →
 * `completed`, or `refund_failed` when the processor refuses the refund for good); the processor's
 * refund id once created. Covered units point at the cancellation that took them
 * (`cancellation_id`, set when it is accepted, so no other change can take them) and say when
 * they were cancelled (`cancelled_at`, once the refund succeeded); a certificate says when it was
 * voided (`voided_at`). Written by src/purchases/repository.ts (transactions, covered units) and
 * src/certificates/repository.ts (certificates).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('policy_transactions', (t) => {
    t.increments('id').primary();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.string('kind', 32).notNullable();
    t.string('status', 32).notNullable();
    t.string('quote_id', 40).nullable().unique().references('id').inTable('cancellation_quotes').onDelete('RESTRICT');
    t.integer('api_key_id').notNullable().references('id').inTable('api_keys').onDelete('RESTRICT');
    t.string('requested_by', 16).notNullable();
    t.text('reason').nullable();
    t.specificType('covered_unit_ids', 'integer[]').notNullable();
    t.timestamp('effective_at', { useTz: true }).notNullable();
    t.string('currency', 3).notNullable();
    t.bigInteger('premium_minor').notNullable();
    t.bigInteger('tax_minor').notNullable();
    t.bigInteger('platform_fee_minor').notNullable();
    t.bigInteger('total_minor').notNullable();
    t.jsonb('breakdown').notNullable();
    t.string('refund_id', 255).nullable();
    t.text('failure_reason').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('completed_at', { useTz: true }).nullable();
    t.index(['purchase_id', 'created_at']);
  });
  await knex.raw(`alter table policy_transactions add constraint policy_transactions_check check (
    kind in ('cancellation')
    and status in ('accepted', 'refund_pending', 'completed', 'refund_failed')
    and premium_minor >= 0 and tax_minor >= 0 and platform_fee_minor >= 0 and total_minor = premium_minor + tax_minor + platform_fee_minor)`);
  await knex.schema.alterTable('covered_units', (t) => {
    t.integer('cancellation_id').nullable().references('id').inTable('policy_transactions').onDelete('RESTRICT');
    t.timestamp('cancelled_at', { useTz: true }).nullable();
  });
  await knex.schema.alterTable('certificates', (t) => {
    t.timestamp('voided_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('certificates', (t) => {
    t.dropColumn('voided_at');
  });
  await knex.schema.alterTable('covered_units', (t) => {
    t.dropColumns('cancellation_id', 'cancelled_at');
  });
  await knex.schema.dropTable('policy_transactions');
}
