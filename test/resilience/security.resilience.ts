/**
 * Tenancy and secrets on every route (issue 8; ARCHITECTURE §4: anything of another account
 * reads 404 NOT_FOUND, a write naming an id outside the key's reach is 400).
 *
 * Two agencies, A and B, each with a test and a live key, teammates, products, a bundle, a
 * connected buyer with an access token, a paid purchase with issued certificates (real worker)
 * and an unpaid one. Then every route of the inventory (derived from the app; a route without
 * a request fails the suite) is called with A's key and B's ids, built from the route's OpenAPI
 * request: all of B's ids; A's own account with B's resources; and A's own valid request with
 * one field swapped for B's. Each answer must be a refusal (400/401/404; 404 for path ids),
 * the same status and code as for an id that exists nowhere (no existence oracle), and carry
 * none of B's names, emails, ids or certificate numbers. Afterwards B's records are unchanged.
 * Finally no response body or header seen by the test process and no line the app logged
 * contains an API key, a buyer access token (outside the buyer-connection answers that hand
 * them out), the webhook secret or the processor's secret keys.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from '../helpers/app';
import { startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';
import { startSmtp, type TestSmtp } from '../helpers/smtp';
import { call, createKey, createQuestionSet } from '../helpers/fixtures';
import { WEBHOOK_SECRET, deliverWebhook, sessionCompletedEvent } from '../helpers/purchases';
import { createAgency, eventSelection, waitIssued, type Agency } from '../helpers/certificates';
import { createSaleRepository } from '../../src/purchases/sale-repository';
import { SPECIAL_EVENT_LIABILITY } from '../../src/question-sets/examples';
import { routeInventory, uncoveredRoutes, type Inventory, type RouteInfo } from './lib/inventory';
import { send, type RawRequest, type RawResponse } from './lib/http';
import { plausibleBody, concretePath, signWebhook } from './lib/fuzz-cases';
import { findMarkers, findSecrets, recordFetch, type Secret } from './lib/secrets';
import { Tally, publish } from './lib/summary';
import { PHASES, joinTurns } from './lib/schedule';

jest.setTimeout(300_000);

interface Tenant {
  label: string;
  agency: Agency;
  rootId: number;
  liveKey: string;
  questionSetId: number;
  uniqueProductId: number;
  uniqueProductName: string;
  bundleId: number;
  bundleName: string;
  accountName: string;
  buyer: { uuid: string; token: string; email: string; first: string; last: string };
  insured: string;
  paid: { purchaseId: number; paymentIntent: string };
  /** The paid purchase's return token (what its checkout return pages carry). */
  returnToken: string;
  unpaidPurchaseId: number;
  certificateNumbers: string[];
}

const secretKey = (prefix: string) => `${prefix}${randomBytes(24).toString('hex')}`;
const PROCESSOR_TEST_SECRET = secretKey('sk_test_resilience');
const PROCESSOR_LIVE_SECRET = secretKey('sk_test_resilienceLive');

let worker: TestWorker;
let app: TestApp;
let smtp: TestSmtp;
let A: Tenant;
let B: Tenant;
let inventory: Inventory;
const recorder = recordFetch();
const issuedTokens = new Set<string>();

