/**
 * `searchTeammatePurchasedProducts` on `/platform-agency-certs` and `/platform-agency-root-certs`
 * (spec §4.5, §7.2, §8; issue 7), against the real app and real PostgreSQL.
 *
 * Purchases are written the way production writes them, minus the processor round trip: the
 * purchases repository's create (purchase, items, covered units), the payment activity's
 * update (paid_at, status, payment intent) and the certificates repository's plan() (numbers),
 * so the search rows come from the migration's triggers, not from the test.
 */
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createKey, createRootAccount, insertProductLine } from '../helpers/fixtures';
import { createAccountsRepository, type Agent, type RootAccount } from '../../src/accounts/repository';
import { createBuyersRepository, type Buyer } from '../../src/buyers/repository';
import { createSaleRepository } from '../../src/purchases/sale-repository';
import { insertHoldersFromAnswers } from '../../src/certificate-holders/repository';
import { createCertificatesRepository } from '../../src/certificates/repository';
import { createAccountScopes } from '../../src/accounts/scope';
import { createPurchaseSearchRepository } from '../../src/purchase-search/repository';
import { createPurchaseSearchService } from '../../src/purchase-search/service';
import { choosePhraseLookup, foldWithOrigins, trigramSample, type TrigramSample } from '../../src/purchase-search/probe';
import fc from 'fast-check';

const TEAMMATE_PATH = '/platform-agency-certs/searchTeammatePurchasedProducts';
const ROOT_PATH = '/platform-agency-root-certs/searchTeammatePurchasedProducts';
const DAY = 86_400_000;

let app: TestApp;
let accountA: RootAccount;
let accountB: RootAccount;
let rootUuidA: string;
let rootUuidB: string;
let teammateA1: Agent & { uuid: string };
let teammateA2: Agent & { uuid: string };
let teammateB: Agent & { uuid: string };
let keyA: string;
let keyATest: string;
let keyB: string;
let apiKeyIdA: number;
let productWedding: number;
let productConcert: number;
let productTest: number;
let productWeddingB: number;
/** A run-unique word, so buyer emails never collide with other suites' buyers. */
const tag = randomUUID().slice(0, 8);
/** The base instant purchases are paid at, minus n days each (newest = smallest n). */
const now = Date.now();

interface Made {
  purchaseId: number;
  paymentIntent: string;
  paidAt: Date;
  certificateNumbers: string[];
  buyer: Buyer;
}

async function teammate(account: RootAccount, name: string): Promise<Agent & { uuid: string }> {
  const agent = await createAccountsRepository(app.container.db).upsertAgent({
    rootAccountId: account.id,
    name,
    email: `${name.replace(/\W/g, '').toLowerCase()}-${tag}@agency.example`,
  });
  const row = await app.container.db('agents').where({ id: agent.id }).first('idp_teammate_uuid');
  return { ...agent, uuid: row.idp_teammate_uuid };
}

/** The probe the service would look up for `phrase` (null: none). */
function probeOf(phrase: string, sample: TrigramSample | null): string | null {
  return choosePhraseLookup(phrase, sample)?.probe ?? null;
}

type SearchLimits = NonNullable<Parameters<typeof createPurchaseSearchService>[0]['limits']>;

/** A search service over the test database, under `limits` (the service's defaults when none). */
function searchService(limits?: SearchLimits) {
  return createPurchaseSearchService({
    repo: createPurchaseSearchRepository(app.container.db),
    scopes: createAccountScopes(app.container.db),
    ...(limits ? { limits } : {}),
  });
}

/** The ids of the purchases made that match, newest first (the order the search answers in). */
const newestMatching = (made: Array<{ purchaseId: number; matches: boolean }>) =>
  [...made]
    .reverse()
    .filter((m) => m.matches)
    .map((m) => m.purchaseId);

/**
 * Each of `walks` testing every document, testing ids of the text matches gathered first, and
 * after gathering more text matches than their cap; each of those counted through the indexes,
 * after finding the page (as for a phrase the sample shows to have more matches than the cap)
 * and, with `countByWalk`, by walking first.
 */
function searchPaths(walks: SearchLimits[], countByWalk = true): SearchLimits[] {
  const text = walks.flatMap((w) => [
    { ...w, textMatchCap: 0 },
    { ...w, alwaysGatherText: true },
    { ...w, alwaysGatherText: true, textMatchCap: 1 },
  ]);
  return text.flatMap((c) => [c, { ...c, alwaysPageFirst: true }, ...(countByWalk ? [{ ...c, alwaysCountByWalk: true }] : [])]);
}

async function buyer(
  firstName: string,
  lastName: string,
  email = `${firstName}.${lastName}.${tag}.${randomUUID().slice(0, 4)}@example.com`.replace(/[^\w.@+-]/g, ''),
): Promise<Buyer> {
  const repo = createBuyersRepository(app.container.db);
  const b = await repo.insertBuyerIfAbsent(app.container.db, { email: email.toLowerCase(), firstName, lastName });
  if (!b) throw new Error(`buyer ${email} exists`);
  return b;
}

