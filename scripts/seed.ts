/**
 * `npm run seed`: local data that makes the stack useful out of the box. Idempotent.
 *
 * - Two root accounts: the demo agency and a second agency (to try isolation between accounts),
 *   each with an agent (a portal `admin`) and a fresh live and test API key (keys of an earlier
 *   seed run are deleted, since a value is shown only once); the demo agency also has a portal
 *   `viewer` teammate.
 * - Shared question sets (one per template below) that every account may use, so any agency can
 *   create products and sell.
 * - For the demo agency, in both test and live mode: question sets and three products —
 *   special-event liability (per day), equipment damage waiver (per day), trip excess (per
 *   trip) — created through the real product service (so the processor holds their products
 *   and prices), plus a bundle of the two per-day products.
 *
 * Prints one JSON object on stdout:
 * `{ "accounts": [ { rootAccountId, slug, name, idpRootAccountUuid, agentId, idpTeammateUuid, liveApiKey, testApiKey,
 *   teammates: [ { idpTeammateUuid, name, email, portalRole } ] } ] }` (the teammates sign in to the portal).
 */
import { loadConfigOrExit } from '../src/config';
import { createContainer } from '../src/container';
import { createLogger } from '../src/logger';
import { createAccountsRepository, type RootAccount } from '../src/accounts/repository';
import { createQuestionSetsRepository } from '../src/question-sets/repository';
import { EQUIPMENT_DAMAGE_WAIVER, SPECIAL_EVENT_LIABILITY, TRIP_EXCESS } from '../src/question-sets/examples';
import type { Principal } from '../src/api-keys/service';
import type { Container } from '../src/container';

const SEED_KEY_NAMES = { live: 'local dev (live)', test: 'local dev (test)' } as const;

const ACCOUNTS = [
  {
    slug: 'demo-agency',
    name: 'Demo Event Insurance Agency',
    agent: { name: 'Dana Agent', email: 'dana@demo-agency.test' },
    viewer: { name: 'Vera Viewer', email: 'vera@demo-agency.test' },
  },
  { slug: 'second-agency', name: 'Second Street Insurance Agency', agent: { name: 'Sam Agent', email: 'sam@second-agency.test' } },
];

const PRODUCTS = [
  {
    template: 'Special event liability',
    definition: SPECIAL_EVENT_LIABILITY,
    body: {
      customerName: 'Special Event Liability',
      internalName: 'SEL-DAY',
      description: 'General liability for private and public events, one certificate per covered day.',
      defaultPrice: 49.5,
      insurerName: 'Evergreen Mutual Insurance Co.',
      claimsPhoneNumber: '+1-800-555-0134',
      masterPolicyNumber: 'EVM-GL-2026-0001',
      deductible: 250,
    },
  },
  {
    template: 'Equipment damage waiver',
    definition: EQUIPMENT_DAMAGE_WAIVER,
    body: {
      customerName: 'Equipment Damage Waiver',
      internalName: 'EDW-DAY',
      description: 'Accidental damage to rented event equipment, one certificate per covered day.',
      defaultPrice: 12,
      insurerName: 'Harbor Specialty Insurance',
      claimsPhoneNumber: '+1-800-555-0177',
      masterPolicyNumber: 'HSI-IM-2026-0420',
      deductible: 100,
    },
  },
  {
    template: 'Trip excess',
    definition: TRIP_EXCESS,
    body: {
      customerName: 'Trip Excess Cover',
      internalName: 'TRX-TRIP',
      description: 'Reimburses the rental-vehicle excess, one certificate per covered trip.',
      defaultPrice: 18.75,
      insurerName: 'Evergreen Mutual Insurance Co.',
      claimsPhoneNumber: '+1-800-555-0134',
      masterPolicyNumber: 'EVM-TX-2026-0007',
      deductible: 0,
    },
  },
];

