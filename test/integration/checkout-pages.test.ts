/**
 * The buyer's return pages after checkout, `GET /checkout/complete` and `GET /checkout/cancelled`,
 * against the real servers: a purchase is quoted through the API (its workflow creates the
 * checkout session on stripe-mock), paid by a signed `checkout.session.completed` webhook, and
 * its certificates issued by a test worker. The pages are opened by URL, as the processor's
 * redirect would open them, with the purchase's return token.
 */
import { startTestApp, type TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { eventually } from '../helpers/worker';
import { call } from '../helpers/fixtures';
import { WEBHOOK_SECRET, deliverWebhook, sessionCompletedEvent } from '../helpers/purchases';
import { createAgency, eventSelection, quoteForNewBuyer, tripSelection, waitIssued, type Agency } from '../helpers/certificates';
import { createSaleRepository } from '../../src/purchases/sale-repository';

jest.setTimeout(120_000);

const stack = useStack({
  app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000', VERIFY_RATE_LIMIT_PER_MINUTE: '100000' },
});
let app: TestApp;
let agency: Agency;

interface Quoted {
  purchaseId: number;
  sessionId: string;
  token: string;
  buyerEmail: string;
}

/** Quotes `selections` for a new buyer (not paid); the return token is read from the purchase. */
async function quote(selections: Record<string, unknown>[]): Promise<Quoted> {
  const { quote: res, buyerEmail } = await quoteForNewBuyer(agency, selections);
  expect(res.status).toBe(200);
  const purchase = await createSaleRepository(app.container.db).findById(res.body.purchase_id);
  expect(purchase?.returnToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return { purchaseId: res.body.purchase_id, sessionId: res.body.id, token: purchase!.returnToken!, buyerEmail };
}

const pageUrl = (page: 'complete' | 'cancelled', purchaseId: number | string, token: string) =>
  `/checkout/${page}?purchase=${purchaseId}&token=${encodeURIComponent(token)}`;
const html = (path: string) => call(app.baseUrl, path, { headers: { accept: 'text/html' } });
const json = (path: string) => call(app.baseUrl, path, { headers: { accept: 'application/json' } });

/** The headers every answer of the pages carries (the token is in the URL). */
function expectPrivateHeaders(res: { headers: Headers }) {
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
}

beforeAll(async () => {
  app = stack.app;
  agency = await createAgency(app, 'Return Page Agency');
});

describe('given a quoted purchase of 3 event days and 2 trips', () => {
  let q: Quoted;

  /** Opens the purchase's `page` as HTML (or as JSON): asserts 200 and the private headers; answers the response. */
  const openPage = async (page: 'complete' | 'cancelled', as: 'html' | 'json' = 'html') => {
    const res = await (as === 'html' ? html : json)(pageUrl(page, q.purchaseId, q.token));
    expect(res.status).toBe(200);
    expectPrivateHeaders(res);
    return res;
  };

  beforeAll(async () => {
    q = await quote([
      eventSelection(agency, { start: '2027-05-01', end: '2027-05-03' }, 'Jordan Lee'),
      tripSelection(agency, 'Riley Chen'),
    ]);
  });

  test('when the complete page is opened before payment, then it is HTML saying it waits for payment confirmation, refreshes itself and says test mode', async () => {
    const res = await openPage('complete');
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(res.text).toContain('data-state="awaiting_payment"');
    expect(res.text).toContain('Waiting for payment confirmation');
    expect(res.text).toContain('<meta http-equiv="refresh" content="3">');
    expect(res.text).toContain('Test mode');
    expect(res.text).not.toContain(q.buyerEmail);
    expect(res.text).not.toContain('<table id="certificates"');
  });

  test('when the complete page is asked for JSON before payment, then it says awaiting_payment, not final, with nothing listed', async () => {
    const res = await openPage('complete', 'json');
    expect(res.body).toEqual({
      purchase_id: q.purchaseId,
      state: 'awaiting_payment',
      purchase_status: expect.stringMatching(/^(quoted|awaiting_payment)$/),
      final: false,
      refresh_after_seconds: 3,
      test_mode: true,
      paid_at: null,
      certificates_issued_at: null,
      certificates: [],
      proofs_of_coverage: [],
      withdrawal_url: null,
      checked_at: expect.any(String),
    });
  });

  test('when the cancelled page is opened before payment, then it says the payment was cancelled, nothing was charged, and the purchase is not paid', async () => {
    const res = await openPage('cancelled');
    expect(res.text).toContain('Payment cancelled');
    expect(res.text).toContain('nothing was charged');
    expect(res.text).toContain('<span id="status">not paid</span>');
    expect(res.text).toContain('Test mode');
    expect(res.text).not.toContain('http-equiv="refresh"');
    expect(res.text).not.toContain(q.buyerEmail);
  });

  describe('when it is paid and its certificates are issued', () => {
    let issued: any;

    beforeAll(async () => {
      const delivered = await deliverWebhook(app, sessionCompletedEvent(q.purchaseId, q.sessionId));
      expect(delivered.status).toBe(200);
      // The page itself is what the buyer polls: JSON until final.
      const view = await eventually(async () => {
        const res = await json(pageUrl('complete', q.purchaseId, q.token));
        return res.body?.final ? res.body : null;
      }, 90_000);
      expect(view.state).toBe('issued');
      issued = await waitIssued(agency, `pi_paid_${q.purchaseId}`);
    });

    test('then the complete page (HTML) lists every certificate number with its verification link and each product proof-of-coverage link, and stops refreshing', async () => {
      const res = await openPage('complete');
      expect(res.text).toContain('data-state="issued"');
      expect(res.text).toContain('Paid: certificates ready');
      expect(res.text).not.toContain('http-equiv="refresh"');
      expect(issued.certificates).toHaveLength(5);
      for (const c of issued.certificates) {
        expect(res.text).toContain(`<a href="${c.verification_url}">${c.certificate_number}</a>`);
      }
      expect(issued.product_zips).toHaveLength(2);
      for (const p of issued.product_zips) expect(res.text).toContain(`<a href="${p.proof_of_coverage_url}">${p.product_name}</a>`);
      expect(res.text).toContain('Jordan Lee');
      expect(res.text).toContain('Riley Chen');
    });

    test('then the page shows no buyer email, no download URL and no zip', async () => {
      const res = await html(pageUrl('complete', q.purchaseId, q.token));
      const body = `${res.text}\n${(await json(pageUrl('complete', q.purchaseId, q.token))).text}`;
      expect(body).not.toContain(q.buyerEmail);
      expect(body).not.toContain('X-Goog-Signature');
      expect(body).not.toContain('.zip');
      expect(body).not.toContain('.pdf');
      expect(body).not.toContain(`pi_paid_${q.purchaseId}`);
    });

    test('then the JSON view lists the same certificates and proofs, final', async () => {
      const res = await json(pageUrl('complete', q.purchaseId, q.token));
      expect(res.body).toMatchObject({
        state: 'issued',
        purchase_status: 'issued',
        final: true,
        refresh_after_seconds: null,
        test_mode: true,
        paid_at: expect.any(String),
        certificates_issued_at: expect.any(String),
      });
      // The products allow the buyer's own withdrawal (the default): the page links it (test/integration/buyer-withdrawal.test.ts follows it).
      expect(res.body.withdrawal_url).toMatch(
        new RegExp(`^${app.container.config.PUBLIC_BASE_URL}/withdraw/w1\\.${q.purchaseId}\\.[A-Za-z0-9_-]{43}$`),
      );
      expect((await html(pageUrl('complete', q.purchaseId, q.token))).text).toContain('>Withdraw from contract here</a>');
      expect(res.body.certificates).toEqual(
        issued.certificates.map((c: any) => ({
          certificate_number: c.certificate_number,
          product_name: c.product_name,
          coverage_label: c.coverage_label,
          named_insured_name: c.named_insured_name,
          verification_url: c.verification_url,
        })),
      );
      expect(res.body.proofs_of_coverage).toEqual(
        expect.arrayContaining(
          issued.product_zips.map((p: any) => ({
            product_name: p.product_name,
            certificate_count: p.certificate_count,
            proof_of_coverage_url: p.proof_of_coverage_url,
          })),
        ),
      );
    });

    test('then a verification link of the page opens its certificate', async () => {
      const url = new URL(issued.certificates[0].verification_url);
      const res = await json(url.pathname);
      expect(res).toMatchObject({ status: 200, body: { code: issued.certificates[0].certificate_number } });
    });

    test('then the cancelled page says the purchase was paid after all and links to the complete page', async () => {
      const res = await openPage('cancelled');
      expect(res.text).toContain('Paid after all');
      expect(res.text).toContain('<span id="status">paid, certificates ready</span>');
      expect(res.text).not.toContain('nothing was charged');
      const link = /id="purchase-page" href="([^"]+)"/.exec(res.text)![1]!.replace(/&amp;/g, '&');
      expect(link).toBe(`${app.container.config.PUBLIC_BASE_URL}${pageUrl('complete', q.purchaseId, q.token)}`);
    });
  });
});

