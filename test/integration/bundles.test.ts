/**
 * Bundles API (spec §2.3, §2.5, §4.1, §7.1, §8; ARCHITECTURE §4) against the real Koa app and
 * real PostgreSQL. Products are inserted directly (`insertProductLine`): the products suite
 * covers their processor path. Every suite works inside its own root accounts, so totals and
 * orders are exact even though the database is shared.
 */
import type { Knex } from 'knex';
import { startTestApp, type TestApp } from '../helpers/app';
import { call, createKey, createQuestionSet, createRootAccount, createRootAccountOfKind, insertProductLine } from '../helpers/fixtures';
import { SPECIAL_EVENT_LIABILITY } from '../../src/question-sets/examples';
import { createBundlesRepository, type ListOptions, type Scope } from '../../src/bundles/repository';

const LIST_ITEM_FIELDS = [
  'id',
  'bundle_name',
  'customer_facing_name',
  'internally_facing_name',
  'bundle_description',
  'is_recurring',
  'is_test_mode',
  'product_line_count',
  'root_insurer_db_id',
  'root_mga_db_id',
  'root_seller_db_id',
  'question_set_id',
  'youtube_link',
  'creation_datetime',
  'last_updated_datetime',
].sort();
const SINGLE_FIELDS = [...LIST_ITEM_FIELDS, 'linked_products', 'primary_product'].sort();
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let app: TestApp;

/** One tenant: an agency account with a live and a test key. */
interface Tenant {
  accountId: number;
  live: string;
  test: string;
}

async function tenant(name = 'Bundle Agency'): Promise<Tenant> {
  const account = await createRootAccount(app.container, name);
  const live = await createKey(app.container, { rootAccountId: account.id, mode: 'live' });
  const test = await createKey(app.container, { rootAccountId: account.id, mode: 'test' });
  return { accountId: account.id, live: live.key, test: test.key };
}

const api = (method: string, path: string, key: string, body?: unknown) => call(app.baseUrl, `/api/v1${path}`, { method, key, body });

/** Creates a bundle and insists on 201, returning `data`. */
async function create(key: string, body: Record<string, unknown>): Promise<any> {
  const res = await api('POST', '/bundles', key, body);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body.data;
}

async function list(key: string, query: Record<string, string> = {}) {
  const qs = new URLSearchParams(query).toString();
  return api('GET', `/bundles${qs ? `?${qs}` : ''}`, key);
}

const idsOf = (res: { body: any }) => (res.body.data as { id: number }[]).map((b) => b.id);

function expectValidationError(res: { status: number; body: any }, code: string, messagePart?: string | RegExp) {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({
    success: false,
    error: { code, message: expect.any(String), ...(res.body?.error?.details ? { details: expect.any(Array) } : {}) },
  });
  if (messagePart) expect(res.body.error.message).toMatch(messagePart);
}

let a: Tenant; // the main account
let b: Tenant; // a second account, for tenancy
let insurerId: number;
let mgaId: number;
let pLive1: number; // A, live, 49.50
let pLive2: number; // A, live, 19.00
let pLive3: number; // A, live
let pTest1: number; // A, test
let pTest2: number; // A, test
let pOther: number; // B, live
let qsA: number; // a question set of A
let qsA2: number; // another question set of A
let qsB: number; // a question set of B

beforeAll(async () => {
  // The suite makes far more than 100 requests per key; the limiter has its own suite.
  app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000000' });
  a = await tenant('Agency A');
  b = await tenant('Agency B');
  insurerId = (await createRootAccountOfKind(app.container, 'insurer')).id;
  mgaId = (await createRootAccountOfKind(app.container, 'mga')).id;
  const c = app.container;
  pLive1 = await insertProductLine(c, { rootAccountId: a.accountId, customerName: 'Special Event Liability', defaultPriceMinor: 4950 });
  pLive2 = await insertProductLine(c, { rootAccountId: a.accountId, customerName: 'Event Equipment Cover', defaultPriceMinor: 1900 });
  pLive3 = await insertProductLine(c, { rootAccountId: a.accountId, customerName: 'Liquor Liability', defaultPriceMinor: 1 });
  pTest1 = await insertProductLine(c, {
    rootAccountId: a.accountId,
    customerName: 'Test Liability',
    defaultPriceMinor: 500,
    isTestMode: true,
  });
  pTest2 = await insertProductLine(c, {
    rootAccountId: a.accountId,
    customerName: 'Test Equipment',
    defaultPriceMinor: 250,
    isTestMode: true,
  });
  pOther = await insertProductLine(c, { rootAccountId: b.accountId, customerName: 'Other Agency Product' });
  qsA = (await createQuestionSet(c, a.accountId, SPECIAL_EVENT_LIABILITY)).id;
  qsA2 = (await createQuestionSet(c, a.accountId, SPECIAL_EVENT_LIABILITY)).id;
  qsB = (await createQuestionSet(c, b.accountId, SPECIAL_EVENT_LIABILITY)).id;
});

afterAll(async () => {
  await app.close();
});