/**
 * A purchase of `productIds` (one covered day each, `days` days for the first) by `b`, paid
 * `daysAgo` days before the suite started unless `paid` is false; certificates planned when paid.
 */
async function purchase(opts: {
  account: RootAccount;
  agentId: number | null;
  buyer: Buyer;
  productIds: number[];
  daysAgo: number;
  mode?: 'live' | 'test';
  paid?: boolean;
  days?: number;
}): Promise<Made> {
  const db = app.container.db;
  const apiKeyId =
    opts.account.id === accountA.id ? apiKeyIdA : (await db('api_keys').where({ root_account_id: opts.account.id }).first('id')).id;
  const unit = (index: number) => {
    const startsAt = new Date(Date.UTC(2027, 4, 1 + index));
    return {
      index,
      kind: 'day' as const,
      startsAt,
      endsAt: new Date(startsAt.getTime() + DAY),
      timeZone: 'UTC',
      localLabel: startsAt.toISOString().slice(0, 10),
    };
  };
  const purchaseId = await createSaleRepository(db).create(
    {
      rootAccountId: opts.account.id,
      apiKeyId,
      agentId: opts.agentId,
      buyerId: opts.buyer.id,
      buyerEmail: opts.buyer.email,
      savePaymentMethod: false,
      mode: opts.mode ?? 'live',
      currency: 'usd',
      subtotalMinor: 2000 * opts.productIds.length,
      platformFeeBps: null,
      platformFeeMinor: 0,
      totalMinor: 2000 * opts.productIds.length,
      items: opts.productIds.map((productLineId, i) => ({
        productLineId,
        isTripExcess: false,
        unitPriceMinor: 2000,
        units: Array.from({ length: i === 0 ? (opts.days ?? 1) : 1 }, (_, k) => unit(k)),
        priceFactor: 1,
        amountMinor: 2000,
        answers: {},
        namedInsured: null,
        certificateHolder: null,
      })),
    },
    insertHoldersFromAnswers,
  );
  const paymentIntent = `pi_search_${purchaseId}_${tag}`;
  const paidAt = new Date(now - opts.daysAgo * DAY);
  if (opts.paid === false) return { purchaseId, paymentIntent, paidAt, certificateNumbers: [], buyer: opts.buyer };
  // What activities/purchase.ts recordPayment writes, with a chosen instant.
  await db('purchases')
    .where({ id: purchaseId })
    .update({ status: 'paid', paid_at: paidAt, payment_intent_id: paymentIntent, updated_at: db.fn.now() });
  await createCertificatesRepository(db).plan(purchaseId);
  const certificateNumbers = (
    await db('certificates as c')
      .join('purchase_items as i', 'i.id', 'c.purchase_item_id')
      .join('covered_units as cu', 'cu.id', 'c.covered_unit_id')
      .where('c.purchase_id', purchaseId)
      .orderBy([{ column: 'i.position' }, { column: 'cu.unit_index' }])
      .select('c.certificate_number')
  ).map((r) => r.certificate_number as string);
  return { purchaseId, paymentIntent, paidAt, certificateNumbers, buyer: opts.buyer };
}

const asTeammate = (t: { uuid: string }, body: Record<string, unknown> = {}, key = keyA) =>
  call(app.baseUrl, TEAMMATE_PATH, { method: 'POST', key, body: { idp_teammate_uuid: t.uuid, ...body } });
const asRoot = (body: Record<string, unknown> = {}, key = keyA, uuid = rootUuidA) =>
  call(app.baseUrl, ROOT_PATH, { method: 'POST', key, body: { idp_root_account_uuid: uuid, ...body } });
const ids = (res: { body: any }) => (res.body.purchases as Array<{ purchase_id: number }>).map((p) => p.purchase_id);

// The purchases every test reads (A1 = teammate A1 of account A, …).
let kimPark: Made; // A1, wedding, 3 days of cover, 10 days ago
let jordanOkafor: Made; // A1, concert, 8 days ago
let kimLee: Made; // A2, wedding, 6 days ago
let noTeammate: Made; // A, no teammate, wedding, 4 days ago
let unpaidKim: Made; // A1, never paid
let testModeKim: Made; // A1, test mode
let otherAccountKim: Made; // account B, same buyer as kimPark, a product with the same name
let arcy: Made; // A1, a name full of LIKE metacharacters, 30 days ago

