/**
 * Bad input on every route (issue 8): a fuzz pass over every mounted route (inventory derived
 * from the app's router stacks and its OpenAPI document) with random JSON, wrong types, huge
 * strings, Unicode, prototype-pollution keys, SQL and HTML metacharacters, malformed JSON,
 * wrong content types, bad path ids, bad query strings, missing keys and wrong methods, sent
 * with a valid API key and without. Every answer must be a 4xx in the surface's shape (2xx only
 * where the input may be legal), never a 5xx or a hang, and no body may show a stack, a source
 * path or SQL. Afterwards the process is not polluted, the service is healthy and ordinary
 * requests answer as before. The seed is fixed and printed (override with FUZZ_SEED; FUZZ_RUNS
 * sets the random cases per kind and route). A summary table goes to stdout and
 * var/test-artifacts/fuzz-summary.md.
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { eventually, startTestWorker, uniqueTaskQueue, type TestWorker } from '../helpers/worker';
import { call } from '../helpers/fixtures';
import { createAgency, type Agency } from '../helpers/certificates';
import { WEBHOOK_SECRET } from '../helpers/purchases';
import { routeInventory, uncoveredRoutes, type Inventory } from './lib/inventory';
import { send, type RawRequest, type RawResponse } from './lib/http';
import { errorShapeProblems, findLeaks } from './lib/shapes';
import { casesFor, KINDS, PROTO_MARKER, type FuzzCase, type FuzzContext } from './lib/fuzz-cases';
import { Tally, publish } from './lib/summary';
import { PHASES, joinTurns } from './lib/schedule';
import { SCOPE } from './lib/scope';

jest.setTimeout(300_000);

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
/** Random cases per kind and route: 10 on every change, 25 in the full run (lib/scope.ts); FUZZ_RUNS sets it by hand. */
const RUNS = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : SCOPE.fuzzRuns;
const REQUEST_TIMEOUT_MS = 15_000;

let app: TestApp;
let worker: TestWorker | undefined;
let agency: Agency;
let inventory: Inventory;
let ctx: FuzzContext;
let baseline: { name: string; request: RawRequest }[];
let baselineAnswers: string[];
const prototypeNames = () =>
  [Object.prototype, Array.prototype, Function.prototype, String.prototype].map((p) => Object.getOwnPropertyNames(p).sort().join(','));
let prototypesBefore: string[];

/** What about an answer the suite compares before and after the pass: status, code and field names. */
function fingerprint(res: RawResponse): string {
  const body = res.json as Record<string, unknown> | undefined;
  const code = (body?.error as { code?: string } | undefined)?.code ?? (body?.code as string | undefined) ?? '';
  const data = body?.data ?? body;
  const keys =
    data && typeof data === 'object'
      ? Object.keys(Array.isArray(data) ? (data[0] ?? {}) : data)
          .sort()
          .join(',')
      : '';
  return `${res.status} ${code} ${keys}`;
}

