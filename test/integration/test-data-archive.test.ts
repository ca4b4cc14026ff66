/**
 * Test-mode clutter can be removed (issue 30, item 6): POST /api/v1/products/{id}/archive for a
 * test-mode product and POST /api/v1/question_sets/{id}/archive for an account's own set, on the
 * real app, worker, PostgreSQL, Temporal and stripe-mock. Archived resources are gone from the
 * API and the catalog; what was sold with them stays readable; live data cannot be archived.
 */
import type { TestApp } from '../helpers/app';
import { useAgencyStack } from '../helpers/stack';
import { call, createKey, createQuestionSet } from '../helpers/fixtures';
import { buyAndPay, eventSelection, waitIssued, type Agency } from '../helpers/certificates';
import { SPECIAL_EVENT_LIABILITY } from '../../src/question-sets/examples';

jest.setTimeout(120_000);

const stack = useAgencyStack({ other: 'Other Coast Agency' });
let app: TestApp;
let agency: Agency;
let other: Agency;
let accountId: number;
let liveKey: string;

beforeAll(async () => {
  ({ app, agency, other } = stack);
  accountId = (await app.container.db('root_accounts').where({ idp_root_account_uuid: agency.rootUuid }).first('id')).id;
  liveKey = (await createKey(app.container, { rootAccountId: accountId, mode: 'live' })).key;
});

const api = (method: string, path: string, key = agency.key, body?: unknown) =>
  call(app.baseUrl, `/api/v1${path}`, { method, key, ...(body === undefined ? {} : { body }) });

async function product(key: string, questionSetId: number, customerName = 'Archivable Cover') {
  const res = await api('POST', '/products', key, { customerName, defaultPrice: 30, questionSetId, insurerName: 'Evergreen Mutual' });
  expect(res.status).toBe(201);
  return res.body.data.id as number;
}

describe('archiving a test-mode product', () => {
  test('when it is archived, then it is gone from the products API, the catalog, quotes and bundle links, and a purchase of it stays readable', async () => {
    const sold = await buyAndPay(agency, eventSelection(agency, { start: '2027-06-10', end: '2027-06-10' }));
    await waitIssued(agency, sold.paymentIntent);

    const archived = await api('POST', `/products/${agency.eventProductId}/archive`);

    expect(archived.status).toBe(200);
    expect(archived.body.data).toEqual({ id: agency.eventProductId, archivedAt: expect.any(String) });
    expect(Date.parse(archived.body.data.archivedAt)).toBeLessThanOrEqual(Date.now());
    // Again: the same instant (a retried call is safe).
    expect((await api('POST', `/products/${agency.eventProductId}/archive`)).body.data).toEqual(archived.body.data);

    expect((await api('GET', `/products/${agency.eventProductId}`)).status).toBe(404);
    expect((await api('PATCH', `/products/${agency.eventProductId}`, agency.key, { isActive: true })).status).toBe(404);
    const listed = await api('GET', '/products?pageSize=100');
    expect(listed.body.data.map((p: { id: number }) => p.id)).not.toContain(agency.eventProductId);
    expect(listed.body.data.map((p: { id: number }) => p.id)).toContain(agency.tripProductId);

    const catalog = await call(app.baseUrl, '/public-quote/adminGetApprovedClientProducts', {
      method: 'POST',
      key: agency.key,
      body: {
        idp_root_account_uuid: agency.rootUuid,
        connected_ins_products_pagination_response_length_limit: 100,
        selected_table_page: 0,
      },
    });
    expect(catalog.body.rich_ins_product_array_of_objects.map((i: any) => i.product_line_meta_data.product_line_id)).toEqual([
      agency.tripProductId,
    ]);
    await expect(buyAndPay(agency, eventSelection(agency, { start: '2027-06-10', end: '2027-06-10' }))).rejects.toThrow(
      /not a product line this API key may quote/,
    );

    const bundle = await api('POST', '/bundles', agency.key, {
      bundle_name: 'With an archived product',
      is_test_mode: true,
      root_seller_db_id: accountId,
      product_ids: [agency.tripProductId, agency.eventProductId],
    });
    expect(bundle.status).toBe(400);
    expect(bundle.body.error.details).toContainEqual({ path: 'product_ids.1', message: `product ${agency.eventProductId} not found` });

    // What was sold with it stays: the purchase and its certificate.
    const purchase = await api('GET', `/purchases/${sold.purchaseId}`);
    expect(purchase.status).toBe(200);
    expect(purchase.body.data.items[0].product_name).toBe('Special Event Liability');
    expect(purchase.body.data.items[0].covered_units[0].certificate.number).toMatch(/^COI-/);
  });

  test('when the product is live, then 409 ARCHIVE_NOT_ALLOWED and it stays', async () => {
    const set = await createQuestionSet(app.container, accountId, SPECIAL_EVENT_LIABILITY);
    const live = await product(liveKey, set.id, 'Live Cover');

    const res = await api('POST', `/products/${live}/archive`, liveKey);

    expect([res.status, res.body.error.code]).toEqual([409, 'ARCHIVE_NOT_ALLOWED']);
    expect((await api('GET', `/products/${live}`, liveKey)).status).toBe(200);
  });

  test('when another account, or a test key for a live product, archives it, then 404 and nothing changes', async () => {
    expect((await api('POST', `/products/${agency.tripProductId}/archive`, other.key)).status).toBe(404);
    const set = await createQuestionSet(app.container, accountId, SPECIAL_EVENT_LIABILITY);
    const live = await product(liveKey, set.id, 'Live Cover Two');
    expect((await api('POST', `/products/${live}/archive`, agency.key)).status).toBe(404);
    expect((await api('GET', `/products/${agency.tripProductId}`)).status).toBe(200);
    expect((await api('POST', '/products/abc/archive')).body.error.code).toBe('VALIDATION_ERROR');
  });
});

