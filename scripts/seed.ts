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
 * - One insurer and one MGA (root accounts of those kinds, with a NAIC code and a register number,
 *   both made up) appointing each agency; the demo agency's products name them (special-event
 *   liability and trip excess: the insurer and the MGA; equipment damage waiver: the MGA), so
 *   `GET /api/v1/parties` lists them and a bordereau can be asked for at once; each product has a
 *   commission rate (special-event liability 15 % and equipment damage waiver 10 % to the MGA,
 *   trip excess 20 % to the insurer) and premium tax (the per-day products where their venue, the
 *   certificate holder, is: general liability and property; trip excess where its named insured
 *   is: travel), so a sale shows commission and premium tax.
 *
 * Prints one JSON object on stdout:
 * `{ "accounts": [ { rootAccountId, slug, name, idpRootAccountUuid, agentId, idpTeammateUuid, liveApiKey, testApiKey,
 *   teammates: [ { idpTeammateUuid, name, email, portalRole } ] } ],
 *   "parties": [ { rootAccountId, slug, name, kind, registerNumber } ] }` (the teammates sign in to the portal).
 */
import { loadConfigOrExit } from '../src/config';
import { createContainer } from '../src/container';
import { createLogger } from '../src/logger';
import { createAccountsRepository, type RootAccount } from '../src/accounts/repository';
import { createQuestionSetsRepository } from '../src/question-sets/repository';
import { EQUIPMENT_DAMAGE_WAIVER, SPECIAL_EVENT_LIABILITY, TRIP_EXCESS } from '../src/question-sets/examples';
import type { Principal } from '../src/api-keys/service';
import type { Container } from '../src/container';
import { createPartiesRepository } from '../src/parties/repository';
import { createCertificateSettingsRepository } from '../src/products/certificate-settings-repository';
import { DEFAULT_CERTIFICATE_SETTINGS, type CertificateSettings } from '../src/products/certificate-settings';
import { createPricingTermsService } from '../src/products/pricing-terms-service';
import { createPricingTermsRepository } from '../src/products/pricing-terms-repository';
import { createProductsRepository } from '../src/products/repository';
import type { LineOfBusiness, RiskLocation } from '../src/taxes/premium-tax';

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

/** The seeded parties (made-up numbers: no real insurer or MGA is meant). */
const PARTIES = {
  insurer: { slug: 'evergreen-mutual', name: 'Evergreen Mutual Insurance Co.', kind: 'insurer', registerNumber: '99001' },
  mga: { slug: 'harbor-underwriting', name: 'Harbor Underwriting MGA', kind: 'mga', registerNumber: 'MGA-DEMO-0042' },
} as const;

/** Which seeded parties each product names. */
type Names = { insurer: boolean; mga: boolean };

/** A seeded product's commission (the party it is paid by, basis points), premium tax line and where its risk is taxed. */
type Terms = { commission: { party: keyof typeof PARTIES; rateBps: number }; lineOfBusiness: LineOfBusiness; riskLocation: RiskLocation };