describe('POST /bundles (spec §2.3, §4.1)', () => {
  test('when every field is sent, then 201 with the single-bundle shape and the first product as primary', async () => {
    const body = {
      bundle_name: 'Event Day Bundle',
      customer_facing_name: 'Event Day Protection',
      internally_facing_name: 'EVT-DAY-2026',
      bundle_description: 'Liability and equipment cover for one event day.',
      is_recurring: true,
      is_test_mode: false,
      root_insurer_db_id: insurerId,
      root_mga_db_id: mgaId,
      root_seller_db_id: a.accountId,
      question_set_id: qsA,
      product_ids: [pLive2, pLive1],
    };
    const res = await api('POST', '/bundles', a.live, body);

    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, data: expect.any(Object), message: expect.any(String) });
    const d = res.body.data;
    expect(Object.keys(d).sort()).toEqual(SINGLE_FIELDS);
    // Every field sent comes back as sent (the products as linked_products below).
    const { product_ids: _productIds, ...sent } = body;
    expect(d).toEqual({
      id: expect.any(Number),
      ...sent,
      product_line_count: 2,
      youtube_link: null,
      creation_datetime: expect.stringMatching(ISO),
      last_updated_datetime: expect.stringMatching(ISO),
      linked_products: [
        {
          id: pLive2,
          product_name: 'Event Equipment Cover',
          default_price: 19,
          is_primary: true,
          link_created_at: expect.stringMatching(ISO),
        },
        {
          id: pLive1,
          product_name: 'Special Event Liability',
          default_price: 49.5,
          is_primary: false,
          link_created_at: expect.stringMatching(ISO),
        },
      ],
      primary_product: { id: pLive2, product_name: 'Event Equipment Cover', default_price: 19, is_primary: true },
    });
    expect(d.last_updated_datetime).toBe(d.creation_datetime);
  });

  test('when only bundle_name is sent, then the defaults apply and there is no primary product', async () => {
    const d = await create(a.live, { bundle_name: '  Plain Bundle  ' });
    expect(d).toEqual({
      id: expect.any(Number),
      bundle_name: 'Plain Bundle',
      customer_facing_name: 'Plain Bundle',
      internally_facing_name: 'Plain Bundle',
      bundle_description: '',
      is_recurring: false,
      is_test_mode: false,
      product_line_count: 0,
      root_insurer_db_id: null,
      root_mga_db_id: null,
      root_seller_db_id: null,
      question_set_id: null,
      youtube_link: null,
      creation_datetime: expect.stringMatching(ISO),
      last_updated_datetime: expect.stringMatching(ISO),
      linked_products: [],
      primary_product: null,
    });
  });

  test('when a price has cents, then default_price is the exact major-unit amount', async () => {
    const d = await create(a.live, { bundle_name: 'Cents', root_seller_db_id: a.accountId, product_ids: [pLive3] });
    expect(d.linked_products[0].default_price).toBe(0.01);
    expect(d.primary_product).toEqual({ id: pLive3, product_name: 'Liquor Liability', default_price: 0.01, is_primary: true });
  });

  test('when a test key creates a bundle without is_test_mode, then it is test-mode', async () => {
    const d = await create(a.test, { bundle_name: 'Test by default' });
    expect(d.is_test_mode).toBe(true);
  });

  test('when a live key creates a test-mode bundle with test products, then 201', async () => {
    const d = await create(a.live, {
      bundle_name: 'Live key, test bundle',
      is_test_mode: true,
      root_seller_db_id: a.accountId,
      product_ids: [pTest1, pTest2],
    });
    expect(d.is_test_mode).toBe(true);
    expect(d.linked_products.map((l: any) => l.id)).toEqual([pTest1, pTest2]);
  });

  test.each([
    ['bundle_name is missing', {}, /bundle_name/],
    ['bundle_name is empty', { bundle_name: '' }, /bundle_name: must not be empty/],
    ['bundle_name is only spaces', { bundle_name: '   ' }, /bundle_name: must not be empty/],
    ['bundle_name is 256 characters', { bundle_name: 'x'.repeat(256) }, /bundle_name/],
    ['bundle_name is not a string', { bundle_name: 5 }, /bundle_name/],
    ['customer_facing_name is empty', { bundle_name: 'n', customer_facing_name: '' }, /customer_facing_name/],
    ['bundle_description is 5001 characters', { bundle_name: 'n', bundle_description: 'd'.repeat(5001) }, /bundle_description/],
    ['is_recurring is a string', { bundle_name: 'n', is_recurring: 'true' }, /is_recurring/],
    ['question_set_id is 0', { bundle_name: 'n', question_set_id: 0 }, /question_set_id/],
    ['root_seller_db_id is 1.5', { bundle_name: 'n', root_seller_db_id: 1.5 }, /root_seller_db_id/],
    ['product_ids is not an array', { bundle_name: 'n', product_ids: 5 }, /product_ids/],
    ['a product id is 0', { bundle_name: 'n', root_seller_db_id: 1, product_ids: [0] }, /product_ids\.0/],
    ['a product id is a string', { bundle_name: 'n', root_seller_db_id: 1, product_ids: ['1'] }, /product_ids\.0/],
  ])('when %s, then 400 VALIDATION_ERROR naming the field', async (_label, body, message) => {
    expectValidationError(await api('POST', '/bundles', a.live, body), 'VALIDATION_ERROR', message);
  });

  test('when bundle_name is exactly 255 characters and the description 5000, then 201', async () => {
    const d = await create(a.live, { bundle_name: 'n'.repeat(255), bundle_description: 'd'.repeat(5000) });
    expect(d.bundle_name).toHaveLength(255);
    expect(d.bundle_description).toHaveLength(5000);
  });

  test('when the body has an unknown field, then 400 VALIDATION_ERROR naming it (rule 3)', async () => {
    const res = await api('POST', '/bundles', a.live, { bundle_name: 'n', youtube_link: 'https://youtu.be/x', colour: 'red' });
    expectValidationError(res, 'VALIDATION_ERROR', /unknown fields: youtube_link, colour/);
  });

  test('when the body is a JSON array, then 400 VALIDATION_ERROR', async () => {
    expectValidationError(await api('POST', '/bundles', a.live, [{ bundle_name: 'n' }]), 'VALIDATION_ERROR');
  });

  test('when product_ids repeats an id, then 400 VALIDATION_ERROR naming the id and position', async () => {
    const res = await api('POST', '/bundles', a.live, {
      bundle_name: 'n',
      root_seller_db_id: a.accountId,
      product_ids: [pLive1, pLive2, pLive1],
    });
    expectValidationError(res, 'VALIDATION_ERROR', `product_ids.2: duplicate product id ${pLive1}`);
  });

  test('when product_ids has 100 ids, then 201 with 100 links; with 101, then 400 VALIDATION_ERROR', async () => {
    const rows = Array.from({ length: 101 }, (_, i) => ({
      root_account_id: a.accountId,
      customer_name: `Bulk ${i}`,
      internal_name: `Bulk ${i}`,
      default_price_minor: 100 + i,
      is_test_mode: false,
    }));
    const ids = (await app.container.db('product_lines').insert(rows).returning('id')).map((r: { id: number }) => r.id);

    const d = await create(a.live, { bundle_name: 'Hundred', root_seller_db_id: a.accountId, product_ids: ids.slice(0, 100) });
    expect(d.product_line_count).toBe(100);
    expect(d.linked_products.map((l: any) => l.id)).toEqual(ids.slice(0, 100));

    const res = await api('POST', '/bundles', a.live, { bundle_name: 'Too many', root_seller_db_id: a.accountId, product_ids: ids });
    expectValidationError(res, 'VALIDATION_ERROR', /product_ids/);
  });

  test('when product_ids is non-empty and no root id is sent, then 400 VALIDATION_ERROR (rule 2)', async () => {
    const res = await api('POST', '/bundles', a.live, { bundle_name: 'n', product_ids: [pLive1] });
    expectValidationError(res, 'VALIDATION_ERROR', /root_insurer_db_id, root_mga_db_id or root_seller_db_id is required/);
  });

  test('when product_ids is non-empty and the root ids are all null, then 400 VALIDATION_ERROR (rule 2)', async () => {
    const res = await api('POST', '/bundles', a.live, {
      bundle_name: 'n',
      root_insurer_db_id: null,
      root_mga_db_id: null,
      root_seller_db_id: null,
      product_ids: [pLive1],
    });
    expectValidationError(res, 'VALIDATION_ERROR', /is required/);
  });

  test('when product_ids is empty and no root id is sent, then 201', async () => {
    const d = await create(a.live, { bundle_name: 'Empty', product_ids: [] });
    expect(d.product_line_count).toBe(0);
  });

  test.each([['root_insurer_db_id'], ['root_mga_db_id'], ['root_seller_db_id']])(
    'when product_ids is non-empty and only %s is sent, then 201 (rule 2)',
    async (field) => {
      const value = { root_insurer_db_id: insurerId, root_mga_db_id: mgaId, root_seller_db_id: a.accountId }[field];
      const d = await create(a.live, { bundle_name: `Only ${field}`, [field]: value, product_ids: [pLive1] });
      expect(d[field]).toBe(value);
      expect(d.primary_product.id).toBe(pLive1);
    },
  );

  test('when a product id does not exist or belongs to another account, then 400 VALIDATION_ERROR with the same wording', async () => {
    const missing = 2_147_483_000;
    const r1 = await api('POST', '/bundles', a.live, { bundle_name: 'n', root_seller_db_id: a.accountId, product_ids: [pLive1, missing] });
    expectValidationError(r1, 'VALIDATION_ERROR');
    expect(r1.body.error.message).toBe(`Invalid request body: product_ids.1: product ${missing} not found`);

    const r2 = await api('POST', '/bundles', a.live, { bundle_name: 'n', root_seller_db_id: a.accountId, product_ids: [pLive1, pOther] });
    expectValidationError(r2, 'VALIDATION_ERROR');
    expect(r2.body.error.message).toBe(`Invalid request body: product_ids.1: product ${pOther} not found`);
  });

  test('when several product ids are wrong, then every one is listed in details', async () => {
    const res = await api('POST', '/bundles', a.live, {
      bundle_name: 'n',
      root_seller_db_id: a.accountId,
      product_ids: [pOther, pLive1, pTest1],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { path: 'product_ids.0', message: `product ${pOther} not found` },
      { path: 'product_ids.2', message: `product ${pTest1} is test-mode but the bundle is live-mode` },
    ]);
  });

  test('when a failed create had valid parts, then nothing is left behind', async () => {
    const t = await tenant();
    const p = await insertProductLine(app.container, { rootAccountId: t.accountId });
    const res = await api('POST', '/bundles', t.live, { bundle_name: 'n', root_seller_db_id: t.accountId, product_ids: [p, pOther] });
    expect(res.status).toBe(400);
    expect((await list(t.live)).body.metadata.total).toBe(0);
  });

  test('when a live bundle names a test product, then 400 VALIDATION_ERROR naming it', async () => {
    const res = await api('POST', '/bundles', a.live, {
      bundle_name: 'n',
      is_test_mode: false,
      root_seller_db_id: a.accountId,
      product_ids: [pTest1],
    });
    expectValidationError(res, 'VALIDATION_ERROR', `product_ids.0: product ${pTest1} is test-mode but the bundle is live-mode`);
  });

  test('when a test bundle names a live product, then 400 VALIDATION_ERROR naming it', async () => {
    const res = await api('POST', '/bundles', a.live, {
      bundle_name: 'n',
      is_test_mode: true,
      root_seller_db_id: a.accountId,
      product_ids: [pTest1, pLive1],
    });
    expectValidationError(res, 'VALIDATION_ERROR', `product_ids.1: product ${pLive1} is live-mode but the bundle is test-mode`);
  });

  test('when a test key names a live product of its own account, then 400 VALIDATION_ERROR as if it did not exist', async () => {
    const res = await api('POST', '/bundles', a.test, { bundle_name: 'n', root_seller_db_id: a.accountId, product_ids: [pLive1] });
    expectValidationError(res, 'VALIDATION_ERROR', `product_ids.0: product ${pLive1} not found`);
  });

  test('when a test key asks for a live-mode bundle, then 400 VALIDATION_ERROR on is_test_mode', async () => {
    const res = await api('POST', '/bundles', a.test, { bundle_name: 'n', is_test_mode: false });
    expectValidationError(res, 'VALIDATION_ERROR', /^Invalid request body: is_test_mode: /);
  });

  test('when valid insurer, MGA and seller ids are sent, then they are stored', async () => {
    const d = await create(a.live, {
      bundle_name: 'Reach',
      root_insurer_db_id: insurerId,
      root_mga_db_id: mgaId,
      root_seller_db_id: a.accountId,
    });
    expect([d.root_insurer_db_id, d.root_mga_db_id, d.root_seller_db_id]).toEqual([insurerId, mgaId, a.accountId]);
  });

  test.each([
    ['root_seller_db_id is another account', () => ({ root_seller_db_id: b.accountId }), 'root_seller_db_id'],
    ['root_seller_db_id does not exist', () => ({ root_seller_db_id: 2_147_483_000 }), 'root_seller_db_id'],
    ['root_insurer_db_id is an agency', () => ({ root_insurer_db_id: b.accountId }), 'root_insurer_db_id'],
    ['root_insurer_db_id is an MGA', () => ({ root_insurer_db_id: mgaId }), 'root_insurer_db_id'],
    ['root_insurer_db_id does not exist', () => ({ root_insurer_db_id: 2_147_483_000 }), 'root_insurer_db_id'],
    ['root_mga_db_id is an insurer', () => ({ root_mga_db_id: insurerId }), 'root_mga_db_id'],
    ['root_mga_db_id is the own agency', () => ({ root_mga_db_id: a.accountId }), 'root_mga_db_id'],
    ['root_mga_db_id does not exist', () => ({ root_mga_db_id: 2_147_483_000 }), 'root_mga_db_id'],
    ["question_set_id is another account's question set", () => ({ question_set_id: qsB }), 'question_set_id'],
    ['question_set_id does not exist', () => ({ question_set_id: 2_147_483_000 }), 'question_set_id'],
  ])('when %s, then 400 VALIDATION_ERROR naming the field', async (_label, fields, field) => {
    const res = await api('POST', '/bundles', a.live, { bundle_name: 'n', ...fields() });
    expectValidationError(res, 'VALIDATION_ERROR', new RegExp(`^Invalid request body: ${field}: `));
    expect(res.body.error.details).toEqual([{ path: field, message: expect.any(String) }]);
  });
});

