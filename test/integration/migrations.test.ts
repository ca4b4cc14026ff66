/**
 * The knex migrations (`migrations/`) on a PostgreSQL database of their own: every migration
 * applies in order on an empty database, every `down()` undoes its migration (all of them rolled
 * back, newest first, leave none of the service's tables), and applying them again afterwards
 * works, so a migration that cannot be undone or re-applied fails here rather than during a
 * deploy that needs to step back.
 */
import { createDb, migrateLatest, migrationConfig, type Db } from '../../src/db/knex';
import { loadConfig } from '../../src/config';

const name = `insurance_migrations_${process.pid}`;
let admin: Db;
let db: Db;

beforeAll(async () => {
  const config = loadConfig(process.env);
  admin = createDb(config);
  await admin.raw(`drop database if exists ${name}`);
  await admin.raw(`create database ${name}`);
  const url = new URL(config.DATABASE_URL);
  url.pathname = `/${name}`;
  db = createDb(loadConfig({ ...process.env, DATABASE_URL: url.toString() }));
});

afterAll(async () => {
  await db?.destroy();
  await admin?.raw(`drop database if exists ${name}`);
  await admin?.destroy();
});

const tables = async () =>
  (
    await db('pg_tables')
      .where({ schemaname: 'public' })
      .whereNotIn('tablename', ['knex_migrations', 'knex_migrations_lock'])
      .pluck('tablename')
  ).sort();

test('when every migration is applied, rolled back and applied again on an empty database, then each step succeeds and the rollback leaves no table behind', async () => {
  const applied = await migrateLatest(db);
  expect(applied.length).toBeGreaterThan(30);
  const schema = await tables();
  expect(schema).toEqual(expect.arrayContaining(['purchases', 'certificates', 'certificate_holders', 'policy_transactions']));

  const [, undone] = (await db.migrate.rollback(migrationConfig, true)) as [number, string[]];
  expect(undone).toEqual([...applied].reverse());
  expect(await tables()).toEqual([]);

  expect(await migrateLatest(db)).toEqual(applied);
  expect(await tables()).toEqual(schema);
}, 120_000);

test('when the ledger holds an endorsement that gave premium back, then rolling back priced holder endorsements refuses with the reason and changes nothing', async () => {
  await migrateLatest(db);
  const pricedHolders = '20261201000100_priced_holder_endorsements.ts';
  // The ledger row alone: its purchase and key are beside the point here (replica mode skips the
  // foreign-key triggers for this one transaction; the check constraints still apply).
  await db.transaction(async (trx) => {
    await trx.raw('set local session_replication_role = replica');
    await trx('policy_transactions').insert({
      purchase_id: 1,
      kind: 'endorsement',
      status: 'completed',
      api_key_id: 1,
      requested_by: 'agency',
      covered_unit_ids: [],
      effective_at: new Date('2026-11-01T00:00:00Z'),
      currency: 'usd',
      premium_minor: -1000,
      tax_minor: 0,
      platform_fee_minor: 0,
      total_minor: -1000,
      breakdown: JSON.stringify([]),
    });
  });
  const applied = await db('knex_migrations').orderBy('id').pluck('name');
  const newer = applied.slice(applied.indexOf(pricedHolders));
  expect(newer[0]).toBe(pricedHolders);
  // Roll back one at a time down to it: the newer ones undo, it refuses.
  for (const name of [...newer].reverse().slice(0, -1)) {
    const [, undone] = (await db.migrate.down(migrationConfig)) as [number, string[]];
    expect(undone).toEqual([name]);
  }
  await expect(db.migrate.down(migrationConfig)).rejects.toThrow(/cannot roll back priced holder endorsements: 1 endorsement row\(s\)/);
  expect(await db('knex_migrations').orderBy('id').pluck('name')).toEqual(applied.slice(0, applied.indexOf(pricedHolders) + 1));
  const columns = await db('information_schema.columns')
    .where({ table_name: 'endorsements', column_name: 'holder_premiums' })
    .pluck('column_name');
  expect(columns).toEqual(['holder_premiums']);
  expect(await db('policy_transactions').where({ kind: 'endorsement' }).pluck('premium_minor')).toEqual(['-1000']);

  // Once that row is gone, it rolls back, and everything applies again.
  await db('policy_transactions').delete();
  const [, undone] = (await db.migrate.down(migrationConfig)) as [number, string[]];
  expect(undone).toEqual([pricedHolders]);
  expect(await migrateLatest(db)).toEqual(newer);
}, 120_000);
