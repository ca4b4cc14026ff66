/**
 * Products API (spec §2.1, §2.2, §4.2, §7.1) against real PostgreSQL and the real stripe-mock
 * (through a recording proxy, so the requests the processor received can be asserted).
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createKey, createQuestionSet, createRootAccount } from '../helpers/fixtures';
import { SPECIAL_EVENT_LIABILITY } from '../../src/question-sets/examples';
import type { ProcessorProxy } from '../helpers/processor-proxy';
import { useCatalogAccounts } from '../helpers/catalog-accounts';

const READ_FIELDS = [
  'id',
  'ins_product_line_product_name_customer',
  'ins_product_line_product_name_internal',
  'ins_product_line_product_description',
  'ins_product_line_product_default_price',
  'ins_product_line_product_insurer_name',
  'ins_product_line_claims_phone_number',
  'ins_product_line_agency_product_video_url',
  'ins_product_line_agency_root_accnt_id',
  'ins_product_line_master_policy_number',
  'ins_product_line_policy_number_two',
  'ins_product_line_deductible_dollar_amount',
  'ins_product_line_is_recurring',
  'ins_product_line_is_bundle',
  'ins_product_line_payproc_product_is_test_mode',
  'ins_product_line_payproc_product_uuid',
  'ins_product_line_question_set_id',
  'ins_product_line_mga_root_accnt_id',
  'ins_product_line_insurer_root_accnt_id',
  'ins_product_line_is_active',
  'ins_product_line_creation_datetime',
  'ins_product_line_last_updated_datetime',
  'ins_product_line_coverage_unit',
].sort();

const CREATE_RESPONSE_FIELDS = [
  'id',
  'payprocProductId',
  'payprocPriceId',
  'customerName',
  'internalName',
  'description',
  'defaultPrice',
  'insurerName',
  'claimsPhoneNumber',
  'agencyRootAccountID',
  'masterPolicyNumber',
  'questionSetId',
  'isTestMode',
  'coverageUnit',
  'createdAt',
].sort();

const FULL_BODY = {
  customerName: 'Special Event Liability',
  internalName: 'SEL-DAY',
  description: 'One-day special events',
  defaultPrice: 49.5,
  insurerName: 'Evergreen Mutual',
  claimsPhoneNumber: '+1-800-555-0134',
  masterPolicyNumber: 'EVM-GL-1',
  questionSetId: 0, // set in beforeAll to a real question set of the account
  deductible: 250,
  isRecurring: false,
  isTestMode: true,
};

const catalog = useCatalogAccounts();
let proxy: ProcessorProxy;
let app: TestApp;
let accountId: number;
let live: string;
let test_: string;
let otherLive: string;

beforeAll(() => {
  ({ proxy, app, accountId, live, testKey: test_, otherLive } = catalog);
  FULL_BODY.questionSetId = catalog.questionSetId;
});

const create = (key: string, body: unknown) => call(app.baseUrl, '/api/v1/products', { method: 'POST', key, body });
/** Product lines of one account (suites run in parallel against the same database). */
const countRows = async (rootAccountId = accountId) =>
  Number((await app.container.db('product_lines').where({ root_account_id: rootAccountId }).count({ n: '*' }))[0]!.n);

