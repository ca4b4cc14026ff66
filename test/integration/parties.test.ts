/**
 * Parties by appointment and bordereaux that can be tried today (issue 49, items 1 and 4), on the
 * real app, worker, PostgreSQL, Temporal, stripe-mock and fake-gcs-server:
 *
 * - `npm run ops -- create-party` and `appoint` (audited) make an insurer and an MGA that appoint
 *   one agency; `GET /api/v1/parties` with that agency's test key lists both, with their NAIC or
 *   register number and the agency's products naming them; another agency's list is empty;
 * - a product naming a party that did not appoint its agency is refused (400 VALIDATION_ERROR
 *   naming the field), and keeps its parties;
 * - in test mode the current month is a provisional bordereau to date: a sale made now is in its
 *   CSV; asked again, a new bordereau with a file of its own; the month's final bordereau is never
 *   one of them.
 */
import { parse } from 'csv-parse/sync';
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { eventually } from '../helpers/worker';
import { call } from '../helpers/fixtures';
import { runScript } from '../helpers/run';
import { WEBHOOK_SECRET } from '../helpers/purchases';
import { buyAndPay, createAgency, eventSelection, waitIssued, type Agency } from '../helpers/certificates';

jest.setTimeout(180_000);

const stack = useStack({ app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' } });
const ops = (args: string[]) => runScript('scripts/ops.ts', args, { LOG_LEVEL: 'silent' });
let app: TestApp;
let agency: Agency;
let other: Agency;
let agencyId: number;
let insurerId: number;
let mgaId: number;

const api = (method: string, path: string, key = agency.key, body?: unknown) =>
  call(app.baseUrl, `/api/v1${path}`, { method, key, ...(body === undefined ? {} : { body }) });

beforeAll(async () => {
  app = stack.app;
  agency = await createAgency(app, 'Appointed Agency');
  other = await createAgency(app, 'Unappointed Agency');
  agencyId = (await app.container.db('root_accounts').where({ slug: agency.slug }).first('id')).id;
  const why = ['--reason', 'issue 49 parties', '--json'];
  const insurer = await ops([
    'create-party',
    '--kind',
    'insurer',
    '--name',
    'Evergreen Mutual Insurance Co.',
    '--register-number',
    '10001',
    '--slug',
    `ins-${agency.slug}`,
    ...why,
  ]);
  expect([insurer.code, insurer.stderr]).toEqual([0, '']);
  insurerId = JSON.parse(insurer.stdout).party.id;
  const mga = await ops([
    'create-party',
    '--kind',
    'mga',
    '--name',
    'Harbor Underwriting MGA',
    '--register-number',
    'MGA-NY-0042',
    '--slug',
    `mga-${agency.slug}`,
    ...why,
  ]);
  mgaId = JSON.parse(mga.stdout).party.id;
  for (const party of [insurerId, mgaId]) {
    const appointed = await ops(['appoint', '--party', String(party), '--agency', String(agencyId), ...why]);
    expect([appointed.code, JSON.parse(appointed.stdout).created]).toEqual([0, true]);
  }
  expect(
    (await api('PATCH', `/products/${agency.eventProductId}`, agency.key, { insurerRootAccountID: insurerId, mgaRootAccountID: mgaId }))
      .status,
  ).toBe(200);
});

describe('parties by appointment', () => {
  test('when an agency lists its parties, then the insurer and MGA that appointed it, with their numbers and its products naming them; another agency sees none', async () => {
    const res = await api('GET', '/parties');

    expect(res.status).toBe(200);
    expect(res.body.metadata).toEqual({ total: 2, count: 2, pagination: { pageSize: 20, pageIndex: 0 } });
    expect(res.body.data.map((p: Record<string, unknown>) => ({ ...p, appointed_at: typeof p.appointed_at }))).toEqual([
      {
        object: 'party',
        id: insurerId,
        kind: 'insurer',
        name: 'Evergreen Mutual Insurance Co.',
        register_number: '10001',
        product_ids: [agency.eventProductId],
        appointed_at: 'string',
      },
      {
        object: 'party',
        id: mgaId,
        kind: 'mga',
        name: 'Harbor Underwriting MGA',
        register_number: 'MGA-NY-0042',
        product_ids: [agency.eventProductId],
        appointed_at: 'string',
      },
    ]);
    const second = await api('GET', '/parties?pageSize=1&pageIndex=1');
    expect([second.body.data.map((p: { id: number }) => p.id), second.body.metadata.count]).toEqual([[mgaId], 1]);
    const others = await api('GET', '/parties', other.key);
    expect([others.status, others.body.data, others.body.metadata.total]).toEqual([200, [], 0]);
    const bad = await api('GET', '/parties?pageSize=0&kind=insurer');
    expect([bad.status, bad.body.error.code]).toEqual([400, 'QUERY_VALIDATION_ERROR']);
  });

  test('when a product names a party that did not appoint its agency, then 400 VALIDATION_ERROR naming the field, and the product keeps its parties', async () => {
    const named = await api('PATCH', `/products/${other.eventProductId}`, other.key, { insurerRootAccountID: insurerId });
    expect([named.status, named.body.error.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(named.body.error.details).toEqual([
      {
        path: 'insurerRootAccountID',
        message: `insurer ${insurerId} has not appointed this account (GET /api/v1/parties lists those that have)`,
      },
    ]);
    const created = await api('POST', '/products', other.key, {
      customerName: 'Unappointed cover',
      defaultPrice: 10,
      mgaRootAccountID: mgaId,
    });
    expect([created.status, created.body.error.details[0].path]).toEqual([400, 'mgaRootAccountID']);
    const read = (await api('GET', `/products/${other.eventProductId}`, other.key)).body.data;
    expect([read.ins_product_line_insurer_root_accnt_id, read.ins_product_line_mga_root_accnt_id]).toEqual([null, null]);
  });

  test('when the operator appoints again or names a wrong account, then the same appointment, or a refusal on the record', async () => {
    const again = await ops(['appoint', '--party', String(insurerId), '--agency', String(agencyId), '--reason', 'again', '--json']);
    expect([again.code, JSON.parse(again.stdout).created]).toEqual([0, false]);
    const wrong = await ops(['appoint', '--party', String(agencyId), '--agency', String(agencyId), '--reason', 'wrong', '--json']);
    expect([wrong.code, wrong.stderr.trim()]).toEqual([2, `ops: refused: root account ${agencyId} is not an insurer or MGA`]);
    const entry = await app.container
      .db('operator_audit_log')
      .where({ id: JSON.parse(wrong.stdout).audit_id })
      .first();
    expect([entry.action, entry.outcome, entry.target_id, entry.reason]).toEqual(['appoint', 'refused', String(agencyId), 'wrong']);
    const noReason = await ops(['create-party', '--kind', 'insurer', '--name', 'No Reason Mutual']);
    expect(noReason.code).toBe(1);
  });
});

describe('bordereaux that can be tried today', () => {
  const thisMonth = new Date().toISOString().slice(0, 7);

  async function ready(id: number) {
    return eventually(async () => {
      const got = await api('GET', `/reports/bordereaux/${id}`);
      return got.body.data.status === 'ready' ? got.body.data : null;
    });
  }

  test('when a test key asks for the current month, then a provisional bordereau to date holding today’s sale, made anew on each request and never the final one', async () => {
    const paid = await buyAndPay(agency, eventSelection(agency, { start: '2027-06-10', end: '2027-06-11' }, 'Today Buyer'));
    await waitIssued(agency, paid.paymentIntent);

    const first = await api('POST', '/reports/bordereaux', agency.key, { party_id: insurerId, month: thisMonth });
    expect([first.status, first.body.data.provisional, first.body.data.status]).toEqual([202, true, 'generating']);
    expect(Date.parse(first.body.data.covers_until)).toBeLessThanOrEqual(Date.now());
    const b = await ready(first.body.data.id);
    const csv = await fetch(b.files.csv.download_url);
    expect(csv.status).toBe(200);
    const rows = parse(await csv.text(), { columns: true }) as Record<string, string>[];
    const sale = rows.filter((r) => r.transaction_reference!.startsWith(`NB-${paid.purchaseId}-`));
    expect(sale.map((r) => [r.reporting_month, r.transaction_type, r.insured_name, r.covered_units])).toEqual([
      [thisMonth, 'new_business', 'Today Buyer', '2'],
    ]);
    expect(b.rows).toBe(rows.length);

    const second = await api('POST', '/reports/bordereaux', agency.key, { party_id: insurerId, month: thisMonth });
    expect([second.status, second.body.data.provisional]).toEqual([202, true]);
    expect(second.body.data.id).not.toBe(first.body.data.id);
    const again = await ready(second.body.data.id);
    expect(new URL(again.files.csv.download_url).pathname).not.toBe(new URL(b.files.csv.download_url).pathname);
    expect(again.rows).toBeGreaterThanOrEqual(b.rows);

    const listed = await api('GET', `/reports/bordereaux?party_id=${insurerId}&month=${thisMonth}`);
    expect(listed.body.data.map((x: { id: number; provisional: boolean }) => [x.id, x.provisional])).toEqual([
      [second.body.data.id, true],
      [first.body.data.id, true],
    ]);
    const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
    const final = await api('POST', '/reports/bordereaux', agency.key, { party_id: insurerId, month: lastMonth });
    expect([final.body.data.provisional, final.body.data.covers_until]).toEqual([false, null]);
    const finalAgain = await api('POST', '/reports/bordereaux', agency.key, { party_id: insurerId, month: lastMonth });
    expect(finalAgain.body.data.id).toBe(final.body.data.id);
  });
});
