/**
 * ACORD-25-grade certificate content (issue 50, item 1) on the real stack (API, Temporal,
 * worker with Chromium, fake-gcs-server, PostgreSQL): a product's certificate setting (type of
 * insurance, claims-made, aggregate per location, endorsement forms, primary and
 * non-contributory, a second insurer) is read and set through
 * `/api/v1/products/{id}/certificate_settings`, bad values are refused, and a US venue added as
 * an additional-insured holder afterwards gets a certificate whose text shows insurers A and B
 * with their NAIC numbers, the type of insurance, the form references, the primary and
 * non-contributory wording and its dates as MM/DD/YYYY. The representative's signature
 * (`PUT /api/v1/account/signature`) is refused for a wrong type or size and printed once set.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import QRCode from 'qrcode';
import type { TestApp } from '../helpers/app';
import { useStack } from '../helpers/stack';
import { call, createRootAccountOfKind } from '../helpers/fixtures';
import { createQuotingAccount, issuedPurchase, type QuotingAccount } from '../helpers/purchases';
import { eventually } from '../helpers/worker';
import { download, pdfText } from '../helpers/documents';

jest.setTimeout(180_000);

const stack = useStack({ app: { RATE_LIMIT_PER_MINUTE: '100000' } });
let app: TestApp;
let account: QuotingAccount;

const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
  call(app.baseUrl, `/api/v1${path}`, { key: account.key, ...init });

beforeAll(async () => {
  app = stack.app;
  account = await createQuotingAccount(app);
});

test('when a product names insurers with NAIC numbers and sets its certificate setting, then a US holder’s certificate prints them with MM/DD/YYYY dates', async () => {
  const c = app.container;
  const insurerA = (await createRootAccountOfKind(c, 'insurer', 'Evergreen Mutual Insurance Co.', [account.accountId])).id;
  const insurerB = (await createRootAccountOfKind(c, 'insurer', 'Bayside Casualty Co.', [account.accountId])).id;
  const stranger = (await createRootAccountOfKind(c, 'insurer', 'Faraway Indemnity Co.', [])).id;
  // NAIC numbers as the operator's create-party command records them.
  await c.db('root_accounts').where({ id: insurerA }).update({ register_number: '99001' });
  await c.db('root_accounts').where({ id: insurerB }).update({ register_number: '24775' });
  const product = `/products/${account.productId}`;
  expect((await api(product, { method: 'PATCH', body: { insurerRootAccountID: insurerA, insurerName: '' } })).status).toBe(200);

  expect((await api(`${product}/certificate_settings`)).body.data).toEqual({
    product_id: account.productId,
    coverage_type: 'Commercial General Liability',
    coverage_trigger: 'occurrence',
    aggregate_basis: 'policy',
    additional_insured_form: null,
    waiver_form: null,
    primary_non_contributory: false,
    other_insurer_ids: [],
    updated_at: null,
  });
  for (const bad of [
    { additional_insured_form: 'CG 20 26' },
    { coverage_trigger: 'sometimes' },
    { aggregate_basis: 'planet' },
    { coverage_type: '' },
    { other_insurer_ids: [stranger] },
    { other_insurer_ids: [insurerA] },
    { other_insurer_ids: [insurerB, insurerB] },
  ]) {
    expect(await api(`${product}/certificate_settings`, { method: 'PATCH', body: bad })).toMatchObject({
      status: 400,
      body: { error: { code: 'VALIDATION_ERROR' } },
    });
  }
  const set = await api(`${product}/certificate_settings`, {
    method: 'PATCH',
    body: {
      coverage_trigger: 'claims_made',
      aggregate_basis: 'location',
      additional_insured_form: 'CG 20 26 04 13',
      waiver_form: 'CG 24 04 05 09',
      primary_non_contributory: true,
      other_insurer_ids: [insurerB],
    },
  });
  expect(set.status).toBe(200);
  expect(set.body.data).toMatchObject({
    coverage_type: 'Commercial General Liability',
    coverage_trigger: 'claims_made',
    aggregate_basis: 'location',
    additional_insured_form: 'CG 20 26 04 13',
    other_insurer_ids: [insurerB],
  });

  const id = await issuedPurchase(app, account);
  const added = await api(`/purchases/${id}/certificate_holders`, {
    method: 'POST',
    body: {
      name: 'Riverside Hall LLC',
      address: { line1: '200 River Rd', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
      additional_insured: true,
      waiver_of_subrogation: true,
    },
  });
  expect(added.status).toBe(201);
  const holderId = added.body.data.id as number;
  const rootUuid = (await api('/account')).body.data.root_account.idp_root_account_uuid as string;
  const certificate = await eventually(async () => {
    const res = await call(app.baseUrl, '/platform-agency-root-certs/getCertificates', {
      method: 'POST',
      key: account.key,
      body: { purchase_id: id, idp_root_account_uuid: rootUuid },
    });
    if (res.body.status !== 'issued') return null;
    return (
      (res.body.certificates as Array<{ certificate_holder: { id: number } | null; download_url: string }>).find(
        (x) => x.certificate_holder?.id === holderId,
      ) ?? null
    );
  }, 90_000);
  const pdf = await download(certificate!.download_url);
  const text = pdfText(pdf, 'raw').replace(/\s+/g, ' ');
  expect(text).toContain('INSURER(S) AFFORDING COVERAGE NAIC #');
  expect(text).toContain('INSURER A Evergreen Mutual Insurance Co. 99001 INSURER B Bayside Casualty Co. 24775');
  expect(text).toContain('Commercial General Liability');
  expect(text).toContain('[X] Claims-made [ ] Occurrence');
  expect(text).toContain("Gen'l aggregate applies per: Location");
  expect(text).toContain('(form CG 20 26 04 13)');
  expect(text).toContain('(form CG 24 04 05 09)');
  expect(text).toContain('(form CG 20 26 04 13). Primary and non-contributory.');
  // US holder: MM/DD/YYYY (the purchase covers 2027-05-01 and 2027-05-02 in America/Chicago).
  expect(text).toContain('DATE ISSUED (MM/DD/YYYY)');
  expect(text).toMatch(/\b05\/0[12]\/2027 00:00\b/);
  expect(text).not.toMatch(/2027-05-0[12] 00:00/);
});

test('when the agency uploads its representative’s signature, then a wrong type or size is refused and later certificates print the name and the image', async () => {
  const png = await QRCode.toBuffer('Dana Reyes, authorized representative', { type: 'png', margin: 1 });
  const put = (body: unknown) => api('/account/signature', { method: 'PUT', body });
  expect((await api('/account/signature')).status).toBe(404);
  const gif = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'binary');
  for (const bad of [
    { representative_name: 'Dana Reyes', content_type: 'image/png', image_base64: gif.toString('base64') },
    { representative_name: 'Dana Reyes', content_type: 'image/jpeg', image_base64: png.toString('base64') },
    {
      representative_name: 'Dana Reyes',
      content_type: 'image/png',
      image_base64: Buffer.concat([png, Buffer.alloc(100 * 1024)]).toString('base64'),
    },
    { representative_name: '', content_type: 'image/png', image_base64: png.toString('base64') },
  ]) {
    expect(await put(bad)).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } });
  }
  const set = await put({ representative_name: 'Dana Reyes', content_type: 'image/png', image_base64: png.toString('base64') });
  expect(set.status).toBe(200);
  expect(set.body.data).toMatchObject({ representative_name: 'Dana Reyes', content_type: 'image/png', size_bytes: png.length });
  expect((await api('/account/signature')).body.data).toEqual(set.body.data);

  const id = await issuedPurchase(app, account);
  const rootUuid = (await api('/account')).body.data.root_account.idp_root_account_uuid as string;
  const res = await call(app.baseUrl, '/platform-agency-root-certs/getCertificates', {
    method: 'POST',
    key: account.key,
    body: { purchase_id: id, idp_root_account_uuid: rootUuid },
  });
  expect(res.body.status).toBe('issued');
  const pdf = await download(res.body.certificates[0].download_url);
  const text = pdfText(pdf, 'raw').replace(/\s+/g, ' ');
  expect(text).toMatch(/AUTHORIZED REPRESENTATIVE .*Dana Reyes Verify this certificate/);
  // The signature is the certificate's one raster image (the QR code is vector).
  writeFileSync('/tmp/acord-signed.pdf', pdf);
  const images = execFileSync('pdfimages', ['-list', '/tmp/acord-signed.pdf'], { encoding: 'utf8' }).trim().split('\n').slice(2);
  expect(images.length).toBeGreaterThanOrEqual(1);
});