describe('GET /bundles/{bundleId}', () => {
  test('when the bundle exists, then 200 with the same shape the create returned', async () => {
    const created = await create(a.live, { bundle_name: 'Get me', root_mga_db_id: mgaId, product_ids: [pLive1, pLive2] });
    const res = await api('GET', `/bundles/${created.id}`, a.live);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: created, message: expect.any(String) });
  });

  test('when no bundle has that id, then 404 NOT_FOUND', async () => {
    const res = await api('GET', '/bundles/2147483647', a.live);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'bundle 2147483647 not found' } });
  });

  const badIds = ['0', '-1', 'abc', '1.5', '9999999999999', '01', '1e3'];
  test.each(['GET', 'PATCH', 'DELETE'].flatMap((m) => badIds.map((id) => [m, id])))(
    'when %s is called with bundleId "%s", then 400 INVALID_BUNDLE_ID',
    async (method, id) => {
      const res = await api(method, `/bundles/${id}`, a.live, method === 'PATCH' ? { bundle_name: 'x' } : undefined);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error: { code: 'INVALID_BUNDLE_ID', message: expect.stringContaining('bundleId') } });
    },
  );
});

describe('PATCH /bundles/{bundleId}', () => {
  test('when some fields are sent, then only those change and last_updated_datetime moves forward', async () => {
    const before = await create(a.live, {
      bundle_name: 'Original',
      customer_facing_name: 'Original CF',
      bundle_description: 'old',
      question_set_id: qsA2,
      root_seller_db_id: a.accountId,
      product_ids: [pLive1],
    });
    const res = await api('PATCH', `/bundles/${before.id}`, a.live, {
      bundle_name: 'Renamed',
      bundle_description: 'new',
      is_recurring: true,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: expect.any(Object), message: expect.any(String) });
    const after = res.body.data;
    expect(after).toEqual({
      ...before,
      bundle_name: 'Renamed',
      bundle_description: 'new',
      is_recurring: true,
      last_updated_datetime: expect.stringMatching(ISO),
    });
    expect(Date.parse(after.last_updated_datetime)).toBeGreaterThan(Date.parse(before.last_updated_datetime));
    expect(after.creation_datetime).toBe(before.creation_datetime);
    expect((await api('GET', `/bundles/${before.id}`, a.live)).body.data).toEqual(after);
  });

  test('when an empty body is sent, then 200 with nothing changed but last_updated_datetime', async () => {
    const before = await create(a.live, { bundle_name: 'Touch' });
    const res = await api('PATCH', `/bundles/${before.id}`, a.live, {});
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ ...before, last_updated_datetime: expect.stringMatching(ISO) });
  });

  test('when a root id is set to null, then it is cleared', async () => {
    const before = await create(a.live, {
      bundle_name: 'Clear',
      root_insurer_db_id: insurerId,
      root_seller_db_id: a.accountId,
      question_set_id: qsA2,
    });
    const res = await api('PATCH', `/bundles/${before.id}`, a.live, { root_insurer_db_id: null, question_set_id: null });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ root_insurer_db_id: null, root_seller_db_id: a.accountId, question_set_id: null });
  });

  test('when product_ids is sent, then the links are replaced in order, the first is primary and kept links keep their date', async () => {
    const before = await create(a.live, { bundle_name: 'Relink', root_seller_db_id: a.accountId, product_ids: [pLive1, pLive2] });
    const res = await api('PATCH', `/bundles/${before.id}`, a.live, { product_ids: [pLive3, pLive2] });
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d.product_line_count).toBe(2);
    expect(d.linked_products.map((l: any) => [l.id, l.is_primary])).toEqual([
      [pLive3, true],
      [pLive2, false],
    ]);
    expect(d.primary_product).toEqual({ id: pLive3, product_name: 'Liquor Liability', default_price: 0.01, is_primary: true });
    expect(d.linked_products[1].link_created_at).toBe(before.linked_products[1].link_created_at);
    const rows = await app.container.db('bundle_products').where({ bundle_id: before.id }).orderBy('position');
    expect(rows.map((r) => r.product_line_id)).toEqual([pLive3, pLive2]);
  });

  test('when product_ids reorders the same products, then the primary moves to the new first id', async () => {
    const before = await create(a.live, { bundle_name: 'Reorder', root_seller_db_id: a.accountId, product_ids: [pLive1, pLive2, pLive3] });
    const d = (await api('PATCH', `/bundles/${before.id}`, a.live, { product_ids: [pLive2, pLive3, pLive1] })).body.data;
    expect(d.linked_products.map((l: any) => [l.id, l.is_primary])).toEqual([
      [pLive2, true],
      [pLive3, false],
      [pLive1, false],
    ]);
    expect(d.primary_product.id).toBe(pLive2);
  });

  test('when product_ids is empty, then every link is removed, the count is 0 and there is no primary', async () => {
    const before = await create(a.live, { bundle_name: 'Unlink', root_seller_db_id: a.accountId, product_ids: [pLive1, pLive2] });
    const res = await api('PATCH', `/bundles/${before.id}`, a.live, { product_ids: [] });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ product_line_count: 0, linked_products: [], primary_product: null });
    expect(await app.container.db('bundle_products').where({ bundle_id: before.id }).count({ n: '*' })).toEqual([{ n: '0' }]);
  });

  test('when product_ids is not sent, then the links stay as they were', async () => {
    const before = await create(a.live, { bundle_name: 'Keep', root_seller_db_id: a.accountId, product_ids: [pLive1, pLive2] });
    const d = (await api('PATCH', `/bundles/${before.id}`, a.live, { bundle_name: 'Keep 2' })).body.data;
    expect(d.linked_products).toEqual(before.linked_products);
    expect(d.product_line_count).toBe(2);
  });

  test('when the root ids would all be cleared while products stay linked, then 400 VALIDATION_ERROR (rule 2)', async () => {
    const before = await create(a.live, { bundle_name: 'Rule 2', root_seller_db_id: a.accountId, product_ids: [pLive1] });
    const res = await api('PATCH', `/bundles/${before.id}`, a.live, { root_seller_db_id: null });
    expectValidationError(res, 'VALIDATION_ERROR', /is required/);
    const ok = await api('PATCH', `/bundles/${before.id}`, a.live, { root_seller_db_id: null, product_ids: [] });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ root_seller_db_id: null, product_line_count: 0 });
  });

  test('when products are added to a bundle without root ids, then 400 unless a root id comes along (rule 2)', async () => {
    const before = await create(a.live, { bundle_name: 'Rule 2 add' });
    expectValidationError(
      await api('PATCH', `/bundles/${before.id}`, a.live, { product_ids: [pLive1] }),
      'VALIDATION_ERROR',
      /is required/,
    );
    const ok = await api('PATCH', `/bundles/${before.id}`, a.live, { product_ids: [pLive1], root_insurer_db_id: insurerId });
    expect(ok.status).toBe(200);
    expect(ok.body.data.product_line_count).toBe(1);
  });

  test('when is_test_mode changes while products of the old mode stay linked, then 400 VALIDATION_ERROR on is_test_mode', async () => {
    const before = await create(a.live, { bundle_name: 'Mode', root_seller_db_id: a.accountId, product_ids: [pLive1] });
    const res = await api('PATCH', `/bundles/${before.id}`, a.live, { is_test_mode: true });
    expectValidationError(res, 'VALIDATION_ERROR', `is_test_mode: linked product ${pLive1} is live-mode but the bundle is test-mode`);
  });

  test('when is_test_mode changes together with product_ids of the new mode, then 200', async () => {
    const before = await create(a.live, { bundle_name: 'Mode switch', root_seller_db_id: a.accountId, product_ids: [pLive1] });
    const res = await api('PATCH', `/bundles/${before.id}`, a.live, { is_test_mode: true, product_ids: [pTest2] });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ is_test_mode: true, product_line_count: 1, primary_product: { id: pTest2 } });
  });

  test('when product_ids on update names a product of the wrong mode, then 400 VALIDATION_ERROR naming it', async () => {
    const before = await create(a.live, { bundle_name: 'Mode 2', root_seller_db_id: a.accountId, product_ids: [pLive1] });
    const res = await api('PATCH', `/bundles/${before.id}`, a.live, { product_ids: [pLive2, pTest1] });
    expectValidationError(res, 'VALIDATION_ERROR', `product_ids.1: product ${pTest1} is test-mode but the bundle is live-mode`);
  });

  test('when an update fails validation, then nothing of it is written', async () => {
    const before = await create(a.live, { bundle_name: 'Atomic', root_seller_db_id: a.accountId, product_ids: [pLive1] });
    const res = await api('PATCH', `/bundles/${before.id}`, a.live, { bundle_name: 'Changed', product_ids: [pLive2, pOther] });
    expectValidationError(res, 'VALIDATION_ERROR', `product ${pOther} not found`);
    expect((await api('GET', `/bundles/${before.id}`, a.live)).body.data).toEqual(before);
  });

  test.each([
    ['an unknown field', { bundle_name: 'x', product_line_count: 9 }, /unknown field: product_line_count/],
    ['a repeated product id', { product_ids: [1, 1] }, /duplicate product id 1/],
    ['bundle_name null', { bundle_name: null }, /bundle_name/],
    ['bundle_name empty', { bundle_name: '' }, /bundle_name/],
    ['product_ids null', { product_ids: null }, /product_ids/],
  ])('when the body has %s, then 400 VALIDATION_ERROR', async (_label, body, message) => {
    const before = await create(a.live, { bundle_name: 'Bad patch' });
    expectValidationError(await api('PATCH', `/bundles/${before.id}`, a.live, body), 'VALIDATION_ERROR', message);
  });

  test("when a root id outside the key's reach is sent, then 400 VALIDATION_ERROR naming it", async () => {
    const before = await create(a.live, { bundle_name: 'Reach patch' });
    expectValidationError(
      await api('PATCH', `/bundles/${before.id}`, a.live, { root_seller_db_id: b.accountId }),
      'VALIDATION_ERROR',
      /root_seller_db_id/,
    );
    expectValidationError(
      await api('PATCH', `/bundles/${before.id}`, a.live, { root_insurer_db_id: mgaId }),
      'VALIDATION_ERROR',
      /root_insurer_db_id/,
    );
    expectValidationError(
      await api('PATCH', `/bundles/${before.id}`, a.live, { root_mga_db_id: insurerId }),
      'VALIDATION_ERROR',
      /root_mga_db_id/,
    );
  });

  test("when question_set_id names another account's question set or none, then 400 VALIDATION_ERROR with the same wording and nothing changes", async () => {
    const before = await create(a.live, { bundle_name: 'Question set patch', question_set_id: qsA });
    const foreign = await api('PATCH', `/bundles/${before.id}`, a.live, { question_set_id: qsB });
    const missing = await api('PATCH', `/bundles/${before.id}`, a.live, { question_set_id: 2_147_483_000 });
    expectValidationError(
      foreign,
      'VALIDATION_ERROR',
      /^Invalid request body: question_set_id: no question set \d+ is available to this account$/,
    );
    expectValidationError(
      missing,
      'VALIDATION_ERROR',
      /^Invalid request body: question_set_id: no question set \d+ is available to this account$/,
    );
    expect((await api('GET', `/bundles/${before.id}`, a.live)).body.data.question_set_id).toBe(qsA);
  });

  test('when no bundle has that id, then 404 NOT_FOUND', async () => {
    const res = await api('PATCH', '/bundles/2147483647', a.live, { bundle_name: 'x' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  test('when many updates replace the links at once, then product_line_count always equals the links', async () => {
    const before = await create(a.live, { bundle_name: 'Race', root_seller_db_id: a.accountId, product_ids: [pLive1] });
    const sets = [[pLive1], [pLive2, pLive3], [], [pLive3, pLive1, pLive2], [pLive2], [pLive1, pLive3]];
    const results = await Promise.all(sets.map((ids) => api('PATCH', `/bundles/${before.id}`, a.live, { product_ids: ids })));
    expect(results.map((r) => r.status)).toEqual(sets.map(() => 200));
    const bundle = await app.container.db('bundles').where({ id: before.id }).first();
    const links = await app.container.db('bundle_products').where({ bundle_id: before.id }).orderBy('position');
    expect(bundle.product_line_count).toBe(links.length);
    expect(sets).toContainEqual(links.map((l) => l.product_line_id));
    expect(links.filter((l) => l.is_primary).map((l) => l.position)).toEqual(links.length ? [0] : []);
  });
});

describe('DELETE /bundles/{bundleId}', () => {
  test('when a bundle is deleted, then 204 with an empty body, its links are gone and its products stay', async () => {
    const d = await create(a.live, { bundle_name: 'Doomed', root_seller_db_id: a.accountId, product_ids: [pLive1, pLive2] });
    const res = await api('DELETE', `/bundles/${d.id}`, a.live);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');

    expect((await api('GET', `/bundles/${d.id}`, a.live)).status).toBe(404);
    expect(await app.container.db('bundle_products').where({ bundle_id: d.id }).count({ n: '*' })).toEqual([{ n: '0' }]);
    expect(await app.container.db('product_lines').whereIn('id', [pLive1, pLive2]).count({ n: '*' })).toEqual([{ n: '2' }]);
    // and they can still be linked
    expect(
      (await create(a.live, { bundle_name: 'Reuse', root_seller_db_id: a.accountId, product_ids: [pLive1, pLive2] })).product_line_count,
    ).toBe(2);
  });

  test('when the bundle was already deleted, then 404 NOT_FOUND', async () => {
    const d = await create(a.live, { bundle_name: 'Twice' });
    expect((await api('DELETE', `/bundles/${d.id}`, a.live)).status).toBe(204);
    const again = await api('DELETE', `/bundles/${d.id}`, a.live);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: `bundle ${d.id} not found` } });
  });
});

