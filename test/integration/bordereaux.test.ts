/**
 * Premium bordereaux (issue 26, first part), end to end on the real app, worker, PostgreSQL,
 * Temporal, stripe-mock and fake-gcs-server: a month with two sales (one of two items, with a
 * platform fee spread over them), a subscription's renewal and a partial cancellation, for an
 * insurer and an MGA; each
 * bordereau's CSV read back row by row and checked against figures computed here from the
 * quotes' amounts; asked again, the same file; bad requests refused; nothing of another
 * account's or another mode's. Beside each, the loss bordereau: claims filed, denied, paid and left
 * open, with their payments and reserve.
 *
 * The sales and the cancellation happen now and are then dated into October 2026 (their recorded
 * times), because a bordereau covers a month that is over.
 */
import { isTestHelperPayment } from '../../src/reports/reconciliation';
import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { eventually } from '../helpers/worker';
import { call, createKey, createRootAccountOfKind } from '../helpers/fixtures';
import { chargeRefundedEvent, deliverWebhook, WEBHOOK_SECRET } from '../helpers/purchases';
import { buyAndPay, createAgency, eventSelection, tripSelection, waitIssued, type Agency } from '../helpers/certificates';
import { BORDEREAU_COLUMNS } from '../../src/reports/bordereau';
import { LOSS_BORDEREAU_COLUMNS } from '../../src/reports/loss-bordereau';
import { createLedgerRepository } from '../../src/purchases/ledger-repository';
import { BORDEREAU_SCHEDULE_ID, ensureBordereauSchedule } from '../../src/reports/schedule';

jest.setTimeout(180_000);

const stack = useStack({ app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' } });
const { taskQueue } = stack;
let app: TestApp;
let agency: Agency;
let other: Agency;
let insurerId: number;
let mgaId: number;
let accountId: number;
/** What the month holds, from the API's own answers. */
const sold: { p1: any; p2: any; cancellation: any; renewal: any } = { p1: null, p2: null, cancellation: null, renewal: null };

const api = (method: string, path: string, key = agency.key, body?: unknown) =>
  call(app.baseUrl, `/api/v1${path}`, { method, key, ...(body === undefined ? {} : { body }) });

/** Two decimals from integer minor units, as the file writes them. */
const major = (minor: number) =>
  `${minor < 0 ? '-' : ''}${Math.floor(Math.abs(minor) / 100)}.${String(Math.abs(minor) % 100).padStart(2, '0')}`;

async function readyBordereau(party: number, month = '2026-10', key = agency.key) {
  const first = await api('POST', '/reports/bordereaux', key, { party_id: party, month });
  expect([200, 202]).toContain(first.status);
  return eventually(async () => {
    const got = await api('GET', `/reports/bordereaux/${first.body.data.id}`, key);
    return got.body.data.status === 'ready' ? got.body.data : null;
  });
}

async function download(url: string): Promise<{ text: string; rows: Record<string, string>[] }> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, rows: parse(text, { columns: true }) as Record<string, string>[] };
}