beforeAll(async () => {
  app = await startTestApp();
  const db = app.container.db;
  accountA = await createRootAccount(app.container, 'Search Agency A');
  accountB = await createRootAccount(app.container, 'Search Agency B');
  rootUuidA = (await db('root_accounts').where({ id: accountA.id }).first('idp_root_account_uuid')).idp_root_account_uuid;
  rootUuidB = (await db('root_accounts').where({ id: accountB.id }).first('idp_root_account_uuid')).idp_root_account_uuid;
  teammateA1 = await teammate(accountA, 'Ana Agent');
  teammateA2 = await teammate(accountA, 'Ben Agent');
  teammateB = await teammate(accountB, 'Cy Agent');
  const issuedA = await createKey(app.container, { rootAccountId: accountA.id });
  keyA = issuedA.key;
  apiKeyIdA = issuedA.id;
  keyATest = (await createKey(app.container, { rootAccountId: accountA.id, mode: 'test' })).key;
  keyB = (await createKey(app.container, { rootAccountId: accountB.id })).key;

  productWedding = await insertProductLine(app.container, { rootAccountId: accountA.id, customerName: 'Harbor Wedding Liability' });
  productConcert = await insertProductLine(app.container, { rootAccountId: accountA.id, customerName: 'Concert Cover' });
  productTest = await insertProductLine(app.container, {
    rootAccountId: accountA.id,
    customerName: 'Harbor Wedding Liability (test)',
    isTestMode: true,
  });
  productWeddingB = await insertProductLine(app.container, { rootAccountId: accountB.id, customerName: 'Harbor Wedding Liability' });

  const park = await buyer('Kim', 'Park');
  kimPark = await purchase({ account: accountA, agentId: teammateA1.id, buyer: park, productIds: [productWedding], daysAgo: 10, days: 3 });
  jordanOkafor = await purchase({
    account: accountA,
    agentId: teammateA1.id,
    buyer: await buyer('Jordan', 'Okafor'),
    productIds: [productConcert],
    daysAgo: 8,
  });
  kimLee = await purchase({
    account: accountA,
    agentId: teammateA2.id,
    buyer: await buyer('Kim', 'Lee'),
    productIds: [productWedding],
    daysAgo: 6,
  });
  noTeammate = await purchase({
    account: accountA,
    agentId: null,
    buyer: await buyer('Sam', 'Solo'),
    productIds: [productWedding, productConcert],
    daysAgo: 4,
  });
  unpaidKim = await purchase({
    account: accountA,
    agentId: teammateA1.id,
    buyer: await buyer('Kim', 'Unpaid'),
    productIds: [productWedding],
    daysAgo: 1,
    paid: false,
  });
  testModeKim = await purchase({
    account: accountA,
    agentId: teammateA1.id,
    buyer: await buyer('Kim', 'Testmode'),
    productIds: [productTest],
    daysAgo: 2,
    mode: 'test',
  });
  otherAccountKim = await purchase({ account: accountB, agentId: teammateB.id, buyer: park, productIds: [productWeddingB], daysAgo: 3 });
  arcy = await purchase({
    account: accountA,
    agentId: teammateA1.id,
    buyer: await buyer("D'Arcy", 'O_Neil 50%\\off', `darcy_${tag}@example.com`),
    productIds: [productConcert],
    daysAgo: 30,
  });
});

afterAll(() => app.close());

describe('a hit by each field', () => {
  test('when searching a first name, then the teammate’s paid live purchases of buyers so named, newest first', async () => {
    const res = await asTeammate(teammateA1, { search_text: 'kim' });
    expect(res.status).toBe(200);
    // Not Kim Lee (teammate A2), Kim Unpaid (never paid), Kim Testmode (test mode), nor account B's Kim Park.
    expect(ids(res)).toEqual([kimPark.purchaseId]);
    expect(res.body).toMatchObject({ total: 1, total_exact: true, page_index: 0, page_size: 20, has_more: false });
  });

  test('when searching a last name in another case with extra spaces, then it matches', async () => {
    const res = await asTeammate(teammateA1, { search_text: '   OKAFOR  ' });
    expect(ids(res)).toEqual([jordanOkafor.purchaseId]);
  });

  test('when searching "first last", then the full name matches as one phrase', async () => {
    expect(ids(await asTeammate(teammateA1, { search_text: 'Kim   Park' }))).toEqual([kimPark.purchaseId]);
    expect(ids(await asTeammate(teammateA1, { search_text: 'Park Kim' }))).toEqual([]);
  });

  test('when searching the buyer’s email, or a part of it, then it matches case-insensitively', async () => {
    expect(ids(await asTeammate(teammateA1, { search_text: kimPark.buyer.email.toUpperCase() }))).toEqual([kimPark.purchaseId]);
    expect(ids(await asTeammate(teammateA1, { search_text: `okafor.${tag}` }))).toEqual([jordanOkafor.purchaseId]);
  });

  test('when searching a product name, then purchases of that product match', async () => {
    const res = await asTeammate(teammateA1, { search_text: 'harbor wedding' });
    expect(ids(res)).toEqual([kimPark.purchaseId]);
    const root = await asRoot({ search_text: 'Wedding Liability' });
    expect(ids(root)).toEqual([noTeammate.purchaseId, kimLee.purchaseId, kimPark.purchaseId]);
  });

  test('when a product is renamed, then the search finds it by the new name at once', async () => {
    const db = app.container.db;
    await db('product_lines').where({ id: productConcert }).update({ customer_name: 'Concert and Stage Cover' });
    try {
      expect(ids(await asTeammate(teammateA1, { search_text: 'stage cover' }))).toEqual([jordanOkafor.purchaseId, arcy.purchaseId]);
    } finally {
      await db('product_lines').where({ id: productConcert }).update({ customer_name: 'Concert Cover' });
    }
  });

  test('when a buyer’s name changes, then the trigger updates the search', async () => {
    const db = app.container.db;
    await db('buyers').where({ id: jordanOkafor.buyer.id }).update({ last_name: 'Okafor-Renamed' });
    try {
      expect(ids(await asTeammate(teammateA1, { search_text: 'okafor-renamed' }))).toEqual([jordanOkafor.purchaseId]);
    } finally {
      await db('buyers').where({ id: jordanOkafor.buyer.id }).update({ last_name: 'Okafor' });
    }
    expect(ids(await asTeammate(teammateA1, { search_text: 'okafor-renamed' }))).toEqual([]);
  });

  test('when searching a certificate number, then its purchase comes back with that number as matched_certificate_number', async () => {
    const number = kimPark.certificateNumbers[1]!;
    const res = await asTeammate(teammateA1, { search_text: number.toLowerCase() });
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([kimPark.purchaseId]);
    expect(res.body.purchases[0].matched_certificate_number).toBe(number);
  });

  test('when searching part of a certificate number, then the purchase matches and names the first matching certificate', async () => {
    const prefix = `COI-${kimPark.purchaseId}-1-`;
    const res = await asTeammate(teammateA1, { search_text: prefix });
    expect(ids(res)).toEqual([kimPark.purchaseId]);
    expect(res.body.purchases[0].matched_certificate_number.startsWith(prefix)).toBe(true);
  });

  test('when a hit is returned, then it carries the purchase, teammate, buyer, products and certificates', async () => {
    const res = await asRoot({ search_text: 'Sam Solo' });
    expect(res.body.purchases).toEqual([
      {
        purchase_id: noTeammate.purchaseId,
        payment_intent: noTeammate.paymentIntent,
        paid_at: noTeammate.paidAt.toISOString(),
        status: 'paid',
        teammate: null,
        buyer: { idp_accnt_uuid: noTeammate.buyer.idpAccntUuid, name: 'Sam Solo', email: noTeammate.buyer.email },
        products: [
          { product_line_id: productWedding, product_name: 'Harbor Wedding Liability' },
          { product_line_id: productConcert, product_name: 'Concert Cover' },
        ],
        bundle: null,
        certificate_count: 2,
        certificate_numbers: noTeammate.certificateNumbers,
        matched_certificate_number: null,
      },
    ]);
    const mine = await asTeammate(teammateA1, { search_text: 'kim park' });
    expect(mine.body.purchases[0].teammate).toEqual({ idp_teammate_uuid: teammateA1.uuid, name: 'Ana Agent' });
    expect(mine.body.purchases[0].certificate_count).toBe(3);
  });
});