async function tenant(label: string): Promise<Tenant> {
  const tag = randomBytes(4).toString('hex');
  const accountName = `${label} Agency ${tag}`;
  const agency = await createAgency(app, accountName);
  const c = app.container;
  const rootId = (await c.db('root_accounts').where({ slug: agency.slug }).first('id')).id as number;
  const liveKey = (await createKey(c, { rootAccountId: rootId, mode: 'live' })).key;
  const questionSetId = (await createQuestionSet(c, rootId, SPECIAL_EVENT_LIABILITY)).id;
  const key = agency.key;
  const uniqueProductName = `${label} Yacht Cover ${tag}`;
  const product = await call(app.baseUrl, '/api/v1/products', {
    method: 'POST',
    key,
    body: { customerName: uniqueProductName, defaultPrice: 12 },
  });
  const bundleName = `${label} Bundle ${tag}`;
  const bundle = await call(app.baseUrl, '/api/v1/bundles', {
    method: 'POST',
    key,
    body: { bundle_name: bundleName, root_seller_db_id: rootId, product_ids: [agency.eventProductId, product.body.data.id] },
  });
  const buyer = { email: `${label.toLowerCase()}.buyer.${tag}@example.com`, first: `${label}first${tag}`, last: `${label}last${tag}` };
  const connected = await call(app.baseUrl, '/platform-seller-invites/newConnect', {
    method: 'POST',
    key,
    body: {
      buyer_first_name: buyer.first,
      buyer_last_name: buyer.last,
      buyer_email: buyer.email,
      seller_slug: agency.slug,
      query_param: `${label}-attribution`,
    },
  });
  if (product.status !== 201 || bundle.status !== 201 || connected.status !== 200)
    throw new Error(`fixtures of ${label}: ${product.status} ${bundle.status} ${connected.status} ${bundle.text}`);
  const insured = `${label} Insured ${tag}`;
  const quote = async () => {
    const res = await call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', {
      method: 'POST',
      key,
      body: {
        idp_accnt_uuid: connected.body.idp_accnt_uuid,
        access_token: connected.body.access_token,
        selected_product_lines_to_purchase: [eventSelection(agency, { start: '2027-05-01', end: '2027-05-02' }, insured)],
      },
    });
    if (res.status !== 200) throw new Error(`quote of ${label}: ${res.status} ${res.text}`);
    return res.body as { purchase_id: number; id: string };
  };
  const paidQuote = await quote();
  const delivered = await deliverWebhook(app, sessionCompletedEvent(paidQuote.purchase_id, paidQuote.id));
  if (delivered.status !== 200) throw new Error(`webhook of ${label}: ${delivered.status}`);
  const unpaid = await quote();
  const paymentIntent = `pi_paid_${paidQuote.purchase_id}`;
  const issued = await waitIssued(agency, paymentIntent, 90_000);
  const returnToken = (await createSaleRepository(c.db).findById(paidQuote.purchase_id))?.returnToken;
  if (!returnToken) throw new Error(`purchase of ${label} has no return token`);
  return {
    label,
    agency,
    rootId,
    liveKey,
    questionSetId,
    uniqueProductId: product.body.data.id,
    uniqueProductName,
    bundleId: bundle.body.data.id,
    bundleName,
    accountName,
    buyer: { ...buyer, uuid: connected.body.idp_accnt_uuid, token: connected.body.access_token },
    insured,
    paid: { purchaseId: paidQuote.purchase_id, paymentIntent },
    returnToken,
    unpaidPurchaseId: unpaid.purchase_id,
    certificateNumbers: (issued.certificates as { certificate_number: string }[]).map((c) => c.certificate_number),
  };
}

/** Body field → the tenant's value (ids it owns, and lookup text that names its data). */
function idsOf(t: Tenant): Record<string, unknown> {
  return {
    idp_root_account_uuid: t.agency.rootUuid,
    idp_teammate_uuid: t.agency.teammateUuid,
    seller_slug: t.agency.slug,
    idp_accnt_uuid: t.buyer.uuid,
    access_token: t.buyer.token,
    payment_intent: t.paid.paymentIntent,
    purchase_id: t.unpaidPurchaseId,
    buyer_email: t.buyer.email,
    search_text: t.certificateNumbers[0],
    search: t.bundleName,
    product_ids: [t.uniqueProductId],
    root_seller_db_id: t.rootId,
    agencyRootAccountID: t.rootId,
    questionSetId: t.questionSetId,
    question_set_id: t.questionSetId,
    selected_product_lines_to_purchase: [eventSelection(t.agency, { start: '2027-06-01', end: '2027-06-01' })],
    id: String(t.uniqueProductId),
    bundleId: String(t.bundleId),
    code: t.certificateNumbers[0],
    purchase: String(t.paid.purchaseId),
    token: t.returnToken,
  };
}