describe('tenancy (ARCHITECTURE §4)', () => {
  test("when another account's key reads, changes or deletes a bundle, then 404 NOT_FOUND and the bundle is untouched", async () => {
    const mine = await create(a.live, { bundle_name: 'Private', root_seller_db_id: a.accountId, product_ids: [pLive1] });
    const expected = { success: false, error: { code: 'NOT_FOUND', message: `bundle ${mine.id} not found` } };

    const get = await api('GET', `/bundles/${mine.id}`, b.live);
    const patch = await api('PATCH', `/bundles/${mine.id}`, b.live, { bundle_name: 'Stolen' });
    const del = await api('DELETE', `/bundles/${mine.id}`, b.live);
    for (const res of [get, patch, del]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(expected);
    }
    expect((await api('GET', `/bundles/${mine.id}`, a.live)).body.data).toEqual(mine);
  });

  test('when a second account lists, then it sees and counts only its own bundles', async () => {
    const x = await tenant('List X');
    const y = await tenant('List Y');
    const xs = [await create(x.live, { bundle_name: 'shared name' }), await create(x.live, { bundle_name: 'shared name 2' })];
    const ys = [await create(y.live, { bundle_name: 'shared name' })];

    const lx = await list(x.live, { search: 'shared name' });
    const ly = await list(y.live);
    expect(idsOf(lx).sort()).toEqual(xs.map((d) => d.id).sort());
    expect(lx.body.metadata.total).toBe(2);
    expect(idsOf(ly)).toEqual([ys[0].id]);
    expect(ly.body.metadata.total).toBe(1);
  });
});

