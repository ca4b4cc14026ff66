/**
 * The portal's adjuster role (issue 51, item 3): `agents.portal_role` may also be `adjuster`, a
 * teammate of an insurer's or MGA's account who reads the portal like a viewer and decides the
 * claims of the products naming that party (acknowledge, start review, approve, deny). Written by
 * src/accounts/repository.ts. Down: adjusters become viewers first.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table agents drop constraint agents_portal_role_check');
  await knex.raw(`alter table agents add constraint agents_portal_role_check check (portal_role in ('admin','viewer','adjuster'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`update agents set portal_role = 'viewer' where portal_role = 'adjuster'`);
  await knex.raw('alter table agents drop constraint agents_portal_role_check');
  await knex.raw(`alter table agents add constraint agents_portal_role_check check (portal_role in ('admin','viewer'))`);
}
