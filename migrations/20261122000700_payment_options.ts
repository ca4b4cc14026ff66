/**
 * Payment options of spec §4.4 step 3 (issue: the purchase workflow, "Payment options").
 *
 * - buyer_payproc_customers: the processor customer of a buyer, one per buyer per mode (live and
 *   test are separate processor environments). Created with idempotency key
 *   `buyer-<id>-<mode>-customer`; the customer id is unique.
 * - purchase_direct_charges: each saved-card charge attempt of a purchase (spec §7.2: never
 *   retried blindly). A row is written *before* the processor is called, with the idempotency
 *   key and the exact parameters, so a retry after a lost response re-sends the same request
 *   (or retrieves the stored payment intent) instead of creating a second charge. `pending` =
 *   outcome unknown; `failed` = definitively not charged (declined or rejected). The partial
 *   unique index allows at most one attempt per purchase that is not `failed`.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('buyer_payproc_customers', (t) => {
    t.integer('buyer_id').notNullable().references('id').inTable('buyers').onDelete('RESTRICT');
    t.string('mode', 8).notNullable();
    t.string('payproc_customer_id', 255).notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['buyer_id', 'mode']);
  });
  await knex.raw(`alter table buyer_payproc_customers add constraint buyer_payproc_customers_mode_check check (mode in ('live','test'))`);

  await knex.schema.createTable('purchase_direct_charges', (t) => {
    t.increments('id').primary();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('RESTRICT');
    t.integer('attempt').notNullable();
    t.string('idempotency_key', 255).notNullable().unique();
    t.string('payproc_customer_id', 255).notNullable();
    t.string('payment_method_id', 255).notNullable();
    t.bigInteger('amount_minor').notNullable();
    t.string('currency', 3).notNullable();
    t.string('payment_intent_id', 255).nullable();
    t.string('status', 16).notNullable().defaultTo('pending');
    // why an attempt failed: `card_error` (declined), `invalid_request`, `not_completed` (the
    // payment intent ended unpaid) — and the processor's decline or error code
    t.string('failure_kind', 32).nullable();
    t.string('failure_code', 64).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['purchase_id', 'attempt']);
    t.index(['payment_intent_id']);
  });
  await knex.raw(
    `alter table purchase_direct_charges add constraint purchase_direct_charges_status_check check (status in ('pending','processing','succeeded','failed'))`,
  );
  await knex.raw(`create unique index purchase_direct_charges_one_live on purchase_direct_charges (purchase_id) where status <> 'failed'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('purchase_direct_charges');
  await knex.schema.dropTable('buyer_payproc_customers');
}