/** The same fields with values that exist in no account: what B's ids must be indistinguishable from. */
function ghostIds(): Record<string, unknown> {
  return {
    idp_root_account_uuid: randomUUID(),
    idp_teammate_uuid: randomUUID(),
    seller_slug: `ghost-${randomBytes(4).toString('hex')}`,
    idp_accnt_uuid: randomUUID(),
    access_token: `bat_${randomBytes(32).toString('base64url')}`,
    payment_intent: 'pi_ghost_2147483000',
    purchase_id: 2_147_483_000,
    buyer_email: `ghost.${randomBytes(4).toString('hex')}@example.com`,
    search_text: 'COI-2147483000-1-1-0000000000',
    search: `ghost bundle ${randomBytes(4).toString('hex')}`,
    product_ids: [2_147_483_000],
    root_seller_db_id: 2_147_483_000,
    agencyRootAccountID: 2_147_483_000,
    questionSetId: 2_147_483_000,
    question_set_id: 2_147_483_000,
    selected_product_lines_to_purchase: [
      { ...eventSelection(A.agency, { start: '2027-06-01', end: '2027-06-01' }), product_line_template_id: 2_147_483_000 },
    ],
    id: '2147483000',
    bundleId: '2147483000',
    code: 'COI-2147483000-1-1-0000000000',
    purchase: '2147483000',
    token: randomBytes(32).toString('base64url'),
  };
}

/** Fields naming the caller's own account (the rest name resources). */
const IDENTITY = new Set(['idp_root_account_uuid', 'idp_teammate_uuid', 'seller_slug']);
/**
 * Fields that look data up rather than name a record: another account's value there may
 * answer 2xx (an empty search, `buyer_exists: false`, a list filtered to nothing, such as the events
 * of another account's purchase), never with
 * its data. In a body a root id names the account a write is for, so it is not a lookup there.
 */
const LOOKUP_BODY = new Set(['search_text', 'buyer_email']);
const LOOKUP_QUERY = new Set(['search', 'root_seller_db_id', 'agencyRootAccountID', 'buyer_email', 'purchase_id']);
/** Fields a request must not carry together (getInvoiceData names the purchase by one of them). */
const EXCLUSIVE: [string, string][] = [['payment_intent', 'purchase_id']];

interface Variant {
  name: string;
  key: string;
  /** Which of B's fields the request carries. */
  foreign: string[];
  build(ids: Record<string, unknown>): RawRequest;
}