describe('scope', () => {
  test('when another root account has a matching purchase, then it never appears, on either surface', async () => {
    for (const search_text of ['kim park', 'harbor wedding liability', otherAccountKim.certificateNumbers[0]!, '']) {
      const all = [...ids(await asRoot({ search_text })), ...ids(await asTeammate(teammateA1, { search_text }))];
      expect(all).not.toContain(otherAccountKim.purchaseId);
    }
    // …while account B's own key finds it.
    expect(ids(await asRoot({ search_text: 'kim park' }, keyB, rootUuidB))).toEqual([otherAccountKim.purchaseId]);
  });

  test('when teammate A1 searches, then teammate A2’s purchases are absent; the root surface sees both and the sale without a teammate', async () => {
    expect(ids(await asTeammate(teammateA1, { search_text: 'kim' }))).not.toContain(kimLee.purchaseId);
    expect(ids(await asTeammate(teammateA2, { search_text: 'kim' }))).toEqual([kimLee.purchaseId]);
    expect(ids(await asRoot({ search_text: 'kim' }))).toEqual([kimLee.purchaseId, kimPark.purchaseId]);
    expect(ids(await asRoot({ search_text: '' }))).toEqual([
      noTeammate.purchaseId,
      kimLee.purchaseId,
      jordanOkafor.purchaseId,
      kimPark.purchaseId,
      arcy.purchaseId,
    ]);
  });

  test('when the key is a test key, then only test-mode purchases are searched', async () => {
    expect(ids(await asTeammate(teammateA1, { search_text: 'kim' }, keyATest))).toEqual([testModeKim.purchaseId]);
    expect(ids(await asTeammate(teammateA1, { search_text: '' }))).not.toContain(testModeKim.purchaseId);
  });

  test('when a purchase is not paid, then it is never listed', async () => {
    expect(ids(await asTeammate(teammateA1, { search_text: '' }))).not.toContain(unpaidKim.purchaseId);
    expect(ids(await asTeammate(teammateA1, { search_text: 'unpaid' }))).toEqual([]);
  });
});

