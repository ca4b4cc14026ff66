/**
 * The quote surface (spec §4.4 steps 1–2, §5.5, §7.2) end to end against the real app,
 * PostgreSQL and stripe-mock: products are created through POST /api/v1/products and buyers
 * through /platform-seller-invites, exactly as an agent's server would.
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createKey, createQuestionSet, createRootAccount } from '../helpers/fixtures';
import { SPECIAL_EVENT_LIABILITY, TRIP_EXCESS } from '../../src/question-sets/examples';
import { eventually } from '../helpers/worker';

const stack = useStack();
let app: TestApp;
let liveKey: string;
let liveKeyId: number;
let testKey: string;
let otherKey: string;
let idpRootUuid: string;
let otherIdpRootUuid: string;
let quoteAccountId: number;
let eventId: number;
let tripId: number;
let testModeId: number;
let buyer: { idp_accnt_uuid: string; access_token: string };

const holder = {
  name: 'Grand Hall LLC',
  address: { line1: '1 Main St', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
};

/** A selection of product `productId` (trip excess or not) with its `answers`, `overrides` on top. */
const selection = (productId: number, tripExcess: boolean, overrides: Record<string, unknown>, answers: Record<string, unknown>) => ({
  product_line_template_id: productId,
  product_line_is_trip_excess_product: tripExcess,
  ...answers,
  ...overrides,
});

function eventAnswers(overrides: Record<string, unknown> = {}) {
  return selection(eventId, false, overrides, {
    event_type: 'concert',
    attendance: 150,
    liquor: 'yes',
    venue_name: 'Grand Hall',
    named_insured: { name: 'Jordan Lee' },
    certificate_holder: holder,
    coverage: { time_zone: 'America/Chicago', start_date: '2027-06-10', end_date: '2027-06-12' },
  });
}

function tripAnswers(overrides: Record<string, unknown> = {}) {
  return selection(tripId, true, overrides, {
    vehicle_class: 'motorhome',
    drivers: 2,
    named_insured: { name: 'Jordan Lee' },
    trips: {
      time_zone: 'Europe/Paris',
      trips: [
        { start: '2027-07-01T09:00', end: '2027-07-05T18:00' },
        { start: '2027-08-01T09:00', end: '2027-08-03T12:00' },
      ],
    },
  });
}

const quote = (key: string, body: unknown) => call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', { method: 'POST', key, body });
const catalog = (key: string, body: unknown) =>
  call(app.baseUrl, '/public-quote/adminGetApprovedClientProducts', { method: 'POST', key, body });
/** Page `page` (`perPage` a page) of the catalog of seller `sellerUuid`, asked with `key`. */
const catalogPage = (key: string, sellerUuid: string, perPage = 10, page = 0) =>
  catalog(key, {
    idp_root_account_uuid: sellerUuid,
    connected_ins_products_pagination_response_length_limit: perPage,
    selected_table_page: page,
  });
/** Connects a buyer and keeps the two fields the quote call needs. */
const connect = async (key: string, email: string) => {
  const res = await call(app.baseUrl, '/platform-seller-invites/newConnect', {
    method: 'POST',
    key,
    body: {
      buyer_first_name: 'Jordan',
      buyer_last_name: 'Lee',
      buyer_email: email,
      seller_slug: await slugOfKey(key),
      query_param: 'spring-fair',
    },
  });
  expect(res.status).toBe(200);
  return { idp_accnt_uuid: res.body.idp_accnt_uuid as string, access_token: res.body.access_token as string };
};

const slugs = new Map<string, string>();
const slugOfKey = async (key: string) => slugs.get(key)!;

