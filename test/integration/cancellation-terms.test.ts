/**
 * A product's cancellation terms (`GET`/`PATCH /api/v1/products/{id}/cancellation_terms`) on the
 * real API and PostgreSQL: the defaults until set, partial changes, every bad input refused in the
 * envelope with nothing changed, other accounts' and other modes' products invisible, and each
 * purchase keeping the terms in force when it was bought (a quote through the real checkout, with
 * a worker on the Temporal dev server and stripe-mock).
 */
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createKey, createRootAccount, insertProductLine } from '../helpers/fixtures';
import { checkout, createQuotingAccount, type QuotingAccount } from '../helpers/purchases';

const stack = useStack();
let app: TestApp;
let account: QuotingAccount;

const DEFAULTS = {
  free_look_days: 14,
  refund_method: 'pro_rata',
  insurer_refund_method: 'pro_rata',
  short_rate_penalty_bps: 1000,
  platform_fee_refundable: false,
  minimum_earned_premium: 0,
  buyer_withdrawal: true,
};

const terms = (id: number, key = account.key) => call(app.baseUrl, `/api/v1/products/${id}/cancellation_terms`, { key });
const patch = (id: number, body: unknown, key = account.key) =>
  call(app.baseUrl, `/api/v1/products/${id}/cancellation_terms`, { method: 'PATCH', key, body });

beforeAll(async () => {
  app = stack.app;
  account = await createQuotingAccount(app);
});

test('when a product has no terms of its own, then GET answers the defaults with is_default true', async () => {
  const res = await terms(account.productId);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    success: true,
    message: 'Cancellation terms retrieved',
    data: { product_id: account.productId, ...DEFAULTS, is_default: true, updated_at: null },
  });
});

test('when some terms are sent, then only those change, the rest keep their value, and GET agrees', async () => {
  const fresh = await createQuotingAccount(app);
  const first = await patch(fresh.productId, { free_look_days: 0, refund_method: 'short_rate', short_rate_penalty_bps: 2500 }, fresh.key);
  expect(first.status).toBe(200);
  expect(first.body.data).toEqual({
    product_id: fresh.productId,
    ...DEFAULTS,
    free_look_days: 0,
    refund_method: 'short_rate',
    short_rate_penalty_bps: 2500,
    is_default: false,
    updated_at: expect.any(String),
  });
  const second = await patch(fresh.productId, { minimum_earned_premium: 1500, platform_fee_refundable: true }, fresh.key);
  expect(second.body.data).toMatchObject({
    free_look_days: 0,
    refund_method: 'short_rate',
    short_rate_penalty_bps: 2500,
    minimum_earned_premium: 1500,
    platform_fee_refundable: true,
    insurer_refund_method: 'pro_rata',
  });
  expect((await terms(fresh.productId, fresh.key)).body.data).toEqual(second.body.data);
});

test.each([
  ['an unknown field', { free_look: 3 }],
  ['free_look_days above 60', { free_look_days: 61 }],
  ['negative free_look_days', { free_look_days: -1 }],
  ['a fractional free_look_days', { free_look_days: 1.5 }],
  ['an unknown refund method', { refund_method: 'half' }],
  ['a penalty above 100 %', { short_rate_penalty_bps: 10_001 }],
  ['a decimal minimum earned premium (minor units are integers)', { minimum_earned_premium: 12.5 }],
  ['a string for a boolean', { platform_fee_refundable: 'yes' }],
  ['a string for buyer_withdrawal', { buyer_withdrawal: 'no' }],
  ['a JSON array', [{ free_look_days: 3 }]],
])('when the body holds %s, then 400 VALIDATION_ERROR in the envelope and nothing changes', async (_what, body) => {
  const fresh = await createQuotingAccount(app);
  const res = await patch(fresh.productId, body, fresh.key);
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
  expect((await terms(fresh.productId, fresh.key)).body.data).toMatchObject({ ...DEFAULTS, is_default: true });
});

test("when the product is another account's, a live product seen through a test key, or no product, then 404 for both methods; a bad id is 400", async () => {
  const other = await createQuotingAccount(app);
  const mine = await createRootAccount(app.container);
  const testKey = (await createKey(app.container, { rootAccountId: mine.id, mode: 'test' })).key;
  const liveProduct = await insertProductLine(app.container, { rootAccountId: mine.id, isTestMode: false });
  for (const [id, key] of [
    [other.productId, account.key],
    [liveProduct, testKey],
    [2_000_000_000, account.key],
  ] as const) {
    expect((await terms(id, key)).body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    const res = await patch(id, { free_look_days: 1 }, key);
    expect(res.status).toBe(404);
  }
  expect((await terms(other.productId, other.key)).body.data.is_default).toBe(true);
  expect((await call(app.baseUrl, '/api/v1/products/abc/cancellation_terms', { key: account.key })).body).toMatchObject({
    error: { code: 'VALIDATION_ERROR' },
  });
});

test('when the terms change after a purchase, then that purchase keeps the terms it was bought with and the next one has the new ones', async () => {
  const fresh = await createQuotingAccount(app);
  await patch(fresh.productId, { free_look_days: 7 }, fresh.key);
  const before = await checkout(app, fresh);
  await patch(fresh.productId, { free_look_days: 0, refund_method: 'none', buyer_withdrawal: false }, fresh.key);
  const after = await checkout(app, fresh);
  const stored = async (purchaseId: number) =>
    (await app.container.db('purchase_items').where({ purchase_id: purchaseId }).first('cancellation_terms')).cancellation_terms;
  expect(await stored(before.purchaseId)).toMatchObject({ freeLookDays: 7, refundMethod: 'pro_rata', buyerWithdrawal: true });
  expect(await stored(after.purchaseId)).toMatchObject({ freeLookDays: 0, refundMethod: 'none', buyerWithdrawal: false });
});