describe('POST /products', () => {
  test('when the body is complete, then 201 with the create-response shape and a processor product and price in test mode', async () => {
    proxy.requests.length = 0;
    const res = await create(live, FULL_BODY);
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(typeof res.body.message).toBe('string');
    expect(Object.keys(res.body.data).sort()).toEqual(CREATE_RESPONSE_FIELDS);
    expect(res.body.data).toMatchObject({
      customerName: 'Special Event Liability',
      internalName: 'SEL-DAY',
      defaultPrice: 49.5,
      agencyRootAccountID: accountId,
      questionSetId: FULL_BODY.questionSetId,
      isTestMode: true,
      payprocProductId: expect.stringMatching(/^prod_/),
      payprocPriceId: expect.stringMatching(/^price_/),
    });
    expect(new Date(res.body.data.createdAt).toISOString()).toBe(res.body.data.createdAt);

    const id = res.body.data.id;
    const [product, price] = proxy.requests;
    expect(product).toMatchObject({ method: 'POST', path: '/v1/products', idempotencyKey: `product-line-${id}-product` });
    expect(product!.params.get('name')).toBe('Special Event Liability');
    expect(product!.params.get('metadata[product_line_id]')).toBe(String(id));
    expect(price).toMatchObject({ method: 'POST', path: '/v1/prices', idempotencyKey: `product-line-${id}-price-v1` });
    expect(price!.params.get('unit_amount')).toBe('4950');
    expect(price!.params.get('currency')).toBe('usd');
    expect(price!.params.has('recurring[interval]')).toBe(false);
    // test-mode product → the test-mode secret
    expect(product!.authorization).toBe(`Bearer ${process.env.PAYPROC_TEST_SECRET_KEY ?? 'sk_test_123'}`);
  });

  test('when only the required fields are sent, then defaults fill the rest and the mode follows the key', async () => {
    const res = await create(live, { customerName: 'Equipment Damage Waiver', defaultPrice: 12 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      internalName: 'Equipment Damage Waiver',
      description: '',
      insurerName: '',
      questionSetId: null,
      isTestMode: false,
    });
    const viaTestKey = await create(test_, { customerName: 'Trip Excess', defaultPrice: 3.99 });
    expect(viaTestKey.body.data.isTestMode).toBe(true);
  });

  test('when the product is recurring, then its processor price is monthly recurring', async () => {
    proxy.requests.length = 0;
    const res = await create(live, { customerName: 'Annual Vendor Cover', defaultPrice: 20, isRecurring: true });
    expect(res.status).toBe(201);
    const price = proxy.requests.find((r) => r.path === '/v1/prices');
    expect(price!.params.get('recurring[interval]')).toBe('month');
  });

  test.each([
    ['missing required fields', {}, ['customerName', 'defaultPrice']],
    ['an unknown field', { customerName: 'X', defaultPrice: 1, color: 'red' }, ['color']],
    ['a price with three decimals', { customerName: 'X', defaultPrice: 1.234 }, ['defaultPrice']],
    ['a negative price', { customerName: 'X', defaultPrice: -1 }, ['defaultPrice']],
    ['a price as a string', { customerName: 'X', defaultPrice: '10' }, ['defaultPrice']],
    ['an empty name', { customerName: '   ', defaultPrice: 1 }, ['customerName']],
    ['a non-boolean flag', { customerName: 'X', defaultPrice: 1, isRecurring: 'yes' }, ['isRecurring']],
    ['a fractional question set id', { customerName: 'X', defaultPrice: 1, questionSetId: 1.5 }, ['questionSetId']],
  ])('when the body has %s, then 400 VALIDATION_ERROR naming each field and nothing is created', async (_l, body, fields) => {
    const before = await countRows();
    const res = await create(live, body);
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(fields);
    expect(await countRows()).toBe(before);
  });

  test('when agencyRootAccountID names another account, then 400 VALIDATION_ERROR; its own account is fine', async () => {
    const bad = await create(live, { customerName: 'X', defaultPrice: 1, agencyRootAccountID: accountId + 1000 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    const good = await create(live, { customerName: 'X', defaultPrice: 1, agencyRootAccountID: accountId });
    expect(good.status).toBe(201);
  });

  test("when questionSetId is unknown or another account's, then 400 VALIDATION_ERROR; a shared set is fine", async () => {
    const other = await createRootAccount(app.container, 'Template Owner');
    const foreign = await createQuestionSet(app.container, other.id, SPECIAL_EVENT_LIABILITY);
    const shared = await createQuestionSet(app.container, null, SPECIAL_EVENT_LIABILITY);
    for (const questionSetId of [foreign.id, 2_000_000_000]) {
      const res = await create(live, { customerName: 'X', defaultPrice: 1, questionSetId });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([{ path: 'questionSetId', message: expect.stringContaining(String(questionSetId)) }]);
    }
    expect((await create(live, { customerName: 'X', defaultPrice: 1, questionSetId: shared.id })).status).toBe(201);
  });

  test('when a string holds a NUL character or an unpaired surrogate, then 400 VALIDATION_ERROR naming the field and no product line is written', async () => {
    const before = await countRows();
    for (const customerName of ['Event\u0000Cover', 'Event \ud800 Cover', 'Event \udfff']) {
      const res = await create(live, { customerName, defaultPrice: 1 });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        error: {
          code: 'VALIDATION_ERROR',
          message: expect.stringContaining('customerName'),
          details: [{ path: 'customerName', message: expect.any(String) }],
        },
      });
    }
    const patched = await call(app.baseUrl, '/api/v1/products/1', { method: 'PATCH', key: live, body: { description: 'a\u0000b' } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details).toEqual([{ path: 'description', message: expect.any(String) }]);
    expect(await countRows()).toBe(before);
    // A paired surrogate (an astral character) is ordinary text.
    expect((await create(live, { customerName: 'Event 😀 Cover', defaultPrice: 1 })).status).toBe(201);
  });

  test('when a test key asks for a live product, then 400 VALIDATION_ERROR', async () => {
    const res = await create(test_, { customerName: 'X', defaultPrice: 1, isTestMode: false });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });
});

describe('processor failures leave nothing behind (spec §7.1)', () => {
  test.each([
    [402, { error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } }, 400, 'CARD_ERROR'],
    [400, { error: { type: 'invalid_request_error', message: 'No such product' } }, 400, 'INVALID_REQUEST'],
    [429, { error: { type: 'rate_limit_error', message: 'Too many requests' } }, 429, 'RATE_LIMIT_ERROR'],
    [500, { error: { type: 'api_error', message: 'Something went wrong' } }, 500, 'API_ERROR'],
  ])('when the price call fails with %i, then %i %s and no product line exists', async (status, body, expected, code) => {
    const before = await countRows();
    proxy.failNext({ method: 'POST', pathPrefix: '/v1/prices', status, body });
    const res = await create(live, { customerName: 'Doomed', defaultPrice: 5 });
    expect(res.status).toBe(expected);
    expect(res.body).toEqual({ success: false, error: { code, message: expect.any(String) } });
    expect(await countRows()).toBe(before);
  });

  test('when the processor rejects the credentials, then 401 AUTHENTICATION_ERROR without echoing the secret', async () => {
    const bad = await startTestApp({
      PAYPROC_API_BASE: process.env.PAYPROC_API_BASE ?? 'http://127.0.0.1:12111',
      PAYPROC_LIVE_SECRET_KEY: 'rk_not_a_valid_secret',
    });
    try {
      const acct = await createRootAccount(bad.container);
      const k = await createKey(bad.container, { rootAccountId: acct.id });
      const before = await countRows(acct.id);
      const res = await call(bad.baseUrl, '/api/v1/products', { method: 'POST', key: k.key, body: { customerName: 'X', defaultPrice: 1 } });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('AUTHENTICATION_ERROR');
      expect(res.text).not.toContain('rk_not_a_valid_secret');
      expect(await countRows(acct.id)).toBe(before);
    } finally {
      await bad.close();
    }
  });

  test('when the processor is unreachable, then 503 CONNECTION_ERROR and no product line exists', async () => {
    const down = await startTestApp({ PAYPROC_API_BASE: 'http://127.0.0.1:1' });
    try {
      const acct = await createRootAccount(down.container);
      const k = await createKey(down.container, { rootAccountId: acct.id });
      const before = await countRows(acct.id);
      const res = await call(down.baseUrl, '/api/v1/products', {
        method: 'POST',
        key: k.key,
        body: { customerName: 'X', defaultPrice: 1 },
      });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('CONNECTION_ERROR');
      expect(await countRows(acct.id)).toBe(before);
    } finally {
      await down.close();
    }
  });
});