describe('test-mode keys (decision shared with products)', () => {
  let t: Tenant;
  let liveBundle: any;
  let testBundle: any;

  beforeAll(async () => {
    t = await tenant('Modes');
    liveBundle = await create(t.live, { bundle_name: 'live one' });
    testBundle = await create(t.live, { bundle_name: 'test one', is_test_mode: true });
  });

  test('when a test key reads, changes or deletes a live bundle, then 404 NOT_FOUND and it is untouched', async () => {
    for (const res of [
      await api('GET', `/bundles/${liveBundle.id}`, t.test),
      await api('PATCH', `/bundles/${liveBundle.id}`, t.test, { bundle_name: 'x' }),
      await api('DELETE', `/bundles/${liveBundle.id}`, t.test),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect((await api('GET', `/bundles/${liveBundle.id}`, t.live)).body.data).toEqual(liveBundle);
  });

  test('when a test key lists, then only test-mode bundles are listed and counted; a live key sees both', async () => {
    const asTest = await list(t.test);
    expect(idsOf(asTest)).toEqual([testBundle.id]);
    expect(asTest.body.metadata.total).toBe(1);
    expect((await list(t.test, { test_mode: 'false' })).body.metadata.total).toBe(0);

    const asLive = await list(t.live);
    expect(idsOf(asLive)).toEqual([testBundle.id, liveBundle.id]);
    expect(asLive.body.metadata.total).toBe(2);
  });

  test('when a test key reads and patches a test bundle, then 200; patching it to live is 400 VALIDATION_ERROR', async () => {
    expect((await api('GET', `/bundles/${testBundle.id}`, t.test)).status).toBe(200);
    const ok = await api('PATCH', `/bundles/${testBundle.id}`, t.test, { bundle_description: 'by test key', is_test_mode: true });
    expect(ok.status).toBe(200);
    expect(ok.body.data.bundle_description).toBe('by test key');
    expectValidationError(
      await api('PATCH', `/bundles/${testBundle.id}`, t.test, { is_test_mode: false }),
      'VALIDATION_ERROR',
      /is_test_mode/,
    );
  });

  test('when a test key deletes a test bundle, then 204', async () => {
    const d = await create(t.test, { bundle_name: 'test doomed' });
    expect((await api('DELETE', `/bundles/${d.id}`, t.test)).status).toBe(204);
  });

  test('when a live key switches a bundle without products to test mode, then the test key can see it', async () => {
    const d = await create(t.live, { bundle_name: 'switch' });
    expect((await api('PATCH', `/bundles/${d.id}`, t.live, { is_test_mode: true })).status).toBe(200);
    expect((await api('GET', `/bundles/${d.id}`, t.test)).status).toBe(200);
  });
});

describe('GET /bundles pagination (spec §2.5, §4.1, §8)', () => {
  let t: Tenant;
  let created: number[]; // ids in creation order

  beforeAll(async () => {
    t = await tenant('Pages');
    created = [];
    for (let i = 0; i < 25; i++) created.push((await create(t.live, { bundle_name: `page ${String(i).padStart(2, '0')}` })).id);
  });

  const newestFirst = () => [...created].reverse();

  test('when no parameters are sent, then page 1 of 20, newest first, with metadata and hasMore', async () => {
    const res = await list(t.live);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: expect.any(Array),
      message: expect.any(String),
      metadata: { total: 25, count: 20, pagination: { pageSize: 20, pageIndex: 0 }, hasMore: true },
    });
    expect(idsOf(res)).toEqual(newestFirst().slice(0, 20));
  });

  test('when a list is returned, then its items have exactly the list fields (no linked_products or primary_product)', async () => {
    const res = await list(t.live, { limit: '3' });
    for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(LIST_ITEM_FIELDS);
  });

  test('when the last page is asked for, then it holds the rest and hasMore is false', async () => {
    const res = await list(t.live, { page: '2' });
    expect(res.body.metadata).toEqual({ total: 25, count: 5, pagination: { pageSize: 20, pageIndex: 1 }, hasMore: false });
    expect(idsOf(res)).toEqual(newestFirst().slice(20));
  });

  test('when the page ends exactly at the total, then hasMore is false; one page earlier it is true', async () => {
    expect((await list(t.live, { limit: '5', page: '5' })).body.metadata).toEqual({
      total: 25,
      count: 5,
      pagination: { pageSize: 5, pageIndex: 4 },
      hasMore: false,
    });
    expect((await list(t.live, { limit: '5', page: '4' })).body.metadata.hasMore).toBe(true);
  });

  test('when a page past the end is asked for, then 200 with no items and the right total', async () => {
    const res = await list(t.live, { page: '3' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.metadata).toEqual({ total: 25, count: 0, pagination: { pageSize: 20, pageIndex: 2 }, hasMore: false });
    expect((await list(t.live, { page: '1000000' })).body.metadata.count).toBe(0);
  });

  test('when limit is 100, then every bundle comes in one page; limit 1 gives one', async () => {
    const res = await list(t.live, { limit: '100' });
    expect(res.body.metadata).toEqual({ total: 25, count: 25, pagination: { pageSize: 100, pageIndex: 0 }, hasMore: false });
    expect(idsOf(await list(t.live, { limit: '1', page: '25' }))).toEqual([created[0]]);
  });

  test.each([
    ['limit=101', { limit: '101' }, /limit/],
    ['limit=0', { limit: '0' }, /limit/],
    ['limit=1.5', { limit: '1.5' }, /limit/],
    ['limit=', { limit: '' }, /limit/],
    ['page=0', { page: '0' }, /page/],
    ['page=-1', { page: '-1' }, /page/],
    ['page=abc', { page: 'abc' }, /page/],
    ['sort=id', { sort: 'id' }, /sort/],
    ['order=up', { order: 'up' }, /order/],
    ['test_mode=1', { test_mode: '1' }, /test_mode/],
    ['is_recurring=yes', { is_recurring: 'yes' }, /is_recurring/],
    ['root_insurer_db_id=0', { root_insurer_db_id: '0' }, /root_insurer_db_id/],
    ['root_mga_db_id=abc', { root_mga_db_id: 'abc' }, /root_mga_db_id/],
    ['root_seller_db_id=-3', { root_seller_db_id: '-3' }, /root_seller_db_id/],
    ['search of 256 characters', { search: 's'.repeat(256) }, /search/],
    ['an unknown parameter', { pageSize: '10' }, /unknown field: pageSize/],
  ])('when the query has %s, then 400 QUERY_VALIDATION_ERROR naming it', async (_label, query, message) => {
    expectValidationError(await list(t.live, query), 'QUERY_VALIDATION_ERROR', message);
  });

  test('when a parameter is repeated, then 400 QUERY_VALIDATION_ERROR', async () => {
    expectValidationError(await api('GET', '/bundles?page=1&page=2', t.live), 'QUERY_VALIDATION_ERROR', /page/);
  });
});

describe('GET /bundles sorting (spec §4.1)', () => {
  let t: Tenant;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    t = await tenant('Sorts');
    const ps = await Promise.all([1, 2].map(() => insertProductLine(app.container, { rootAccountId: t.accountId })));
    // Lower-case names keep the expected orders independent of the database collation.
    const specs: [string, string, string, number[]][] = [
      ['b1', 'bravo', 'zulu', ps],
      ['b2', 'alpha', 'yankee', []],
      ['b3', 'charlie', 'xray', [ps[0]!]],
      ['b4', 'bravo', 'xray', ps],
      ['b5', 'delta', 'whiskey', [ps[1]!]],
    ];
    for (const [key, name, cf, productIds] of specs) {
      ids[key] = (
        await create(t.live, { bundle_name: name, customer_facing_name: cf, root_seller_db_id: t.accountId, product_ids: productIds })
      ).id;
    }
    // Updated order becomes b3, b4, b5, b2, b1.
    await api('PATCH', `/bundles/${ids.b2}`, t.live, { bundle_description: 'touched' });
    await api('PATCH', `/bundles/${ids.b1}`, t.live, { bundle_description: 'touched' });
  });

  const ascending: Record<string, string[]> = {
    creation_datetime: ['b1', 'b2', 'b3', 'b4', 'b5'],
    last_updated_datetime: ['b3', 'b4', 'b5', 'b2', 'b1'],
    insurance_bundled_product_customer_facing_name: ['b5', 'b3', 'b4', 'b2', 'b1'],
    insurance_bundled_product_name: ['b2', 'b1', 'b4', 'b3', 'b5'],
    insurance_bundled_product_product_line_count: ['b2', 'b3', 'b5', 'b1', 'b4'],
  };

  test.each(
    Object.keys(ascending).flatMap((sort) => [
      [sort, 'asc'],
      [sort, 'desc'],
    ]),
  )('when sorted by %s %s, then the order follows it with ties broken by id the same way', async (sort, order) => {
    const expected = order === 'asc' ? ascending[sort]! : [...ascending[sort]!].reverse();
    const res = await list(t.live, { sort, order });
    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual(expected.map((k) => ids[k]));
  });

  test('when only sort is sent, then the order defaults to desc', async () => {
    const res = await list(t.live, { sort: 'insurance_bundled_product_name' });
    expect(idsOf(res)).toEqual(['b5', 'b3', 'b4', 'b1', 'b2'].map((k) => ids[k]));
  });

  test('when the list is sorted by product count, then the counts are the real link counts', async () => {
    const res = await list(t.live, { sort: 'insurance_bundled_product_product_line_count', order: 'asc' });
    expect(res.body.data.map((d: any) => d.product_line_count)).toEqual([0, 1, 1, 2, 2]);
  });
});

