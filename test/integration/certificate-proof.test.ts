/**
 * Signed proof of a certificate (issue 50, item 3) against the real stack: the QR code of an
 * issued certificate and its `verification_url` carry a compact JWS (EdDSA, `kid` in the header)
 * of its facts; `/.well-known/jwks.json` publishes the keys; the verification page and
 * `npm run verify-certificate` check it online (live status) and offline (`--jwks`). A tampered
 * token and an unknown key are refused both ways (never a 5xx); a token of a rotated-out key
 * still in the set verifies.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app';
import { useAgencyStack } from '../helpers/stack';
import { call as fetchCall } from '../helpers/fixtures';
import { buyAndPay, eventSelection, waitIssued, type Agency } from '../helpers/certificates';
import { download, pdfFirstPagePng, pdfQr } from '../helpers/documents';
import { createCertificateSigner, type CertificateFacts } from '../../src/certificates/signed-proof';
import { parseSigningKeys } from '../../src/config';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '..', '..');
const ARTIFACTS = path.join(ROOT, 'var', 'test-artifacts');
const stack = useAgencyStack();
let app: TestApp;
let agency: Agency;
let cert: {
  certificate_number: string;
  verification_url: string;
  download_url: string;
  coverage_starts_at: string;
  coverage_ends_at: string;
};
let token: string;
const dir = mkdtempSync(path.join(tmpdir(), 'coi-proof-'));

/**
 * The fixtures' `call`, sent again once when the app had closed the kept-alive connection it went
 * out on (ECONNRESET): the synchronous PDF reads (pdftoppm, jsQR, pdfinfo) hold this process while
 * the app's keep-alive timer runs out, and the client learns of the close only after reusing it.
 * Every request here is a GET.
 */