describe('order and paging', () => {
  test('when the search text is empty, then every paid purchase of the teammate is listed newest first', async () => {
    const res = await asTeammate(teammateA1, {});
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([jordanOkafor.purchaseId, kimPark.purchaseId, arcy.purchaseId]);
    expect(res.body.total).toBe(3);
  });

  test('when a certificate number is searched exactly, then its purchase comes first even though a newer purchase also matches', async () => {
    const number = arcy.certificateNumbers[0]!;
    // A newer purchase whose buyer email contains the number: a plain substring match.
    const fan = await purchase({
      account: accountA,
      agentId: teammateA1.id,
      buyer: await buyer('Cert', 'Fan', `${number.toLowerCase()}.fan.${tag}@example.com`),
      productIds: [productConcert],
      daysAgo: 0.5,
    });
    const res = await asTeammate(teammateA1, { search_text: number });
    expect(ids(res)).toEqual([arcy.purchaseId, fan.purchaseId]);
    expect(res.body.purchases.map((p: any) => p.matched_certificate_number)).toEqual([number, null]);
    expect(res.body.total).toBe(2);
    // Page 2 of size 1 continues after the hit with the newest other match.
    const second = await asTeammate(teammateA1, { search_text: number, page_size: 1, page_index: 1 });
    expect(ids(second)).toEqual([fan.purchaseId]);
    expect(second.body.has_more).toBe(false);
    const first = await asTeammate(teammateA1, { search_text: number, page_size: 1 });
    expect(ids(first)).toEqual([arcy.purchaseId]);
    expect(first.body.has_more).toBe(true);
    await app.container.db('purchases').where({ id: fan.purchaseId }).delete();
  });

  test('when there are more matches than a page, then total, has_more and the next pages follow newest first', async () => {
    const pager = await teammate(accountA, 'Pia Pager');
    const made: Made[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(
        await purchase({
          account: accountA,
          agentId: pager.id,
          buyer: await buyer('Page', `Pagerson${i}`),
          productIds: [productConcert],
          daysAgo: 20 - i,
        }),
      );
    }
    const newestFirst = made.map((m) => m.purchaseId).reverse();
    const page0 = await asTeammate(pager, { search_text: 'pagerson', page_size: 2 });
    expect(page0.body).toMatchObject({ total: 5, total_exact: true, page_index: 0, page_size: 2, has_more: true });
    expect(ids(page0)).toEqual(newestFirst.slice(0, 2));
    const page1 = await asTeammate(pager, { search_text: 'pagerson', page_size: 2, page_index: 1 });
    expect(page1.body).toMatchObject({ total: 5, page_index: 1, has_more: true });
    expect(ids(page1)).toEqual(newestFirst.slice(2, 4));
    const page2 = await asTeammate(pager, { search_text: 'pagerson', page_size: 2, page_index: 2 });
    expect(page2.body).toMatchObject({ total: 5, has_more: false });
    expect(ids(page2)).toEqual(newestFirst.slice(4));
    const beyond = await asTeammate(pager, { search_text: 'pagerson', page_size: 2, page_index: 7 });
    expect(beyond.body).toMatchObject({ total: 5, has_more: false, purchases: [] });
    // Same paid_at: the higher purchase id first.
    const same = new Date(now - 40 * DAY);
    await app.container.db('purchases').whereIn('id', newestFirst.slice(0, 2)).update({ paid_at: same });
    expect(ids(await asTeammate(pager, { search_text: '', page_size: 3, page_index: 1 }))).toEqual(
      [...newestFirst.slice(0, 2)].sort((a, b) => b - a),
    );
  });
});

