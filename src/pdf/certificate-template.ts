/**
 * The certificate-of-insurance HTML (issue 6, "The certificate child workflow": a layout in
 * the spirit of ACORD 25). The output is self-contained: system fonts only, the QR code inlined
 * as a `data:` SVG, a Content-Security-Policy that forbids every other source, and every
 * interpolated value HTML-escaped by the `html` tagged template below, so a buyer-supplied
 * string can never become markup.
 */
import QRCode from 'qrcode';
import type { PdfPageFormat } from './browser-pool';

/** A money amount in integer minor units of an ISO 4217 currency (e.g. 150000 USD = $1,500.00). */
export interface MoneyMinor {
  /** Integer amount in the currency's minor units (cents for USD, yen for JPY). */
  amount_minor: number;
  /** ISO 4217 code, e.g. `USD`. */
  currency: string;
}

/** One coverage limit line, e.g. "Each occurrence: $1,000,000.00". */
export interface CertificateLimit extends MoneyMinor {
  /** Shown as is (escaped), e.g. `Each occurrence`. */
  label: string;
}

/** Everything one certificate shows. All strings are treated as untrusted text. */
export interface CertificateData {
  /** Stable certificate number (same purchase and unit give the same number). */
  certificateNumber: string;
  /** Issue date as an ISO calendar date `YYYY-MM-DD` (printed as given). */
  issueDate: string;
  /** Test-mode purchase: the certificate carries a diagonal SPECIMEN watermark. */
  testMode: boolean;
  /** The producer: the agency that sold the coverage. */
  producer: {
    /** Agency name. */
    name: string;
    /** Postal address, free text; line breaks are kept. */
    address?: string;
  };
  /** The named insured (the buyer or the insured person). */
  namedInsured: {
    name: string;
    /** Postal address, free text; line breaks are kept. */
    address?: string;
  };
  /** Insurer(s) affording coverage, listed as INSURER A, B, …; at least one. */
  insurers: Array<{ name: string }>;
  /** The master policy number of the product line. */
  masterPolicyNumber: string;
  /** The second policy number of the product line, if it has one. */
  policyNumberTwo?: string;
  /** Product name as sold, e.g. `Daily Event Liability`. */
  productName: string;
  /** Coverage period of this certificate's unit, in the coverage time zone. */
  coverage: {
    /** Local start date-time `YYYY-MM-DDTHH:mm` (or with seconds) in `timeZone`. */
    startsAtLocal: string;
    /** Local end date-time `YYYY-MM-DDTHH:mm` (or with seconds) in `timeZone`. */
    endsAtLocal: string;
    /** IANA time zone name, e.g. `America/New_York`. */
    timeZone: string;
  };
  /** Limits of insurance, in the order to print them. */
  limits: CertificateLimit[];
  /** Deductible per claim, in minor units. */
  deductible: MoneyMinor;
  /** Phone number for claims, printed as given. */
  claimsPhone: string;
  /** The certificate holder (who asked for proof of coverage). */
  certificateHolder: {
    name: string;
    /** Postal address, free text; line breaks are kept. */
    address: string;
  };
  /** Absolute URL of the verification page; encoded in the QR code and printed below it. */
  verificationUrl: string;
}

/**
 * The data cannot make a certificate (unknown currency, non-integer amount, unknown time zone,
 * no insurer). A template error is not worth retrying (issue 6: "a template error is not").
 */
export class CertificateTemplateError extends Error {
  override name = 'CertificateTemplateError';
}

/** Markup that is already safe; only the `html` tag and `raw` of constants create it. */
class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/**
 * Escapes `value` for HTML text and double- or single-quoted attribute values: `& < > " '`.
 * Numbers are converted with `String`. This is the one escaping function of the template.
 */
export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

type HtmlValue = string | number | SafeHtml | HtmlValue[] | undefined;

/** Tagged template: every interpolation is escaped unless it is itself `html` output. */
function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

function render(value: HtmlValue): string {
  if (value === undefined) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value);
}

