/**
 * What the bench seeds (catalog-seed.ts, search-seed.ts) share: the bench database migrated,
 * its root accounts upserted by slug, the bench API key re-issued through the real key service
 * (as `npm run seed` does), and VACUUM ANALYZE of the seeded tables.
 */
import { performance } from 'node:perf_hooks';
import type { Config } from '../../src/config';
import { migrateLatest, type Db } from '../../src/db/knex';
import { createAccountsRepository, type RootAccount } from '../../src/accounts/repository';
import { createApiKeysRepository } from '../../src/api-keys/repository';
import { createApiKeyService } from '../../src/api-keys/service';

/** Where a seed reports its progress, one line at a time. */
export type SeedLog = (line: string) => void;

/**
 * Migrates the bench database (`db`, the app's knex instance on it) and answers its accounts
 * repository, the key service (`config`'s rotation grace), `upsert(slug, name, kind)` (a root
 * account by slug, `agency` by default, without checkout URLs) and `reissueKey`: deletes the
 * account's keys named `name` that are not deleted yet and creates a new live one. Throws when a
 * migration or a write fails.
 */
export async function openSeedAccounts(db: Db, config: Config) {
  await migrateLatest(db);
  const accounts = createAccountsRepository(db);
  const keys = createApiKeyService({ keys: createApiKeysRepository(db), accounts, defaultGraceHours: config.API_KEY_ROTATION_GRACE_HOURS });
  const upsert = (slug: string, name: string, kind: RootAccount['kind'] = 'agency') =>
    accounts.upsertBySlug({ slug, name, kind, checkoutSuccessUrl: null, checkoutCancelUrl: null });
  const reissueKey = async (input: { rootAccountId: number; name: string; description: string; agentId?: number }) => {
    for (const k of await keys.list(input.rootAccountId)) {
      if (k.name === input.name && k.status !== 'deleted') await keys.delete(k.id);
    }
    return keys.create({ ...input, mode: 'live' });
  };
  return { accounts, keys, upsert, reissueKey };
}

/**
 * VACUUM ANALYZE of `tables` (fresh statistics and visibility map, as autovacuum would leave
 * tables in use for a while; cheap when nothing changed). Answers its wall time in seconds.
 */
export async function vacuumAnalyze(db: Db, tables: readonly string[]): Promise<number> {
  const started = performance.now();
  await db.raw(`vacuum analyze ${tables.join(', ')}`);
  return (performance.now() - started) / 1000;
}
