/**
 * Bundles sold as bundles (issue 30, item 4), end to end on the real app, worker, PostgreSQL,
 * Temporal and stripe-mock: the catalog lists an agency's bundle after its product lines with
 * one template for all its products; a quote of the bundle prices every product in one checkout
 * (the primary product first); paying it issues certificates for every product; the bundle is on
 * the purchase, in its events and in purchase search; every bad bundle selection is a
 * VALIDATION_ERROR naming the bundle.
 */
import type { TestApp } from '../helpers/app';
import { useAgencyStack } from '../helpers/stack';
import { eventually } from '../helpers/worker';
import { call } from '../helpers/fixtures';
import { deliverWebhook, sessionCompletedEvent } from '../helpers/purchases';
import { eventSelection, quoteForNewBuyer, tripSelection, waitIssued, type Agency } from '../helpers/certificates';

jest.setTimeout(120_000);

const stack = useAgencyStack({ other: 'Other Coast Agency' });
let app: TestApp;
let agency: Agency;
let other: Agency;
let bundleId: number;

const BUNDLE_NAME = 'Wedding Weekend Protection';

beforeAll(async () => {
  ({ app, agency, other } = stack);
  const account = await app.container.db('root_accounts').where({ idp_root_account_uuid: agency.rootUuid }).first('id');
  const created = await call(app.baseUrl, '/api/v1/bundles', {
    method: 'POST',
    key: agency.key,
    body: {
      bundle_name: 'Wedding weekend',
      customer_facing_name: BUNDLE_NAME,
      internally_facing_name: 'WED-WKND',
      bundle_description: 'Event liability for the days and rental-car excess for the trips.',
      is_recurring: false,
      is_test_mode: true,
      root_seller_db_id: account.id,
      product_ids: [agency.eventProductId, agency.tripProductId],
    },
  });
  expect(created.status).toBe(201);
  bundleId = created.body.data.id;
});

const catalog = (a: Agency, pageSize = 100, page = 0) =>
  call(app.baseUrl, '/public-quote/adminGetApprovedClientProducts', {
    method: 'POST',
    key: a.key,
    body: {
      idp_root_account_uuid: a.rootUuid,
      connected_ins_products_pagination_response_length_limit: pageSize,
      selected_table_page: page,
    },
  });

/** The answers of both products, given once, as a bundle item. */
function bundleSelection(overrides: Record<string, unknown> = {}) {
  const {
    product_line_template_id: _e,
    product_line_is_trip_excess_product: _et,
    ...event
  } = eventSelection(agency, {
    start: '2027-06-10',
    end: '2027-06-12',
  });
  const { product_line_template_id: _t, product_line_is_trip_excess_product: _tt, named_insured: _n, ...trip } = tripSelection(agency);
  return {
    product_line_template_id: bundleId,
    product_line_is_bundle: true,
    product_line_is_trip_excess_product: false,
    ...event,
    ...trip,
    ...overrides,
  };
}

async function quote(a: Agency, selections: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  return (await quoteForNewBuyer(a, selections, extra)).quote;
}

describe('the catalog', () => {
  test('when an agency has a bundle, then it is listed after the product lines with its products and one template for all of them', async () => {
    const res = await catalog(agency);

    expect(res.status).toBe(200);
    const items = res.body.rich_ins_product_array_of_objects as Record<string, any>[];
    expect(items.map((i) => [i.product_line_meta_data.product_line_id, i.product_line_is_bundle])).toEqual([
      [agency.eventProductId, false],
      [agency.tripProductId, false],
      [bundleId, true],
    ]);
    expect(res.body.rich_ins_product_pagination_total_approved_products).toBe(3);
    const bundle = items[2]!;
    expect(bundle).toMatchObject({
      product_line_name: BUNDLE_NAME,
      product_line_default_price: 50, // 25 + 25, major units
      product_line_currency: 'usd',
      product_line_is_trip_excess_product: false,
      bundle_products: [
        { product_line_id: agency.eventProductId, product_line_is_primary: true, product_line_is_trip_excess_product: false },
        { product_line_id: agency.tripProductId, product_line_is_primary: false, product_line_is_trip_excess_product: true },
      ],
    });
    const ids = (bundle.product_line_question_template.questions as { id: string }[]).map((q) => q.id);
    const own = (i: number) => (items[i]!.product_line_question_template.questions as { id: string }[]).map((q) => q.id);
    // Every question of both products, once (named_insured is in both).
    expect(new Set(ids)).toEqual(new Set([...own(0), ...own(1)]));
    expect(ids.length).toBe(new Set(ids).size);
  });

  test('when the catalog is paged one item at a time, then the bundle is the third page and the total counts it', async () => {
    const third = await catalog(agency, 1, 2);

    expect(third.status).toBe(200);
    expect(third.body.rich_ins_product_pagination_total_approved_products_pages).toBe(3);
    expect(third.body.rich_ins_product_array_of_objects.map((i: any) => i.product_line_meta_data.product_line_id)).toEqual([bundleId]);
    expect((await catalog(agency, 1, 3)).body.rich_ins_product_array_of_objects).toEqual([]);
  });

  test('when another agency reads its catalog, then the bundle is not in it', async () => {
    const res = await catalog(other);

    expect(res.status).toBe(200);
    expect(res.body.rich_ins_product_array_of_objects.filter((i: any) => i.product_line_is_bundle)).toEqual([]);
  });
});

