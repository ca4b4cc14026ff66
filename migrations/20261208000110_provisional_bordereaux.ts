/**
 * Provisional bordereaux (issue 49, item 4): in test mode the current month to date may be asked
 * for, each request a bordereau of its own.
 *
 * - `bordereaux.provisional`: true for a month-to-date bordereau (test mode only), false for the
 *   final one of a month that is over.
 * - `bordereaux.covers_until`: a provisional bordereau's end (exclusive): the moment it was asked
 *   for; null for a final one (the whole month).
 * - The one-per-month rule now holds for final bordereaux only (a partial unique index), so a
 *   month's provisional ones are never the final one, and there may be many.
 *
 * Written only by src/reports/repository.ts. `down` deletes the provisional rows first (the
 * restored unique constraint would not hold with them).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table bordereaux add column provisional boolean not null default false');
  await knex.raw('alter table bordereaux add column covers_until timestamptz');
  await knex.raw(`alter table bordereaux add constraint bordereaux_provisional_check check (
    (provisional and mode = 'test' and covers_until is not null) or (not provisional and covers_until is null))`);
  // The old one-per-month constraint, by lookup: its generated name is longer than PostgreSQL keeps.
  await knex.raw(`do $$ declare c text; begin
    select conname into c from pg_constraint where conrelid = 'bordereaux'::regclass and contype = 'u';
    execute format('alter table bordereaux drop constraint %I', c);
  end $$`);
  await knex.raw(
    'create unique index bordereaux_final_unique on bordereaux (root_account_id, party_root_account_id, month, mode) where not provisional',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('delete from bordereaux where provisional');
  await knex.raw('drop index bordereaux_final_unique');
  await knex.raw(
    'alter table bordereaux add constraint bordereaux_month_unique unique (root_account_id, party_root_account_id, month, mode)',
  );
  await knex.raw('alter table bordereaux drop constraint bordereaux_provisional_check');
  await knex.raw('alter table bordereaux drop column covers_until');
  await knex.raw('alter table bordereaux drop column provisional');
}