describe('archiving a question set', () => {
  test('when the account’s own set is used by test products only, then it is archived, gone from lists and reads, and cannot be chosen again', async () => {
    const set = await createQuestionSet(app.container, accountId, SPECIAL_EVENT_LIABILITY, 'Old test template');
    const user = await product(agency.key, set.id, 'Uses the old template');

    const res = await api('POST', `/question_sets/${set.id}/archive`);

    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: set.id, archivedAt: expect.any(String) });
    expect((await api('POST', `/question_sets/${set.id}/archive`)).body.data).toEqual(res.body.data);
    expect((await api('GET', `/question_sets/${set.id}`)).status).toBe(404);
    const listed = await api('GET', '/question_sets?pageSize=100');
    expect(listed.body.data.map((s: { id: number }) => s.id)).not.toContain(set.id);
    const chosen = await api('POST', '/products', agency.key, { customerName: 'New', defaultPrice: 10, questionSetId: set.id });
    expect(chosen.status).toBe(400);
    expect(chosen.body.error.details).toEqual([
      { path: 'questionSetId', message: `no question set ${set.id} is available to this account` },
    ]);
    // The product already using it keeps it.
    expect((await api('GET', `/products/${user}`)).body.data).toMatchObject({ id: user });
  });

  test('when a live product uses the set, then 409 ARCHIVE_NOT_ALLOWED naming it; a shared or another account’s set is 404', async () => {
    const set = await createQuestionSet(app.container, accountId, SPECIAL_EVENT_LIABILITY, 'Live template');
    const live = await product(liveKey, set.id, 'Live user');

    const res = await api('POST', `/question_sets/${set.id}/archive`);

    expect([res.status, res.body.error.code]).toEqual([409, 'ARCHIVE_NOT_ALLOWED']);
    expect(res.body.error.message).toContain(String(live));
    expect((await api('GET', `/question_sets/${set.id}`)).status).toBe(200);

    const shared = await createQuestionSet(app.container, null, SPECIAL_EVENT_LIABILITY, 'Shared template');
    expect((await api('POST', `/question_sets/${shared.id}/archive`)).status).toBe(404);
    expect((await api('GET', `/question_sets/${shared.id}`)).status).toBe(200);
    expect((await api('POST', `/question_sets/${set.id}/archive`, other.key)).status).toBe(404);
  });
});