describe('GET /bundles filters (spec §4.1)', () => {
  let t: Tenant;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    t = await tenant('Filters');
    ids.f1 = (await create(t.live, { bundle_name: 'f1', is_recurring: true, root_insurer_db_id: insurerId })).id;
    ids.f2 = (await create(t.live, { bundle_name: 'f2', root_mga_db_id: mgaId })).id;
    ids.f3 = (await create(t.live, { bundle_name: 'f3', is_test_mode: true, is_recurring: true, root_seller_db_id: t.accountId })).id;
    ids.f4 = (await create(t.live, { bundle_name: 'f4', is_test_mode: true, root_insurer_db_id: insurerId, root_mga_db_id: mgaId })).id;
  });

  test.each([
    ['test_mode=true', () => ({ test_mode: 'true' }), ['f3', 'f4']],
    ['test_mode=false', () => ({ test_mode: 'false' }), ['f1', 'f2']],
    ['is_recurring=true', () => ({ is_recurring: 'true' }), ['f1', 'f3']],
    ['is_recurring=false', () => ({ is_recurring: 'false' }), ['f2', 'f4']],
    ['root_insurer_db_id', () => ({ root_insurer_db_id: String(insurerId) }), ['f1', 'f4']],
    ['root_mga_db_id', () => ({ root_mga_db_id: String(mgaId) }), ['f2', 'f4']],
    ['root_seller_db_id', () => ({ root_seller_db_id: String(t.accountId) }), ['f3']],
    ['root_seller_db_id of another account', () => ({ root_seller_db_id: String(a.accountId) }), []],
    ['test_mode=true and root_insurer_db_id', () => ({ test_mode: 'true', root_insurer_db_id: String(insurerId) }), ['f4']],
    ['is_recurring=true and test_mode=false', () => ({ is_recurring: 'true', test_mode: 'false' }), ['f1']],
  ])('when filtered by %s, then exactly the matching bundles are listed and counted', async (_label, query, expected) => {
    const res = await list(t.live, { ...query(), sort: 'creation_datetime', order: 'asc' });
    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual(expected.map((k) => ids[k]));
    expect(res.body.metadata.total).toBe(expected.length);
  });
});