describe('many matches (the paths a large account takes, reached here with small limits)', () => {
  test('when matches outnumber the count cap, lie in the newest rows or further back, then every page equals the newest-first order', async () => {
    // A teammate whose newest purchases do not match and whose older ones do (and a few in between).
    const t = await teammate(accountA, 'Mia Many');
    const plan = ['Nomatch', 'Oldie', 'Oldie', 'Nomatch', 'Oldie', 'Nomatch', 'Nomatch', 'Oldie', 'Oldie', 'Nomatch', 'Nomatch', 'Nomatch'];
    const made: Array<Made & { matches: boolean }> = [];
    for (const [i, last] of plan.entries()) {
      const m = await purchase({
        account: accountA,
        agentId: t.id,
        buyer: await buyer('Many', `${last}${i}`),
        productIds: [productConcert],
        daysAgo: 100 - i,
      });
      made.push({ ...m, matches: last === 'Oldie' });
    }
    // Certificate hit: the oldest Oldie's number is also in a newer buyer's email, so the hit jumps the queue.
    const number = made[1]!.certificateNumbers[0]!;
    const fan = await purchase({
      account: accountA,
      agentId: t.id,
      buyer: await buyer('Oldie', 'Fan', `oldie.${number.toLowerCase()}.${tag}@example.com`),
      productIds: [productConcert],
      daysAgo: 50,
    });
    const newestFirst = [fan, ...[...made].reverse()];
    const principal = (await app.container.services.apiKeys.authenticate(keyA))!;
    const expected = (phrase: string) => {
      if (phrase === 'oldie') return newestFirst.filter((m) => m === fan || ('matches' in m && m.matches)).map((m) => m.purchaseId);
      return [made[1]!.purchaseId, fan.purchaseId];
    };
    const walks: SearchLimits[] = [
      {}, // gathered through the indexes
      { countCap: 3, walkWindow: 100 }, // walked
      { countCap: 2, walkWindow: 3 }, // walked, then on past the window as far as its density says
      { countCap: 1, walkWindow: 1, maxWalk: 1 }, // walked, then the older matches through the indexes
      { countCap: 2, walkWindow: 3, maxWalk: 4 },
      { countCap: 1, walkWindow: 2, maxWalk: 6 }, // walked on past the window, short of the slice, then the older matches
      { countCap: 1, walkWindow: 4 },
    ];
    for (const limits of searchPaths(walks)) {
      const service = searchService(limits);
      for (const phrase of ['oldie', number]) {
        const all = expected(phrase);
        for (const size of [1, 2, 3, 5]) {
          for (let index = 0; index * size <= all.length + 1; index++) {
            const res = await service.searchAsTeammate(principal, {
              idp_teammate_uuid: t.uuid,
              search_text: phrase,
              page_size: size,
              page_index: index,
            });
            const where = JSON.stringify({ limits, phrase, size, index });
            expect([where, res.purchases.map((p) => p.purchase_id)]).toEqual([where, all.slice(index * size, index * size + size)]);
            expect([where, res.has_more]).toEqual([where, all.length > index * size + size]);
            const cap = limits.countCap ?? 1000;
            expect([where, res.total, res.total_exact]).toEqual([where, Math.min(all.length, cap), all.length <= cap]);
          }
        }
      }
    }
  });

  test('when matches are sparse in the newest rows, then the walk goes on from where its window ended, and every page equals the newest-first order', async () => {
    // One purchase in six matches: a window of 4 × (offset + limit) rows holds too few of them, so the walk continues.
    const t = await teammate(accountA, 'Sid Sparse');
    const made: Array<Made & { matches: boolean }> = [];
    for (let i = 0; i < 30; i++) {
      const matches = i % 6 === 5;
      const m = await purchase({
        account: accountA,
        agentId: t.id,
        buyer: await buyer('Sparse', matches ? `Needle${i}` : `Hay${i}`),
        productIds: [productConcert],
        daysAgo: 200 - i,
      });
      made.push({ ...m, matches });
    }
    const all = newestMatching(made);
    const principal = (await app.container.services.apiKeys.authenticate(keyA))!;
    const walks = [
      { countCap: 1, walkWindow: 1 },
      { countCap: 1, walkWindow: 1, maxWalk: 25 },
      { countCap: 2, walkWindow: 7, maxWalk: 12 },
    ];
    for (const limits of searchPaths(walks, false)) {
      const service = searchService(limits);
      for (const size of [1, 2, 3]) {
        for (let index = 0; index * size <= all.length; index++) {
          const res = await service.searchAsTeammate(principal, {
            idp_teammate_uuid: t.uuid,
            search_text: 'needle',
            page_size: size,
            page_index: index,
          });
          const where = JSON.stringify({ limits, size, index });
          expect([where, res.purchases.map((p) => p.purchase_id), res.has_more]).toEqual([
            where,
            all.slice(index * size, index * size + size),
            all.length > index * size + size,
          ]);
        }
      }
    }
  });

  test('when a page lies past the count cap of a phrase common in the whole table, then pages and totals are those of the exact count', async () => {
    // The sample the service estimates from covers the whole table: here one teammate holds 40 of a
    // product's purchases and another 2, so the estimate says "common" while the second's scope is not.
    const festival = await insertProductLine(app.container, { rootAccountId: accountA.id, customerName: `Festival Pass ${tag}` });
    const many = await teammate(accountA, 'Pat Plenty');
    const few = await teammate(accountA, 'Ola Few');
    /** `count` festival purchases sold by `agentId`, to buyers Fest <lastName><i>, one a day back from `daysAgo`. */
    const festivalSales = async (agentId: number, count: number, lastName: string, daysAgo: number) => {
      for (let i = 0; i < count; i++)
        await purchase({
          account: accountA,
          agentId,
          buyer: await buyer('Fest', `${lastName}${i}`),
          productIds: [festival],
          daysAgo: daysAgo - i,
        });
    };
    await festivalSales(many.id, 40, 'Goer', 300);
    await festivalSales(few.id, 2, 'Rare', 250);
    const principal = (await app.container.services.apiKeys.authenticate(keyA))!;
    const exact = searchService();
    for (const [t, phrase] of [
      [few, `festival pass ${tag}`],
      [few, 'rare'],
      [many, `festival pass ${tag}`],
    ] as const) {
      const body = { idp_teammate_uuid: t.uuid, search_text: phrase };
      const all = (await exact.searchAsTeammate(principal, { ...body, page_size: 100, page_index: 0 })).purchases.map((p) => p.purchase_id);
      for (const limits of [1, 2, 5].flatMap((countCap) => [{ countCap }, { countCap, alwaysPageFirst: true }])) {
        const { countCap } = limits;
        const service = searchService(limits);
        for (const size of [1, 2]) {
          // Pages past the last match and past the cap too: an empty page shows nothing about the count.
          for (let index = 0; index * size <= Math.min(all.length, 6) + countCap + 2; index++) {
            const res = await service.searchAsTeammate(principal, { ...body, page_size: size, page_index: index });
            const where = JSON.stringify({ phrase, limits, size, index });
            expect([where, res.purchases.map((p) => p.purchase_id), res.total, res.total_exact]).toEqual([
              where,
              all.slice(index * size, index * size + size),
              Math.min(all.length, countCap),
              all.length <= countCap,
            ]);
          }
        }
      }
    }
  });

  test('when a phrase names a product line at any position of a purchase and is in some buyers too, then every walked page equals the newest-first order', async () => {
    // The walk tests the first and second product lines (ids ascending) by hash, the rest by overlap,
    // and the text by id (gathered first) or on the document: each position, and a text-only match,
    // must be found. Created last, the named line has the highest id of a purchase.
    const other = await insertProductLine(app.container, { rootAccountId: accountA.id, customerName: `Plain Cover ${tag}` });
    const another = await insertProductLine(app.container, { rootAccountId: accountA.id, customerName: `Second Cover ${tag}` });
    const line = await insertProductLine(app.container, { rootAccountId: accountA.id, customerName: `Harbor-${tag}` });
    const t = await teammate(accountA, 'Lina Lines');
    const shapes: Array<{ productIds: number[]; last: string; matches: boolean }> = [
      { productIds: [line], last: 'One', matches: true },
      { productIds: [other], last: 'Two', matches: false },
      { productIds: [other, line], last: 'Three', matches: true },
      { productIds: [other, another, line], last: 'Four', matches: true },
      { productIds: [other, another, other], last: 'Five', matches: false },
      { productIds: [other], last: `Harbor${tag}`, matches: false }, // its key holds the folded phrase, its document not the phrase
      { productIds: [other], last: 'Six', matches: true }, // its email holds the phrase
    ];
    const made: Array<Made & { matches: boolean }> = [];
    for (const [i, shape] of [...shapes, ...shapes].entries()) {
      const email = shape.last === 'Six' ? `harbor-${tag}-${i}@example.com` : undefined;
      const b = email ? await buyer('Lines', `${shape.last}${i}`, email) : await buyer('Lines', `${shape.last}${i}`);
      made.push({
        ...(await purchase({ account: accountA, agentId: t.id, buyer: b, productIds: shape.productIds, daysAgo: 400 - i })),
        matches: shape.matches,
      });
    }
    const all = newestMatching(made);
    const principal = (await app.container.services.apiKeys.authenticate(keyA))!;
    const walks = [
      { countCap: 1, walkWindow: 1 },
      { countCap: 2, walkWindow: 3, maxWalk: 6 },
      { countCap: 1, walkWindow: 20 },
    ];
    for (const limits of searchPaths(walks)) {
      const service = searchService(limits);
      for (const size of [1, 3]) {
        for (let index = 0; index * size <= all.length; index++) {
          const res = await service.searchAsTeammate(principal, {
            idp_teammate_uuid: t.uuid,
            search_text: `harbor-${tag}`,
            page_size: size,
            page_index: index,
          });
          const where = JSON.stringify({ limits, size, index });
          expect([where, res.purchases.map((p) => p.purchase_id)]).toEqual([where, all.slice(index * size, index * size + size)]);
        }
      }
    }
  });

  test('when a phrase is looked up through a part of it, then the part is in the phrase and folds to a trigram', () => {
    const unit = fc.constantFrom(..."abkmpXYZ0129 .-@%_\\'éİ".split(''));
    const fold = (text: string) =>
      foldWithOrigins(text)
        .map((c) => c.char)
        .join('');
    fc.assert(
      fc.property(
        fc.string({ unit, maxLength: 60 }),
        fc.option(fc.array(fc.string({ unit, maxLength: 40 }), { maxLength: 5 }), { nil: null }),
        (phrase, sample) => {
          const probe = probeOf(phrase, sample && trigramSample(sample.map(fold)));
          // What SQL checks: search_key (the folded document) LIKE '%' || fold(lower(probe)) || '%', which any
          // document holding the phrase passes when the probe is a part of it; 3 folded characters give a trigram.
          if (fold(phrase).length < 3) return probe === null;
          return probe !== null && phrase.includes(probe) && fold(probe).length >= 3;
        },
      ),
    );
    // Every key holds `coi`, one in nine `coi1…`, eleven `coi16…`: the common trigram is left out.
    const certificates = trigramSample(Array.from({ length: 1000 }, (_, i) => `coi${i + 1}11abcdef`));
    expect(probeOf('COI-16', certificates)).toBe('I-16');
    expect(probeOf('COI-1042-1-1-9F3A61C2B7', null)).toBe('COI-1042-1-1-9');
    expect(probeOf('ki', null)).toBeNull();
    expect(probeOf('k-i', certificates)).toBeNull();
    expect(probeOf('50%_off', null)).toBe('50%_off');
  });
});

