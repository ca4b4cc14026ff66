/**
 * What each certificate version printed, and which certificates each zip holds.
 *
 * - `certificates.printed` (jsonb, written once with the PDF's storage): the coverage window
 *   (`starts_at`, `ends_at` ISO 8601 UTC, `time_zone`, `local_label`), the named insured's name and
 *   the holder's name as that version printed them. An endorsement that moves a covered unit or
 *   corrects the named insured changes the unit and the item; a past version's verification page
 *   and listing read what it printed from here, not the unit as it is now. Null: not stored yet
 *   (the unit's own values are what it will print).
 * - `certificate_archives.certificate_ids` (integer[]): the certificates a zip holds. A zip is
 *   current for the purchase's certificates only when it holds every current certificate in
 *   force; getCertificates answers `pending` until it does (new versions being zipped). Null for a
 *   zip recorded before this column: taken as current.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table certificates add column printed jsonb');
  await knex.raw('alter table certificate_archives add column certificate_ids integer[]');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table certificate_archives drop column certificate_ids');
  await knex.raw('alter table certificates drop column printed');
}
