/**
 * `npm run seed`: creates (or updates) the two local root accounts — a demo agency and a second
 * agency, so isolation between accounts can be tried — and gives each a fresh live and test
 * API key. Keys from an earlier seed run are deleted, since values are shown only once.
 * Prints one JSON object on stdout: `{ "accounts": [ { rootAccountId, slug, name, liveApiKey, testApiKey } ] }`.
 */
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createAccountsRepository } from '../src/accounts/repository';
import { createApiKeysRepository } from '../src/api-keys/repository';
import { createApiKeyService } from '../src/api-keys/service';

const SEED_KEY_NAMES = { live: 'local dev (live)', test: 'local dev (test)' } as const;

const ACCOUNTS = [
  { slug: 'demo-agency', name: 'Demo Event Insurance Agency', agent: { name: 'Dana Agent', email: 'dana@demo-agency.test' } },
  { slug: 'second-agency', name: 'Second Street Insurance Agency', agent: { name: 'Sam Agent', email: 'sam@second-agency.test' } },
];

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const db = createDb(config);
  try {
    const accounts = createAccountsRepository(db);
    const keysRepo = createApiKeysRepository(db);
    const keys = createApiKeyService({ keys: keysRepo, accounts, defaultGraceHours: config.API_KEY_ROTATION_GRACE_HOURS });
    const out = [];
    for (const a of ACCOUNTS) {
      const account = await accounts.upsertBySlug({
        slug: a.slug,
        name: a.name,
        kind: 'agency',
        checkoutSuccessUrl: `${config.PUBLIC_BASE_URL}/checkout/success`,
        checkoutCancelUrl: `${config.PUBLIC_BASE_URL}/checkout/cancel`,
      });
      const agent = await accounts.upsertAgent({ rootAccountId: account.id, ...a.agent });
      for (const existing of await keys.list(account.id)) {
        if (existing.status !== 'deleted' && Object.values(SEED_KEY_NAMES).includes(existing.name as never)) {
          await keys.delete(existing.id);
        }
      }
      const live = await keys.create({ rootAccountId: account.id, name: SEED_KEY_NAMES.live, mode: 'live', agentId: agent.id, description: 'created by npm run seed' });
      const test = await keys.create({ rootAccountId: account.id, name: SEED_KEY_NAMES.test, mode: 'test', agentId: agent.id, description: 'created by npm run seed' });
      out.push({ rootAccountId: account.id, slug: account.slug, name: account.name, agentId: agent.id, liveApiKey: live.key, testApiKey: test.key });
    }
    process.stdout.write(`${JSON.stringify({ accounts: out })}\n`);
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(`seed failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