/** Creates the demo catalog for `account` in `mode` unless it is already there. */
async function seedCatalog(c: Container, account: RootAccount, principal: Principal, mode: 'live' | 'test'): Promise<void> {
  const isTestMode = mode === 'test';
  const existing = await c
    .db('product_lines')
    .where({ root_account_id: account.id, is_test_mode: isTestMode })
    .whereIn(
      'internal_name',
      PRODUCTS.map((p) => p.body.internalName),
    );
  if (existing.length === PRODUCTS.length) return;
  const questionSets = createQuestionSetsRepository(c.db);
  const ids: number[] = [];
  for (const p of PRODUCTS) {
    const already = existing.find((e) => e.internal_name === p.body.internalName);
    if (already) {
      ids.push(already.id);
      continue;
    }
    const set = await questionSets.insert({ rootAccountId: account.id, name: `${p.template} (${mode})`, definition: p.definition });
    const created = await c.services.products.create(principal, { ...p.body, questionSetId: set.id, isTestMode, isRecurring: false });
    ids.push(created.id);
  }
  await c.services.bundles.create(principal, {
    bundle_name: `Event essentials (${mode})`,
    customer_facing_name: 'Event Essentials',
    internally_facing_name: `EVT-ESS-${mode.toUpperCase()}`,
    bundle_description: 'Special event liability with equipment damage waiver for the same days.',
    is_recurring: false,
    is_test_mode: isTestMode,
    root_seller_db_id: account.id,
    product_ids: [ids[0]!, ids[1]!],
  });
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const c = createContainer(config, createLogger({ LOG_LEVEL: 'warn' }, 'seed'));
  try {
    const accounts = createAccountsRepository(c.db);
    const keys = c.services.apiKeys;
    // Shared question sets: every account, the second agency and any new one included, can make
    // products on them and sell at once (GET /api/v1/question_sets lists them).
    const questionSets = createQuestionSetsRepository(c.db);
    for (const p of PRODUCTS) await questionSets.ensureShared(`${p.template} (shared)`, p.definition);
    const out = [];
    for (const [i, a] of ACCOUNTS.entries()) {
      // No return URLs: buyers land on the service's own pages (/checkout/complete, /checkout/cancelled)
      // unless set with `npm run keys -- set-account-return-urls`, which a re-seed leaves alone.
      const account = await accounts.upsertBySlug({ slug: a.slug, name: a.name, kind: 'agency' });
      // Earlier seeds stored `/checkout/success` and `/checkout/cancel`, which no route serves.
      const stale = (url: string | null, path: string) => (url === `${config.PUBLIC_BASE_URL}${path}` ? null : undefined);
      await accounts.setCheckoutReturnUrls(account.id, {
        successUrl: stale(account.checkoutSuccessUrl, '/checkout/success'),
        cancelUrl: stale(account.checkoutCancelUrl, '/checkout/cancel'),
      });
      const agent = await accounts.upsertAgent({ rootAccountId: account.id, ...a.agent, portalRole: 'admin' });
      if ('viewer' in a && a.viewer) await accounts.upsertAgent({ rootAccountId: account.id, ...a.viewer, portalRole: 'viewer' });
      for (const existing of await keys.list(account.id)) {
        if (existing.status !== 'deleted' && Object.values(SEED_KEY_NAMES).includes(existing.name as never)) {
          await keys.delete(existing.id);
        }
      }
      const live = await keys.create({
        rootAccountId: account.id,
        name: SEED_KEY_NAMES.live,
        mode: 'live',
        agentId: agent.id,
        description: 'created by npm run seed',
      });
      const test = await keys.create({
        rootAccountId: account.id,
        name: SEED_KEY_NAMES.test,
        mode: 'test',
        agentId: agent.id,
        description: 'created by npm run seed',
      });
      if (i === 0) {
        const principal: Principal = {
          apiKeyId: live.id,
          rootAccountId: account.id,
          mode: 'live',
          agentId: agent.id,
          platformFeeBps: null,
        };
        await seedCatalog(c, account, principal, 'test');
        await seedCatalog(c, account, principal, 'live');
      }
      const { idp_root_account_uuid } = await c.db('root_accounts').where({ id: account.id }).first('idp_root_account_uuid');
      const { idp_teammate_uuid } = await c.db('agents').where({ id: agent.id }).first('idp_teammate_uuid');
      out.push({
        rootAccountId: account.id,
        slug: account.slug,
        name: account.name,
        idpRootAccountUuid: idp_root_account_uuid as string,
        agentId: agent.id,
        idpTeammateUuid: idp_teammate_uuid as string,
        liveApiKey: live.key,
        testApiKey: test.key,
        teammates: (await accounts.listTeammates(account.id)).map((t) => ({
          idpTeammateUuid: t.idpTeammateUuid,
          name: t.name,
          email: t.email,
          portalRole: t.portalRole,
        })),
      });
    }
    process.stdout.write(`${JSON.stringify({ accounts: out })}\n`);
  } finally {
    await c.close();
  }
}

main().catch((err: unknown) => {
  console.error(`seed failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