describe('GET /bundles search (spec §4.1)', () => {
  let t: Tenant;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    t = await tenant('Search');
    const make = async (key: string, body: Record<string, unknown>) => {
      ids[key] = (await create(t.live, { bundle_name: key, ...body })).id;
    };
    await make('q1', { bundle_name: 'Summer Festival Cover' });
    await make('q2', { customer_facing_name: 'WINTER Gala' });
    await make('q3', { internally_facing_name: 'INT-100%-promo' });
    await make('q4', { bundle_description: `covers under_score, back\\slash, O'Brien and "quoted"` });
    await make('q5', { bundle_name: 'plain 100 percent' });
    await make('q6', { bundle_name: 'underXscore' });
    // Same words in another account must never be found.
    await create(b.live, { bundle_name: 'Summer Festival Cover' });
  });

  test('when the search holds a NUL character, then 400 QUERY_VALIDATION_ERROR naming it', async () => {
    const res = await call(app.baseUrl, '/api/v1/bundles?search=Summer%00Festival', { key: t.live });
    expectValidationError(res, 'QUERY_VALIDATION_ERROR', /^Invalid query parameter: search: /);
  });

  const search = async (text: string) => {
    const res = await list(t.live, { search: text, sort: 'creation_datetime', order: 'asc' });
    expect(res.status).toBe(200);
    expect(res.body.metadata.total).toBe(res.body.data.length);
    return idsOf(res);
  };
  const keys = (...k: string[]) => k.map((x) => ids[x]);

  test.each([
    ['festival', ['q1']],
    ['FESTIVAL', ['q1']],
    ['sUmMeR fEsTiVaL', ['q1']],
    ['winter gala', ['q2']],
    ['int-100', ['q3']],
    ["o'brien", ['q4']],
  ])('when searching "%s", then matching is a case-insensitive substring over names and description', async (text, expected) => {
    expect(await search(text)).toEqual(keys(...expected));
  });

  test('when the search holds %, then it matches a literal percent sign only', async () => {
    expect(await search('100%')).toEqual(keys('q3'));
    expect(await search('%')).toEqual(keys('q3'));
  });

  test('when the search holds _, then it matches a literal underscore only', async () => {
    expect(await search('under_score')).toEqual(keys('q4'));
    expect(await search('_')).toEqual(keys('q4'));
  });

  test('when the search holds quotes or a backslash, then they match themselves', async () => {
    expect(await search(`O'Brien`)).toEqual(keys('q4'));
    expect(await search('"quoted"')).toEqual(keys('q4'));
    expect(await search('\\')).toEqual(keys('q4'));
    expect(await search(`'; drop table bundles; --`)).toEqual([]);
  });

  test('when the search is empty, then there is no filter', async () => {
    expect(await search('')).toEqual(keys('q1', 'q2', 'q3', 'q4', 'q5', 'q6'));
  });

  test('when the search is 255 characters, then 200', async () => {
    expect(await search('z'.repeat(255))).toEqual([]);
  });

  test('when search is combined with a filter and paging, then total counts every match', async () => {
    const res = await list(t.live, { search: 'e', limit: '2', test_mode: 'false' });
    expect(res.body.metadata.count).toBe(2);
    expect(res.body.metadata.total).toBe(5); // q3's text has no "e"
    expect(res.body.metadata.hasMore).toBe(true);
  });
});