beforeAll(async () => {
  prototypesBefore = prototypeNames();
  // A worker polls the app's task queue, so /readyz is 200 (it is 503 while none polls).
  const taskQueue = uniqueTaskQueue();
  worker = await startTestWorker(taskQueue);
  app = await startTestApp({
    TEMPORAL_TASK_QUEUE: taskQueue,
    RATE_LIMIT_PER_MINUTE: '1000000',
    VERIFY_RATE_LIMIT_PER_MINUTE: '1000000',
    PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET,
  });
  await eventually(async () => (await call(app.baseUrl, '/readyz')).status === 200, 60_000);
  agency = await createAgency(app, 'Fuzz Agency');
  const rootAccountId = (await app.container.db('root_accounts').where({ slug: agency.slug }).first('id')).id as number;
  const buyer = await call(app.baseUrl, '/platform-seller-invites/newConnect', {
    method: 'POST',
    key: agency.key,
    body: {
      buyer_first_name: 'Fuzz',
      buyer_last_name: 'Buyer',
      buyer_email: `fuzz.buyer.${rootAccountId}@example.com`,
      seller_slug: agency.slug,
      query_param: '',
    },
  });
  const bundle = await call(app.baseUrl, '/api/v1/bundles', {
    method: 'POST',
    key: agency.key,
    body: { bundle_name: 'Fuzz bundle', root_seller_db_id: rootAccountId, product_ids: [agency.eventProductId] },
  });
  if (buyer.status !== 200 || bundle.status !== 201)
    throw new Error(`fixtures: newConnect ${buyer.status}, bundle ${bundle.status} ${bundle.text}`);
  inventory = await routeInventory(app);
  ctx = {
    key: agency.key,
    ids: {
      idp_root_account_uuid: agency.rootUuid,
      idp_teammate_uuid: agency.teammateUuid,
      seller_slug: agency.slug,
      idp_accnt_uuid: buyer.body.idp_accnt_uuid,
      access_token: buyer.body.access_token,
      payment_intent: 'pi_fuzz_missing',
      selected_product_lines_to_purchase: [{ product_line_template_id: agency.eventProductId, product_line_is_trip_excess_product: false }],
    },
    pathIds: { id: String(agency.eventProductId), bundleId: String(bundle.body.data.id) },
    bodyLimitBytes: app.container.config.BODY_LIMIT_BYTES,
    webhookSecret: app.container.config.PAYPROC_WEBHOOK_SECRET,
    runs: RUNS,
    seed: SEED,
  };
  const json = { 'content-type': 'application/json', 'x-api-key': agency.key };
  baseline = [
    { name: 'product list', request: { method: 'GET', path: '/api/v1/products?pageSize=5', headers: json } },
    { name: 'product', request: { method: 'GET', path: `/api/v1/products/${agency.eventProductId}`, headers: json } },
    { name: 'bundle', request: { method: 'GET', path: `/api/v1/bundles/${bundle.body.data.id}`, headers: json } },
    { name: 'bundle list', request: { method: 'GET', path: '/api/v1/bundles?limit=1&sort=insurance_bundled_product_name', headers: json } },
    { name: 'missing product', request: { method: 'GET', path: '/api/v1/products/2147483000', headers: json } },
    { name: 'no key', request: { method: 'GET', path: '/api/v1/products' } },
    {
      name: 'buyer exists',
      request: {
        method: 'POST',
        path: '/platform-seller-invites/checkIfBuyerExists',
        headers: json,
        body: JSON.stringify({ buyer_email: `fuzz.buyer.${rootAccountId}@example.com`, seller_slug: agency.slug, query_param: '' }),
      },
    },
    {
      name: 'catalog',
      request: {
        method: 'POST',
        path: '/public-quote/adminGetApprovedClientProducts',
        headers: json,
        body: JSON.stringify({
          idp_root_account_uuid: agency.rootUuid,
          connected_ins_products_pagination_response_length_limit: 5,
          selected_table_page: 0,
        }),
      },
    },
    {
      name: 'search',
      request: {
        method: 'POST',
        path: '/platform-agency-certs/searchTeammatePurchasedProducts',
        headers: json,
        body: JSON.stringify({ idp_teammate_uuid: agency.teammateUuid, search_text: '' }),
      },
    },
    { name: 'verify unknown', request: { method: 'GET', path: '/verify/COI-1-1-1-0000000000', headers: { accept: 'application/json' } } },
    { name: 'healthz', request: { method: 'GET', path: '/healthz' } },
  ];
  baselineAnswers = [];
  for (const b of baseline) baselineAnswers.push(`${b.name}: ${fingerprint(await send(app.baseUrl, b.request))}`);
  process.stdout.write(`\n[fuzz] seed ${SEED} (FUZZ_SEED to override), ${RUNS} random cases per kind and route (FUZZ_RUNS)\n`);
});

// Runs beside the fault suites' boots; their loads wait until this is done (lib/schedule.ts).
const turn = joinTurns('fuzz', PHASES.fuzzAndSecurity);

afterAll(async () => {
  turn.done();
  await app?.close();
  await worker?.shutdown();
});

test('when the route inventory is taken from the app, then every mounted route is documented and every documented operation is mounted', () => {
  expect(inventory.documentedButNotMounted).toEqual([]);
  expect(inventory.mountedButUndocumented).toEqual([]);
  const keys = inventory.routes.map((r) => r.key);
  // The inventory is not a hand list; this only guards against an empty or truncated walk.
  for (const k of [
    'GET /api/v1/products',
    'DELETE /api/v1/bundles/:bundleId',
    'POST /platform-seller-invites/newConnect',
    'POST /public-quote/processUserDirectPayprocPayment',
    'POST /platform-agency-root-certs/getInvoiceData',
    'POST /webhooks/payproc',
    'GET /verify/:code',
    'GET /readyz',
    'GET /docs',
  ]) {
    expect(keys).toContain(k);
  }
});