describe('a bundle bought and paid', () => {
  test('when a buyer answers the bundle once and pays, then every product is priced and certified in one purchase that names the bundle', async () => {
    const separately = await quote(agency, [eventSelection(agency, { start: '2027-06-10', end: '2027-06-12' }), tripSelection(agency)]);
    expect(separately.status).toBe(200);

    // The primary product's cancellation terms differ from the other product's defaults.
    const patched = await call(app.baseUrl, `/api/v1/products/${agency.eventProductId}/cancellation_terms`, {
      method: 'PATCH',
      key: agency.key,
      body: { free_look_days: 3, refund_method: 'short_rate' },
    });
    expect(patched.status).toBe(200);

    const quoted = await quote(agency, [bundleSelection()], { metadata: { order_id: 'ORD-7', channel: 'venue-partner' } });

    expect(quoted.status).toBe(200);
    expect(quoted.body.bundle).toEqual({ id: bundleId, name: BUNDLE_NAME });
    expect(quoted.body.line_items.map((l: any) => [l.product_line_id, l.in_bundle, l.units])).toEqual([
      [agency.eventProductId, true, 3],
      [agency.tripProductId, true, 2],
    ]);
    // The same premium as buying the two products on their own, in one checkout.
    expect(quoted.body.amount_total).toBe(separately.body.amount_total);
    expect(quoted.body.line_items.map((l: any) => l.amount)).toEqual(separately.body.line_items.map((l: any) => l.amount));

    const purchaseId = quoted.body.purchase_id as number;
    // Every product of the bundle is cancelled on its primary product's terms, kept with each item.
    const terms = await app.container
      .db('purchase_items')
      .where({ purchase_id: purchaseId })
      .orderBy('position')
      .select('cancellation_terms');
    expect(terms.map((t) => t.cancellation_terms)).toEqual([
      expect.objectContaining({ freeLookDays: 3, refundMethod: 'short_rate' }),
      expect.objectContaining({ freeLookDays: 3, refundMethod: 'short_rate' }),
    ]);
    expect((await deliverWebhook(app, sessionCompletedEvent(purchaseId, quoted.body.id))).status).toBe(200);
    const issued = await waitIssued(agency, `pi_paid_${purchaseId}`);
    const listed = JSON.stringify(issued);
    const detail = await call(app.baseUrl, `/api/v1/purchases/${purchaseId}`, { key: agency.key });
    expect(detail.status).toBe(200);
    expect(detail.body.data.bundle).toEqual({ id: bundleId, name: BUNDLE_NAME });
    expect(detail.body.data.metadata).toEqual({ order_id: 'ORD-7', channel: 'venue-partner' });
    expect(detail.body.data.items.map((i: any) => [i.product_id, i.in_bundle, i.covered_units.length])).toEqual([
      [agency.eventProductId, true, 3],
      [agency.tripProductId, true, 2],
    ]);
    const certificateNumbers = detail.body.data.items.flatMap((i: any) => i.covered_units.map((u: any) => u.certificate?.number));
    expect(certificateNumbers).toHaveLength(5);
    for (const n of certificateNumbers) expect(listed).toContain(n);

    // In its events…
    const paidEvent = await eventually(async () => {
      const events = await call(app.baseUrl, '/api/v1/events?type=purchase.paid', { key: agency.key });
      return (events.body.data as any[]).find((e) => e.data.object.id === purchaseId) ?? null;
    });
    const object = paidEvent.data.object;
    expect(object.bundle).toEqual({ id: bundleId, name: BUNDLE_NAME });
    // The fuller purchase of the events: the agency's metadata, the buyer by reference, the items with their covered units.
    expect(object.metadata).toEqual({ order_id: 'ORD-7', channel: 'venue-partner' });
    expect(object.buyer).toEqual({ idp_accnt_uuid: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(object.buyer_email).toBeUndefined();
    expect(object.items.map((i: any) => [i.product_id, i.in_bundle, i.amount])).toEqual(
      quoted.body.line_items.map((l: any) => [l.product_line_id, true, l.amount]),
    );
    expect(object.items.flatMap((i: any) => i.covered_units.map((u: any) => [u.id, u.starts_at, u.ends_at]))).toEqual(
      detail.body.data.items.flatMap((i: any) => i.covered_units.map((u: any) => [u.id, u.starts_at, u.ends_at])),
    );

    // …and found by the bundle's name in purchase search.
    const found = await call(app.baseUrl, '/platform-agency-certs/searchTeammatePurchasedProducts', {
      method: 'POST',
      key: agency.key,
      body: { idp_teammate_uuid: agency.teammateUuid, search_text: 'wedding WEEKEND protection' },
    });
    expect(found.status).toBe(200);
    expect(found.body.purchases.map((p: any) => [p.purchase_id, p.bundle])).toEqual([[purchaseId, { id: bundleId, name: BUNDLE_NAME }]]);
  });
});

describe('bad bundle selections', () => {
  const problems = async (selections: Record<string, unknown>[]) => {
    const res = await quote(agency, selections);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    return res.body.errors as { product_line_template_id: number; question: string; reason: string }[];
  };

  test('when the answers for one of its products are missing, then the problem names the bundle and the question, once', async () => {
    const { trips: _trips, ...withoutTrips } = bundleSelection();

    expect(await problems([withoutTrips])).toEqual([{ product_line_template_id: bundleId, question: 'trips', reason: expect.any(String) }]);
  });

  test('when an answer is for no question of any of its products, then it is a problem', async () => {
    expect(await problems([bundleSelection({ shoe_size: 42 })])).toEqual([
      { product_line_template_id: bundleId, question: 'shoe_size', reason: 'not a question of this bundle’s template' },
    ]);
  });

  test('when the trip-excess flag does not match the bundle’s, then it is a problem', async () => {
    expect(await problems([bundleSelection({ product_line_is_trip_excess_product: true })])).toEqual([
      {
        product_line_template_id: bundleId,
        question: 'product_line_is_trip_excess_product',
        reason: 'this bundle is not a trip-excess product',
      },
    ]);
  });

  test('when one of its products is also selected on its own, then it is a problem', async () => {
    const errors = await problems([bundleSelection(), eventSelection(agency, { start: '2027-06-10', end: '2027-06-12' })]);

    expect(errors).toEqual([
      {
        product_line_template_id: agency.eventProductId,
        question: 'product_line_template_id',
        reason: 'item 2: product line selected more than once',
      },
    ]);
  });

  test('when two bundles are selected, then the second is a problem', async () => {
    const errors = await problems([bundleSelection(), bundleSelection()]);

    expect(errors).toEqual([
      { product_line_template_id: bundleId, question: 'product_line_is_bundle', reason: 'item 2: at most one bundle per purchase' },
    ]);
  });

  test('when another agency quotes the bundle, or product_line_is_bundle is not a boolean, then it is a problem', async () => {
    const foreign = await quote(other, [bundleSelection()]);
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors).toEqual([
      { product_line_template_id: bundleId, question: 'product_line_template_id', reason: 'item 1: not a bundle this API key may quote' },
    ]);

    expect(await problems([bundleSelection({ product_line_is_bundle: 'yes' })])).toEqual([
      { product_line_template_id: bundleId, question: 'product_line_is_bundle', reason: 'item 1: must be a boolean' },
    ]);
  });
});

describe('the agency’s metadata on a quote', () => {
  test('when it has more than 20 keys, a key with square brackets or a value over 500 characters, then 400 VALIDATION_ERROR naming metadata', async () => {
    const selection = eventSelection(agency, { start: '2027-06-10', end: '2027-06-12' });
    const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
    for (const metadata of [tooMany, { 'a[b]': 'v' }, { note: 'x'.repeat(501) }, { count: 3 }]) {
      const res = await quote(agency, [selection], { metadata });
      expect([res.status, res.body.code]).toEqual([400, 'VALIDATION_ERROR']);
      expect(res.body.details).toEqual([{ path: expect.stringMatching(/^metadata/), message: expect.any(String) }]);
    }
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'.repeat(500)]));
    expect((await quote(agency, [selection], { metadata: twenty })).status).toBe(200);
  });
});
