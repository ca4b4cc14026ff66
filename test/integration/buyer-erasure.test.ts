/**
 * A buyer's personal-data erasure on the real stack (issue 52, item 3): one paid purchase with
 * issued certificates, then `POST /api/v1/buyers/{id}/erasure`. Afterwards no API answer (the
 * purchase, the purchase list and search, the certificates, the events), page (the verification
 * page, with its signed proof) or log line shows the buyer's email or names; the purchase keeps
 * its money and the certificates their numbers, and the verification page still verifies the
 * signed proof. The call is idempotent, audited, and 404 outside the key's account and mode.
 */
import { useStack } from '../helpers/stack';
import { call } from '../helpers/fixtures';
import { WEBHOOK_SECRET } from '../helpers/purchases';
import { buyAndPay, createAgency, eventSelection, waitIssued, type Agency } from '../helpers/certificates';
import { createBuyerErasureRepository } from '../../src/buyers/erasure-repository';

jest.setTimeout(60_000);

const stack = useStack({ app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' } });
const INSURED = 'Marisol Vantongeren';
let agency: Agency;
let other: Agency;
let purchaseId: number;
let paymentIntent: string;
let buyerUuid: string;
let personal: string[];
let issued: { certificates: Array<{ certificate_number: string; verification_url: string }> };

const api = (path: string, init: { method?: string; key?: string; body?: unknown } = {}) =>
  call(stack.app.baseUrl, path, { key: agency.key, ...init });

/** Every piece of the buyer's personal data that appears in `text`. */
const shown = (text: string) => personal.filter((p) => text.toLowerCase().includes(p.toLowerCase()));

beforeAll(async () => {
  agency = await createAgency(stack.app);
  other = await createAgency(stack.app, 'Other Agency');
  const paid = await buyAndPay(agency, eventSelection(agency, { start: '2027-06-05', end: '2027-06-06' }, INSURED));
  ({ purchaseId, paymentIntent, buyerUuid } = paid);
  issued = await waitIssued(agency, paymentIntent);
  const buyer = await stack.app.container.db('buyers').where({ idp_accnt_uuid: buyerUuid }).first('email', 'first_name', 'last_name');
  personal = [buyer.email as string, buyer.first_name as string, buyer.last_name as string, INSURED];
});

describe('given a buyer with a paid purchase and issued certificates', () => {
  test('when another account or the wrong id asks, then 404 NOT_FOUND in the error envelope and nothing is erased', async () => {
    const foreign = await api(`/api/v1/buyers/${buyerUuid}/erasure`, { method: 'POST', key: other.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    expect((await api('/api/v1/buyers/not-a-uuid/erasure', { method: 'POST' })).status).toBe(404);
    expect(shown((await api(`/api/v1/purchases/${purchaseId}`)).text)).not.toHaveLength(0);
  });

  test('when the agency erases it, then no answer, page or log line shows its email or name, and the purchase and certificates still verify', async () => {
    const before = (await api(`/api/v1/purchases/${purchaseId}`)).body.data;
    const settings = await api('/api/v1/account', { method: 'PATCH', body: { settings: { personal_data_retention_years: 5 } } });
    expect(settings.body.data.settings).toMatchObject({ personal_data_retention_years: 5 });
    const first = await api(`/api/v1/buyers/${buyerUuid}/erasure`, { method: 'POST' });
    expect(first.status).toBe(201);
    expect(first.body.data).toMatchObject({ buyer_id: buyerUuid, purchases: 1, pseudonymised_at: null });
    expect(first.body.data.erased).toContain('buyer.email');
    expect(first.body.data.retained).toContain('purchase_item.named_insured.name');
    // Retention: the account's 5 years after the coverage ends on 2027-06-06.
    expect(first.body.data.retention_ends_at.slice(0, 10)).toBe('2032-06-07');

    const again = await api(`/api/v1/buyers/${buyerUuid.toUpperCase()}/erasure`, { method: 'POST' });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);

    const after = await api(`/api/v1/purchases/${purchaseId}`);
    expect(shown(after.text)).toEqual([]);
    expect(after.body.data).toMatchObject({
      status: before.status,
      amount_total: before.amount_total,
      amount_paid: before.amount_paid,
      amount_refunded: before.amount_refunded,
      buyer_email: null,
    });
    expect(shown((await api('/api/v1/purchases')).text)).toEqual([]);
    expect(shown((await api('/api/v1/events')).text)).toEqual([]);
    const search = await api('/platform-agency-certs/searchTeammatePurchasedProducts', {
      method: 'POST',
      body: { idp_teammate_uuid: agency.teammateUuid, search_text: '' },
    });
    expect(search.status).toBe(200);
    expect(shown(search.text)).toEqual([]);

    const certs = await waitIssued(agency, paymentIntent);
    expect(certs.certificates.map((c: { certificate_number: string }) => c.certificate_number)).toEqual(
      issued.certificates.map((c) => c.certificate_number),
    );
    expect(shown(JSON.stringify(certs))).toEqual([]);
    for (const c of issued.certificates) {
      const url = new URL(c.verification_url);
      const page = await call(stack.app.baseUrl, `${url.pathname}${url.search}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('id="signed-proof"');
      expect(page.text).toContain('(name erased)');
      expect(shown(page.text)).toEqual([]);
    }
    expect(shown(stack.app.rawLogs())).toEqual([]);

    const audit = await stack.app.container.db('operator_audit_log').where({ action: 'buyer.erase', target_id: buyerUuid }).orderBy('id');
    // The other account's attempt is on the log too, refused, under its own account.
    expect(audit.map((a: { actor_kind: string; outcome: string }) => [a.actor_kind, a.outcome])).toEqual([
      ['api_key', 'refused'],
      ['api_key', 'succeeded'],
      ['api_key', 'succeeded'],
    ]);
  });

  test('when its retention period ends, then the names kept apart are dropped and the erasure says when', async () => {
    const db = stack.app.container.db;
    const retained = async () =>
      (await db('buyer_erasures as e').join('buyers as b', 'b.id', 'e.buyer_id').where('b.idp_accnt_uuid', buyerUuid).first('e.retained'))
        .retained;
    expect(JSON.stringify(await retained())).toContain(INSURED);
    const erasures = createBuyerErasureRepository(db);
    expect(await erasures.pseudonymiseDue(new Date('2032-06-01T00:00:00Z'))).toBe(0);
    expect(await erasures.pseudonymiseDue(new Date('2032-07-01T00:00:00Z'))).toBe(1);
    expect(await retained()).toEqual({ named_insured: {}, printed: {} });
    const again = await api(`/api/v1/buyers/${buyerUuid}/erasure`, { method: 'POST' });
    expect(again.body.data.pseudonymised_at).toBe('2032-07-01T00:00:00.000Z');
  });
});