test('when the leak scanner reads a stack trace, a source path or a database error, then it reports each', () => {
  expect(findLeaks('TypeError: x\n    at handle (/work/main/src/webhooks/service.ts:12:3)')).toEqual(
    expect.arrayContaining(['stack frame', 'source path', 'error class']),
  );
  expect(findLeaks('insert into "payproc_events" ("id") values ($1) - null value in column "id" violates not-null constraint')).toEqual([
    'SQL error',
  ]);
  expect(findLeaks('{"code":"VALIDATION_ERROR","message":"Invalid request body: customerName: must not be empty"}')).toEqual([]);
});

describe('given every mounted route', () => {
  const tally = new Tally();
  const failures: string[] = [];
  let cases: FuzzCase[] = [];
  let started = 0;
  let retries = 0;

  beforeAll(async () => {
    cases = inventory.routes.flatMap((r) => casesFor(r, inventory, ctx));
    started = Date.now();
    for (const c of cases) {
      const res = await send(app.baseUrl, c.request, REQUEST_TIMEOUT_MS);
      tally.add(c.route.surface, c.kind, c.route.key, res.status, res.ms);
      if (res.retried) retries++;
      const problems: string[] = [];
      if (res.status === 0) problems.push(`no answer: ${res.error}`);
      else if (res.status >= 500) problems.push(`server error ${res.status}: ${res.text.slice(0, 200)}`);
      else if (c.expect === 'client-error' && (res.status < 400 || res.status >= 500))
        problems.push(`expected 4xx, got ${res.status}: ${res.text.slice(0, 160)}`);
      if (res.status > 0) problems.push(...(c.check?.(res) ?? []));
      if (res.status >= 400 && res.status < 500)
        problems.push(
          ...errorShapeProblems(
            c.unmatched ? (c.route.surface === 'public' || c.route.surface === 'system' ? 'system' : c.route.surface) : c.route.surface,
            c.route.gated,
            res,
          ),
        );
      // Static pages (the OpenAPI document, Swagger UI) are not scanned: they are code, not answers.
      if (!(c.route.surface === 'system' && res.status < 400)) {
        const leaks = findLeaks(res.text);
        if (leaks.length) problems.push(`leak (${leaks.join(', ')}): ${res.text.slice(0, 200)}`);
      }
      if (problems.length)
        failures.push(`[${c.kind}] ${c.request.method} ${c.request.path.slice(0, 100)} (${c.label}): ${problems.join('; ')}`);
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const t = tally.totals();
    publish(
      'fuzz-summary.md',
      tally.markdown('Fuzz pass over every route', [
        `seed ${SEED} (FUZZ_SEED), ${RUNS} random cases per kind and route (FUZZ_RUNS); ${inventory.routes.length} routes, ${t.sent} requests in ${seconds} s`,
        `answers: ${Object.entries(t.byClass)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}; failures: ${failures.length}; keep-alive resets retried: ${retries}`,
        `kinds: ${KINDS.join(', ')}`,
      ]) +
        (failures.length
          ? `\n### Failures (first 400)\n\n${failures
              .slice(0, 400)
              .map((f) => `- ${f}`)
              .join('\n')}\n`
          : ''),
    );
  });

  test('when fuzzed with a valid key and without, then every answer is a 4xx in the spec shape of its surface (2xx only for possibly legal input), never a 5xx, a hang or a leak', () => {
    expect(failures).toEqual([]);
  });

  test('when the pass is over, then every mounted route was fuzzed with at least 20 requests', () => {
    expect(uncoveredRoutes(inventory, tally.perRoute(), 20)).toEqual([]);
  });

  test('when prototype-pollution keys were sent, then no prototype of the process gained a property', () => {
    expect(({} as Record<string, unknown>)[PROTO_MARKER]).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(prototypeNames()).toEqual(prototypesBefore);
  });

  test('when the pass is over, then /healthz and /readyz answer 200 and ordinary requests answer as before the pass', async () => {
    expect((await send(app.baseUrl, { method: 'GET', path: '/healthz' })).status).toBe(200);
    expect((await send(app.baseUrl, { method: 'GET', path: '/readyz' })).status).toBe(200);
    const after: string[] = [];
    for (const b of baseline) after.push(`${b.name}: ${fingerprint(await send(app.baseUrl, b.request))}`);
    expect(after).toEqual(baselineAnswers);
  });

  test('when the pass is over, then the app logged no unhandled error', () => {
    const unhandled = app.logs.filter((l) => l.msg === 'unhandled error' || Number(l.level) >= 50);
    expect(unhandled.map((l) => `${String(l.msg)} ${JSON.stringify(l.err ?? '').slice(0, 300)}`)).toEqual([]);
  });
});
