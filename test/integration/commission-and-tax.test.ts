/**
 * Commission and premium tax (issue 49, items 2 and 3) end to end on the real app, worker,
 * PostgreSQL, Temporal and stripe-mock (behind the recording proxy, to read the checkout's lines):
 * a product's commission rates per party (`/api/v1/products/{id}/commission_rates`), refused
 * inputs, each sale keeping the rate in force (a later rate never reprices it), the purchase
 * showing the commission per item with what a cancellation gave back; a product's tax setting
 * (`/api/v1/products/{id}/tax_settings`), a taxed product with commission sold in Texas (tax on
 * the quote, as its own checkout lines, on the purchase), one day cancelled, and the quote,
 * purchase and bordereau figures added up here by hand from the product's price and the
 * published rates.
 */
import { parse } from 'csv-parse/sync';
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { eventually } from '../helpers/worker';
import { runScript } from '../helpers/run';
import rates from '../../src/taxes/premium-tax-rates.json';
import { call, createRootAccountOfKind } from '../helpers/fixtures';
import { deliverWebhook, sessionCompletedEvent, WEBHOOK_SECRET } from '../helpers/purchases';
import { buyAndPay, createAgency, eventSelection, quoteForNewBuyer, tripSelection, waitIssued, type Agency } from '../helpers/certificates';

jest.setTimeout(180_000);

