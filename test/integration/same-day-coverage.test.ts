/**
 * Coverage never starts before it is paid for: a purchase whose first covered day is today (in its
 * time zone) is quoted from local midnight, but once paid that day is covered from the payment on
 * (covered unit, certificate and verification page), and the next day from its local midnight. Real
 * stack (API, Temporal dev server, worker with Chromium, fake-gcs-server, stripe-mock, PostgreSQL).
 */
import { DateTime } from 'luxon';
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import { createQuotingAccount, type QuotingAccount } from '../helpers/purchases';
import { purchaseWorkflowId } from '../../workflows/contracts';

jest.setTimeout(120_000);

const stack = useStack({ app: { RATE_LIMIT_PER_MINUTE: '100000' } });
let app: TestApp;
let account: QuotingAccount;

beforeAll(async () => {
  app = stack.app;
  account = await createQuotingAccount(app);
});

test('when the first covered day is today, then it is quoted from local midnight but covered from the payment on, and the next day from its midnight', async () => {
  // A zone where today still has hours left, so the first day is under way but not over.
  const zone = [
    'Pacific/Kiritimati',
    'Pacific/Auckland',
    'Asia/Tokyo',
    'Europe/Berlin',
    'America/Chicago',
    'Pacific/Honolulu',
    'Pacific/Pago_Pago',
  ].find((z) => DateTime.now().setZone(z).hour < 21)!;
  const today = DateTime.now().setZone(zone).toISODate()!;
  const tomorrow = DateTime.now().setZone(zone).plus({ days: 1 }).toISODate()!;
  const body = await account.quoteBody();
  const selection = (body.selected_product_lines_to_purchase as Array<Record<string, unknown>>)[0]!;
  selection.coverage = { time_zone: zone, start_date: today, end_date: tomorrow };
  const quoted = await call(app.baseUrl, '/public-quote/adminValidateBuyerResponses', { method: 'POST', key: account.key, body });
  expect(quoted.status).toBe(200);
  const id = quoted.body.purchase_id as number;
  const midnight = DateTime.fromISO(today, { zone }).toUTC().toJSDate();
  expect(new Date(quoted.body.certificate_coverage_datetimes[0].starts_at).getTime()).toBe(midnight.getTime());

  const beforePay = Date.now();
  expect((await call(app.baseUrl, `/api/v1/test_helpers/purchases/${id}/pay`, { method: 'POST', key: account.key })).status).toBe(200);
  await app.container.temporal.client.workflow.getHandle(purchaseWorkflowId(id)).result();

  const p = (await call(app.baseUrl, `/api/v1/purchases/${id}`, { key: account.key })).body.data;
  const [first, second] = p.items[0].covered_units;
  expect(new Date(first.starts_at).getTime()).toBe(new Date(p.paid_at).getTime());
  expect(new Date(first.starts_at).getTime()).toBeGreaterThanOrEqual(beforePay - 1000);
  expect(first.ends_at).toBe(DateTime.fromISO(tomorrow, { zone }).toUTC().toISO());
  expect(second.starts_at).toBe(DateTime.fromISO(tomorrow, { zone }).toUTC().toISO());
  const verified = (await call(app.baseUrl, `/verify/${first.certificate.number}`, { headers: { accept: 'application/json' } })).body;
  expect(verified.coverage[0].starts_at).toBe(first.starts_at);
  expect(verified.state).toBe('valid');
});