beforeAll(async () => {
  app = stack.app;
  const c = app.container;
  agency = await createAgency(app);
  other = await createAgency(app, 'Other Coast Agency');
  insurerId = (await createRootAccountOfKind(c, 'insurer', 'Evergreen Mutual Insurance Co.', [agency])).id;
  mgaId = (await createRootAccountOfKind(c, 'mga', 'Harbor Underwriting MGA', [agency])).id;
  accountId = (await c.db('root_accounts').where({ idp_root_account_uuid: agency.rootUuid }).first('id')).id;
  expect((await api('PATCH', `/products/${agency.eventProductId}`, agency.key, { insurerRootAccountID: insurerId })).status).toBe(200);
  expect((await api('PATCH', `/products/${agency.tripProductId}`, agency.key, { mgaRootAccountID: mgaId })).status).toBe(200);
  expect((await api('PATCH', `/products/${agency.eventProductId}/cancellation_terms`, agency.key, { free_look_days: 0 })).status).toBe(200);

  // A key of the same teammate with a 2.5 % platform fee sells the first purchase.
  const agentId = (await c.db('agents').where({ idp_teammate_uuid: agency.teammateUuid }).first('id')).id;
  const feeKey = (await createKey(c, { rootAccountId: accountId, mode: 'test', agentId, platformFeeBps: 250 })).key;
  const insured = {
    name: 'Lee, Jordan',
    address: { line1: '22 Elm Rd', city: 'Boston', region: 'MA', postal_code: '02110', country: 'US' },
  };
  const p1 = await buyAndPay({ ...agency, key: feeKey }, [
    { ...eventSelection(agency, { start: '2027-06-10', end: '2027-06-12' }), named_insured: insured },
    tripSelection(agency),
  ]);
  const p2 = await buyAndPay(agency, eventSelection(agency, { start: '2027-07-01', end: '2027-07-03' }, 'Riley Chen'));
  await waitIssued(agency, p1.paymentIntent);
  await waitIssued(agency, p2.paymentIntent);
  sold.p1 = (await api('GET', `/purchases/${p1.purchaseId}`)).body.data;
  sold.p2 = (await api('GET', `/purchases/${p2.purchaseId}`)).body.data;
  const lastDay = sold.p2.items[0].covered_units[2].id;
  const cancelled = await api('POST', `/purchases/${p2.purchaseId}/cancel`, agency.key, {
    covered_unit_ids: [lastDay],
    requested_by: 'agency',
    reason: 'Third day called off',
  });
  expect(cancelled.status).toBe(200);
  sold.cancellation = await eventually(async () => {
    const p = (await api('GET', `/purchases/${p2.purchaseId}`)).body.data;
    return p.cancellations[0]?.status === 'completed' ? p.cancellations[0] : null;
  });
  // A monthly subscription of an event product of the insurer, paid, then renewed once.
  const monthly = await api('POST', '/products', agency.key, {
    customerName: 'Monthly Event Liability',
    defaultPrice: 30,
    questionSetId: (await c.db('product_lines').where({ id: agency.eventProductId }).first('question_set_id')).question_set_id,
    isRecurring: true,
    masterPolicyNumber: 'EVM-GL-2027-0099',
    insurerRootAccountID: insurerId,
  });
  expect(monthly.status).toBe(201);
  const first = await buyAndPay(agency, {
    ...eventSelection(agency, { start: '2027-08-01', end: '2027-08-02' }, 'Sam Monthly'),
    product_line_template_id: monthly.body.data.id,
  });
  await waitIssued(agency, first.paymentIntent);
  const renewed = await api('POST', `/test_helpers/purchases/${first.purchaseId}/renew`);
  expect(renewed.status).toBe(200);
  sold.renewal = (await api('GET', `/purchases/${renewed.body.data.renewal_purchase_id}`)).body.data;

  // Into the past: when they were recorded (the subscription's first period in August, its renewal in October).
  const db = c.db;
  await db('purchases')
    .where({ id: first.purchaseId })
    .update({ paid_at: new Date('2026-08-05T10:00:00Z') });
  await db('purchases')
    .where({ id: sold.renewal.id })
    .update({ paid_at: new Date('2026-10-15T10:00:00Z') });
  await db('purchases')
    .where({ id: p1.purchaseId })
    .update({ paid_at: new Date('2026-10-03T12:00:00Z') });
  await db('purchases')
    .where({ id: p2.purchaseId })
    .update({ paid_at: new Date('2026-10-10T09:30:00Z') });
  await db('policy_transactions')
    .where({ id: sold.cancellation.id })
    .update({ completed_at: new Date('2026-10-20T08:00:00Z') });
});