/** Free text with its line breaks kept as `<br>` (each line escaped). */
function lines(text: string | undefined): SafeHtml {
  if (!text) return html``;
  return html`${text.split(/\r\n|\r|\n/).map((line, i) => (i === 0 ? html`${line}` : html`<br>${line}`))}`;
}

/**
 * Formats integer minor units as money, e.g. `{ amount_minor: 100000000, currency: 'USD' }` →
 * `$1,000,000.00`, `{ amount_minor: 5000, currency: 'JPY' }` → `¥5,000`. Uses the currency's
 * own number of minor digits. Throws `CertificateTemplateError` for a non-integer amount or an
 * unknown currency code.
 */
export function formatMoneyMinor(money: MoneyMinor, locale = 'en-US'): string {
  if (!Number.isSafeInteger(money.amount_minor)) {
    throw new CertificateTemplateError(`amount_minor must be an integer, got ${money.amount_minor}`);
  }
  let format: Intl.NumberFormat;
  try {
    format = new Intl.NumberFormat(locale, { style: 'currency', currency: money.currency });
  } catch {
    throw new CertificateTemplateError(`unknown currency ${JSON.stringify(money.currency)}`);
  }
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(money.amount_minor / 10 ** digits);
}

function assertTimeZone(zone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw new CertificateTemplateError(`unknown IANA time zone ${JSON.stringify(zone)}`);
  }
}

/** `2026-03-07T00:00` → `2026-03-07 00:00` (seconds dropped); other text is printed as given. */
function localDateTime(value: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(value);
  return m ? `${m[1]} ${m[2]}` : value;
}

const PAGE_SIZE: Record<PdfPageFormat, string> = { Letter: 'letter', A4: 'A4' };

/** Fixed stylesheet; it contains no data, so it is inserted as is. */
const STYLES = new SafeHtml(`
  * { box-sizing: border-box; }
  html, body { margin: 0; padding: 0; }
  body { font-family: "Helvetica Neue", Helvetica, Arial, "Liberation Sans", "DejaVu Sans", sans-serif;
         font-size: 9pt; color: #111; overflow-wrap: anywhere; word-break: break-word; }
  h1 { font-size: 15pt; margin: 0; letter-spacing: 0.02em; }
  .header { display: flex; justify-content: space-between; align-items: flex-start;
            border-bottom: 2px solid #111; padding-bottom: 6px; margin-bottom: 6px; }
  .header .meta { text-align: right; font-size: 9pt; }
  .notice { font-size: 7pt; line-height: 1.3; border: 1px solid #111; padding: 4px 6px; margin-bottom: 6px; }
  table { width: 100%; border-collapse: collapse; table-layout: fixed; margin-bottom: 6px; }
  th, td { border: 1px solid #111; padding: 3px 5px; vertical-align: top; text-align: left; }
  th { background: #e6e6e6; font-size: 7.5pt; text-transform: uppercase; font-weight: 600; }
  .label { font-size: 7pt; text-transform: uppercase; color: #444; display: block; margin-bottom: 1px; }
  .zone { font-size: 7pt; color: #444; }
  .amount { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
  .two { display: flex; gap: 6px; }
  .two > table { flex: 1; }
  .verify { display: flex; gap: 10px; align-items: center; }
  .verify img { width: 28mm; height: 28mm; image-rendering: pixelated; }
  .verify .url { font-size: 7.5pt; }
  .specimen { position: fixed; top: 45%; left: 0; right: 0; text-align: center;
              font-size: 84pt; font-weight: 700; white-space: nowrap; color: rgba(200, 0, 0, 0.16);
              transform: rotate(-35deg); z-index: 10; pointer-events: none; letter-spacing: 0.08em; }
`);

