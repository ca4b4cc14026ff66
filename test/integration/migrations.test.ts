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