describe('given two quoted purchases', () => {
  let a: Quoted;
  let b: Quoted;

  beforeAll(async () => {
    a = await quote([eventSelection(agency, { start: '2027-08-01', end: '2027-08-01' })]);
    b = await quote([eventSelection(agency, { start: '2027-08-02', end: '2027-08-02' })]);
  });

  test("when a page is opened with a wrong, missing, truncated or another purchase's token, an unknown or malformed id, then each answers the same 404 page", async () => {
    const wrong = [
      pageUrl('complete', a.purchaseId, b.token),
      pageUrl('complete', b.purchaseId, a.token),
      pageUrl('complete', a.purchaseId, `${a.token.slice(0, -1)}${a.token.endsWith('A') ? 'B' : 'A'}`),
      pageUrl('complete', a.purchaseId, a.token.slice(0, 42)),
      pageUrl('complete', a.purchaseId, `${a.token}x`),
      `/checkout/complete?purchase=${a.purchaseId}`,
      `/checkout/complete?token=${a.token}`,
      '/checkout/complete',
      pageUrl('complete', 2_147_483_000, a.token),
      pageUrl('complete', 99_999_999_999, a.token),
      pageUrl('complete', '0', a.token),
      pageUrl('complete', '-1', a.token),
      pageUrl('complete', `0${a.purchaseId}`, a.token),
      pageUrl('complete', 'abc', a.token),
      `${pageUrl('complete', a.purchaseId, a.token)}&purchase=${a.purchaseId}`,
      `${pageUrl('complete', a.purchaseId, a.token)}&token=${a.token}`,
      pageUrl('cancelled', a.purchaseId, b.token),
      '/checkout/cancelled',
    ];
    const first = await html(wrong[0]!);
    expect(first.status).toBe(404);
    expect(first.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(first.text).toContain('Purchase not found');
    for (const path of wrong) {
      const res = await html(path);
      expect({ path, status: res.status, text: res.text }).toEqual({ path, status: 404, text: first.text });
      expectPrivateHeaders(res);
      const j = await json(path);
      expect({ path, status: j.status, body: j.body }).toEqual({
        path,
        status: 404,
        body: { code: 'NOT_FOUND', message: 'No purchase for this link' },
      });
      expectPrivateHeaders(j);
    }
    // Each purchase still opens with its own token.
    expect((await html(pageUrl('complete', a.purchaseId, a.token))).status).toBe(200);
    expect((await html(pageUrl('complete', b.purchaseId, b.token))).status).toBe(200);
  });

  test('when a purchase holds a token of the older 64-hex form, then the pages open with it and not with another', async () => {
    const hex = 'ab'.repeat(32);
    // Purchases created before return tokens were written by Node got 64 hex characters (migration 20261122001400).
    await app.container.db('purchases').where({ id: b.purchaseId }).update({ return_token: hex });
    expect((await html(pageUrl('complete', b.purchaseId, hex))).status).toBe(200);
    expect((await json(pageUrl('cancelled', b.purchaseId, hex))).body).toMatchObject({
      purchase_id: b.purchaseId,
      state: 'awaiting_payment',
    });
    expect((await html(pageUrl('complete', b.purchaseId, 'ab'.repeat(31) + 'ac'))).status).toBe(404);
  });
});

describe('given a low per-address limit', () => {
  test('when one address opens the pages more often than allowed, then it gets 429 with Retry-After and the private headers', async () => {
    const limited = await startTestApp({ VERIFY_RATE_LIMIT_PER_MINUTE: '3', PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++)
        statuses.push(
          (await call(limited.baseUrl, '/checkout/complete?purchase=1&token=x', { headers: { accept: 'application/json' } })).status,
        );
      expect(statuses).toEqual([404, 404, 404]);
      const res = await call(limited.baseUrl, '/checkout/cancelled?purchase=1&token=x', { headers: { accept: 'application/json' } });
      expect(res).toMatchObject({ status: 429, body: { code: 'RATE_LIMIT_ERROR' } });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expectPrivateHeaders(res);
      // The verification page keeps a budget of its own.
      expect((await call(limited.baseUrl, '/verify/COI-0-0-0-0000000000', { headers: { accept: 'application/json' } })).status).toBe(404);
    } finally {
      await limited.close();
    }
  });
});

test('when the OpenAPI document is fetched, then it lists both pages with their query and the JSON view', async () => {
  const doc = (await call(app.baseUrl, '/openapi.json')).body;
  for (const path of ['/checkout/complete', '/checkout/cancelled']) {
    const op = doc.paths[path].get;
    expect(op.security).toEqual([]); // no API key (the document's default is the key)
    expect(op.parameters.map((p: any) => `${p.in}:${p.name}`).sort()).toEqual(['query:purchase', 'query:token']);
    expect(Object.keys(op.responses).sort()).toEqual(['200', '404', '429']);
    expect(Object.keys(op.responses['200'].content).sort()).toEqual(['application/json', 'text/html']);
  }
});