beforeAll(async () => {
  app = stack.app;
  const account = await createRootAccount(app.container, 'Quote Agency');
  quoteAccountId = account.id;
  const other = await createRootAccount(app.container, 'Other Agency');
  const live = await createKey(app.container, { rootAccountId: account.id, mode: 'live', platformFeeBps: 250 });
  liveKey = live.key;
  liveKeyId = live.id;
  testKey = (await createKey(app.container, { rootAccountId: account.id, mode: 'test' })).key;
  otherKey = (await createKey(app.container, { rootAccountId: other.id })).key;
  slugs.set(liveKey, account.slug).set(testKey, account.slug).set(otherKey, other.slug);
  idpRootUuid = (await app.container.db('root_accounts').where({ id: account.id }).first()).idp_root_account_uuid;
  otherIdpRootUuid = (await app.container.db('root_accounts').where({ id: other.id }).first()).idp_root_account_uuid;

  const eventSet = await createQuestionSet(app.container, account.id, SPECIAL_EVENT_LIABILITY);
  const tripSet = await createQuestionSet(app.container, account.id, TRIP_EXCESS);
  const product = async (body: Record<string, unknown>) => {
    const res = await call(app.baseUrl, '/api/v1/products', { method: 'POST', key: liveKey, body });
    expect(res.status).toBe(201);
    return res.body.data.id as number;
  };
  eventId = await product({ customerName: 'Special Event Liability', defaultPrice: 49.5, questionSetId: eventSet.id, isTestMode: false });
  tripId = await product({ customerName: 'Trip Excess', defaultPrice: 12, questionSetId: tripSet.id, isTestMode: false });
  testModeId = await product({ customerName: 'Event Liability (test)', defaultPrice: 49.5, questionSetId: eventSet.id, isTestMode: true });
  await product({ customerName: 'No template yet', defaultPrice: 5, isTestMode: false });
  const inactive = await product({ customerName: 'Retired', defaultPrice: 5, questionSetId: eventSet.id, isTestMode: false });
  await call(app.baseUrl, `/api/v1/products/${inactive}`, { method: 'PATCH', key: liveKey, body: { isActive: false } });

  buyer = await connect(liveKey, 'jordan.quote@example.com');
});

describe('adminGetApprovedClientProducts', () => {
  test('when a live key asks, then only its active, approved live products with templates appear', async () => {
    const res = await catalogPage(liveKey, idpRootUuid);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      rich_ins_product_pagination_total_approved_products: 2,
      rich_ins_product_pagination_total_approved_products_pages: 1,
      rich_ins_product_pagination_selected_page: 0,
      rich_ins_product_pagination_response_limit_per_page: 10,
    });
    const items = res.body.rich_ins_product_array_of_objects;
    expect(items.map((i: any) => i.product_line_meta_data.product_line_id)).toEqual([eventId, tripId]);
    expect(items[0].product_line_meta_data.product_line_array_of_agreements).toEqual([
      expect.objectContaining({ id: 'terms', title: 'Policy terms' }),
    ]);
    expect(items[0]).toMatchObject({
      product_line_name: 'Special Event Liability',
      product_line_default_price: 49.5,
      product_line_is_trip_excess_product: false,
    });
    expect(items[0].product_line_question_template.questions.map((q: any) => q.kind)).toEqual(
      expect.arrayContaining(['dropdown', 'number', 'text', 'named_insured', 'certificate_holder', 'coverage_dates']),
    );
    expect(items[1].product_line_is_trip_excess_product).toBe(true);
  });

  test('when a test key asks, then only test products appear', async () => {
    const res = await catalogPage(testKey, idpRootUuid);
    expect(res.body.rich_ins_product_array_of_objects.map((i: any) => i.product_line_meta_data.product_line_id)).toEqual([testModeId]);
  });

  test('when paged one at a time, then pages walk the list and a page past the end is empty', async () => {
    const page = (n: number) => catalogPage(liveKey, idpRootUuid, 1, n);
    const [p0, p1, p5] = await Promise.all([page(0), page(1), page(5)]);
    expect(p0.body.rich_ins_product_array_of_objects.map((i: any) => i.product_line_meta_data.product_line_id)).toEqual([eventId]);
    expect(p1.body.rich_ins_product_array_of_objects.map((i: any) => i.product_line_meta_data.product_line_id)).toEqual([tripId]);
    expect(p0.body.rich_ins_product_pagination_total_approved_products_pages).toBe(2);
    expect(p5.body.rich_ins_product_array_of_objects).toEqual([]);
    expect(p5.body.rich_ins_product_pagination_total_approved_products).toBe(2);
  });

  test("when the idp_root_account_uuid is another account's, then 404 SELLER_NOT_FOUND in the bare error shape", async () => {
    const res = await catalogPage(liveKey, otherIdpRootUuid);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'SELLER_NOT_FOUND', message: expect.any(String) });
    const theirs = await catalogPage(otherKey, otherIdpRootUuid);
    expect(theirs.body.rich_ins_product_pagination_total_approved_products).toBe(0);
  });

  test('when the key has its own product list, then the catalog is narrowed to it', async () => {
    const account = (await app.container.db('api_keys').where({ id: liveKeyId }).first()).root_account_id;
    const narrow = await createKey(app.container, { rootAccountId: account, mode: 'live' });
    await app.container.db('api_key_products').insert({ api_key_id: narrow.id, product_line_id: tripId });
    const res = await catalogPage(narrow.key, idpRootUuid);
    expect(res.body.rich_ins_product_array_of_objects.map((i: any) => i.product_line_meta_data.product_line_id)).toEqual([tripId]);
  });

  test.each([
    [{}],
    [{ idp_root_account_uuid: 'x', connected_ins_products_pagination_response_length_limit: 0, selected_table_page: 0 }],
    [{ idp_root_account_uuid: 'x', connected_ins_products_pagination_response_length_limit: 101, selected_table_page: 0 }],
    [{ idp_root_account_uuid: 'x', connected_ins_products_pagination_response_length_limit: 10, selected_table_page: -1 }],
    [{ idp_root_account_uuid: 'x', connected_ins_products_pagination_response_length_limit: 10, selected_table_page: 0, extra: 1 }],
  ])('when the body is %p, then 400 VALIDATION_ERROR without the envelope', async (body) => {
    const res = await catalog(liveKey, body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.success).toBeUndefined();
  });
});

