/**
 * knex over PostgreSQL (`DATABASE_URL`): the one pool of a process, used by the domains'
 * repositories (their query builders and, for the few statements a builder cannot say, raw SQL).
 * `createDb(config)` returns it; callers own the instance and must `destroy()` it on shutdown.
 * Migrations live in `/migrations` (timestamped, each with a `down()`: test/integration/migrations.test.ts
 * rolls them all back and applies them again) and run through `migrateLatest`.
 */
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type { Config } from '../config';
import type { Logger } from '../logger';

export type Db = Knex;

/**
 * Creates the pool for `config.DATABASE_URL`. With `log`, knex's
 * own warnings (e.g. "Connection Error" while PostgreSQL restarts) become JSON log lines of
 * component `db`, message only, instead of plain text with a stack on stdout.
 */
export function createDb(config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'>, log?: Logger): Db {
  const dbLog = log?.child({ component: 'db' });
  const text = (m: unknown) => (m instanceof Error ? m.message : String(m));
  const db = knexFactory({
    client: 'pg',
    connection: config.DATABASE_URL,
    pool: { min: 0, max: config.DATABASE_POOL_MAX },
    ...(dbLog
      ? {
          log: {
            warn: (m: unknown) => dbLog.warn(text(m)),
            error: (m: unknown) => dbLog.error(text(m)),
            deprecate: (m: unknown) => dbLog.warn(text(m)),
            debug: (m: unknown) => dbLog.debug(text(m)),
          },
        }
      : {}),
  });
  return db;
}

const migrationsDirectory = path.resolve(__dirname, '..', '..', 'migrations');

/** Knex migration settings shared by the CLI script, tests and the dev stack. */
export const migrationConfig: Knex.MigratorConfig = {
  directory: migrationsDirectory,
  loadExtensions: ['.ts', '.js'],
  tableName: 'knex_migrations',
};

/** Applies every pending migration; returns the file names applied in this call. */
export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(migrationConfig)) as [number, string[]];
  return applied;
}

/** True when PostgreSQL answers `select 1` (used by `/readyz`). */
export async function pingDb(db: Db): Promise<boolean> {
  try {
    await db.raw('select 1');
    return true;
  } catch {
    return false;
  }
}