describe('plain text', () => {
  test.each([['%'], ['_'], ['%%'], ['\\'], ["'; drop table purchases; --"], ['" or 1=1 --'], ['kim%'], ['k_m']])(
    'when the search text is %j, then it is matched literally: 200 and no match',
    async (search_text) => {
      // Account B: none of its buyers, emails, products or certificate numbers holds % _ \ or quotes.
      const res = await asRoot({ search_text }, keyB, rootUuidB);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ total: 0, has_more: false, purchases: [] });
    },
  );

  test('when a name holds quotes, % , _ and \\, then searching them literally finds it and wildcards do not', async () => {
    expect(ids(await asTeammate(teammateA1, { search_text: "d'arcy o_neil 50%\\off" }))).toEqual([arcy.purchaseId]);
    expect(ids(await asTeammate(teammateA1, { search_text: 'o_neil 50%' }))).toEqual([arcy.purchaseId]);
    expect(ids(await asTeammate(teammateA1, { search_text: 'o%neil' }))).toEqual([]);
    expect(ids(await asTeammate(teammateA1, { search_text: 'oxneil' }))).toEqual([]);
    expect(ids(await asTeammate(teammateA1, { search_text: `darcy_${tag}` }))).toEqual([arcy.purchaseId]);
    expect(await app.container.db('purchases').where({ id: arcy.purchaseId }).first('id')).toBeDefined();
  });

  test('when the search text is 10 000 characters, then 200 with no match; 10 001 is 400', async () => {
    const long = await asRoot({ search_text: 'kim park '.repeat(1112).slice(0, 10_000) });
    expect(long.status).toBe(200);
    expect(long.body).toMatchObject({ total: 0, purchases: [] });
    const tooLong = await asRoot({ search_text: 'x'.repeat(10_001) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.code).toBe('VALIDATION_ERROR');
  });

  test('when the search text holds control characters, then they count as spaces (no 500)', async () => {
    const res = await asTeammate(teammateA1, { search_text: 'kim\u0007\t\npark' });
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([kimPark.purchaseId]);
  });

  test('when the search text holds NUL, then 400 VALIDATION_ERROR naming search_text, as every body (docs/decisions.md, Gateway)', async () => {
    const res = await asTeammate(teammateA1, { search_text: 'kim\u0000park' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('search_text') });
  });
});

