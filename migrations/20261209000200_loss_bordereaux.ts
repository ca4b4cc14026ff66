/**
 * The loss bordereau beside each premium bordereau (issue 51, item 5): `bordereaux.loss`, once the
 * bordereau is ready, `{ files: { csv, xlsx } (object key, size, SHA-256), rows, totals }` of its
 * month's claims (src/reports/loss-bordereau.ts); null for a bordereau generated before, or still
 * generating. Written with the rest of the ready bordereau by its one writer (src/reports/repository.ts).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table bordereaux add column loss jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table bordereaux drop column loss');
}