describe('adminValidateBuyerResponses', () => {
  test('when two products are bought with a platform fee, then units, line amounts, fee and total are exact, recorded, and a checkout session is returned', async () => {
    const res = await quote(liveKey, { ...buyer, selected_product_lines_to_purchase: [eventAnswers(), tripAnswers()] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^cs_/),
      url: expect.stringMatching(/^https:\/\//),
      status: 'awaiting_payment',
    });
    expect(res.body.payment_intent === null || /^pi_/.test(res.body.payment_intent)).toBe(true);
    expect(Date.parse(res.body.expires_at)).toBeGreaterThan(Date.now());
    // event: 4950 × 3 days × 1.5 (concert) × 1.2 (liquor) = 26730; trip: 1200 × 2 trips × 1.75 = 4200
    expect(res.body.line_items).toEqual([
      { product_line_id: eventId, in_bundle: false, units: 3, unit_amount: 4950, price_factor: 1.8, amount: 26730 },
      { product_line_id: tripId, in_bundle: false, units: 2, unit_amount: 1200, price_factor: 1.75, amount: 4200 },
    ]);
    expect(res.body.bundle).toBeNull();
    expect(res.body.amount_subtotal).toBe(30930);
    expect(res.body.platform_fee).toEqual({ bps: 250, amount: 773 }); // 309.30 × 2.5 % = 7.7325
    expect(res.body.amount_total).toBe(31703);
    expect(res.body.currency).toBe('usd');
    expect(res.body.product_line_data).toEqual([
      { product_line_id: eventId, product_line_is_trip_excess_product: false },
      { product_line_id: tripId, product_line_is_trip_excess_product: true },
    ]);
    expect(res.body.certificate_coverage_datetimes).toHaveLength(5);
    expect(res.body.certificate_coverage_datetimes[0]).toEqual({
      product_line_id: eventId,
      unit_index: 0,
      starts_at: '2027-06-10T05:00:00.000Z',
      ends_at: '2027-06-11T05:00:00.000Z',
      time_zone: 'America/Chicago',
      local_label: '2027-06-10',
    });

    const purchase = await app.container.db('purchases').where({ id: res.body.purchase_id }).first();
    expect(purchase).toMatchObject({
      status: 'awaiting_payment',
      mode: 'live',
      total_minor: '31703',
      platform_fee_minor: '773',
      api_key_id: liveKeyId,
      checkout_session_id: res.body.id,
      buyer_email: 'jordan.quote@example.com',
    });
    expect(await app.container.db('covered_units').where({ purchase_id: res.body.purchase_id }).count({ n: '*' })).toEqual([{ n: '5' }]);
    const items = await app.container.db('purchase_items').where({ purchase_id: res.body.purchase_id }).orderBy('position');
    expect(items[0].certificate_holder).toEqual(holder);
    expect(items[0].named_insured).toEqual({ name: 'Jordan Lee' });
  });

  test('when the coverage crosses the spring-forward change and a month end, then units follow local calendar days', async () => {
    const res = await quote(liveKey, {
      ...buyer,
      selected_product_lines_to_purchase: [
        eventAnswers({ coverage: { time_zone: 'America/New_York', start_date: '2027-03-13', end_date: '2027-03-15' } }),
      ],
    });
    const hours = res.body.certificate_coverage_datetimes.map((u: any) => (Date.parse(u.ends_at) - Date.parse(u.starts_at)) / 3600_000);
    expect(hours).toEqual([24, 23, 24]);
    const monthEnd = await quote(liveKey, {
      ...buyer,
      selected_product_lines_to_purchase: [
        eventAnswers({ coverage: { time_zone: 'UTC', start_date: '2027-01-30', end_date: '2027-02-02' } }),
      ],
    });
    expect(monthEnd.body.certificate_coverage_datetimes.map((u: any) => u.local_label)).toEqual([
      '2027-01-30',
      '2027-01-31',
      '2027-02-01',
      '2027-02-02',
    ]);
  });

  test('when many answers are wrong, then every problem comes back at once and nothing is recorded', async () => {
    const countPurchases = async () =>
      Number((await app.container.db('purchases').where({ root_account_id: quoteAccountId }).count({ n: '*' }))[0]!.n);
    const before = await countPurchases();
    const res = await quote(liveKey, {
      ...buyer,
      selected_product_lines_to_purchase: [
        eventAnswers({
          event_type: 'rave',
          attendance: 0,
          venue_name: '  ',
          colour: 'red',
          certificate_holder: { name: 'X' },
          coverage: { time_zone: 'UTC', start_date: '2027-05-02', end_date: '2027-05-01' },
        }),
        tripAnswers({
          product_line_is_trip_excess_product: false,
          trips: {
            time_zone: 'UTC',
            trips: [
              { start: '2027-07-01T09:00', end: '2027-07-05T18:00' },
              { start: '2027-07-02T09:00', end: '2027-07-03T18:00' },
            ],
          },
        }),
        { product_line_template_id: testModeId, product_line_is_trip_excess_product: false },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    const got = res.body.errors.map((e: any) => `${e.product_line_template_id}:${e.question}`).sort();
    expect(got).toEqual(
      [
        `${eventId}:event_type`,
        `${eventId}:attendance`,
        `${eventId}:venue_name`,
        `${eventId}:colour`,
        `${eventId}:certificate_holder`,
        `${eventId}:coverage`,
        `${tripId}:product_line_is_trip_excess_product`,
        `${tripId}:trips`,
        `${testModeId}:product_line_template_id`,
      ].sort(),
    );
    expect(res.body.errors.find((e: any) => e.question === 'coverage').reason).toContain('before start_date');
    expect(res.body.errors.find((e: any) => e.question === 'trips').reason).toContain('overlap');
    expect(await countPurchases()).toBe(before);
  });

  test('when the same product is selected twice, then it is a problem', async () => {
    const res = await quote(liveKey, { ...buyer, selected_product_lines_to_purchase: [eventAnswers(), eventAnswers()] });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { product_line_template_id: eventId, question: 'product_line_template_id', reason: expect.stringContaining('more than once') },
    ]);
  });

  test("when the buyer's token belongs to another account, then 401 ACCESS_TOKEN_INVALID", async () => {
    const res = await quote(otherKey, { ...buyer, selected_product_lines_to_purchase: [eventAnswers()] });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: 'ACCESS_TOKEN_INVALID', message: expect.any(String) });
  });

  test('when the token has expired, then 401 ACCESS_TOKEN_EXPIRED', async () => {
    const shortLived = await startTestApp({ BUYER_ACCESS_TOKEN_TTL_SECONDS: '1' });
    try {
      const res0 = await call(shortLived.baseUrl, '/platform-seller-invites/newConnect', {
        method: 'POST',
        key: liveKey,
        body: {
          buyer_first_name: 'Ada',
          buyer_last_name: 'Short',
          buyer_email: 'ada.short@example.com',
          seller_slug: slugs.get(liveKey),
          query_param: '',
        },
      });
      // The app runs in this process: its clock is this one, past the expiry it answered.
      const expiresAt = Date.parse(res0.body.access_token_expires_at);
      await eventually(async () => Date.now() > expiresAt, 5_000);
      const res = await call(shortLived.baseUrl, '/public-quote/adminValidateBuyerResponses', {
        method: 'POST',
        key: liveKey,
        body: {
          idp_accnt_uuid: res0.body.idp_accnt_uuid,
          access_token: res0.body.access_token,
          selected_product_lines_to_purchase: [eventAnswers()],
        },
      });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('ACCESS_TOKEN_EXPIRED');
    } finally {
      await shortLived.close();
    }
  });

  test('when the test key quotes the test product, then it is priced in test mode', async () => {
    const testBuyer = await connect(testKey, 'jordan.test@example.com');
    const res = await quote(testKey, {
      ...testBuyer,
      selected_product_lines_to_purchase: [eventAnswers({ product_line_template_id: testModeId })],
    });
    expect(res.status).toBe(200);
    expect((await app.container.db('purchases').where({ id: res.body.purchase_id }).first()).mode).toBe('test');
    const live = await quote(testKey, { ...testBuyer, selected_product_lines_to_purchase: [eventAnswers()] });
    expect(live.status).toBe(400);
    expect(live.body.errors[0].question).toBe('product_line_template_id');
  });

  test.each([
    [{ selected_product_lines_to_purchase: [] }],
    [{ selected_product_lines_to_purchase: 'all' }],
    [{ idp_accnt_uuid: 1, selected_product_lines_to_purchase: [{}] }],
  ])('when the body is malformed (%p), then 400 VALIDATION_ERROR', async (patch) => {
    const res = await quote(liveKey, { ...buyer, ...patch });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });
});