describe('errors', () => {
  test('when the teammate uuid is unknown or another account’s, then 404 TEAMMATE_NOT_FOUND', async () => {
    for (const uuid of [randomUUID(), teammateB.uuid]) {
      const res = await asTeammate({ uuid }, { search_text: 'kim' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'TEAMMATE_NOT_FOUND', message: expect.any(String) });
    }
  });

  test('when the root uuid is not the key’s account, then 404 SELLER_NOT_FOUND', async () => {
    for (const uuid of [randomUUID(), rootUuidB]) {
      const res = await asRoot({ search_text: 'kim' }, keyA, uuid);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'SELLER_NOT_FOUND', message: expect.any(String) });
    }
  });

  test('when the root uuid is the key’s account in upper case, then 200 (the key’s account is matched without a query, case-insensitively)', async () => {
    const res = await asRoot({ search_text: 'kim' }, keyA, rootUuidA.toUpperCase());
    expect(res.status).toBe(200);
    expect(res.body.total).toBeGreaterThan(0);
  });

  test.each([
    ['an unknown field', { search_text: 'kim', sort: 'asc' }, 'sort'],
    ['page_size 0', { page_size: 0 }, 'page_size'],
    ['page_size 101', { page_size: 101 }, 'page_size'],
    ['a negative page_index', { page_index: -1 }, 'page_index'],
    ['a fractional page_index', { page_index: 1.5 }, 'page_index'],
    ['a page past the 10 000-purchase window', { page_size: 100, page_index: 100 }, 'page_index'],
    ['a search_text that is not a string', { search_text: 42 }, 'search_text'],
  ])('when the body has %s, then 400 VALIDATION_ERROR naming the field', async (_what, body, field) => {
    const res = await asTeammate(teammateA1, body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain(field);
  });

  test('when the teammate id is missing or not a UUID, then 400 VALIDATION_ERROR', async () => {
    const missing = await call(app.baseUrl, TEAMMATE_PATH, { method: 'POST', key: keyA, body: { search_text: 'kim' } });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('VALIDATION_ERROR');
    const bad = await asTeammate({ uuid: 'not-a-uuid' });
    expect(bad.status).toBe(400);
  });

  test('when the body is not JSON, then 400 VALIDATION_ERROR', async () => {
    const res = await call(app.baseUrl, ROOT_PATH, {
      method: 'POST',
      key: keyA,
      rawBody: '{"idp_root_account_uuid":',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });

  test('when the API key is missing, then the gateway 403 {"message":"Forbidden"} on both surfaces', async () => {
    for (const path of [TEAMMATE_PATH, ROOT_PATH]) {
      const res = await call(app.baseUrl, path, { method: 'POST', body: { search_text: 'kim' } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'Forbidden' });
    }
  });
});

test('when the OpenAPI document is fetched, then both search operations are described with their schemas', async () => {
  const res = await call(app.baseUrl, '/openapi.json');
  expect(res.status).toBe(200);
  for (const path of [TEAMMATE_PATH, ROOT_PATH]) {
    const op = res.body.paths[path]?.post;
    expect(op).toBeDefined();
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '403', '404']));
  }
  expect(res.body.components.schemas.PurchaseSearchResponse.example).toBeDefined();
});