/** The printed certificate itself (everything inside `<body>` but the watermark). */
async function certificateBody(data: CertificateData): Promise<SafeHtml> {
  if (data.insurers.length === 0) throw new CertificateTemplateError('a certificate needs at least one insurer');
  assertTimeZone(data.coverage.timeZone);
  const limitRows = data.limits.map((l) => html`<tr><td>${l.label}</td><td class="amount">${formatMoneyMinor(l)}</td></tr>`);
  const deductible = formatMoneyMinor(data.deductible);
  // Vector, not PNG: sharp at any zoom or print size, and encoding a PNG took about 7 ms of the
  // worker's CPU per certificate (issue 16). An SVG shown by <img> runs no script.
  const qrSvg = await QRCode.toString(data.verificationUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 });
  if (!qrSvg.startsWith('<svg')) throw new CertificateTemplateError('QR code generation did not return an SVG');
  const qrDataUrl = `data:image/svg+xml;base64,${Buffer.from(qrSvg, 'utf8').toString('base64')}`;
  const letter = (i: number) => String.fromCharCode(65 + (i % 26));
  return html`<div class="header">
  <h1>CERTIFICATE OF LIABILITY INSURANCE</h1>
  <div class="meta">
    <div><span class="label">Certificate number</span><strong id="certificate-number">${data.certificateNumber}</strong></div>
    <div><span class="label">Date issued (YYYY-MM-DD)</span>${data.issueDate}</div>
  </div>
</div>
<div class="notice">THIS CERTIFICATE IS ISSUED AS A MATTER OF INFORMATION ONLY AND CONFERS NO RIGHTS UPON THE
CERTIFICATE HOLDER. THIS CERTIFICATE DOES NOT AFFIRMATIVELY OR NEGATIVELY AMEND, EXTEND OR ALTER THE COVERAGE
AFFORDED BY THE POLICIES BELOW.</div>
<div class="two">
  <table>
    <tr><th>Producer</th></tr>
    <tr><td><div id="producer">${data.producer.name}</div><div>${lines(data.producer.address)}</div></td></tr>
    <tr><th>Insured</th></tr>
    <tr><td><div id="named-insured">${data.namedInsured.name}</div><div>${lines(data.namedInsured.address)}</div></td></tr>
  </table>
  <table>
    <tr><th colspan="2">Insurer(s) affording coverage</th></tr>
    ${data.insurers.map((ins, i) => html`<tr><td style="width:24%">INSURER ${letter(i)}</td><td>${ins.name}</td></tr>`)}
    <tr><th colspan="2">Claims</th></tr>
    <tr><td>Phone</td><td id="claims-phone">${data.claimsPhone}</td></tr>
  </table>
</div>
<table>
  <tr><th style="width:8%">Insr ltr</th><th style="width:26%">Type of insurance</th><th style="width:22%">Policy number(s)</th><th style="width:22%">Policy effective</th><th style="width:22%">Policy expiration</th></tr>
  <tr>
    <td>A</td>
    <td id="product">${data.productName}</td>
    <td><span class="label">Master policy</span>${data.masterPolicyNumber}${
      data.policyNumberTwo ? html`<br><span class="label">Policy number two</span>${data.policyNumberTwo}` : undefined
    }</td>
    <td>${localDateTime(data.coverage.startsAtLocal)}<br><span class="zone">${data.coverage.timeZone}</span></td>
    <td>${localDateTime(data.coverage.endsAtLocal)}<br><span class="zone">${data.coverage.timeZone}</span></td>
  </tr>
</table>
<table>
  <tr><th>Limits</th><th class="amount" style="width:30%">Amount</th></tr>
  ${limitRows}
  <tr><td>Deductible (per claim)</td><td class="amount" id="deductible">${deductible}</td></tr>
</table>
<div class="two">
  <table>
    <tr><th>Certificate holder</th></tr>
    <tr><td><div id="certificate-holder">${data.certificateHolder.name}</div><div>${lines(data.certificateHolder.address)}</div></td></tr>
  </table>
  <table>
    <tr><th>Verification</th></tr>
    <tr><td><div class="verify"><img id="qr" alt="QR code to the verification page" src="${qrDataUrl}"><div class="url">Scan or visit to verify this certificate:<br>${data.verificationUrl}</div></div></td></tr>
  </table>
</div>
`;
}