const stack = useStack({ proxy: true, app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' } });
let app: TestApp;
let agency: Agency;
let insurerId: number;
let mgaId: number;
/** The commission test's sales and cancellation, for the bordereau. */
const sold: { first: number; next: number; cancellation: number } = { first: 0, next: 0, cancellation: 0 };

const api = (method: string, path: string, body?: unknown, key = agency.key) =>
  call(app.baseUrl, `/api/v1${path}`, { method, key, ...(body === undefined ? {} : { body }) });

/** The event product's day: 25.00 × 1.2 (liquor served) = 30.00. */
const DAY = 3000;

beforeAll(async () => {
  app = stack.app;
  agency = await createAgency(app, 'Commission Coast Agency');
  const agencyId = (await app.container.db('root_accounts').where({ slug: agency.slug }).first('id')).id as number;
  insurerId = (await createRootAccountOfKind(app.container, 'insurer', 'Evergreen Mutual Insurance Co.', [agencyId])).id;
  mgaId = (await createRootAccountOfKind(app.container, 'mga', 'Harbor Underwriting MGA', [agencyId])).id;
  expect((await api('PATCH', `/products/${agency.eventProductId}`, { insurerRootAccountID: insurerId })).status).toBe(200);
  expect((await api('PATCH', `/products/${agency.eventProductId}/cancellation_terms`, { free_look_days: 0 })).status).toBe(200);
});

describe('commission', () => {
  test('when a rate names a party the product does not name, starts in the past, or is out of range, then 400 and nothing is added', async () => {
    const path = `/products/${agency.eventProductId}/commission_rates`;
    for (const body of [
      { party_id: mgaId, rate_bps: 1000 },
      { party_id: insurerId, rate_bps: 1000, effective_from: '2020-01-01T00:00:00Z' },
      { party_id: insurerId, rate_bps: 10_001 },
      { party_id: insurerId, rate_bps: 12.5 },
      { party_id: insurerId, rate_bps: 1000, extra: true },
    ]) {
      const res = await api('POST', path, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await api('GET', path)).body.data).toEqual([]);
    const other = await createAgency(app, 'Other Agency');
    expect((await api('GET', path, undefined, other.key)).status).toBe(404);
    expect((await api('POST', path, { party_id: insurerId, rate_bps: 1000 }, other.key)).status).toBe(404);
  });

  test('when a rate is set, then each sale keeps the rate in force at its sale, and a cancellation gives back its share', async () => {
    const path = `/products/${agency.eventProductId}/commission_rates`;
    const rate = await api('POST', path, { party_id: insurerId, rate_bps: 1250 });
    expect(rate.status).toBe(200);
    expect(rate.body.data).toMatchObject({ product_id: agency.eventProductId, party_id: insurerId, rate_bps: 1250, in_force: true });

    const first = await buyAndPay(agency, eventSelection(agency, { start: '2027-09-01', end: '2027-09-03' }));
    await waitIssued(agency, first.paymentIntent);
    // A new rate from now on: the purchase already sold keeps 12.5 %, the next one takes 20 %.
    const later = await api('POST', path, {
      party_id: insurerId,
      rate_bps: 2000,
      effective_from: new Date(Date.now() + 1000).toISOString(),
    });
    expect(later.status).toBe(200);
    expect(later.body.data.in_force).toBe(false);
    await eventually(async () => ((await api('GET', path)).body.data.find((r: any) => r.rate_bps === 2000)?.in_force ? true : null));
    const next = await buyAndPay(agency, eventSelection(agency, { start: '2027-09-10', end: '2027-09-10' }));

    const purchase = (await api('GET', `/purchases/${first.purchaseId}`)).body.data;
    expect(purchase.items[0].amount).toBe(3 * DAY);
    expect(purchase.items[0].commission).toEqual({ party_id: insurerId, rate_bps: 1250, amount: 1125, returned: 0 });
    expect((await api('GET', `/purchases/${next.purchaseId}`)).body.data.items[0].commission).toEqual({
      party_id: insurerId,
      rate_bps: 2000,
      amount: 600,
      returned: 0,
    });

    const lastDay = purchase.items[0].covered_units[2].id;
    const cancelled = await api('POST', `/purchases/${first.purchaseId}/cancel`, { covered_unit_ids: [lastDay], requested_by: 'agency' });
    expect(cancelled.status).toBe(200);
    const after = await eventually(async () => {
      const p = (await api('GET', `/purchases/${first.purchaseId}`)).body.data;
      return p.cancellations[0]?.status === 'completed' ? p : null;
    });
    // One day of three back (30.00): 12.5 % of it, 3.75.
    expect(after.cancellations[0].refund.premium).toBe(DAY);
    expect(after.items[0].commission).toEqual({ party_id: insurerId, rate_bps: 1250, amount: 1125, returned: 375 });
    Object.assign(sold, { first: first.purchaseId, next: next.purchaseId, cancellation: after.cancellations[0].id });
  });

  test('when the insurer’s bordereau of the month is read, then each row’s commission and net premium follow the rate its item was sold at', async () => {
    // Into a month that is over: when the sales and the cancellation were recorded.
    const db = app.container.db;
    await db('purchases')
      .where({ id: sold.first })
      .update({ paid_at: new Date('2026-09-05T10:00:00Z') });
    await db('purchases')
      .where({ id: sold.next })
      .update({ paid_at: new Date('2026-09-06T10:00:00Z') });
    await db('policy_transactions')
      .where({ id: sold.cancellation })
      .update({ completed_at: new Date('2026-09-20T08:00:00Z') });
    const asked = await api('POST', '/reports/bordereaux', { party_id: insurerId, month: '2026-09' });
    expect([200, 202]).toContain(asked.status);
    const b = await eventually(async () => {
      const got = (await api('GET', `/reports/bordereaux/${asked.body.data.id}`)).body.data;
      return got.status === 'ready' ? got : null;
    });
    const rows = parse(await (await fetch(b.files.csv.download_url)).text(), { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.transaction_type, r.gross_premium, r.commission, r.net_premium])).toEqual([
      ['new_business', '90.00', '11.25', '78.75'],
      ['new_business', '30.00', '6.00', '24.00'],
      ['cancellation', '-30.00', '-3.75', '-26.25'],
    ]);
    expect(b.totals.USD).toMatchObject({ rows: 3, gross_premium: 9000, commission: 1350, net_premium: 7650 });
  });

  test('when a product has no rate, then its items have no commission', async () => {
    const trip = await buyAndPay(agency, tripSelection(agency));
    const p = (await api('GET', `/purchases/${trip.purchaseId}`)).body.data;
    expect(p.items[0].commission).toBeNull();
  });
});

/** Asks for `party`'s bordereau of `month` and waits until it is ready; its rows as the CSV has them. */
async function bordereauRows(key: string, party: number, month: string) {
  const asked = await api('POST', '/reports/bordereaux', { party_id: party, month }, key);
  expect([200, 202]).toContain(asked.status);
  const b = await eventually(async () => {
    const got = (await api('GET', `/reports/bordereaux/${asked.body.data.id}`, undefined, key)).body.data;
    return got.status === 'ready' ? got : null;
  });
  return { b, rows: parse(await (await fetch(b.files.csv.download_url)).text(), { columns: true }) as Record<string, string>[] };
}

describe('premium tax', () => {
  test('when the operator syncs the rates file, then the sync is on the audit record with its reason and counts; without a reason nothing is done', async () => {
    const ops = (args: string[]) => runScript('scripts/ops.ts', args, { LOG_LEVEL: 'silent' });
    const refused = await ops(['tax-rates', 'sync']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--reason');
    const synced = await ops(['tax-rates', 'sync', '--reason', 'rates file reviewed', '--json']);
    expect([synced.code, synced.stderr]).toEqual([0, '']);
    const out = JSON.parse(synced.stdout);
    // The migration loaded the same file: every row is there already.
    expect(out).toMatchObject({ version: rates.version, inserted: 0, updated: rates.rates.length });
    const entry = await app.container.db('operator_audit_log').where({ id: out.audit_id }).first();
    expect([entry.actor_kind, entry.action, entry.outcome, entry.target_kind, entry.target_id, entry.reason]).toEqual([
      'operator_cli',
      'tax-rates-sync',
      'succeeded',
      'premium_tax_rates',
      rates.version,
      'rates file reviewed',
    ]);
  });

  test('when a tax setting is bad or of another account’s product, then it is refused; read back, it is what was set', async () => {
    const path = `/products/${agency.tripProductId}/tax_settings`;
    expect((await api('GET', path)).body.data).toEqual({
      product_id: agency.tripProductId,
      line_of_business: null,
      risk_location: null,
      updated_at: null,
    });
    for (const body of [
      { line_of_business: 'aviation' },
      { line_of_business: 'travel', risk_location: 'moon' },
      {},
      { line_of_business: 'travel', x: 1 },
    ]) {
      const res = await api('PATCH', path, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    const other = await createAgency(app, 'Other Tax Agency');
    expect((await api('PATCH', path, { line_of_business: 'travel' }, other.key)).status).toBe(404);
    const set = await api('PATCH', path, { line_of_business: 'travel', risk_location: 'venue' });
    expect(set.body.data).toMatchObject({ line_of_business: 'travel', risk_location: 'venue', updated_at: expect.any(String) });
    expect((await api('GET', path)).body.data).toEqual(set.body.data);
    expect((await api('PATCH', path, { line_of_business: null })).body.data.line_of_business).toBeNull();
  });

  test('when a taxed product with commission is sold in Texas and one day is cancelled, then quote, checkout, purchase and bordereau add up by hand', async () => {
    const seller = await createAgency(app, 'Lone Star Events Agency');
    const sellerId = (await app.container.db('root_accounts').where({ slug: seller.slug }).first('id')).id as number;
    const insurer = (await createRootAccountOfKind(app.container, 'insurer', 'Bluebonnet Specialty Insurance Co.', [sellerId])).id;
    const own = (method: string, path: string, body?: unknown) => api(method, path, body, seller.key);
    expect((await own('PATCH', `/products/${seller.eventProductId}`, { insurerRootAccountID: insurer })).status).toBe(200);
    expect((await own('PATCH', `/products/${seller.eventProductId}/cancellation_terms`, { free_look_days: 0 })).status).toBe(200);
    expect((await own('POST', `/products/${seller.eventProductId}/commission_rates`, { party_id: insurer, rate_bps: 1000 })).status).toBe(
      200,
    );
    const setting = await own('PATCH', `/products/${seller.eventProductId}/tax_settings`, { line_of_business: 'general_liability' });
    expect(setting.body.data).toMatchObject({ line_of_business: 'general_liability', risk_location: 'named_insured' });

    // A taxed product without the risk's address cannot be priced.
    const { named_insured: _n, ...noAddress } = eventSelection(seller, { start: '2027-10-01', end: '2027-10-03' });
    const refused = await quoteForNewBuyer(seller, [{ ...noAddress, named_insured: { name: 'Casey Nowhere' } }]);
    expect(refused.quote.status).toBe(400);
    expect(refused.quote.body.errors).toEqual([
      expect.objectContaining({ question: 'named_insured', product_line_template_id: seller.eventProductId }),
    ]);

    // 3 days × 30.00 = 90.00; Texas: surplus-lines tax 4.85 % = 4.365 → 4.37, stamping fee 0.04 % = 0.036 → 0.04.
    const texan = {
      name: 'Alamo Weddings LLC',
      address: { line1: '300 Alamo Plaza', city: 'San Antonio', region: 'TX', postal_code: '78205', country: 'US' },
    };
    const { quote } = await quoteForNewBuyer(seller, [
      { ...eventSelection(seller, { start: '2027-10-01', end: '2027-10-03' }), named_insured: texan },
    ]);
    expect(quote.status).toBe(200);
    expect(quote.body).toMatchObject({ amount_subtotal: 3 * DAY, platform_fee: { amount: 0 }, amount_tax: 441 });
    expect(quote.body.line_items).toEqual([
      { product_line_id: seller.eventProductId, in_bundle: false, units: 3, unit_amount: 2500, price_factor: 1.2, amount: 3 * DAY },
    ]);
    expect(quote.body.tax_lines).toEqual([
      expect.objectContaining({
        product_line_id: seller.eventProductId,
        tax: 'stamping_fee',
        method: 'stamping_fee',
        jurisdiction: 'US-TX',
        rate_bps: 4,
        amount: 4,
      }),
      expect.objectContaining({ tax: 'surplus_lines_tax', method: 'premium_rate', jurisdiction: 'US-TX', rate_bps: 485, amount: 437 }),
    ]);
    const purchaseId = quote.body.purchase_id as number;

    // The processor's checkout: the premium, then each tax as its own line.
    const sent = stack.proxy.requests.find(
      (r) => r.method === 'POST' && r.path === '/v1/checkout/sessions' && r.params.get('metadata[purchase_id]') === String(purchaseId),
    )!;
    const lines = [0, 1, 2, 3].flatMap((i) =>
      sent.params.has(`line_items[${i}][quantity]`)
        ? [
            [
              sent.params.get(`line_items[${i}][price_data][product_data][name]`),
              Number(sent.params.get(`line_items[${i}][price_data][unit_amount]`)),
            ],
          ]
        : [],
    );
    expect(lines).toEqual([
      [null, 3 * DAY],
      ['Texas stamping fee (SLTX) (US-TX)', 4],
      ['Texas surplus lines tax (US-TX)', 437],
    ]);

    expect((await deliverWebhook(app, sessionCompletedEvent(purchaseId, quote.body.id))).status).toBe(200);
    await waitIssued(seller, `pi_paid_${purchaseId}`);
    const bought = (await own('GET', `/purchases/${purchaseId}`)).body.data;
    expect(bought).toMatchObject({ amount_subtotal: 9000, platform_fee: 0, amount_tax: 441, amount_total: 9441, amount_paid: 9441 });
    expect(bought.items[0].tax.amount).toBe(441);
    expect(bought.items[0].tax.lines.map((l: any) => l.amount)).toEqual([4, 437]);
    expect(bought.items[0].commission).toEqual({ party_id: insurer, rate_bps: 1000, amount: 900, returned: 0 });

    // Cancel the third day (pro rata, no free look): 30.00 back, tax 4.41 × 30/90 = 1.47, commission 10 % of 30.00 = 3.00.
    const cancelled = await own('POST', `/purchases/${purchaseId}/cancel`, {
      covered_unit_ids: [bought.items[0].covered_units[2].id],
      requested_by: 'agency',
    });
    expect(cancelled.status).toBe(200);
    const after = await eventually(async () => {
      const p = (await own('GET', `/purchases/${purchaseId}`)).body.data;
      return p.cancellations[0]?.status === 'completed' ? p : null;
    });
    expect(after.cancellations[0].refund).toEqual({ id: expect.any(String), premium: 3000, tax: 147, platform_fee: 0, total: 3147 });
    expect(after.items[0].commission.returned).toBe(300);

    // The month's bordereau, dated into August 2026 (a month that is over).
    const db = app.container.db;
    await db('purchases')
      .where({ id: purchaseId })
      .update({ paid_at: new Date('2026-08-04T10:00:00Z') });
    await db('policy_transactions')
      .where({ id: after.cancellations[0].id })
      .update({ completed_at: new Date('2026-08-18T10:00:00Z') });
    const { b, rows } = await bordereauRows(seller.key, insurer, '2026-08');
    expect(rows.map((r) => [r.transaction_type, r.gross_premium, r.tax, r.commission, r.net_premium])).toEqual([
      ['new_business', '90.00', '4.41', '9.00', '81.00'],
      ['cancellation', '-30.00', '-1.47', '-3.00', '-27.00'],
    ]);
    expect(b.totals.USD).toEqual({ rows: 2, gross_premium: 6000, platform_fee: 0, tax: 294, commission: 600, net_premium: 5400 });
    // What the buyer paid less what came back is premium + tax kept: 94.41 − 31.47 = 62.94 = 60.00 + 2.94.
    expect(9441 - 3147).toBe(6000 + 294);
  });
});