/** The requests of one route naming B's ids, built from its OpenAPI operation (see the file comment). */
function variantsFor(route: RouteInfo, aIds: Record<string, unknown>, bIds: Record<string, unknown>): Variant[] {
  const op = route.operation;
  const headers = (key: string): Record<string, string> => ({
    ...(route.gated ? { 'x-api-key': key } : {}),
    'content-type': 'application/json',
    accept: 'application/json',
  });
  const params = route.params.filter((p) => p in bIds);
  const pathOf = (ids: Record<string, unknown>) => concretePath(route, Object.fromEntries(params.map((p) => [p, String(ids[p])])));
  const out: Variant[] = [];
  if (route.surface === 'webhook') {
    // An event naming B's purchase, unsigned and signed with a secret that is not the app's.
    const event = sessionCompletedEvent(B.paid.purchaseId, 'cs_resilience_forged');
    const post = (sig: string | undefined): RawRequest => ({
      method: 'POST',
      path: route.path,
      headers: { 'content-type': 'application/json', ...(sig ? { 'stripe-signature': sig } : {}) },
      body: event,
    });
    return [
      { name: "unsigned event naming B's purchase", key: '', foreign: ['purchase_id'], build: () => post(undefined) },
      {
        name: "event naming B's purchase signed with another secret",
        key: '',
        foreign: ['purchase_id'],
        build: () => post(signWebhook(event, 'whsec_not_the_apps')),
      },
    ];
  }
  const bodyFields = Object.keys(op?.body?.properties ?? {}).filter((f) => f in bIds);
  const queryFields = (op?.query ?? []).map((q) => q.name).filter((f) => f in bIds);
  const bodyShapes: string[][] = [];
  if (op?.body) {
    const excluded = EXCLUSIVE.filter(([x, y]) => bodyFields.includes(x) && bodyFields.includes(y));
    if (!excluded.length) bodyShapes.push(bodyFields);
    for (const [x, y] of excluded)
      bodyShapes.push(
        bodyFields.filter((f) => f !== y),
        bodyFields.filter((f) => f !== x),
      );
  }
  const request = (
    key: string,
    fields: string[],
    pick: (f: string) => Record<string, unknown>,
    pathIds: Record<string, unknown>,
  ): RawRequest => {
    const req: RawRequest = { method: route.method, path: pathOf(pathIds), headers: headers(key) };
    if (op?.body) {
      const ids = Object.fromEntries(fields.map((f) => [f, pick(f)[f]]));
      const omitted = Object.keys(op.body.properties ?? {}).filter((f) => f in bIds && !fields.includes(f));
      const body = plausibleBody(op.body, ids);
      for (const f of omitted) delete body[f];
      req.body = JSON.stringify(body);
    }
    if (route.method === 'GET' && queryFields.length && fields.length)
      req.path += `?${fields.map((f) => `${f}=${encodeURIComponent(String(pick(f)[f]))}`).join('&')}`;
    return req;
  };
  const shapes = op?.body ? bodyShapes : [queryFields];
  for (const fields of shapes) {
    const suffix = shapes.length > 1 ? ` (${fields.filter((f) => EXCLUSIVE.flat().includes(f)).join(',')})` : '';
    // 1. Everything B's, with A's test key and with A's live key.
    for (const [kname, key] of [
      ['test', A.agency.key],
      ['live', A.liveKey],
    ] as const) {
      out.push({
        name: `${fields.length + params.length ? "all of B's ids" : 'no ids'}, A's ${kname} key${suffix}`,
        key,
        foreign: [...fields, ...params],
        build: (ids) => request(key, fields, () => ids, ids),
      });
    }
    // 2. A's own account naming B's resources.
    const resources = [...fields.filter((f) => !IDENTITY.has(f)), ...params];
    if (resources.length && fields.some((f) => IDENTITY.has(f))) {
      out.push({
        name: `A's account, B's resources${suffix}`,
        key: A.agency.key,
        foreign: resources,
        build: (ids) => request(A.agency.key, fields, (f) => (IDENTITY.has(f) ? aIds : ids), ids),
      });
    }
    // 3. A's own request with one field (or path id) swapped for B's.
    for (const swapped of [...fields, ...params]) {
      if (fields.length + params.length < 2) break;
      out.push({
        name: `A's request, B's ${swapped}${suffix}`,
        key: A.agency.key,
        foreign: [swapped],
        build: (ids) =>
          request(
            A.agency.key,
            fields,
            (f) => (f === swapped ? ids : aIds),
            params.includes(swapped) ? { ...aIds, [swapped]: ids[swapped] } : aIds,
          ),
      });
    }
  }
  return out;
}

const codeOf = (res: RawResponse) => {
  const b = res.json as { code?: string; error?: { code?: string } } | undefined;
  return b?.error?.code ?? b?.code ?? '';
};

