/**
 * Certificate issuance end to end (issue 6) against the real servers: Temporal dev server,
 * PostgreSQL, stripe-mock, fake-gcs-server and Debian's Chromium. A purchase is quoted through
 * the API, paid by a signed `checkout.session.completed` webhook, and its certificates are read
 * back through getCertificates: PDFs (text via pdftotext, QR via pdftoppm + jsQR), zips (yauzl)
 * and the verification page (JSON, and HTML in headless Chromium with a screenshot).
 */
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { startTestApp, type TestApp } from '../helpers/app';
import { useAgencyStack } from '../helpers/stack';
import { eventually, type TestWorker } from '../helpers/worker';
import { call, createKey, createRootAccount } from '../helpers/fixtures';
import { chargeRefundedEvent, deliverWebhook } from '../helpers/purchases';
import { buyAndPay, eventSelection, getCertificates, tripSelection, waitIssued, type Agency } from '../helpers/certificates';
import { decodeQr, download, pdfPages, pdfQr, pdfText, readZip } from '../helpers/documents';
import { createAccountsRepository } from '../../src/accounts/repository';

jest.setTimeout(120_000);

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'var', 'test-artifacts');

const stack = useAgencyStack();
let app: TestApp;
let worker: TestWorker;
let agency: Agency;

beforeAll(async () => {
  ({ app, worker, agency } = stack);
});

