/**
 * A bundle sold as a bundle: the purchase records which bundle it was quoted from (`bundle_id`, set
 * to null if the bundle is deleted later) and the bundle's customer-facing name at the sale
 * (`bundle_name`, kept for the purchase's life), and each item whether it came from that bundle
 * (`in_bundle`). One bundle per purchase; items bought beside it have `in_bundle` false. Written
 * only by src/purchases/repository.ts, when the quote is priced (and copied to each renewal).
 *
 * Purchase search finds a purchase by its bundle's name: the view behind `purchase_search` gains the
 * normalised bundle name as one more line of `search_doc` (the name is written with the purchase,
 * before it is paid, so the refresh on payment picks it up; the triggers are unchanged).
 */
import type { Knex } from 'knex';

/** The view behind `purchase_search` (as 20261122001100 defined it), with the bundle's name as one more line of `search_doc` or without. */
function searchSourceView(withBundleName: boolean): string {
  const bundleLine = withBundleName ? ', purchase_search_normalize(p.bundle_name)' : '';
  return `
    create or replace view purchase_search_source as
    select p.id as purchase_id, p.root_account_id, p.agent_id, p.mode, p.paid_at,
           coalesce(items.ids, '{}') as product_line_ids,
           concat_ws(E'\\n',
             purchase_search_normalize(b.first_name || ' ' || b.last_name),
             purchase_search_normalize(b.email),
             case when p.buyer_email is not null and lower(p.buyer_email) is distinct from lower(b.email)
                  then purchase_search_normalize(p.buyer_email) end,
             certs.numbers${bundleLine}) as search_doc
      from purchases p
      left join buyers b on b.id = p.buyer_id
      left join lateral (
        select array_agg(distinct i.product_line_id order by i.product_line_id) as ids
          from purchase_items i where i.purchase_id = p.id) items on true
      left join lateral (
        select string_agg(purchase_search_normalize(c.certificate_number), E'\\n' order by c.id) as numbers
          from certificates c where c.purchase_id = p.id) certs on true
     where p.paid_at is not null`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('purchases', (t) => {
    t.integer('bundle_id').nullable().references('id').inTable('bundles').onDelete('SET NULL');
    t.string('bundle_name', 255).nullable();
    t.index(['bundle_id']);
  });
  await knex.schema.alterTable('purchase_items', (t) => {
    t.boolean('in_bundle').notNullable().defaultTo(false);
  });
  await knex.raw(searchSourceView(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(searchSourceView(false));
  await knex.schema.alterTable('purchase_items', (t) => {
    t.dropColumn('in_bundle');
  });
  await knex.schema.alterTable('purchases', (t) => {
    t.dropIndex(['bundle_id']);
    t.dropColumn('bundle_name');
    t.dropColumn('bundle_id');
  });
}