async function call(...args: Parameters<typeof fetchCall>): ReturnType<typeof fetchCall> {
  try {
    return await fetchCall(...args);
  } catch (err) {
    if ((err as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw err;
    return fetchCall(...args);
  }
}

/** `npm run verify-certificate -- …args` (asynchronously: the online check calls this process's app): its exit code and output. */
function verifyCommand(...args: string[]): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    execFile(
      path.join(ROOT, 'node_modules', '.bin', 'tsx'),
      ['scripts/verify-certificate.ts', ...args],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
      (err, stdout, stderr) => resolve({ status: err ? ((err as { code?: number }).code ?? null) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
const payloadOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8')) as CertificateFacts;
/** The token with one signed fact changed and the signature kept. */
const tampered = (jws: string, change: Partial<CertificateFacts>) => {
  const [header, , signature] = jws.split('.');
  return `${header}.${b64url(JSON.stringify({ ...payloadOf(jws), ...change }))}.${signature}`;
};
const verifyJson = (base: string, number: string, proof: string) =>
  call(base, `/verify/${number}?proof=${proof}`, { headers: { accept: 'application/json' } });
const verifyHtml = (base: string, number: string, proof: string) =>
  call(base, `/verify/${number}?proof=${proof}`, { headers: { accept: 'text/html' } });
/** The JWK Set `base` publishes, saved to a file for the offline command. */
async function savedJwks(base: string, name: string): Promise<string> {
  const res = await call(base, '/.well-known/jwks.json');
  expect(res.status).toBe(200);
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(res.body));
  return file;
}

beforeAll(async () => {
  ({ app, agency } = stack);
  const paid = await buyAndPay(agency, eventSelection(agency, { start: '2027-06-05', end: '2027-06-05' }));
  const body = await waitIssued(agency, paid.paymentIntent);
  cert = body.certificates[0];
  token = new URL(cert.verification_url).searchParams.get('proof') ?? '';
});

describe('given an issued certificate', () => {
  test('when its QR code and verification_url are read, then both carry the same EdDSA token of its facts, under a key /.well-known/jwks.json publishes', async () => {
    expect(cert.verification_url).toBe(`${app.container.config.PUBLIC_BASE_URL}/verify/${cert.certificate_number}?proof=${token}`);
    const pdf = await download(cert.download_url);
    const png = pdfFirstPagePng(pdf, 300);
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(path.join(ARTIFACTS, 'certificate-signed-qr.png'), png);
    writeFileSync(path.join(ARTIFACTS, 'certificate-signed-qr.pdf'), pdf);
    // As issued (printed, split and stored), the PDF is tagged and titled (issue 50 item 6).
    const info = execFileSync('pdfinfo', [path.join(ARTIFACTS, 'certificate-signed-qr.pdf')], { encoding: 'utf8' });
    expect(info).toMatch(/^Tagged:\s+yes$/m);
    expect(info).toContain(`Certificate of Insurance ${cert.certificate_number}`);
    expect(pdfQr(pdf)).toBe(cert.verification_url);

    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8'));
    expect(header).toMatchObject({ alg: 'EdDSA', kid: 'dev-cert-1' });
    const facts = payloadOf(token);
    expect(facts).toEqual({
      certificate_number: cert.certificate_number,
      revision: 1,
      named_insured_name: 'Jordan Lee',
      certificate_holder_name: 'Grand Hall LLC',
      coverage_starts_at: new Date(cert.coverage_starts_at).toISOString().replace('.000Z', 'Z'),
      coverage_ends_at: new Date(cert.coverage_ends_at).toISOString().replace('.000Z', 'Z'),
      coverage_time_zone: 'America/Chicago',
      status: 'specimen',
      issued_at: new Date().toISOString().slice(0, 10),
    });
    const jwks = await call(app.baseUrl, '/.well-known/jwks.json');
    expect(jwks.body.keys).toEqual([expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: 'dev-cert-1' })]);
    expect(JSON.stringify(jwks.body)).not.toContain('"d"');
  });

  test('when the link is opened, then the page shows the signed facts verified beside the live status; without a proof it still answers, with none', async () => {
    const json = await verifyJson(app.baseUrl, cert.certificate_number, token);
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({
      state: 'not_yet_valid',
      signed_proof: { kid: 'dev-cert-1', facts: { certificate_number: cert.certificate_number, named_insured_name: 'Jordan Lee' } },
    });
    const html = await verifyHtml(app.baseUrl, cert.certificate_number, token);
    expect(html.status).toBe(200);
    expect(html.text).toContain('Signature verified');
    expect(html.text).toContain('<dd id="signed-holder">Grand Hall LLC</dd>');
    expect(html.text).toContain('Not yet valid');
    expect(html.text).not.toContain('carries no signed proof');

    const plain = await call(app.baseUrl, `/verify/${cert.certificate_number}`, { headers: { accept: 'application/json' } });
    expect(plain).toMatchObject({ status: 200, body: { state: 'not_yet_valid', signed_proof: null } });
    const plainHtml = await call(app.baseUrl, `/verify/${cert.certificate_number}`, { headers: { accept: 'text/html' } });
    expect(plainHtml.text).toContain('This link carries no signed proof');
    expect(plainHtml.text).not.toContain('Signature verified');
  });

  test('when the token is tampered with, then the page refuses it (400, a refusal page) and so does the command, offline and online', async () => {
    const forged = tampered(token, { named_insured_name: 'Someone Else' });
    const json = await verifyJson(app.baseUrl, cert.certificate_number, forged);
    expect(json).toMatchObject({ status: 400, body: { code: 'VALIDATION_ERROR', details: [{ path: 'proof', message: 'bad_signature' }] } });
    const html = await verifyHtml(app.baseUrl, cert.certificate_number, forged);
    expect(html.status).toBe(400);
    expect(html.text).toContain('Signature not valid');
    expect(html.text).not.toContain('Someone Else');
    for (const junk of ['x', 'a.b.c', `${token}x`, tampered(token, { revision: 2 })]) {
      const res = await verifyHtml(app.baseUrl, cert.certificate_number, encodeURIComponent(junk));
      expect(res.status).toBe(400);
    }
    // A genuine token of another certificate does not vouch for this number.
    const other = await verifyJson(app.baseUrl, 'COI-1-1-1-0000000000', token);
    expect(other).toMatchObject({ status: 400, body: { details: [{ message: 'bad_facts' }] } });

    const jwksFile = await savedJwks(app.baseUrl, 'jwks.json');
    const good = await verifyCommand(cert.verification_url, '--jwks', jwksFile);
    expect(good).toMatchObject({ status: 0 });
    expect(good.out).toContain('Signature verified (key dev-cert-1), offline');
    expect(good.out).toContain(`certificate ${cert.certificate_number} revision 1`);
    const offline = await verifyCommand(forged, '--jwks', jwksFile);
    expect(offline).toMatchObject({ status: 1 });
    expect(offline.out).toContain('REFUSED (bad_signature)');

    const online = await verifyCommand(cert.verification_url, '--base-url', app.baseUrl);
    expect(online).toMatchObject({ status: 0 });
    expect(online.out).toContain('Live status: not_yet_valid');
    const onlineForged = await verifyCommand(forged, '--base-url', app.baseUrl, '--json');
    expect(onlineForged.status).toBe(1);
    expect(JSON.parse(onlineForged.out)).toMatchObject({ verified: false, reason: 'bad_signature' });
  });
});

describe('given the signing keys rotated (a new key first, the old one kept)', () => {
  let rotated: TestApp;
  let newSigner: ReturnType<typeof createCertificateSigner>;

  beforeAll(async () => {
    const seed = (k: { privateKey: import('node:crypto').KeyObject }) =>
      k.privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(16).toString('base64');
    const old = app.container.config.CERTIFICATE_SIGNING_KEYS.map((k) => `${k.kid}:${seed(k)}`).join(',');
    const keys = `rotated-2:${Buffer.alloc(32, 42).toString('base64')},${old}`;
    rotated = await startTestApp({ CERTIFICATE_SIGNING_KEYS: keys });
    newSigner = createCertificateSigner(parseSigningKeys(keys));
  });
  afterAll(() => rotated?.close());

  test('when a certificate signed by the rotated-out key is verified, then it still verifies, online and offline; the new key signs', async () => {
    const jwks = await call(rotated.baseUrl, '/.well-known/jwks.json');
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual(['rotated-2', 'dev-cert-1']);
    expect(await verifyJson(rotated.baseUrl, cert.certificate_number, token)).toMatchObject({
      status: 200,
      body: { signed_proof: { kid: 'dev-cert-1' } },
    });
    const file = await savedJwks(rotated.baseUrl, 'rotated-jwks.json');
    expect(await verifyCommand(token, '--jwks', file)).toMatchObject({ status: 0 });

    const fresh = await newSigner.sign(payloadOf(token));
    expect(JSON.parse(Buffer.from(fresh.split('.')[0]!, 'base64url').toString('utf8')).kid).toBe('rotated-2');
    expect(await verifyJson(rotated.baseUrl, cert.certificate_number, fresh)).toMatchObject({
      status: 200,
      body: { signed_proof: { kid: 'rotated-2' } },
    });
  });

  test('when a token names a key the service does not have, then it is refused online and offline', async () => {
    const unknown = await newSigner.sign(payloadOf(token)); // kid rotated-2: unknown to the first app
    expect(await verifyJson(app.baseUrl, cert.certificate_number, unknown)).toMatchObject({
      status: 400,
      body: { details: [{ path: 'proof', message: 'unknown_key' }] },
    });
    expect((await verifyHtml(app.baseUrl, cert.certificate_number, unknown)).text).toContain('unknown key (rotated-2)');
    const offline = await verifyCommand(unknown, '--jwks', await savedJwks(app.baseUrl, 'jwks-old.json'));
    expect(offline.status).toBe(1);
    expect(offline.out).toContain('REFUSED (unknown_key)');
  });
});