describe('given a paid 3-day per-day purchase', () => {
  let paid: { purchaseId: number; paymentIntent: string; buyerUuid: string };
  let body: any;

  beforeAll(async () => {
    paid = await buyAndPay(agency, eventSelection(agency, { start: '2027-05-01', end: '2027-05-03' }));
    body = await waitIssued(agency, paid.paymentIntent);
  });

  test('when getCertificates is called, then it lists exactly 3 certificates, one per day, with signed URLs', () => {
    expect(body).toMatchObject({
      payment_intent: paid.paymentIntent,
      purchase_id: paid.purchaseId,
      status: 'issued',
      certificate_count: 3,
    });
    expect(body.certificates.map((c: any) => c.coverage_label)).toEqual(['2027-05-01', '2027-05-02', '2027-05-03']);
    const numbers = body.certificates.map((c: any) => c.certificate_number);
    expect(new Set(numbers).size).toBe(3);
    for (const [i, c] of body.certificates.entries()) {
      expect(c.certificate_number).toMatch(new RegExp(`^COI-${paid.purchaseId}-1-${i + 1}-[0-9A-F]{10}$`));
      expect(c).toMatchObject({
        product_line_id: agency.eventProductId,
        product_name: 'Special Event Liability',
        covered_unit_kind: 'day',
        coverage_time_zone: 'America/Chicago',
        named_insured_name: 'Jordan Lee',
      });
      expect(c.download_url).toContain('X-Goog-Signature=');
      // The link carries the certificate's signed proof (issue 50 item 3), as its QR code does.
      expect(c.verification_url).toMatch(
        new RegExp(`^${app.container.config.PUBLIC_BASE_URL}/verify/${c.certificate_number}\\?proof=[\\w-]+\\.[\\w-]+\\.[\\w-]+$`),
      );
    }
    expect(Date.parse(body.urls_expire_at) - Date.now()).toBeGreaterThan(3000 * 1000);
    expect(body.product_zips).toHaveLength(1);
    expect(body.payment_zip_url).toMatch(new RegExp(`/zips/payment-${paid.paymentIntent}-[0-9A-F]{20}\\.zip\\?`));
  });

  test('when each PDF is downloaded, then its text carries the names, the day, the policy and its own number, and its QR opens its verification page', async () => {
    for (const c of body.certificates) {
      const pdf = await download(c.download_url);
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
      expect(pdf.length).toBe(c.size_bytes);
      expect(pdfPages(pdf)).toBe(1);
      const text = pdfText(pdf);
      for (const expected of [
        c.certificate_number,
        'Jordan Lee',
        'Grand Hall LLC',
        'Harbor & Pine Insurance Agency',
        'Evergreen Mutual',
        'EVM-GL-2027-0042',
        'Special Event Liability',
        'America/Chicago',
        '$1,000,000.00',
        '$250.00',
      ]) {
        expect(text).toContain(expected);
      }
      // The holder (Grand Hall LLC) is in the US: dates print MM/DD/YYYY.
      const [y, m, d] = (c.coverage_label as string).split('-');
      expect(text).toContain(`${m}/${d}/${y} 00:00`);
      expect(pdfText(pdf, 'raw').replace(/\s+/g, '')).toContain('SPECIMEN'); // test-mode watermark (rotated, may wrap)
      expect(pdfQr(pdf)).toBe(c.verification_url);
    }
  });

  test('when the zips are downloaded, then they hold exactly those PDFs and a proof-of-coverage QR for the product link', async () => {
    const pdfs = new Map<string, Buffer>();
    for (const c of body.certificates) pdfs.set(c.certificate_number, await download(c.download_url));

    const [productZip] = body.product_zips;
    expect(productZip).toMatchObject({ product_line_id: agency.eventProductId, certificate_count: 3 });
    expect(productZip.proof_of_coverage_url).toMatch(/\/verify\/POC-[0-9A-F]{20}$/);
    const product = await readZip(await download(productZip.zip_url));
    expect([...product.keys()].sort()).toEqual(['proof-of-coverage.png', ...[...pdfs.keys()].map((n) => `${n}.pdf`)].sort());
    for (const [n, bytes] of pdfs) expect(product.get(`${n}.pdf`)!.equals(bytes)).toBe(true);
    expect(decodeQr(product.get('proof-of-coverage.png')!)).toBe(productZip.proof_of_coverage_url);

    const payment = await readZip(await download(body.payment_zip_url));
    const folder = `product-${agency.eventProductId}`;
    expect([...payment.keys()].sort()).toEqual(
      [`${folder}/proof-of-coverage.png`, ...[...pdfs.keys()].map((n) => `${folder}/${n}.pdf`)].sort(),
    );
    for (const [n, bytes] of pdfs) expect(payment.get(`${folder}/${n}.pdf`)!.equals(bytes)).toBe(true);
  });

  test('when the purchase is looked at in the database and storage, then there is one row and one object per certificate and the purchase is issued', async () => {
    const db = app.container.db;
    const rows = await db('certificates').where({ purchase_id: paid.purchaseId });
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.storage_key && r.sha256 && r.size_bytes > 1000)).toBe(true);
    expect(await db('certificate_archives').where({ purchase_id: paid.purchaseId }).count({ n: '*' }).first()).toEqual({ n: '2' });
    expect(await db('purchases').where({ id: paid.purchaseId }).first('status')).toEqual({ status: 'issued' });
    // The parent publishes `issued` once its child has returned (visibility is eventually consistent).
    const handle = app.container.temporal.client.workflow.getHandle(`purchase-${paid.purchaseId}`);
    await eventually(async () => ((await handle.describe()).searchAttributes.PurchaseStatus as string[] | undefined)?.[0] === 'issued');
  });

  test('when the root account asks, then it sees the purchase; another teammate, a wrong buyer, another account, unknown ids and bad bodies do not', async () => {
    const root = await getCertificates(
      agency,
      paid.paymentIntent,
      { idp_root_account_uuid: agency.rootUuid },
      '/platform-agency-root-certs',
    );
    expect(root.status).toBe(200);
    expect(root.body.certificate_count).toBe(3);

    const withBuyer = await getCertificates(agency, paid.paymentIntent, {
      idp_teammate_uuid: agency.teammateUuid,
      idp_accnt_uuid: paid.buyerUuid,
    });
    expect(withBuyer.status).toBe(200);

    const notFound = [
      await getCertificates(agency, paid.paymentIntent, { idp_teammate_uuid: agency.otherTeammateUuid }),
      await getCertificates(agency, paid.paymentIntent, {
        idp_teammate_uuid: agency.teammateUuid,
        idp_accnt_uuid: '00000000-0000-4000-8000-000000000000',
      }),
      await getCertificates(agency, 'pi_does_not_exist'),
    ];
    for (const res of notFound) expect(res).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });

    const other = await createRootAccount(app.container, 'Other Agency');
    const otherAgent = await createAccountsRepository(app.container.db).upsertAgent({
      rootAccountId: other.id,
      name: 'Eve',
      email: `eve.${other.id}@other.test`,
    });
    const otherKey = (await createKey(app.container, { rootAccountId: other.id, mode: 'test', agentId: otherAgent.id })).key;
    const otherUuid = (await app.container.db('agents').where({ id: otherAgent.id }).first('idp_teammate_uuid')).idp_teammate_uuid;
    expect(
      await getCertificates(agency, paid.paymentIntent, { idp_teammate_uuid: otherUuid }, '/platform-agency-certs', otherKey),
    ).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    expect(
      await getCertificates(agency, paid.paymentIntent, { idp_teammate_uuid: agency.teammateUuid }, '/platform-agency-certs', otherKey),
    ).toMatchObject({ status: 404, body: { code: 'TEAMMATE_NOT_FOUND' } });
    expect(
      await getCertificates(
        agency,
        paid.paymentIntent,
        { idp_root_account_uuid: agency.rootUuid },
        '/platform-agency-root-certs',
        otherKey,
      ),
    ).toMatchObject({ status: 404, body: { code: 'SELLER_NOT_FOUND' } });

    const liveKey = (
      await createKey(app.container, {
        rootAccountId: (await app.container.db('agents').where({ idp_teammate_uuid: agency.teammateUuid }).first('root_account_id'))
          .root_account_id,
        mode: 'live',
      })
    ).key;
    expect(
      await getCertificates(agency, paid.paymentIntent, { idp_teammate_uuid: agency.teammateUuid }, '/platform-agency-certs', liveKey),
    ).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });

    for (const bad of [
      {},
      { idp_teammate_uuid: 'not-a-uuid' },
      { idp_teammate_uuid: agency.teammateUuid, extra: 1 },
      { idp_teammate_uuid: agency.teammateUuid, payment_intent: "pi_'; drop table certificates; --" },
    ]) {
      const res = await call(app.baseUrl, '/platform-agency-certs/getCertificates', {
        method: 'POST',
        key: agency.key,
        body: { payment_intent: paid.paymentIntent, ...bad },
      });
      expect(res).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR' } });
    }
    expect(
      await call(app.baseUrl, '/platform-agency-certs/getCertificates', { method: 'POST', body: { payment_intent: paid.paymentIntent } }),
    ).toMatchObject({ status: 403, body: { message: 'Forbidden' } });
  });

  test('when the verification page is opened, then it says not yet valid, valid, expired and voided as the window and refund change, and shows nothing personal beyond the name', async () => {
    const db = app.container.db;
    const c = body.certificates[1];
    const page = (accept = 'application/json') => call(app.baseUrl, `/verify/${c.certificate_number}`, { headers: { accept } });

    expect((await page()).body).toMatchObject({
      code: c.certificate_number,
      kind: 'certificate',
      state: 'not_yet_valid',
      product_name: 'Special Event Liability',
      named_insured_name: 'Jordan Lee',
      test_mode: true,
    });
    const cert = await db('certificates').where({ certificate_number: c.certificate_number }).first('covered_unit_id', 'printed');
    const original = await db('covered_units').where({ id: cert.covered_unit_id }).first('starts_at', 'ends_at');
    // The unit's window and the one its stored certificate printed (what the page shows), moved together.
    const moveWindow = async (startsAt: string, endsAt: string) => {
      await db('covered_units')
        .where({ id: cert.covered_unit_id })
        .update({ starts_at: db.raw(startsAt), ends_at: db.raw(endsAt) });
      await db('certificates')
        .where({ certificate_number: c.certificate_number })
        .update({ printed: db.raw(`printed || jsonb_build_object('starts_at', ${startsAt}, 'ends_at', ${endsAt})`) });
    };
    try {
      await moveWindow("now() - interval '1 hour'", "now() + interval '1 hour'");
      expect((await page()).body.state).toBe('valid');

      const html = await page('text/html');
      expect(html.status).toBe(200);
      expect(html.headers.get('content-type')).toContain('text/html');
      expect(html.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(html.text).toContain('Valid: coverage is in force now');
      for (const personal of ['22 Elm Rd', 'Grand Hall LLC', '@example.com', 'Avery']) expect(html.text).not.toContain(personal);

      // The page as a browser shows it, screenshotted into var/test-artifacts for a human to look at.
      const browser = await puppeteer.launch({
        executablePath: app.container.config.CHROMIUM_PATH,
        args: ['--no-sandbox', '--disable-gpu'],
        headless: true,
      });
      try {
        const tab = await browser.newPage();
        // The QR's host is PUBLIC_BASE_URL; this test app listens on its own port.
        await tab.goto(`${app.baseUrl}/verify/${c.certificate_number}`);
        expect(await tab.$eval('#state', (e) => e.getAttribute('data-state'))).toBe('valid');
        expect(await tab.$eval('#named-insured', (e) => e.textContent)).toBe('Jordan Lee');
        mkdirSync(ARTIFACTS, { recursive: true });
        const shot = path.join(ARTIFACTS, 'verification-page.png');
        writeFileSync(shot, await tab.screenshot({ fullPage: true }));
        process.stdout.write(`verification page screenshot: ${shot}\n`);
      } finally {
        await browser.close();
      }

      await moveWindow("now() - interval '2 days'", "now() - interval '1 day'");
      expect((await page()).body.state).toBe('expired');
    } finally {
      await db('covered_units').where({ id: cert.covered_unit_id }).update(original);
      await db('certificates')
        .where({ certificate_number: c.certificate_number })
        .update({ printed: JSON.stringify(cert.printed) });
    }

    const proof = await call(app.baseUrl, `/verify/${body.product_zips[0].proof_of_coverage_url.split('/').pop()}`, {
      headers: { accept: 'application/json' },
    });
    expect(proof.body).toMatchObject({ kind: 'proof_of_coverage', state: 'not_yet_valid' });
    expect(proof.body.coverage.map((x: any) => x.certificate_number)).toEqual(body.certificates.map((x: any) => x.certificate_number));

    // A full refund (the processor's signed charge.refunded) voids every certificate of the payment.
    const refund = chargeRefundedEvent({
      id: `evt_refund_${paid.purchaseId}`,
      chargeId: `ch_${paid.purchaseId}`,
      paymentIntent: paid.paymentIntent,
      amountMinor: 1000,
      amountRefundedMinor: 1000,
      purchaseId: null,
    });
    expect((await deliverWebhook(app, refund)).status).toBe(200);
    await eventually(async () => (await page()).body.state === 'voided');
    expect((await getCertificates(agency, paid.paymentIntent)).body).toMatchObject({ status: 'voided', certificate_count: 3 });
    const today = new Date().toISOString().slice(0, 10);
    expect((await page('text/html')).text).toContain(`Voided: cancelled on ${today}, no coverage from ${today}`);
    expect((await page()).body.coverage[0].voided_at).toEqual(expect.stringMatching(new RegExp(`^${today}T`)));

    expect(await call(app.baseUrl, '/verify/COI-0-0-0-0000000000', { headers: { accept: 'application/json' } })).toMatchObject({
      status: 404,
      body: { code: 'NOT_FOUND' },
    });
    const missingHtml = await call(app.baseUrl, '/verify/<script>', { headers: { accept: 'text/html' } });
    expect(missingHtml.status).toBe(404);
    expect(missingHtml.text).not.toContain('<script>');
  });
});

