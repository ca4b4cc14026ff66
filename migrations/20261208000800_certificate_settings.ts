/**
 * ACORD-25-grade certificate content (issue 50, item 1):
 *
 * - `product_certificate_settings`: per product, how its certificates describe the coverage: the
 *   type of insurance (`coverage_type`, e.g. "Commercial General Liability"), `coverage_trigger`
 *   (occurrence | claims_made), `aggregate_basis` (policy | location | project), the
 *   additional-insured and waiver-of-subrogation endorsements by form reference and edition
 *   (e.g. "CG 20 26 04 13"), whether primary and non-contributory wording is granted, and the
 *   further insurers B–F (root account ids of insurers, in order). No row: the defaults.
 *   Written only by src/products/certificate-settings-repository.ts.
 * - `account_signatures`: an agency's authorized representative on its certificates: the name and
 *   the signature image it uploaded (PNG or JPEG, in object storage under `storage_key`, with its
 *   content type, size and SHA-256). Written only by src/accounts/signature-repository.ts.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('product_certificate_settings', (t) => {
    t.integer('product_line_id').primary().references('id').inTable('product_lines').onDelete('CASCADE');
    t.string('coverage_type', 40).notNullable();
    t.string('coverage_trigger', 16).notNullable();
    t.string('aggregate_basis', 16).notNullable();
    t.string('additional_insured_form', 24);
    t.string('waiver_form', 24);
    t.boolean('primary_non_contributory').notNullable().defaultTo(false);
    t.specificType('other_insurer_ids', 'integer[]').notNullable().defaultTo('{}');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    "alter table product_certificate_settings add constraint pcs_trigger check (coverage_trigger in ('occurrence', 'claims_made'))",
  );
  await knex.raw(
    "alter table product_certificate_settings add constraint pcs_basis check (aggregate_basis in ('policy', 'location', 'project'))",
  );
  await knex.raw('alter table product_certificate_settings add constraint pcs_insurers check (cardinality(other_insurer_ids) <= 5)');
  await knex.schema.createTable('account_signatures', (t) => {
    t.integer('root_account_id').primary().references('id').inTable('root_accounts').onDelete('CASCADE');
    t.string('representative_name', 120).notNullable();
    t.string('storage_key', 300).notNullable();
    t.string('content_type', 32).notNullable();
    t.integer('size_bytes').notNullable();
    t.string('sha256', 64).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('account_signatures');
  await knex.schema.dropTable('product_certificate_settings');
}