describe('GET /products/{id}', () => {
  test('when the product exists in the account, then the §2.1 read shape with every field', async () => {
    const id = (await create(live, FULL_BODY)).body.data.id;
    const res = await call(app.baseUrl, `/api/v1/products/${id}`, { key: live });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(READ_FIELDS);
    expect(res.body.data).toMatchObject({
      id,
      ins_product_line_product_name_customer: 'Special Event Liability',
      ins_product_line_product_default_price: 49.5,
      ins_product_line_deductible_dollar_amount: 250,
      ins_product_line_agency_root_accnt_id: accountId,
      ins_product_line_is_recurring: 0,
      ins_product_line_is_bundle: 0,
      ins_product_line_payproc_product_is_test_mode: 1,
      ins_product_line_payproc_product_uuid: expect.stringMatching(/^prod_/),
      ins_product_line_question_set_id: FULL_BODY.questionSetId,
      ins_product_line_is_active: 1,
    });
  });

  test.each([['0'], ['-1'], ['abc'], ['1.5'], ['9999999999999']])('when the id is %s, then 400 VALIDATION_ERROR', async (id) => {
    const res = await call(app.baseUrl, `/api/v1/products/${id}`, { key: live });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  test('when no product has the id, then 404 NOT_FOUND', async () => {
    const res = await call(app.baseUrl, '/api/v1/products/2147483647', { key: live });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });

  test("when another account's key asks, then 404 NOT_FOUND on read and update", async () => {
    const id = (await create(live, FULL_BODY)).body.data.id;
    expect((await call(app.baseUrl, `/api/v1/products/${id}`, { key: otherLive })).status).toBe(404);
    const patched = await call(app.baseUrl, `/api/v1/products/${id}`, {
      method: 'PATCH',
      key: otherLive,
      body: { customerName: 'Hijacked' },
    });
    expect(patched.status).toBe(404);
    expect((await call(app.baseUrl, `/api/v1/products/${id}`, { key: live })).body.data.ins_product_line_product_name_customer).toBe(
      'Special Event Liability',
    );
  });

  test('when a test key asks for a live product, then 404; a live key sees test products', async () => {
    const liveId = (await create(live, { customerName: 'Live one', defaultPrice: 1, isTestMode: false })).body.data.id;
    const testId = (await create(live, { customerName: 'Test one', defaultPrice: 1, isTestMode: true })).body.data.id;
    expect((await call(app.baseUrl, `/api/v1/products/${liveId}`, { key: test_ })).status).toBe(404);
    expect((await call(app.baseUrl, `/api/v1/products/${testId}`, { key: test_ })).status).toBe(200);
    expect((await call(app.baseUrl, `/api/v1/products/${testId}`, { key: live })).status).toBe(200);
  });

  test('when DELETE is called, then 404 ROUTE_NOT_FOUND (there is no product delete)', async () => {
    const id = (await create(live, FULL_BODY)).body.data.id;
    const res = await call(app.baseUrl, `/api/v1/products/${id}`, { method: 'DELETE', key: live });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('ROUTE_NOT_FOUND');
  });
});

describe('GET /products', () => {
  let key: string;
  let ids: number[];
  beforeAll(async () => {
    const acct = await createRootAccount(app.container, 'Listing Agency');
    key = (await createKey(app.container, { rootAccountId: acct.id })).key;
    ids = [];
    for (let i = 0; i < 5; i++) {
      const res = await create(key, { customerName: `P${i}`, defaultPrice: i + 1, isTestMode: i % 2 === 0 });
      ids.push(res.body.data.id);
    }
    await call(app.baseUrl, `/api/v1/products/${ids[1]}`, { method: 'PATCH', key, body: { isActive: false } });
  });

  test('when listed with defaults, then newest first with metadata', async () => {
    const res = await call(app.baseUrl, '/api/v1/products', { key });
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: { id: number }) => p.id)).toEqual([...ids].reverse());
    expect(res.body.metadata).toEqual({ total: 5, count: 5, pagination: { pageSize: 10, pageIndex: 0 } });
    expect(Object.keys(res.body.data[0]).sort()).toEqual(READ_FIELDS);
  });

  test('when paged, then pages split the list and a page past the end is empty', async () => {
    const p0 = await call(app.baseUrl, '/api/v1/products?pageSize=2&pageIndex=0', { key });
    const p2 = await call(app.baseUrl, '/api/v1/products?pageSize=2&pageIndex=2', { key });
    const p9 = await call(app.baseUrl, '/api/v1/products?pageSize=2&pageIndex=9', { key });
    expect(p0.body.data.map((p: { id: number }) => p.id)).toEqual([ids[4], ids[3]]);
    expect(p2.body.data.map((p: { id: number }) => p.id)).toEqual([ids[0]]);
    expect(p2.body.metadata).toEqual({ total: 5, count: 1, pagination: { pageSize: 2, pageIndex: 2 } });
    expect(p9.body.data).toEqual([]);
    expect(p9.body.metadata.total).toBe(5);
    expect((await call(app.baseUrl, '/api/v1/products?pageSize=100', { key })).status).toBe(200);
  });

  test('when filtered by isActive and isTestMode, then only matching products', async () => {
    const inactive = await call(app.baseUrl, '/api/v1/products?isActive=false', { key });
    expect(inactive.body.data.map((p: { id: number }) => p.id)).toEqual([ids[1]]);
    const testMode = await call(app.baseUrl, '/api/v1/products?isTestMode=true', { key });
    expect(testMode.body.data.map((p: { id: number }) => p.id)).toEqual([ids[4], ids[2], ids[0]]);
    const both = await call(app.baseUrl, '/api/v1/products?isTestMode=false&isActive=true', { key });
    expect(both.body.data.map((p: { id: number }) => p.id)).toEqual([ids[3]]);
  });

  test("when agencyRootAccountID is another account's, then the list is empty", async () => {
    const res = await call(app.baseUrl, `/api/v1/products?agencyRootAccountID=${accountId}`, { key });
    expect(res.body.data).toEqual([]);
    expect(res.body.metadata.total).toBe(0);
  });

  test('when another account lists, then none of these products appear', async () => {
    const res = await call(app.baseUrl, '/api/v1/products?pageSize=100', { key: otherLive });
    const seen = new Set(res.body.data.map((p: { id: number }) => p.id));
    for (const id of ids) expect(seen.has(id)).toBe(false);
  });

  test.each([
    ['pageSize=101'],
    ['pageSize=0'],
    ['pageIndex=-1'],
    ['pageSize=1.5'],
    ['isActive=yes'],
    ['color=red'],
    ['pageSize=1&pageSize=2'],
    ['agencyRootAccountID=0'],
  ])('when the query is %s, then 400 QUERY_VALIDATION_ERROR', async (qs) => {
    const res = await call(app.baseUrl, `/api/v1/products?${qs}`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('QUERY_VALIDATION_ERROR');
  });
});