describe('given a paid 2-trip purchase', () => {
  test('when issued, then there are exactly 2 PDFs, one per trip, with the trip windows in the trip time zone', async () => {
    const paid = await buyAndPay(agency, tripSelection(agency));
    const body = await waitIssued(agency, paid.paymentIntent);
    expect(body.certificate_count).toBe(2);
    expect(body.certificates.map((c: any) => c.covered_unit_kind)).toEqual(['trip', 'trip']);
    const texts = await Promise.all(body.certificates.map(async (c: any) => pdfText(await download(c.download_url))));
    expect(texts[0]).toContain('2027-06-10 09:00');
    expect(texts[0]).toContain('2027-06-14 18:00');
    expect(texts[1]).toContain('2027-07-01 08:30');
    expect(texts[1]).toContain('2027-07-03 20:00');
    for (const [i, t] of texts.entries()) {
      expect(t).toContain(body.certificates[i].certificate_number);
      expect(t).toContain('Riley Chen');
      expect(t).toContain('Europe/Lisbon');
      expect(t).toContain('Rental Car Trip Excess');
    }
    const zip = await readZip(await download(body.product_zips[0].zip_url));
    expect(zip.size).toBe(3);
  });
});

describe('given a named insured that holds markup pointing at a listening server', () => {
  test('when issued, then the PDF shows the markup as text and neither the server nor the page pool saw any request', async () => {
    const hits: string[] = [];
    const trap = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end();
    });
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
    const port = (trap.address() as { port: number }).port;
    try {
      const hostile = `<img src=http://127.0.0.1:${port}/x><script>fetch('http://127.0.0.1:${port}/y')</script>`;
      const blockedBefore = worker.pdf.blockedRequests;
      const paid = await buyAndPay(agency, eventSelection(agency, { start: '2027-08-01', end: '2027-08-01' }, hostile));
      const body = await waitIssued(agency, paid.paymentIntent);
      const text = pdfText(await download(body.certificates[0].download_url)).replace(/\s+/g, '');
      expect(text).toContain(hostile.replace(/\s+/g, ''));
      expect(hits).toEqual([]);
      expect(worker.pdf.blockedRequests).toBe(blockedBefore);
    } finally {
      await new Promise((r) => trap.close(r));
    }
  });
});

describe('given the public verification page', () => {
  test('when one address looks up more than VERIFY_RATE_LIMIT_PER_MINUTE codes, then it gets 429 with Retry-After', async () => {
    const limited = await startTestApp({ VERIFY_RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await call(limited.baseUrl, '/verify/COI-0-0-0-0000000000', { headers: { accept: 'application/json' } })).status);
      expect(statuses).toEqual([404, 404, 404, 429]);
      const res = await call(limited.baseUrl, '/verify/COI-0-0-0-0000000000', { headers: { accept: 'application/json' } });
      expect(res).toMatchObject({ status: 429, body: { code: 'RATE_LIMIT_ERROR' } });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});