beforeAll(async () => {
  smtp = await startSmtp();
  const taskQueue = uniqueTaskQueue();
  const env = {
    PAYPROC_TEST_SECRET_KEY: PROCESSOR_TEST_SECRET,
    PAYPROC_LIVE_SECRET_KEY: PROCESSOR_LIVE_SECRET,
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
  };
  worker = await startTestWorker(taskQueue, {}, env);
  app = await startTestApp({
    ...env,
    TEMPORAL_TASK_QUEUE: taskQueue,
    PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET,
    RATE_LIMIT_PER_MINUTE: '100000',
    VERIFY_RATE_LIMIT_PER_MINUTE: '100000',
  });
  A = await tenant('Alpha');
  B = await tenant('Bravo');
  inventory = await routeInventory(app);
});

// Runs beside the fault suites' boots; their loads wait until this is done (lib/schedule.ts).
const turn = joinTurns('security', PHASES.fuzzAndSecurity);

afterAll(async () => {
  turn.done();
  recorder.stop();
  await app?.close();
  await worker?.shutdown();
  await smtp?.close();
});

describe('given agencies A and B with keys, teammates, products, a bundle, a connected buyer and a paid purchase with certificates', () => {
  const failures: string[] = [];
  const tally = new Tally();
  const covered = new Map<string, number>();

  /** B's data: what must never reach A. */
  const markersOfB = (): Secret[] => [
    { name: "B's account name", value: B.accountName },
    { name: "B's slug", value: B.agency.slug },
    { name: "B's root uuid", value: B.agency.rootUuid },
    { name: "B's teammate uuid", value: B.agency.teammateUuid },
    { name: "B's other teammate uuid", value: B.agency.otherTeammateUuid },
    { name: "B's product name", value: B.uniqueProductName },
    { name: "B's bundle name", value: B.bundleName },
    { name: "B's buyer email", value: B.buyer.email },
    { name: "B's buyer first name", value: B.buyer.first },
    { name: "B's buyer last name", value: B.buyer.last },
    { name: "B's buyer uuid", value: B.buyer.uuid },
    { name: "B's named insured", value: B.insured },
    { name: "B's payment intent", value: B.paid.paymentIntent },
    ...B.certificateNumbers.map((n, i) => ({ name: `B's certificate ${i + 1}`, value: n })),
  ];

  beforeAll(async () => {
    const aIds = idsOf(A);
    const bIds = idsOf(B);
    const markers = markersOfB();
    for (const route of inventory.routes) {
      for (const v of variantsFor(route, aIds, bIds)) {
        const req = v.build(bIds);
        const res = await send(app.baseUrl, req);
        const ghost = await send(app.baseUrl, v.build(ghostIds()));
        covered.set(route.key, (covered.get(route.key) ?? 0) + 1);
        tally.add(route.surface, v.foreign.length ? 'B ids' : 'no ids', route.key, res.status, res.ms);
        tally.add(route.surface, 'ghost ids', route.key, ghost.status, ghost.ms);
        const where = `${route.key} [${v.name}]`;
        const problems: string[] = [];
        const publicPage = route.surface === 'public';
        const onlyLookups = v.foreign.every((f) => (route.method === 'GET' ? LOOKUP_QUERY : LOOKUP_BODY).has(f));
        if (res.status === 0 || res.status >= 500) problems.push(`answered ${res.status} ${res.error ?? res.text.slice(0, 200)}`);
        else if (v.foreign.length && !publicPage && !onlyLookups && ![400, 401, 404].includes(res.status))
          problems.push(`expected a refusal (400/401/404), got ${res.status}: ${res.text.slice(0, 200)}`);
        // A path id that is the only foreign thing reads 404; with a body naming B's account too, a 400 may come first.
        // Test helpers do not exist for a live key: ROUTE_NOT_FOUND for every id tells nothing either.
        const expectedCode = route.path.startsWith('/api/v1/test_helpers/') && v.key === A.liveKey ? 'ROUTE_NOT_FOUND' : 'NOT_FOUND';
        if (
          v.foreign.length &&
          v.foreign.every((f) => route.params.includes(f)) &&
          !publicPage &&
          (res.status !== 404 || codeOf(res) !== expectedCode)
        ) {
          problems.push(`B's path id must read 404 ${expectedCode}, got ${res.status} ${codeOf(res)}`);
        }
        if (!publicPage && (res.status !== ghost.status || codeOf(res) !== codeOf(ghost))) {
          problems.push(
            `B's ids answer ${res.status} ${codeOf(res)} but ids that exist nowhere answer ${ghost.status} ${codeOf(ghost)} (an existence oracle)`,
          );
        }
        // What A sent may come back (an echoed id); anything else of B's may not. A buyer is
        // global per email (docs/decisions.md), so naming B's buyer's email names its uuid.
        const sent = `${req.path} ${String(req.body ?? '')}`;
        const echoed = new Set(findMarkers(sent, markers));
        if (sent.includes(B.buyer.email)) echoed.add("B's buyer uuid");
        const leaked = findMarkers(`${[...res.headers].map(([k, val]) => `${k}: ${val}`).join('\n')}\n${res.text}`, markers).filter(
          (m) => !echoed.has(m),
        );
        if (publicPage) {
          // The verification page is public by design (the QR opens on any phone), and so are the
          // checkout return pages to whoever holds a purchase's return token: they show the
          // certificates, never the buyer's email or address (docs/decisions.md).
          // A return token opens its own purchase only: a purchase and a token of different tenants read 404.
          const query = new URL(req.path, app.baseUrl).searchParams;
          const pair = `${query.get('purchase')} ${query.get('token')}`;
          if (query.has('token') && res.status !== 404 && ![A, B].some((t) => pair === `${t.paid.purchaseId} ${t.returnToken}`))
            problems.push(`a return page opened with another purchase's token: ${res.status}`);
          if (res.status === 200) {
            for (const m of leaked)
              if (/email|first name|last name|slug|uuid|payment intent/.test(m)) problems.push(`public page shows ${m}`);
            if (res.text.includes('22 Elm Rd') || res.text.includes('1 Main St')) problems.push('public page shows an address');
          } else if (res.status !== 404) problems.push(`public page answered ${res.status}`);
        } else if (leaked.length) problems.push(`response carries ${leaked.join(', ')}: ${res.text.slice(0, 200)}`);
        if (problems.length) failures.push(`${where}: ${problems.join('; ')}`);
      }
    }
    publish(
      'security-summary.md',
      tally.markdown('Cross-account calls on every route', [
        `${inventory.routes.length} routes; each variant sent with B's ids and again with ids that exist nowhere ("ghost"); failures: ${failures.length}`,
      ]) + (failures.length ? `\n### Failures\n\n${failures.map((f) => `- ${f}`).join('\n')}\n` : ''),
    );
  });

  test("when every route is called with A's key and B's ids, then each reads 404 or is refused exactly as for ids that exist nowhere, and carries none of B's data", () => {
    expect(failures).toEqual([]);
  });

  test("when the pass is over, then every mounted route was called with B's ids (or, without ids, with A's key)", () => {
    expect(inventory.documentedButNotMounted).toEqual([]);
    expect(uncoveredRoutes(inventory, covered, 1)).toEqual([]);
  });

  test("when the pass is over, then B's product, bundle and certificates are as they were", async () => {
    const product = await call(app.baseUrl, `/api/v1/products/${B.uniqueProductId}`, { key: B.agency.key });
    expect(product.body.data).toMatchObject({ ins_product_line_product_name_customer: B.uniqueProductName, ins_product_line_is_active: 1 });
    const bundle = await call(app.baseUrl, `/api/v1/bundles/${B.bundleId}`, { key: B.agency.key });
    expect(bundle.status).toBe(200);
    expect(bundle.body.data).toMatchObject({ bundle_name: B.bundleName, product_line_count: 2 });
    const certs = await call(app.baseUrl, '/platform-agency-certs/getCertificates', {
      method: 'POST',
      key: B.agency.key,
      body: { idp_teammate_uuid: B.agency.teammateUuid, payment_intent: B.paid.paymentIntent },
    });
    expect(certs.body).toMatchObject({ status: 'issued', certificate_count: B.certificateNumbers.length });
  });
});