describe('a month’s bordereau', () => {
  test('when the insurer’s October is asked for, then its file has the two sales of its product, a renewal and the cancellation, each figure as computed', async () => {
    const b = await readyBordereau(insurerId);

    const { text, rows } = await download(b.files.csv.download_url);
    expect(text.split('\r\n')[0]).toBe(BORDEREAU_COLUMNS.map((c) => c.name).join(','));
    expect(text).toContain('"Lee, Jordan"'); // RFC 4180 quoting
    const [event1, trip1] = sold.p1.items;
    const event2 = sold.p2.items[0];
    // The platform fee of the first purchase, spread over its two items by premium: each its floor,
    // the odd minor unit (if any) to the larger remainder, the first on a tie.
    const fee = sold.p1.platform_fee as number;
    const sum = event1.amount + trip1.amount;
    const [eventRem, tripRem] = [(fee * event1.amount) % sum, (fee * trip1.amount) % sum];
    const floors = Math.floor((fee * event1.amount) / sum) + Math.floor((fee * trip1.amount) / sum);
    const eventFeeShare = Math.floor((fee * event1.amount) / sum) + (floors < fee && eventRem >= tripRem ? 1 : 0);
    expect(fee).toBeGreaterThan(0);
    const refund = sold.cancellation.refund;
    const renewalAmount = sold.renewal.items[0].amount as number;
    expect(renewalAmount).toBeGreaterThan(0);
    expect(rows).toEqual([
      expect.objectContaining({
        reporting_month: '2026-10',
        transaction_reference: `NB-${sold.p1.id}-1`,
        transaction_type: 'new_business',
        transaction_date: '2026-10-03',
        master_policy_number: 'EVM-GL-2027-0042',
        certificate_reference: `COI-${sold.p1.id}-1`,
        product_name: 'Special Event Liability',
        insured_name: 'Lee, Jordan',
        insured_region: 'MA',
        insured_country: 'US',
        risk_inception: event1.covered_units[0].starts_at,
        risk_expiry: event1.covered_units[2].ends_at,
        covered_units: '3',
        currency: 'USD',
        gross_premium: major(event1.amount),
        platform_fee: major(eventFeeShare),
        tax: '0.00',
        commission: '',
        net_premium: major(event1.amount),
      }),
      expect.objectContaining({
        transaction_reference: `NB-${sold.p2.id}-1`,
        transaction_type: 'new_business',
        transaction_date: '2026-10-10',
        insured_name: 'Riley Chen',
        covered_units: '3',
        gross_premium: major(event2.amount),
        platform_fee: '0.00',
      }),
      expect.objectContaining({
        transaction_reference: `RN-${sold.renewal.id}-1`,
        transaction_type: 'renewal',
        transaction_date: '2026-10-15',
        master_policy_number: 'EVM-GL-2027-0099',
        certificate_reference: `COI-${sold.renewal.id}-1`,
        product_name: 'Monthly Event Liability',
        insured_name: 'Sam Monthly',
        covered_units: '2',
        gross_premium: major(sold.renewal.items[0].amount),
        platform_fee: '0.00',
      }),
      expect.objectContaining({
        transaction_reference: `CN-${sold.cancellation.id}-1`,
        transaction_type: 'cancellation',
        transaction_date: '2026-10-20',
        effective_date: sold.cancellation.effective_at.slice(0, 10),
        certificate_reference: `COI-${sold.p2.id}-1`,
        covered_units: '1',
        gross_premium: major(-refund.premium),
        platform_fee: major(-refund.platform_fee),
        tax: major(-refund.tax),
        net_premium: major(-refund.premium),
      }),
    ]);
    expect(refund.premium).toBeGreaterThan(0);
    expect(b).toMatchObject({
      object: 'bordereau',
      party_id: insurerId,
      month: '2026-10',
      mode: 'test',
      status: 'ready',
      rows: 4,
      files: { csv: { size_bytes: Buffer.byteLength(text), sha256: createHash('sha256').update(text).digest('hex') } },
      totals: {
        USD: {
          rows: 4,
          gross_premium: event1.amount + event2.amount + renewalAmount - refund.premium,
          platform_fee: eventFeeShare - refund.platform_fee,
          tax: 0 - refund.tax,
          net_premium: event1.amount + event2.amount + renewalAmount - refund.premium,
        },
      },
    });
  });

  test('when the MGA’s October is asked for, then its file has the trip item with the rest of the platform fee', async () => {
    const b = await readyBordereau(mgaId);

    const { rows } = await download(b.files.csv.download_url);
    const [event1, trip1] = sold.p1.items;
    const insurerFile = (await download((await readyBordereau(insurerId)).files.csv.download_url)).rows;
    expect(rows).toEqual([
      expect.objectContaining({
        transaction_reference: `NB-${sold.p1.id}-2`,
        certificate_reference: `COI-${sold.p1.id}-2`,
        product_name: 'Rental Car Trip Excess',
        master_policy_number: 'EVM-TX-2027-0007',
        covered_units: '2',
        gross_premium: major(trip1.amount),
      }),
    ]);
    // The two shares of the first purchase's platform fee add up to the fee.
    const shares = Math.round(Number(rows[0]!.platform_fee) * 100) + Math.round(Number(insurerFile[0]!.platform_fee) * 100);
    expect(shares).toBe(sold.p1.platform_fee);
    expect(event1.amount + trip1.amount).toBe(sold.p1.amount_subtotal);
  });

  test('when its XLSX file is read back, then the same rows as typed cells, a frozen header and a totals row per currency', async () => {
    const b = await readyBordereau(insurerId);
    const csv = (await download(b.files.csv.download_url)).rows;
    const res = await fetch(b.files.xlsx.download_url);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(b.files.xlsx.sha256);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(bytes as never);
    const sheet = workbook.getWorksheet('Bordereau')!;

    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    const header = (sheet.getRow(1).values as unknown[]).slice(1);
    expect(header).toEqual(BORDEREAU_COLUMNS.map((c) => c.name));
    expect(sheet.rowCount).toBe(1 + 4 + 1); // header, four transactions, the USD totals
    const cell = (row: number, name: string) => sheet.getRow(row).getCell(header.indexOf(name) + 1);
    csv.forEach((r, i) => {
      expect(cell(i + 2, 'transaction_reference').value).toBe(r.transaction_reference);
      expect(cell(i + 2, 'gross_premium').value).toBe(Number(r.gross_premium)); // a number, not text
      expect(cell(i + 2, 'gross_premium').numFmt).toBe('0.00');
      expect(cell(i + 2, 'covered_units').value).toBe(Number(r.covered_units));
      expect((cell(i + 2, 'transaction_date').value as Date).toISOString().slice(0, 10)).toBe(r.transaction_date);
    });
    expect(cell(6, 'transaction_reference').value).toBe('TOTAL USD (4 rows)');
    expect(Math.round((cell(6, 'gross_premium').value as number) * 100)).toBe(b.totals.USD.gross_premium);
    expect(Math.round((cell(6, 'net_premium').value as number) * 100)).toBe(b.totals.USD.net_premium);
  });

  test('when the same month is asked for again, then the same bordereau and file (same sha256), and it is listed once', async () => {
    const first = await readyBordereau(insurerId);
    const again = await api('POST', '/reports/bordereaux', agency.key, { party_id: insurerId, month: '2026-10' });

    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({
      id: first.id,
      files: {
        csv: { sha256: first.files.csv.sha256 },
        xlsx: { sha256: first.files.xlsx.sha256, size_bytes: first.files.xlsx.size_bytes },
      },
    });
    const listed = await api('GET', `/reports/bordereaux?party_id=${insurerId}&month=2026-10`);
    expect(listed.body.data.map((b: { id: number }) => b.id)).toEqual([first.id]);
    expect(listed.body.metadata.total).toBe(1);
  });

  test('when a bordereau is ready, then report.ready is recorded once for the agency, with its files’ checksums and no link', async () => {
    const b = await readyBordereau(mgaId);

    const events = await eventually(async () => {
      const res = await api('GET', '/events?type=report.ready');
      const mine = (res.body.data as any[]).filter((e) => e.data.object.id === b.id);
      return mine.length ? mine : null;
    });
    expect(events).toHaveLength(1);
    expect(events![0].data.object).toEqual({
      object: 'bordereau',
      id: b.id,
      party_id: mgaId,
      month: '2026-10',
      mode: 'test',
      provisional: false,
      rows: 1,
      totals: b.totals,
      files: {
        csv: { size_bytes: b.files.csv.size_bytes, sha256: b.files.csv.sha256 },
        xlsx: { size_bytes: b.files.xlsx.size_bytes, sha256: b.files.xlsx.sha256 },
      },
      generated_at: b.generated_at,
    });
    expect((await api('GET', '/events?type=report.ready', other.key)).body.data).toEqual([]);
  });

  test('when covered units were added by an endorsement and a holder’s paid waiver later removed, then the month has one endorsement row per item for each: the premium collected with its platform fee, then the premium given back (negative, no fee), the sale’s row unchanged', async () => {
    // The ledger row as the endorsement's activity writes it (through the purchases repository),
    // recorded in July 2026 so October's figures above stay as they are.
    const event1 = sold.p1.items[0];
    const unit = Math.round(event1.unit_price * event1.price_factor);
    const added = await createLedgerRepository(app.container.db).recordEndorsementTransaction({
      purchaseId: sold.p1.id,
      apiKeyId: (await app.container.db('purchases').where({ id: sold.p1.id }).first('api_key_id')).api_key_id,
      currency: 'usd',
      premiumMinor: 2 * unit,
      platformFeeMinor: 7,
      paymentIntentId: 'pi_endorsement_fixture',
      effectiveAt: new Date('2026-07-20T09:00:00Z'),
      additions: [
        {
          itemId: event1.id,
          units: ['2027-06-13', '2027-06-14'].map((d, k) => ({
            kind: 'day' as const,
            startsAt: new Date(`${d}T04:00:00Z`),
            endsAt: new Date(`2027-06-${14 + k}T04:00:00Z`),
            timeZone: 'America/New_York',
            localLabel: d,
            premiumMinor: unit,
          })),
        },
      ],
    });
    // Five days later a holder's waiver of subrogation is removed from the second added day: 1.50 given back, no fee.
    const holder = await app.container.db('certificate_holders').where({ purchase_id: sold.p1.id }).orderBy('id').first('id');
    const down = await createLedgerRepository(app.container.db).recordEndorsementTransaction({
      purchaseId: sold.p1.id,
      apiKeyId: (await app.container.db('purchases').where({ id: sold.p1.id }).first('api_key_id')).api_key_id,
      currency: 'usd',
      premiumMinor: -150,
      platformFeeMinor: 0,
      paymentIntentId: null,
      effectiveAt: new Date('2026-07-25T09:00:00Z'),
      additions: [],
      holderPremiums: [
        {
          unitId: added.unitIds[1]!,
          itemId: event1.id,
          certificateHolderId: holder.id,
          endorsement: 'waiver_of_subrogation',
          premiumMinor: -150,
        },
      ],
    });
    const b = await readyBordereau(insurerId, '2026-07');

    const { rows } = await download(b.files.csv.download_url);
    expect(rows).toEqual([
      expect.objectContaining({
        transaction_reference: `EN-${added.transactionId}-1`,
        transaction_type: 'endorsement',
        transaction_date: '2026-07-20',
        effective_date: '2026-07-20',
        certificate_reference: `COI-${sold.p1.id}-1`,
        insured_name: 'Lee, Jordan',
        risk_inception: '2027-06-13T04:00:00.000Z',
        risk_expiry: '2027-06-15T04:00:00.000Z',
        covered_units: '2',
        gross_premium: major(2 * unit),
        platform_fee: '0.07',
        net_premium: major(2 * unit),
      }),
      expect.objectContaining({
        transaction_reference: `EN-${down.transactionId}-1`,
        transaction_type: 'endorsement',
        transaction_date: '2026-07-25',
        risk_inception: '2027-06-14T04:00:00.000Z',
        risk_expiry: '2027-06-15T04:00:00.000Z',
        covered_units: '1',
        gross_premium: '-1.50',
        platform_fee: '0.00',
        net_premium: '-1.50',
      }),
    ]);
    expect(b.totals).toEqual({
      USD: { rows: 2, gross_premium: 2 * unit - 150, platform_fee: 7, tax: 0, net_premium: 2 * unit - 150 },
    });
  });

  test('when money was refunded in the processor’s dashboard without a cancellation, then the month the event arrived in has a refund row with the amount no cancellation explains, negative, and a replayed event adds nothing', async () => {
    const p = (await api('GET', `/purchases/${sold.p2.id}`)).body.data;
    // The processor reports the cancellation's refund and 5.00 more refunded on the sale's charge.
    const refunded = (eventId: string) =>
      chargeRefundedEvent({
        id: eventId,
        chargeId: `ch_dash_${p.id}`,
        paymentIntent: p.payment_intent,
        amountMinor: p.amount_total,
        amountRefundedMinor: p.amount_refunded + 500,
        purchaseId: p.id,
      });
    expect((await deliverWebhook(app, refunded(`evt_dash_${p.id}`))).status).toBe(200);
    const row = await eventually(
      async () => (await app.container.db('policy_transactions').where({ purchase_id: p.id, kind: 'refund' }).first()) ?? null,
    );
    expect(row).toMatchObject({ status: 'completed', premium_minor: '500', platform_fee_minor: '0', total_minor: '500' });
    expect(row.breakdown).toEqual([{ itemId: p.items[0].id, refundableMinor: 500 }]);
    // The same refunded amount again (a second event about it) explains itself: nothing more is recorded.
    expect((await deliverWebhook(app, refunded(`evt_dash_again_${p.id}`))).status).toBe(200);
    await eventually(async () =>
      (await api('GET', `/purchases/${p.id}`)).body.data.amount_refunded === p.amount_refunded + 500 ? true : null,
    );
    expect(await app.container.db('policy_transactions').where({ purchase_id: p.id, kind: 'refund' })).toHaveLength(1);
    // Dated into June 2026 (a month no other test reports), as if it happened then.
    await app.container
      .db('policy_transactions')
      .where({ id: row.id })
      .update({ completed_at: new Date('2026-06-12T15:00:00Z'), effective_at: new Date('2026-06-12T15:00:00Z') });

    const b = await readyBordereau(insurerId, '2026-06');
    const { rows } = await download(b.files.csv.download_url);
    expect(rows).toEqual([
      expect.objectContaining({
        transaction_reference: `RF-${row.id}-1`,
        transaction_type: 'refund',
        transaction_date: '2026-06-12',
        effective_date: '2026-06-12',
        certificate_reference: `COI-${p.id}-1`,
        insured_name: 'Riley Chen',
        covered_units: '0',
        gross_premium: '-5.00',
        platform_fee: '0.00',
        net_premium: '-5.00',
      }),
    ]);
    expect(b.totals).toEqual({ USD: { rows: 1, gross_premium: -500, platform_fee: 0, tax: 0, net_premium: -500 } });
  });

  test('when a month has nothing for the party, then a file with the header only', async () => {
    const b = await readyBordereau(insurerId, '2026-09');

    expect(b.rows).toBe(0);
    expect(b.totals).toEqual({});
    expect((await download(b.files.csv.download_url)).text).toBe(`${BORDEREAU_COLUMNS.map((c) => c.name).join(',')}\r\n`);
  });
});

