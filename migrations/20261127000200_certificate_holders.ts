/**
 * Certificate holders and certificate versions (policy lifecycle II):
 *
 * - `certificate_holders`: who a purchase's certificates are issued to. The holder the buyer
 *   answered at quote time is the first one (`source = 'answers'`, scoped to its own purchase item,
 *   one per item); holders added through the API (`source = 'api'`) hold certificates of every
 *   item that were still active (not ended, not cancelled) at `active_units_at` (the purchase's
 *   "now" when it was added: its test clock for a test purchase that has one); `request_key` is the
 *   API's id of the request that added it, so a retried add adds it once. `removed_at` set: the holder was removed and its certificates voided. Written only by
 *   src/certificate-holders/repository.ts. Rows written before this migration are backfilled from
 *   `purchase_items.certificate_holder`.
 * - `certificates.certificate_holder_id`: the holder a certificate is issued to (null: the item
 *   asked for no holder, "to whom it may concern"). `revision` counts the versions of one
 *   certificate (1 for the first); a change never edits a stored PDF: it marks the current version
 *   `superseded_at` / `superseded_by_id` and plans the next. One current version per covered unit
 *   and holder (a partial unique index; before, one certificate per covered unit).
 * - `proof_of_coverage_emails.certificate_holder_id`: an email of one holder's own certificates
 *   (null: every certificate in force).
 * - `certificate_archives.superseded_at`: a zip replaced by one built over a changed set of
 *   certificates (its proof-of-coverage code keeps resolving); one current zip per purchase, kind
 *   and product line.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('certificate_holders', (t) => {
    t.increments('id').primary();
    t.integer('purchase_id').notNullable().references('id').inTable('purchases').onDelete('CASCADE');
    t.integer('purchase_item_id').nullable().references('id').inTable('purchase_items').onDelete('CASCADE');
    t.string('source', 8).notNullable();
    t.string('name', 200).notNullable();
    t.jsonb('address').notNullable();
    t.string('email', 254).nullable();
    t.boolean('additional_insured').notNullable().defaultTo(false);
    t.boolean('waiver_of_subrogation').notNullable().defaultTo(false);
    t.text('description_of_operations').nullable();
    t.boolean('notify_on_cancellation').notNullable().defaultTo(false);
    // The request that added it (a retried add finds it), and the purchase's "now" then: units still active at that instant get its certificates.
    t.string('request_key', 64).nullable();
    t.timestamp('active_units_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('removed_at', { useTz: true }).nullable();
    t.index(['purchase_id']);
    t.unique(['purchase_id', 'request_key']);
  });
  await knex.raw(`alter table certificate_holders add constraint certificate_holders_source_check check (
    (source = 'answers' and purchase_item_id is not null) or (source = 'api' and purchase_item_id is null))`);
  await knex.raw(
    `create unique index certificate_holders_one_answer_per_item on certificate_holders (purchase_item_id) where source = 'answers'`,
  );
  await knex.raw(`insert into certificate_holders (purchase_id, purchase_item_id, source, name, address, active_units_at, created_at)
    select i.purchase_id, i.id, 'answers', left(i.certificate_holder ->> 'name', 200), coalesce(i.certificate_holder -> 'address', '{}'::jsonb), p.created_at, p.created_at
      from purchase_items i join purchases p on p.id = i.purchase_id
     where i.certificate_holder is not null and jsonb_typeof(i.certificate_holder) = 'object'`);

  await knex.schema.alterTable('certificates', (t) => {
    t.integer('certificate_holder_id').nullable().references('id').inTable('certificate_holders').onDelete('RESTRICT');
    t.integer('revision').notNullable().defaultTo(1);
    t.timestamp('superseded_at', { useTz: true }).nullable();
    t.integer('superseded_by_id').nullable().references('id').inTable('certificates').onDelete('RESTRICT');
  });
  await knex.raw(
    `alter table certificates add constraint certificates_revision_check check (revision >= 1 and (superseded_by_id is null or superseded_at is not null))`,
  );
  await knex.raw(`update certificates c set certificate_holder_id = h.id
                    from certificate_holders h where h.purchase_item_id = c.purchase_item_id and h.source = 'answers'`);
  await knex.raw('alter table certificates drop constraint certificates_covered_unit_id_unique');
  await knex.raw(
    `create unique index certificates_current_per_unit_and_holder on certificates (covered_unit_id, coalesce(certificate_holder_id, 0)) where superseded_at is null`,
  );
  await knex.raw('create index certificates_covered_unit on certificates (covered_unit_id)');
  await knex.raw('create index certificates_holder on certificates (certificate_holder_id) where certificate_holder_id is not null');

  await knex.schema.alterTable('certificate_archives', (t) => {
    t.timestamp('superseded_at', { useTz: true }).nullable();
  });
  await knex.schema.alterTable('proof_of_coverage_emails', (t) => {
    t.integer('certificate_holder_id').nullable().references('id').inTable('certificate_holders').onDelete('RESTRICT');
  });
  await knex.raw('drop index certificate_archives_one_per_kind');
  await knex.raw(
    'create unique index certificate_archives_one_per_kind on certificate_archives (purchase_id, kind, coalesce(product_line_id, 0)) where superseded_at is null',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('proof_of_coverage_emails', (t) => {
    t.dropColumn('certificate_holder_id');
  });
  await knex.raw('drop index certificate_archives_one_per_kind');
  await knex.raw('delete from certificate_archives where superseded_at is not null');
  await knex.raw(
    'create unique index certificate_archives_one_per_kind on certificate_archives (purchase_id, kind, coalesce(product_line_id, 0))',
  );
  await knex.schema.alterTable('certificate_archives', (t) => {
    t.dropColumn('superseded_at');
  });
  await knex.raw('drop index certificates_holder');
  await knex.raw('drop index certificates_covered_unit');
  await knex.raw('drop index certificates_current_per_unit_and_holder');
  await knex.raw(
    "delete from certificates where superseded_at is null and certificate_holder_id in (select id from certificate_holders where source = 'api')",
  );
  await knex.raw('update certificates set superseded_by_id = null');
  await knex.raw('delete from certificates where superseded_at is not null');
  await knex.raw('alter table certificates add constraint certificates_covered_unit_id_unique unique (covered_unit_id)');
  await knex.schema.alterTable('certificates', (t) => {
    t.dropColumns('certificate_holder_id', 'revision', 'superseded_at', 'superseded_by_id');
  });
  await knex.schema.dropTable('certificate_holders');
}