/** The self-contained document around certificate bodies, one per printed page. */
function certificateDocument(title: string, bodies: SafeHtml[], testMode: boolean, format: PdfPageFormat): string {
  const pageCss = new SafeHtml(`@page { size: ${PAGE_SIZE[format]}; margin: 12mm; }`);
  const pages = bodies.map((b, i) => (i < bodies.length - 1 ? html`<section class="certificate" style="break-after: page">${b}</section>` : html`<section class="certificate">${b}</section>`));
  const doc = html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>${title}</title>
<style>${pageCss}${STYLES}</style>
</head>
<body>
${testMode ? html`<div class="specimen" aria-hidden="true">SPECIMEN</div>` : undefined}
${pages}
</body>
</html>
`;
  return doc.value;
}

/**
 * Builds the self-contained HTML of one certificate of insurance for paper `format`
 * (`@page` size and margins set from it). Async because the QR code of `verificationUrl` is
 * generated here and inlined as a `data:image/svg+xml;base64,…` URI.
 * Throws `CertificateTemplateError` for data that cannot be printed (no insurer, unknown
 * currency or time zone, non-integer minor units).
 */
export async function renderCertificateHtml(data: CertificateData, options: { format: PdfPageFormat } = { format: 'Letter' }): Promise<string> {
  return certificateDocument(`Certificate of Insurance ${data.certificateNumber}`, [await certificateBody(data)], data.testMode, options.format);
}

/**
 * One certificate's printable page, checked and built but not yet in a document: what
 * `certificatesDocumentHtml` puts together, possibly with other purchases' pages, into one print.
 * Opaque: its markup is only ever produced by `certificatePage` (every value escaped).
 */
export interface CertificatePage {
  readonly testMode: boolean;
  readonly certificateNumber: string;
  /** @internal the escaped markup of the page. */
  readonly body: unknown;
}

/**
 * Checks and builds one certificate's page (QR code included) without a document around it.
 * Throws `CertificateTemplateError` for data `renderCertificateHtml` would refuse.
 */
export async function certificatePage(data: CertificateData): Promise<CertificatePage> {
  return { testMode: data.testMode, certificateNumber: data.certificateNumber, body: await certificateBody(data) };
}

/**
 * Checks that `pages` can share one document: at least one, all of one mode (the SPECIMEN
 * watermark is per document). Returns that mode (true: test). Throws `CertificateTemplateError`.
 */
export function checkCertificatePages(pages: readonly Pick<CertificatePage, 'testMode'>[]): boolean {
  if (pages.length === 0) throw new CertificateTemplateError('no certificates to render');
  const testMode = pages[0]!.testMode;
  if (pages.some((p) => p.testMode !== testMode)) throw new CertificateTemplateError('test-mode and live certificates cannot share a document');
  return testMode;
}

/**
 * Builds one HTML document holding the given pages, one per printed page in order, for printing
 * them in a single render (a print costs far more than a page; see docs/decisions.md). The
 * SPECIMEN watermark (fixed position) repeats on every page, so all pages must share one mode.
 * Throws `CertificateTemplateError` for an empty list or mixed modes.
 */
export function certificatesDocumentHtml(pages: readonly CertificatePage[], options: { format: PdfPageFormat }): string {
  const testMode = checkCertificatePages(pages);
  const bodies = pages.map((p) => {
    if (!(p.body instanceof SafeHtml)) throw new TypeError('a certificate page must come from certificatePage()');
    return p.body;
  });
  const title = pages.length === 1 ? `Certificate of Insurance ${pages[0]!.certificateNumber}` : `Certificates of Insurance ${pages[0]!.certificateNumber} …`;
  return certificateDocument(title, bodies, testMode, options.format);
}

/**
 * Builds one HTML document holding several certificates, one per printed page in the given
 * order (`certificatePage` for each, then `certificatesDocumentHtml`). Throws
 * `CertificateTemplateError` for an empty list, mixed modes, or any certificate
 * `renderCertificateHtml` would refuse.
 */
export async function renderCertificatesHtml(data: readonly CertificateData[], options: { format: PdfPageFormat } = { format: 'Letter' }): Promise<string> {
  checkCertificatePages(data); // before any QR code is made
  return certificatesDocumentHtml(await Promise.all(data.map((d) => certificatePage(d))), options);
}