describe('PATCH /products/{id}', () => {
  /** Creates a product from FULL_BODY, forgets the processor calls so far, PATCHes it with `body` (expects 200). */
  const patchNew = async (body: Record<string, unknown>) => {
    const created = (await create(live, FULL_BODY)).body.data;
    proxy.requests.length = 0;
    const res = await call(app.baseUrl, `/api/v1/products/${created.id}`, { method: 'PATCH', key: live, body });
    expect(res.status).toBe(200);
    return { created, res };
  };

  test('when some fields are sent, then only they change and the processor product mirrors the name', async () => {
    const { created, res } = await patchNew({ customerName: 'Renamed', claimsPhoneNumber: '+1-800-555-0199' });
    expect(res.body.data).toMatchObject({
      ins_product_line_product_name_customer: 'Renamed',
      ins_product_line_claims_phone_number: '+1-800-555-0199',
      ins_product_line_product_name_internal: 'SEL-DAY',
      ins_product_line_product_default_price: 49.5,
    });
    expect(res.body.data.ins_product_line_last_updated_datetime >= res.body.data.ins_product_line_creation_datetime).toBe(true);
    expect(proxy.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`POST /v1/products/${created.payprocProductId}`]);
    expect(proxy.requests[0]!.params.get('name')).toBe('Renamed');
    expect(proxy.requests[0]!.idempotencyKey).toBe(`product-line-${created.id}-v2-product`);
  });

  test('when the price changes, then a new processor price is created and the old one retired', async () => {
    const { created, res } = await patchNew({ defaultPrice: 54.25 });
    expect(res.body.data.ins_product_line_product_default_price).toBe(54.25);
    const [newPrice, retire] = proxy.requests;
    expect(newPrice).toMatchObject({ method: 'POST', path: '/v1/prices', idempotencyKey: `product-line-${created.id}-price-v2` });
    expect(newPrice!.params.get('unit_amount')).toBe('5425');
    expect(newPrice!.params.get('product')).toBe(created.payprocProductId);
    expect(retire).toMatchObject({ method: 'POST', path: `/v1/prices/${created.payprocPriceId}` });
    expect(retire!.params.get('active')).toBe('false');
  });

  test('when nothing the processor holds changes, then the processor is not called', async () => {
    const { res } = await patchNew({ masterPolicyNumber: 'EVM-GL-2', defaultPrice: 49.5 });
    expect(res.body.data.ins_product_line_master_policy_number).toBe('EVM-GL-2');
    expect(proxy.requests).toEqual([]);
  });

  test('when isActive is false, then the product is deactivated here and at the processor', async () => {
    const created = (await create(live, FULL_BODY)).body.data;
    proxy.requests.length = 0;
    const res = await call(app.baseUrl, `/api/v1/products/${created.id}`, { method: 'PATCH', key: live, body: { isActive: false } });
    expect(res.body.data.ins_product_line_is_active).toBe(0);
    expect(proxy.requests[0]!.params.get('active')).toBe('false');
  });

  test('when agencyRootAccountID or isTestMode is sent with a different value, then 400 VALIDATION_ERROR; the same value is fine', async () => {
    const created = (await create(live, FULL_BODY)).body.data;
    const url = `/api/v1/products/${created.id}`;
    expect(
      (await call(app.baseUrl, url, { method: 'PATCH', key: live, body: { agencyRootAccountID: accountId + 1 } })).body.error.code,
    ).toBe('VALIDATION_ERROR');
    expect((await call(app.baseUrl, url, { method: 'PATCH', key: live, body: { isTestMode: false } })).body.error.code).toBe(
      'VALIDATION_ERROR',
    );
    expect(
      (await call(app.baseUrl, url, { method: 'PATCH', key: live, body: { isTestMode: true, agencyRootAccountID: accountId } })).status,
    ).toBe(200);
  });

  test('when the processor fails during an update, then the product line is unchanged', async () => {
    const created = (await create(live, FULL_BODY)).body.data;
    proxy.failNext({ method: 'POST', pathPrefix: '/v1/prices', status: 500, body: { error: { type: 'api_error', message: 'boom' } } });
    const res = await call(app.baseUrl, `/api/v1/products/${created.id}`, {
      method: 'PATCH',
      key: live,
      body: { defaultPrice: 99, description: 'changed' },
    });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('API_ERROR');
    const after = await call(app.baseUrl, `/api/v1/products/${created.id}`, { key: live });
    expect(after.body.data.ins_product_line_product_default_price).toBe(49.5);
    expect(after.body.data.ins_product_line_product_description).toBe('One-day special events');
  });

  test('when the body has an unknown field or a bad value, then 400 VALIDATION_ERROR', async () => {
    const created = (await create(live, FULL_BODY)).body.data;
    for (const body of [{ nope: 1 }, { defaultPrice: 'ten' }, { isActive: 'no' }]) {
      const res = await call(app.baseUrl, `/api/v1/products/${created.id}`, { method: 'PATCH', key: live, body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('OpenAPI', () => {
  test('when the document is fetched, then every products route is there with examples', async () => {
    const doc = (await call(app.baseUrl, '/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/v1/products']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/v1/products/{id}']).sort()).toEqual(['get', 'patch']);
    expect(doc.components.schemas.CreateProductRequest.example.customerName).toBeDefined();
    expect(doc.components.schemas.Product.example.ins_product_line_product_name_customer).toBeDefined();
  });
});
