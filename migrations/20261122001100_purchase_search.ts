/**
 * Purchase search behind `searchTeammatePurchasedProducts` (spec §4.5; issue 7 "purchase search").
 *
 * - purchase_search: one row per PAID purchase (purchases.paid_at not null), holding the scope
 *   columns copied from the purchase (root account, teammate, mode, paid_at), the distinct
 *   product line ids of its items, and `search_doc`: the lower-cased, whitespace-collapsed buyer
 *   name ("first last"), buyer email(s) and certificate numbers, one per line. A search phrase
 *   never holds a line break, so a LIKE pattern cannot match across two fields.
 *   Product NAMES are not copied: they are matched at query time against product_lines (a small
 *   table) and the hits looked up through `product_line_ids`, so renaming a product updates
 *   nothing here and is searchable at once.
 * - purchase_search_source: the view that computes those rows from the source tables; the
 *   backfill and every trigger refresh go through it, so there is one definition of a row.
 * - Triggers keep the rows in step with the writers (quotes createPurchase, the payment
 *   activity, certificate planning, buyer edits) without those writers knowing: purchases
 *   (insert or update of paid_at, buyer, email, teammate, mode, account), purchase_items and
 *   certificates (statement-level on insert and delete with transition tables, so planning 300
 *   certificates refreshes the purchase once; row-level on updates of the searched columns
 *   only, so marking a PDF stored costs nothing), buyers (name or email changed). A refresh
 *   reads the committed state of the other tables, which is enough because the writers run in
 *   order (items with the purchase, payment, then certificate planning after it).
 * - Indexes (measured by `npm run bench -- search` at 1 000 000 purchases): btree per scope in
 *   result order (newest paid first) for listing, paging and capped counts; GIN trigram over
 *   `search_doc` for substring search and GIN over `product_line_ids` for product-name hits,
 *   both led by `agent_id` for the teammate scope; GIN trigram over the normalised product name.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pg_trgm');
  // btree_gin: plain columns (agent_id) inside GIN indexes. Left installed by down (harmless).
  await knex.raw('create extension if not exists btree_gin');

  // The one normalisation of searchable text: lower case, runs of whitespace and control
  // characters collapsed to one space, trimmed. The API applies the same rule to the search text.
  await knex.raw(`
    create function purchase_search_normalize(t text) returns text
      language sql immutable parallel safe
      as $$ select btrim(regexp_replace(lower(t), '[[:space:][:cntrl:]]+', ' ', 'g')) $$`);

  await knex.raw(`
    create table purchase_search (
      purchase_id integer primary key references purchases (id) on delete cascade,
      root_account_id integer not null,
      agent_id integer,
      mode varchar(8) not null,
      paid_at timestamptz not null,
      product_line_ids integer[] not null default '{}',
      search_doc text not null
    )`);
  // Finer LIKE selectivity estimates (the planner samples the histogram with the pattern), so
  // it can tell a common word (walk the newest-first index) from a rare one (trigram index).
  await knex.raw('alter table purchase_search alter column search_doc set statistics 1000');

  await knex.raw(`
    create view purchase_search_source as
    select p.id as purchase_id, p.root_account_id, p.agent_id, p.mode, p.paid_at,
           coalesce(items.ids, '{}') as product_line_ids,
           concat_ws(E'\\n',
             purchase_search_normalize(b.first_name || ' ' || b.last_name),
             purchase_search_normalize(b.email),
             case when p.buyer_email is not null and lower(p.buyer_email) is distinct from lower(b.email)
                  then purchase_search_normalize(p.buyer_email) end,
             certs.numbers) as search_doc
      from purchases p
      left join buyers b on b.id = p.buyer_id
      left join lateral (
        select array_agg(distinct i.product_line_id order by i.product_line_id) as ids
          from purchase_items i where i.purchase_id = p.id) items on true
      left join lateral (
        select string_agg(purchase_search_normalize(c.certificate_number), E'\\n' order by c.id) as numbers
          from certificates c where c.purchase_id = p.id) certs on true
     where p.paid_at is not null`);

  // Recomputes the rows of the given purchases: written when paid, removed when not (or gone);
  // an unchanged row is not rewritten (no dead tuple, no index churn).
  await knex.raw(`
    create function purchase_search_refresh(ids integer[]) returns void
      language plpgsql as $$
    begin
      if ids is null or cardinality(ids) = 0 then return; end if;
      delete from purchase_search s
       where s.purchase_id = any (ids)
         and not exists (select 1 from purchases p where p.id = s.purchase_id and p.paid_at is not null);
      insert into purchase_search as s (purchase_id, root_account_id, agent_id, mode, paid_at, product_line_ids, search_doc)
      select v.purchase_id, v.root_account_id, v.agent_id, v.mode, v.paid_at, v.product_line_ids, v.search_doc
        from purchase_search_source v
       where v.purchase_id = any (ids)
      on conflict (purchase_id) do update
         set root_account_id = excluded.root_account_id, agent_id = excluded.agent_id, mode = excluded.mode,
             paid_at = excluded.paid_at, product_line_ids = excluded.product_line_ids, search_doc = excluded.search_doc
       where (s.root_account_id, s.agent_id, s.mode, s.paid_at, s.product_line_ids, s.search_doc)
             is distinct from
             (excluded.root_account_id, excluded.agent_id, excluded.mode, excluded.paid_at, excluded.product_line_ids, excluded.search_doc);
    end $$`);

  await knex.raw(`
    create function purchase_search_on_purchase() returns trigger language plpgsql as $$
    begin
      perform purchase_search_refresh(array[new.id]);
      return null;
    end $$`);
  await knex.raw(`
    create trigger purchase_search_purchase_insert after insert on purchases
      for each row when (new.paid_at is not null) execute function purchase_search_on_purchase()`);
  await knex.raw(`
    create trigger purchase_search_purchase_update
      after update of paid_at, buyer_id, buyer_email, agent_id, mode, root_account_id on purchases
      for each row when ((old.paid_at, old.buyer_id, old.buyer_email, old.agent_id, old.mode, old.root_account_id)
                         is distinct from (new.paid_at, new.buyer_id, new.buyer_email, new.agent_id, new.mode, new.root_account_id))
      execute function purchase_search_on_purchase()`);

  // Children with a purchase_id (purchase_items, certificates): one refresh per statement.
  await knex.raw(`
    create function purchase_search_on_child_insert() returns trigger language plpgsql as $$
    begin
      perform purchase_search_refresh(array(select distinct purchase_id from new_rows));
      return null;
    end $$`);
  await knex.raw(`
    create function purchase_search_on_child_delete() returns trigger language plpgsql as $$
    begin
      perform purchase_search_refresh(array(select distinct purchase_id from old_rows));
      return null;
    end $$`);
  await knex.raw(`
    create function purchase_search_on_child_update() returns trigger language plpgsql as $$
    begin
      perform purchase_search_refresh(array[old.purchase_id, new.purchase_id]);
      return null;
    end $$`);
  for (const [table, column] of [
    ['purchase_items', 'product_line_id'],
    ['certificates', 'certificate_number'],
  ] as const) {
    await knex.raw(`
      create trigger purchase_search_${table}_insert after insert on ${table}
        referencing new table as new_rows for each statement execute function purchase_search_on_child_insert()`);
    await knex.raw(`
      create trigger purchase_search_${table}_delete after delete on ${table}
        referencing old table as old_rows for each statement execute function purchase_search_on_child_delete()`);
    await knex.raw(`
      create trigger purchase_search_${table}_update after update of ${column}, purchase_id on ${table}
        for each row when ((old.${column}, old.purchase_id) is distinct from (new.${column}, new.purchase_id))
        execute function purchase_search_on_child_update()`);
  }

  await knex.raw(`
    create function purchase_search_on_buyer() returns trigger language plpgsql as $$
    begin
      perform purchase_search_refresh(array(select id from purchases where buyer_id = new.id and paid_at is not null));
      return null;
    end $$`);
  await knex.raw(`
    create trigger purchase_search_buyer_update after update of first_name, last_name, email on buyers
      for each row when ((old.first_name, old.last_name, old.email) is distinct from (new.first_name, new.last_name, new.email))
      execute function purchase_search_on_buyer()`);

  // Backfill before the indexes: one bulk build is much cheaper than row-by-row maintenance.
  await knex.raw('insert into purchase_search select * from purchase_search_source order by paid_at, purchase_id');

  await knex.raw(
    'create index purchase_search_account_paid_idx on purchase_search (root_account_id, mode, paid_at desc, purchase_id desc)',
  );
  await knex.raw(
    'create index purchase_search_agent_paid_idx on purchase_search (root_account_id, agent_id, mode, paid_at desc, purchase_id desc) where agent_id is not null',
  );
  // agent_id leads both GIN indexes (btree_gin), so a teammate's search intersects inside the
  // index: 1 ms instead of 27 ms for a BitmapAnd with the teammate's 43 000-row btree range.
  await knex.raw('create index purchase_search_doc_trgm_idx on purchase_search using gin (agent_id, search_doc gin_trgm_ops)');
  await knex.raw('create index purchase_search_products_idx on purchase_search using gin (agent_id, product_line_ids)');
  await knex.raw(
    'create index product_lines_search_name_trgm_idx on product_lines using gin (purchase_search_normalize(customer_name) gin_trgm_ops)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index product_lines_search_name_trgm_idx');
  await knex.raw('drop trigger purchase_search_buyer_update on buyers');
  for (const table of ['purchase_items', 'certificates']) {
    for (const event of ['insert', 'delete', 'update']) await knex.raw(`drop trigger purchase_search_${table}_${event} on ${table}`);
  }
  await knex.raw('drop trigger purchase_search_purchase_insert on purchases');
  await knex.raw('drop trigger purchase_search_purchase_update on purchases');
  for (const fn of ['on_buyer', 'on_child_update', 'on_child_delete', 'on_child_insert', 'on_purchase']) {
    await knex.raw(`drop function purchase_search_${fn}()`);
  }
  await knex.raw('drop function purchase_search_refresh(integer[])');
  await knex.raw('drop view purchase_search_source');
  await knex.raw('drop table purchase_search');
  await knex.raw('drop function purchase_search_normalize(text)');
}
