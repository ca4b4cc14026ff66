/**
 * `npm run migrate`: applies pending knex migrations to DATABASE_URL and prints what it applied.
 * Exits 1 with one line on failure.
 */
import { loadConfigOrExit } from '../src/config';
import { createDb, migrateLatest } from '../src/db/knex';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const db = createDb(config);
  try {
    const applied = await migrateLatest(db);
    console.log(applied.length ? `migrations applied: ${applied.join(', ')}` : 'migrations: up to date');
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(`migration failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
