/**
 * Certificates of insurance and their archives (spec §1.3, §2.4, §4.5; issue 6), and teammate
 * ids (spec §4.5: certificate bodies carry the caller's account id).
 *
 * - agents.idp_teammate_uuid: the public id of a teammate (an agent under a root account), the
 *   account id `/platform-agency-certs` bodies carry.
 * - certificates: one row per covered unit, planned before rendering. `certificate_number` is
 *   chosen once when the row is planned (unique per covered unit), so every retry of issuance
 *   gets the same number. `issue_date` is fixed at planning too. The storage columns are filled
 *   when the PDF is stored: size in bytes, SHA-256 as lowercase hex.
 * - certificate_archives: the per-payment zip and one zip per product line of a purchase; the
 *   per-product row carries `proof_code`, the id of its proof-of-coverage (QR) page.
 * - purchases.certificates_issued_at: set once every certificate and zip is verified in storage;
 *   getCertificates lists certificates only from then on.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table agents add column idp_teammate_uuid uuid not null unique default gen_random_uuid()');

  await knex.schema.createTable('certificates', (t) => {
    t.increments('id').primary();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.integer('purchase_item_id').notNullable().references('id').inTable('purchase_items').onDelete('CASCADE');
    t.integer('covered_unit_id').notNullable().unique().references('id').inTable('covered_units').onDelete('CASCADE');
    t.integer('product_line_id').notNullable().references('id').inTable('product_lines').onDelete('RESTRICT');
    t.string('certificate_number', 64).notNullable().unique();
    t.date('issue_date').notNullable();
    t.string('storage_key', 512).nullable();
    t.integer('size_bytes').nullable();
    t.string('sha256', 64).nullable();
    t.timestamp('stored_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['purchase_id']);
  });
  await knex.raw(
    `alter table certificates add constraint certificates_stored_check check ((storage_key is null) = (stored_at is null) and (storage_key is null) = (sha256 is null) and (storage_key is null) = (size_bytes is null))`,
  );

  await knex.schema.createTable('certificate_archives', (t) => {
    t.increments('id').primary();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.string('kind', 8).notNullable();
    t.integer('product_line_id').nullable().references('id').inTable('product_lines').onDelete('RESTRICT');
    t.string('proof_code', 64).nullable().unique();
    t.string('storage_key', 512).notNullable().unique();
    t.integer('size_bytes').notNullable();
    t.string('sha256', 64).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table certificate_archives add constraint certificate_archives_kind_check check (
    (kind = 'payment' and product_line_id is null and proof_code is null) or (kind = 'product' and product_line_id is not null and proof_code is not null))`);
  await knex.raw(
    'create unique index certificate_archives_one_per_kind on certificate_archives (purchase_id, kind, coalesce(product_line_id, 0))',
  );

  await knex.schema.alterTable('purchases', (t) => {
    t.timestamp('certificates_issued_at', { useTz: true }).nullable();
    t.index(['agent_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.dropIndex(['agent_id', 'created_at']);
    t.dropColumn('certificates_issued_at');
  });
  await knex.schema.dropTable('certificate_archives');
  await knex.schema.dropTable('certificates');
  await knex.raw('alter table agents drop column idp_teammate_uuid');
}
