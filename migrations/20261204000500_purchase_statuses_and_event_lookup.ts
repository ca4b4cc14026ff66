/**
 * A purchase's status tells its cancellations (issue 48 item 6): `partly_cancelled` (issued, some
 * covered units cancelled, the rest in force) and `cancelled` (every covered unit cancelled, final)
 * join the statuses `purchases.status` may hold. The owner workflow (`policy-<id>`) sets them after
 * each completed cancellation; purchases issued before, whose units were cancelled already, get
 * theirs here (their PurchaseStatus search attribute keeps `issued` until their next change).
 * The events of one purchase are listed by `GET /api/v1/events?purchase_id=` (an index on
 * `agency_events (purchase_id, created_at)`, the account and mode compared on its rows).
 */
import type { Knex } from 'knex';

const BEFORE = `'quoted','awaiting_payment','paid','awaiting_certificates','issued','expired','failed','refunded'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table purchases drop constraint purchases_status_check');
  await knex.raw(
    `alter table purchases add constraint purchases_status_check check (status in (${BEFORE},'partly_cancelled','cancelled'))`,
  );
  await knex.raw(
    `update purchases p set status = case when u.cancelled = u.total then 'cancelled' else 'partly_cancelled' end, updated_at = now()
       from (select purchase_id, count(*) as total, count(cancelled_at) as cancelled from covered_units group by purchase_id) u
      where u.purchase_id = p.id and p.status = 'issued' and u.cancelled > 0`,
  );
  await knex.raw('create index agency_events_purchase_idx on agency_events (purchase_id, created_at) where purchase_id is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index agency_events_purchase_idx');
  await knex.raw(`update purchases set status = 'issued', updated_at = now() where status in ('partly_cancelled', 'cancelled')`);
  await knex.raw('alter table purchases drop constraint purchases_status_check');
  await knex.raw(`alter table purchases add constraint purchases_status_check check (status in (${BEFORE}))`);
}