describe('given every exchange and log line of the run', () => {
  const secrets = (): Secret[] => [
    { name: "A's test API key", value: A.agency.key },
    { name: "A's live API key", value: A.liveKey },
    { name: "B's test API key", value: B.agency.key },
    { name: "B's live API key", value: B.liveKey },
    { name: 'webhook secret', value: app.container.config.PAYPROC_WEBHOOK_SECRET },
    { name: 'processor test secret key', value: app.container.config.PAYPROC_TEST_SECRET_KEY },
    { name: 'processor live secret key', value: app.container.config.PAYPROC_LIVE_SECRET_KEY },
  ];
  const tokens = (): Secret[] => [...issuedTokens].map((value, i) => ({ name: `buyer access token ${i + 1}`, value }));

  beforeAll(() => {
    // Every access token handed out during the run (fixtures included).
    for (const e of recorder.exchanges) {
      if (!/\/platform-seller-invites\/(newConnect|checkIfBuyerExists)$/.test(new URL(e.url).pathname)) continue;
      for (const m of e.body.matchAll(/"access_token":"(bat_[A-Za-z0-9_-]+)"/g)) issuedTokens.add(m[1]!);
    }
  });

  test('when the scanners read text holding a secret or a marker on purpose, then they find it (the checks can fail)', () => {
    expect(findSecrets(`x-api-key: ${A.agency.key}`, secrets())).toEqual(["A's test API key"]);
    expect(findSecrets(`key=${A.liveKey.slice(0, 30)}…`, secrets())).toEqual(["A's live API key"]);
    expect(findSecrets(`{"secret":"${app.container.config.PAYPROC_WEBHOOK_SECRET}"}`, secrets())).toEqual(['webhook secret']);
    expect(findSecrets(`Bearer ${PROCESSOR_TEST_SECRET}`, secrets())).toEqual(['processor test secret key']);
    expect(findSecrets(`token ${B.buyer.token}`, tokens()).length).toBe(1);
    expect(findMarkers(`"certificate_number":"${B.certificateNumbers[0]}"`, [{ name: 'cert', value: B.certificateNumbers[0]! }])).toEqual([
      'cert',
    ]);
    expect(findMarkers(`${B.paid.paymentIntent}0`, [{ name: 'pi', value: B.paid.paymentIntent }])).toEqual([]);
    expect(issuedTokens.size).toBeGreaterThanOrEqual(2);
    expect(recorder.exchanges.length).toBeGreaterThan(100);
  });

  test('when every response body and header is scanned, then none holds an API key, the webhook secret, a processor secret key, or an access token outside the answer that issued it', () => {
    const found: string[] = [];
    for (const e of recorder.exchanges) {
      // The buyer-connection answers hand their own token to the caller (spec §4.3, §5.5).
      const body = /\/platform-seller-invites\/(newConnect|checkIfBuyerExists)$/.test(new URL(e.url).pathname)
        ? e.body.replace(/"access_token":"[^"]*"/g, '"access_token":"…"')
        : e.body;
      const hits = [...findSecrets(`${e.headers}\n${body}`, secrets()), ...findSecrets(`${e.headers}\n${body}`, tokens())];
      if (hits.length) found.push(`${e.method} ${e.url} → ${e.status}: ${hits.join(', ')}`);
    }
    expect(found).toEqual([]);
  });

  test('when every line the app logged is scanned, then none holds an API key, an access token, the webhook secret or a processor secret key', () => {
    const log = app.rawLogs();
    expect(log.length).toBeGreaterThan(1000);
    const lines = log.split('\n').filter((line) => findSecrets(line, [...secrets(), ...tokens()]).length > 0);
    expect(lines.map((l) => `${findSecrets(l, [...secrets(), ...tokens()]).join(', ')}: ${l.slice(0, 200)}`)).toEqual([]);
  });
});