describe('who may ask, and bad requests', () => {
  const refused = async (body: unknown, key = agency.key) => {
    const res = await api('POST', '/reports/bordereaux', key, body);
    expect([res.status, res.body.error?.code]).toEqual([400, 'VALIDATION_ERROR']);
    return res.body.error.details as { path: string; message: string }[];
  };

  test('when the month is malformed, later than this one, this one in live mode, or the party is not one this account sells for, then 400 naming the field', async () => {
    const thisMonth = new Date().toISOString().slice(0, 7);
    const liveKey = (await createKey(app.container, { rootAccountId: accountId, mode: 'live' })).key;
    expect((await refused({ party_id: insurerId, month: '2026-13' }))[0]!.path).toBe('month');
    expect((await refused({ party_id: insurerId, month: thisMonth }, liveKey))[0]).toEqual({
      path: 'month',
      message: `${thisMonth} is not over yet: a live bordereau covers a whole month (in test mode the current month gives a provisional one to date)`,
    });
    expect((await refused({ party_id: insurerId, month: '2031-01' }))[0]).toEqual({
      path: 'month',
      message: '2031-01 has not started yet',
    });
    expect((await refused({ party_id: accountId, month: '2026-10' }))[0]!.path).toBe('party_id'); // an agency, not an insurer
    expect((await refused({ party_id: 2_000_000, month: '2026-10' }))[0]!.path).toBe('party_id');
    expect((await refused({ party_id: insurerId, month: '2026-10' }, other.key))[0]!.path).toBe('party_id'); // sells nothing for it
    expect((await refused({ party_id: insurerId, month: '2026-10', mode: 'live' }))[0]!.path).toBe('mode');
    const listLive = await api('GET', '/reports/bordereaux?mode=live');
    expect([listLive.status, listLive.body.error.code, listLive.body.error.details[0].path]).toEqual([
      400,
      'QUERY_VALIDATION_ERROR',
      'mode',
    ]);
  });

  test('when a product names a party of the wrong kind, then 400 naming the field, and the product keeps its parties', async () => {
    const res = await api('PATCH', `/products/${agency.eventProductId}`, agency.key, {
      insurerRootAccountID: mgaId,
      mgaRootAccountID: insurerId,
    });

    expect([res.status, res.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(res.body.error.details).toEqual([
      { path: 'insurerRootAccountID', message: `no insurer root account with id ${mgaId}` },
      { path: 'mgaRootAccountID', message: `no mga root account with id ${insurerId}` },
    ]);
    const read = (await api('GET', `/products/${agency.eventProductId}`)).body.data;
    expect([read.ins_product_line_insurer_root_accnt_id, read.ins_product_line_mga_root_accnt_id]).toEqual([insurerId, null]);
  });

  test('when another account reads a bordereau, then 404; a live key’s bordereau of the month holds no test purchase', async () => {
    const mine = await readyBordereau(insurerId);
    expect((await api('GET', `/reports/bordereaux/${mine.id}`, other.key)).status).toBe(404);
    expect((await api('GET', '/reports/bordereaux', other.key)).body.data).toEqual([]);

    const liveKey = (await createKey(app.container, { rootAccountId: accountId, mode: 'live' })).key;
    const live = await readyBordereau(insurerId, '2026-10', liveKey);
    expect(live).toMatchObject({ mode: 'live', rows: 0 });
    expect(live.id).not.toBe(mine.id);
  });
});

describe('the monthly run', () => {
  test('when the monthly workflow runs for October, then every party with activity gets its bordereau, the ones already asked for included, each once, and the month is reconciled in both modes', async () => {
    const mine = [(await readyBordereau(insurerId)).id, (await readyBordereau(mgaId)).id];

    const run = await app.container.temporal.client.workflow.execute('monthlyBordereauxWorkflow', {
      taskQueue,
      workflowId: `monthly-bordereaux-test-${Date.now()}`,
      args: [{ month: '2026-10' }],
    });

    expect(run.month).toBe('2026-10');
    expect(run.bordereaux).toEqual(expect.arrayContaining(mine));
    const ours = await app.container.db('bordereaux').whereIn('id', run.bordereaux).andWhere({ root_account_id: accountId });
    expect(ours.map((b: { id: number }) => b.id).sort()).toEqual([...mine].sort());
    // Then the month is reconciled with the processor in both modes, and each run kept.
    const kept = await app.container
      .db('reconciliations')
      .whereRaw(`to_char(month, 'YYYY-MM') = '2026-10'`)
      .orderBy('id', 'desc')
      .select('mode', 'difference_count', 'charges_checked');
    const newest = (mode: string) => kept.find((r: { mode: string }) => r.mode === mode);
    expect(run.reconciliationDifferences).toEqual({ live: newest('live').difference_count, test: newest('test').difference_count });
    // October's two test-mode sales were read back (stripe-mock answers its own amounts, so they
    // differ); the renewal, paid by the test helper, is one test-mode reconciliation skips.
    expect(newest('test').charges_checked).toBeGreaterThanOrEqual(2);
    const renewal = await app.container.db('purchases').where({ id: sold.renewal.id }).first('payment_intent_id');
    expect(isTestHelperPayment(renewal.payment_intent_id)).toBe(true);
  });

  test('when a worker ensures the schedule (twice), then one schedule fires on the 1st at 02:00 UTC into the monthly workflow on its task queue', async () => {
    const client = app.container.temporal.client;
    // An id of its own: the workers of other suites ensure the real one in this namespace too.
    const id = `${BORDEREAU_SCHEDULE_ID}-${taskQueue}`;
    await ensureBordereauSchedule(client, `${taskQueue}-old`, id);
    await ensureBordereauSchedule(client, taskQueue, id);
    try {
      const d = await client.schedule.getHandle(id).describe();
      expect(d.spec.calendars).toEqual([
        expect.objectContaining({ dayOfMonth: [{ start: 1, end: 1, step: 1 }], hour: [{ start: 2, end: 2, step: 1 }] }),
      ]);
      expect(d.spec.timezone).toBe('UTC');
      expect(d.action).toMatchObject({ type: 'startWorkflow', workflowType: 'monthlyBordereauxWorkflow', taskQueue });
      expect(d.policies.overlap).toBe('SKIP');
      expect(d.state.paused).toBe(false);
    } finally {
      await client.schedule.getHandle(id).delete();
    }
  });
});

test('when claims were filed, denied, paid and left open in the month, then the loss bordereau beside the premium bordereau lists each with its status, payments and reserve, as CSV and XLSX with totals', async () => {
  const p = await buyAndPay(agency, eventSelection(agency, { start: '2027-09-01', end: '2027-09-03' }, 'Claire Loss'));
  await waitIssued(agency, p.paymentIntent);
  expect(
    (await api('POST', `/test_helpers/purchases/${p.purchaseId}/test_clock`, agency.key, { frozen_time: '2027-09-04T12:00:00Z' })).status,
  ).toBe(200);
  const units = (await api('GET', `/purchases/${p.purchaseId}`)).body.data.items[0].covered_units;
  const file = async (unit: { id: number; starts_at: string }, amount: number) =>
    (
      await api('POST', `/purchases/${p.purchaseId}/claims`, agency.key, {
        incident_at: new Date(Date.parse(unit.starts_at) + 3_600_000).toISOString(),
        covered_unit_id: unit.id,
        claim_type: 'property_damage',
        description: 'Storm damage to the marquee',
        claimant: { name: 'Claire Loss', email: 'claire@example.com' },
        amount_claimed: amount,
      })
    ).body.data.id as number;
  const act = (id: number, body: Record<string, unknown>) => api('POST', `/test_helpers/claims/${id}/actions`, agency.key, body);
  const [denied, paid, open] = [await file(units[0], 40_000), await file(units[1], 90_000), await file(units[2], 25_000)];
  for (const id of [denied, paid]) for (const action of ['acknowledge', 'start_review']) await act(id, { action });
  await act(denied, { action: 'deny', reason_code: 'excluded_peril', reason: 'Flood is excluded' });
  await act(paid, { action: 'approve', amount: 60_000, reason: 'Depreciated' });
  expect((await act(paid, { action: 'record_payment', reference: 'po_loss_1' })).body.data.status).toBe('paid');

  // This month to date (test mode): a provisional bordereau, and its loss bordereau beside it.
  const b = await readyBordereau(insurerId, new Date().toISOString().slice(0, 7));
  expect(b.loss).toMatchObject({
    rows: 3,
    totals: { USD: { claims: 3, opened: 3, denied: 1, paid: 1, paid_this_month: 60_000, reserve: 25_000, total_incurred: 85_000 } },
  });
  const { text, rows } = await download(b.loss.files.csv.download_url);
  expect(createHash('sha256').update(text).digest('hex')).toBe(b.loss.files.csv.sha256);
  expect(text.split('\r\n')[0]).toBe(LOSS_BORDEREAU_COLUMNS.map((c) => c.name).join(','));
  const today = new Date().toISOString().slice(0, 10);
  const row = (id: number) => rows.find((r) => r.claim_reference === `CL-${id}`)!;
  expect(row(denied)).toMatchObject({ claim_status: 'denied', date_claim_denied: today, denial_reason: 'excluded_peril', reserve: '0.00' });
  expect(row(paid)).toMatchObject({ claim_status: 'paid', paid_this_month: '600.00', previously_paid: '0.00', total_incurred: '600.00' });
  expect(row(open)).toMatchObject({
    claim_status: 'submitted',
    certificate_reference: units[2].certificate.number,
    insured_name: 'Claire Loss',
    date_of_loss: '2027-09-03',
    loss_cause: 'property_damage',
    date_claim_opened: today,
    amount_claimed: '250.00',
    reserve: '250.00',
    total_incurred: '250.00',
  });
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(Buffer.from(await (await fetch(b.loss.files.xlsx.download_url)).arrayBuffer()) as never);
  const sheet = workbook.getWorksheet('Loss bordereau')!;
  expect(sheet.rowCount).toBe(5); // header, 3 claims, the USD totals
  expect(sheet.getRow(5).getCell(LOSS_BORDEREAU_COLUMNS.findIndex((c) => c.name === 'reserve') + 1).value).toBe(250);
});