const PRODUCTS: Array<{
  template: string;
  definition: unknown;
  names: Names;
  terms: Terms;
  body: { internalName: string } & Record<string, unknown>;
}> = [
  {
    template: 'Special event liability',
    names: { insurer: true, mga: true },
    terms: { commission: { party: 'mga', rateBps: 1500 }, lineOfBusiness: 'general_liability', riskLocation: 'venue' },
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
    names: { insurer: false, mga: true },
    terms: { commission: { party: 'mga', rateBps: 1000 }, lineOfBusiness: 'property', riskLocation: 'venue' },
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
    names: { insurer: true, mga: true },
    terms: { commission: { party: 'insurer', rateBps: 2000 }, lineOfBusiness: 'travel', riskLocation: 'named_insured' },
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

/**
 * What the seeded products' certificates say about their coverage (issue 50, item 1): the venue
 * product names its additional-insured and waiver endorsements and is primary and
 * non-contributory; the others name their own type of insurance.
 */
const CERTIFICATE_SETTINGS: Record<string, CertificateSettings> = {
  'SEL-DAY': {
    ...DEFAULT_CERTIFICATE_SETTINGS,
    additionalInsuredForm: 'CG 20 26 04 13',
    waiverForm: 'CG 24 04 05 09',
    primaryNonContributory: true,
  },
  'EDW-DAY': { ...DEFAULT_CERTIFICATE_SETTINGS, coverageType: 'Inland Marine: Equipment' },
  'TRX-TRIP': { ...DEFAULT_CERTIFICATE_SETTINGS, coverageType: 'Rental Vehicle Excess' },
};

/** Gives each seeded product its certificate setting unless it has one (seeding again changes nothing). */
async function seedCertificateSettings(c: Container, products: Array<{ id: number; internalName: string }>): Promise<void> {
  const settings = createCertificateSettingsRepository(c.db);
  for (const p of products) {
    const wanted = CERTIFICATE_SETTINGS[p.internalName];
    if (!wanted || (await settings.find(p.id))) continue;
    await c.db.transaction((trx) => settings.save(trx, p.id, wanted));
  }
}

/**
 * Gives a seeded product its commission rate and tax setting unless it has them (seeding again
 * changes nothing), through the same service as the API's commission_rates and tax_settings.
 */
async function seedPricingTerms(
  c: Container,
  principal: Principal,
  products: Array<{ id: number; internalName: string }>,
  parties: { insurer: number; mga: number },
): Promise<void> {
  const terms = createPricingTermsService({ products: createProductsRepository(c.db), terms: createPricingTermsRepository(c.db) });
  for (const p of products) {
    const wanted = PRODUCTS.find((x) => x.body.internalName === p.internalName)?.terms;
    if (!wanted) continue;
    if ((await terms.listCommissionRates(principal, p.id)).length === 0)
      await terms.addCommissionRate(principal, p.id, { party_id: parties[wanted.commission.party], rate_bps: wanted.commission.rateBps });
    if ((await terms.getTaxSettings(principal, p.id)).line_of_business === null)
      await terms.updateTaxSettings(principal, p.id, { line_of_business: wanted.lineOfBusiness, risk_location: wanted.riskLocation });
  }
}

/** The seeded parties' ids a product of `names` names, as the products API takes them. */
const partyFields = (names: Names, parties: { insurer: number; mga: number }) => ({
  insurerRootAccountID: names.insurer ? parties.insurer : null,
  mgaRootAccountID: names.mga ? parties.mga : null,
});

/**
 * Creates the demo catalog for `account` in `mode` unless it is already there; products of an
 * earlier seed that name no party are given the seeded ones.
 */
async function seedCatalog(
  c: Container,
  account: RootAccount,
  principal: Principal,
  mode: 'live' | 'test',
  parties: { insurer: number; mga: number },
): Promise<void> {
  const isTestMode = mode === 'test';
  const existing = await c
    .db('product_lines')
    .where({ root_account_id: account.id, is_test_mode: isTestMode })
    .whereIn(
      'internal_name',
      PRODUCTS.map((p) => p.body.internalName),
    );
  for (const e of existing) {
    const p = PRODUCTS.find((x) => x.body.internalName === e.internal_name)!;
    if (e.insurer_root_account_id === null && e.mga_root_account_id === null)
      await c.services.products.update(principal, e.id, partyFields(p.names, parties));
  }
  const seeded = existing.map((e) => ({ id: e.id as number, internalName: e.internal_name as string }));
  await seedCertificateSettings(c, seeded);
  await seedPricingTerms(c, principal, seeded, parties);
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
    const created = await c.services.products.create(principal, {
      ...(p.body as { customerName: string; defaultPrice: number; internalName: string }),
      ...partyFields(p.names, parties),
      questionSetId: set.id,
      isTestMode,
      isRecurring: false,
    });
    ids.push(created.id);
    await seedCertificateSettings(c, [{ id: created.id, internalName: p.body.internalName }]);
    await seedPricingTerms(c, principal, [{ id: created.id, internalName: p.body.internalName }], parties);
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
    // The agencies first, so a fresh database numbers them 1 and 2 as before the parties came.
    for (const a of ACCOUNTS)
      if (!(await accounts.findBySlug(a.slug))) await accounts.upsertBySlug({ slug: a.slug, name: a.name, kind: 'agency' });
    const parties = { insurer: 0, mga: 0 };
    for (const kind of ['insurer', 'mga'] as const) {
      const party = await accounts.upsertParty(PARTIES[kind]);
      if (!party) throw new Error(`slug ${PARTIES[kind].slug} is taken by a root account of another kind`);
      parties[kind] = party.id;
    }
    const appointments = createPartiesRepository(c.db);
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
      for (const party of Object.values(parties)) await appointments.appoint(party, account.id);
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
        await seedCatalog(c, account, principal, 'test', parties);
        await seedCatalog(c, account, principal, 'live', parties);
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
    const partyList = (['insurer', 'mga'] as const).map((kind) => ({ rootAccountId: parties[kind], ...PARTIES[kind] }));
    process.stdout.write(`${JSON.stringify({ accounts: out, parties: partyList })}\n`);
  } finally {
    await c.close();
  }
}

main().catch((err: unknown) => {
  console.error(`seed failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