describe('query plans at scale (issue: indexes for 100 000 bundles)', () => {
  test('when thousands of bundles exist, then the list, each sort, the filters and search use their indexes', async () => {
    const db = app.container.db;
    const t = await tenant('Plans');
    const rows = Array.from({ length: 5000 }, (_, i) => ({
      root_account_id: t.accountId,
      bundle_name: `generated bundle ${i}`,
      customer_facing_name: `Customer name ${i % 97}`,
      internally_facing_name: `INT-${i}`,
      bundle_description: i % 1000 === 0 ? `rare needle-${i} text` : 'ordinary description',
      is_test_mode: i % 50 === 0,
      root_insurer_db_id: i % 500 === 0 ? insurerId : null,
      created_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000),
    }));
    await db.batchInsert('bundles', rows, 1000);
    // A bulk insert leaves its trigram entries in the GIN pending list, which makes the index
    // look expensive until autovacuum merges it; merge now so the plan reflects steady state.
    await db.raw(`select gin_clean_pending_list('bundles_search_trgm_idx')`);
    await db.raw('analyze bundles');

    const repo = createBundlesRepository(db);
    const scope: Scope = { rootAccountId: t.accountId, testModeOnly: false };
    const defaults: ListOptions = { filter: {}, sort: 'created_at', order: 'desc', limit: 20, offset: 0 };

    /**
     * EXPLAIN of one statement. On a few thousand rows the planner may fairly prefer a
     * sequential scan; when the natural plan misses the index, `enable_seqscan = off` (local to
     * the transaction) shows that the index can serve the query, which is what matters at
     * 100 000 rows.
     */
    const plan = async (q: { toSQL(): Knex.Sql }, forceIndex: boolean) => {
      const { sql, bindings } = q.toSQL();
      return db.transaction(async (trx) => {
        if (forceIndex) await trx.raw('set local enable_seqscan = off');
        const r = await trx.raw(`explain ${sql}`, bindings);
        const text = (r.rows as { 'QUERY PLAN': string }[]).map((x) => x['QUERY PLAN']).join('\n');
        if (process.env.SHOW_PLANS) console.log(`${forceIndex ? '[seqscan off] ' : ''}${sql}\n${text}`);
        return text;
      });
    };
    const planUsing = async (q: Parameters<typeof plan>[0], index: string) => {
      const natural = await plan(q, false);
      return natural.includes(index) ? natural : plan(q, true);
    };

    // The default page: a backward scan of (root_account_id, created_at, id) that stops at 20 rows.
    const page = await plan(repo.listQueries(scope, defaults).page, false);
    expect(page).toContain('bundles_account_created_at_idx');
    expect(page).not.toMatch(/Seq Scan|Sort/);

    // A test key: its page and its count go through a test-mode index — the partial one
    // (migration 20261122000350) or the (account, mode, recurring) one (20261122000500) — so test
    // bundles stay cheap among many live ones.
    const testKey = repo.listQueries({ ...scope, testModeOnly: true }, defaults);
    const modeIndex = /bundles_account_test_created_idx|bundles_account_mode_recurring_created_idx/;
    for (const q of [testKey.page, testKey.count]) {
      const p = await planUsing(q, 'bundles_account_test_created_idx');
      expect(p).toMatch(modeIndex);
      expect(p).not.toContain('Seq Scan');
    }

    // A selective root-id filter: page and count use its partial index, not a scan of the account.
    const byInsurer = repo.listQueries(scope, { ...defaults, filter: { rootInsurerDbId: insurerId } });
    expect(await planUsing(byInsurer.page, 'bundles_account_insurer_created_idx')).toContain('bundles_account_insurer_created_idx');
    expect(await planUsing(byInsurer.count, 'bundles_account_insurer_created_idx')).toContain('bundles_account_insurer_created_idx');

    // Every sort key has its own (root_account_id, column, id) index.
    for (const sort of ['updated_at', 'customer_facing_name', 'bundle_name', 'product_line_count'] as const) {
      for (const order of ['asc', 'desc'] as const) {
        const p = await planUsing(repo.listQueries(scope, { ...defaults, sort, order }).page, `bundles_account_${sort}_idx`);
        expect(p).toContain(`bundles_account_${sort}_idx`);
      }
    }

    // Search: page and count both go through the trigram index.
    const searched = repo.listQueries(scope, { ...defaults, filter: { search: 'Needle-' } });
    const searchPage = await planUsing(searched.page, 'bundles_search_trgm_idx');
    const searchCount = await planUsing(searched.count, 'bundles_search_trgm_idx');
    expect(searchPage).toContain('bundles_search_trgm_idx');
    expect(searchCount).toContain('bundles_search_trgm_idx');

    // And the API answers the same queries with exact totals.
    expect((await list(t.live, { search: 'NEEDLE-' })).body.metadata.total).toBe(5);
    expect((await list(t.live, { root_insurer_db_id: String(insurerId) })).body.metadata.total).toBe(10);
    expect((await list(t.test)).body.metadata.total).toBe(100);

    // Keep the shared table small for the suites that run beside this one.
    await db('bundles').where({ root_account_id: t.accountId }).delete();
  });
});

describe('OpenAPI (issue: every route, body and response documented)', () => {
  test('when /openapi.json is fetched, then every bundle route is there with its schemas, examples and errors', async () => {
    const doc = (await call(app.baseUrl, '/openapi.json')).body;
    const collection = doc.paths['/api/v1/bundles'];
    const item = doc.paths['/api/v1/bundles/{bundleId}'];
    expect(Object.keys(collection).sort()).toEqual(['get', 'post']);
    expect(Object.keys(item).sort()).toEqual(['delete', 'get', 'patch']);

    expect(collection.post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CreateBundleRequest');
    // 409: a reused or still-running Idempotency-Key.
    expect(Object.keys(collection.post.responses).sort()).toEqual(['201', '400', '403', '409', '413', '429', '500']);
    expect(collection.get.parameters.map((p: any) => p.name).sort()).toEqual([
      'is_recurring',
      'limit',
      'order',
      'page',
      'root_insurer_db_id',
      'root_mga_db_id',
      'root_seller_db_id',
      'search',
      'sort',
      'test_mode',
    ]);
    expect(item.patch.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/UpdateBundleRequest');
    expect(item.get.parameters).toEqual([
      expect.objectContaining({ name: 'bundleId', in: 'path', required: true }),
      { $ref: '#/components/parameters/ApiVersion' },
      { $ref: '#/components/parameters/PayprocAccount' },
    ]);
    expect(Object.keys(item.delete.responses)).toEqual(expect.arrayContaining(['204', '400', '404']));
    expect(Object.keys(item.get.responses)).toEqual(expect.arrayContaining(['200', '400', '403', '404', '429', '500']));

    const schemas = doc.components.schemas;
    expect(schemas.CreateBundleRequest.additionalProperties).toBe(false);
    for (const id of ['CreateBundleRequest', 'UpdateBundleRequest', 'Bundle', 'BundleListItem', 'BundleListResponse']) {
      expect(schemas[id].example).toBeDefined();
    }
    expect(Object.keys(schemas.BundleListItem.properties).sort()).toEqual(LIST_ITEM_FIELDS);
    expect(Object.keys(schemas.Bundle.properties).sort()).toEqual(SINGLE_FIELDS);
  });
});
