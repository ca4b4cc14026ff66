/**
 * The certificate-of-insurance HTML (issue 6, "The certificate child workflow": a layout in
 * the spirit of ACORD 25). The output is self-contained: system fonts only, the QR code inlined
 * as a `data:` SVG, a Content-Security-Policy that forbids every other source, and every
 * interpolated value HTML-escaped by the `html` tagged template (certificate-format.ts), so a
 * buyer-supplied string can never become markup.
 *
 * One page per certificate (issue 25 item 2, "a fuller certificate"): the information-only
 * notice, producer, insured, insurers, the coverage line with its ADDL INSD / SUBR WVD marks,
 * limits, the description of operations, the certificate holder (with the additional-insured and
 * subrogation-waived sentences), cancellation and authorized representative, the QR code. Every
 * printed value has a length limit (`CERTIFICATE_TEXT_LIMITS`) that keeps it on that one page,
 * checked where new input arrives and, for the boxes only API input fills, here too
 * (`CHECKED_TEXT_LIMITS`); the wording is the template's own (not the ACORD form text).
 */
import QRCode from 'qrcode';
import type { PdfPageFormat } from './browser-pool';
import {
  CertificateTemplateError,
  SafeHtml,
  assertTimeZone,
  formatMoneyMinor,
  html,
  lines,
  splitLines,
  type MoneyMinor,
  orderedDate,
  type DateOrder,
} from './certificate-format';
import { CERTIFICATE_TEXT_LIMITS, type CertificateTextLimit } from './certificate-limits';

/** One coverage limit line, e.g. "Each occurrence: $1,000,000.00". */
export interface CertificateLimit extends MoneyMinor {
  /** Shown as is (escaped), e.g. `Each occurrence`. */
  label: string;
}

export { CERTIFICATE_TEXT_LIMITS, type CertificateTextLimit } from './certificate-limits';
export { orderedDate, type DateOrder } from './certificate-format';

/** Everything one certificate shows. All strings are treated as untrusted text. */
export interface CertificateData {
  /**
   * Stable certificate number (same purchase and unit give the same number), printed as given;
   * at most `CERTIFICATE_TEXT_LIMITS.certificateNumber` characters.
   */
  certificateNumber: string;
  /**
   * Version of this certificate: an integer ≥ 1, default 1 (the first issue); anything else
   * throws `CertificateTemplateError`. Always printed as "Revision N" beside the certificate
   * number (which stays as given); from 2 on in bold and followed by "(replaces revision N-1)",
   * so a holder comparing two copies sees at once which one is newer.
   */
  revision?: number;
  /** Issue date as an ISO calendar date `YYYY-MM-DD` (printed as given). */
  issueDate: string;
  /** Test-mode purchase: the certificate carries a diagonal SPECIMEN watermark. */
  testMode: boolean;
  /** The producer: the agency that sold the coverage. */
  producer: {
    /** Agency name; at most `CERTIFICATE_TEXT_LIMITS.producerName` characters. */
    name: string;
    /**
     * Postal address, free text; line breaks are kept. At most
     * `producerAddressLines` lines of `producerAddressLineLength` characters.
     */
    address?: string;
    /** Phone, email and licence number on one line (free text; absent or '': none). At most `producerContact` characters. */
    contact?: string;
  };
  /** The named insured (the buyer or the insured person). */
  namedInsured: {
    /** At most `CERTIFICATE_TEXT_LIMITS.namedInsuredName` characters. */
    name: string;
    /**
     * Postal address, free text; line breaks are kept. At most
     * `namedInsuredAddressLines` lines of `namedInsuredAddressLineLength` characters.
     */
    address?: string;
  };
  /**
   * Insurer(s) affording coverage, listed as INSURER A, B, …; at least one, at most
   * `CERTIFICATE_TEXT_LIMITS.insurers`, each name at most `insurerName` characters.
   */
  insurers: Array<{ name: string; /** NAIC company code, printed beside the name when given. */ naic?: string | null }>;
  /**
   * The type of insurance, printed where the coverage line names it (issue 50, item 1): e.g.
   * "Commercial General Liability", occurrence or claims-made, and what the general aggregate
   * applies per, in place of the product name. Absent: the product name stands there.
   */
  coverageType?: {
    /** At most `coverageType` characters. */
    type: string;
    trigger: 'occurrence' | 'claims_made';
    aggregateBasis: 'policy' | 'location' | 'project';
  };
  /**
   * Endorsement form references and editions (e.g. "CG 20 26 04 13"), printed in the holder's
   * additional-insured / subrogation-waived sentences when those are granted; and whether the
   * coverage is primary and non-contributory for an additional-insured holder.
   */
  endorsements?: { additionalInsuredForm?: string | null; waiverForm?: string | null; primaryNonContributory?: boolean };
  /**
   * How dates print: `mdy` MM/DD/YYYY (a US holder), `dmy` DD/MM/YYYY (any other holder's
   * country), absent or `iso` YYYY-MM-DD.
   */
  dateOrder?: DateOrder;
  /** The master policy number of the product line (at most `policyNumber` characters). */
  masterPolicyNumber: string;
  /** The second policy number of the product line, if it has one (at most `policyNumber`). */
  policyNumberTwo?: string;
  /** Product name as sold, e.g. `Daily Event Liability` (at most `productName` characters). */
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
  /**
   * Limits of insurance, in the order to print them: at most `CERTIFICATE_TEXT_LIMITS.limits`
   * lines, each label at most `limitLabel` characters.
   */
  limits: CertificateLimit[];
  /** Deductible per claim, in minor units. */
  deductible: MoneyMinor;
  /** Phone number for claims, printed as given (at most `claimsPhone` characters). */
  claimsPhone: string;
  /** The certificate holder (who asked for proof of coverage). */
  certificateHolder: {
    /** At most `CERTIFICATE_TEXT_LIMITS.holderName` characters. */
    name: string;
    /**
     * Postal address, free text; line breaks are kept. At most `holderAddressLines` lines of
     * `holderAddressLineLength` characters ('' for none).
     */
    address: string;
    /**
     * The holder is an additional insured under the policy by endorsement (default false):
     * "Y" in the coverage line's ADDL INSD column (else "N") and a sentence saying so in the
     * certificate-holder box.
     */
    additionalInsured?: boolean;
    /**
     * The insurer waives subrogation against the holder by endorsement (default false): "Y" in
     * the coverage line's SUBR WVD column (else "N") and a sentence saying so in the
     * certificate-holder box.
     */
    waiverOfSubrogation?: boolean;
  };
  /**
   * What the coverage is for: operations, locations, vehicles, the event (free text; line breaks
   * are kept). At most `CERTIFICATE_TEXT_LIMITS.descriptionOfOperations` characters in at most
   * `descriptionOfOperationsLines` lines. Absent or '': the box shows "None stated".
   */
  descriptionOfOperations?: string;
  /**
   * Text of the "Cancellation" box (free text; line breaks are kept); absent or '': the template's
   * own wording (`DEFAULT_CANCELLATION_NOTICE`). At most `cancellationNotice` characters in at
   * most `cancellationNoticeLines` lines.
   */
  cancellationNotice?: string;
  /**
   * Who signs off the certificate for the insurer(s), printed in the "Authorized representative"
   * box: normally the agency's name. Absent or '': `producer.name`. At most
   * `authorizedRepresentative` characters.
   */
  authorizedRepresentative?: string;
  /**
   * The authorized representative's signature image as a `data:image/png;base64,…` or
   * `data:image/jpeg;base64,…` URI (issue 50, item 1), drawn above the name at most 9 mm high.
   * Absent: the name alone. Any other value throws `CertificateTemplateError`.
   */
  signatureImage?: string;
  /**
   * Absolute URL of the verification page; encoded in the QR code and printed beside it (at most
   * `verificationUrl` characters).
   */
  verificationUrl: string;
  /**
   * What the QR code encodes when it differs from `verificationUrl`: the verification link with
   * the certificate's signed proof (issue 50 item 3; a few hundred characters, so the QR code is
   * drawn larger). Absent: `verificationUrl`.
   */
  qrUrl?: string;
}

const DATE_LABEL: Record<DateOrder, string> = { mdy: 'MM/DD/YYYY', dmy: 'DD/MM/YYYY', iso: 'YYYY-MM-DD' };
const BASIS_LABEL = { policy: 'Policy', location: 'Location', project: 'Project' } as const;

/** The "Cancellation" box's text when `CertificateData.cancellationNotice` is absent. */
export const DEFAULT_CANCELLATION_NOTICE =
  'If the policy listed above is cancelled before its expiration date, notice of the cancellation will be given as the terms of the policy provide.';

const PAGE_SIZE: Record<PdfPageFormat, string> = { Letter: 'letter', A4: 'A4' };

/**
 * Throws `CertificateTemplateError` for the first value of a `CHECKED_TEXT_LIMITS` box over its
 * `CERTIFICATE_TEXT_LIMITS` entry (the message names the field and the limit, never the value: it
 * may be personal data).
 */
function checkTextLimits(data: CertificateData): void {
  const L = CERTIFICATE_TEXT_LIMITS;
  const fail = (field: string, what: string, limit: CertificateTextLimit): never => {
    throw new CertificateTemplateError(
      `${field} ${what}; at most ${L[limit]} fit on one certificate page (CERTIFICATE_TEXT_LIMITS.${limit})`,
    );
  };
  const text = (field: string, value: string | undefined, limit: CertificateTextLimit) => {
    if (value !== undefined && value.length > L[limit]) fail(field, `is ${value.length} characters`, limit);
  };
  /** `total`: limit of the whole text; `count`: of its lines; `each`: of every line. */
  const multiline = (
    field: string,
    value: string | undefined,
    limits: { total?: CertificateTextLimit; count: CertificateTextLimit; each?: CertificateTextLimit },
  ) => {
    if (value === undefined) return;
    if (limits.total) text(field, value, limits.total);
    const parts = splitLines(value);
    if (parts.length > L[limits.count]) fail(field, `has ${parts.length} lines`, limits.count);
    if (limits.each) parts.forEach((line, i) => text(`${field} line ${i + 1}`, line, limits.each!));
  };
  // Checked here: the boxes whose text only ever comes from API input validated against these
  // same limits. The other limits are what fits one page, enforced where new input arrives (the
  // certificate holder routes); a longer value stored before (an answer, a product name) still
  // prints, and a certificate that runs to a second page is printed on its own, whole.
  multiline('descriptionOfOperations', data.descriptionOfOperations, {
    total: 'descriptionOfOperations',
    count: 'descriptionOfOperationsLines',
  });
  multiline('cancellationNotice', data.cancellationNotice, { total: 'cancellationNotice', count: 'cancellationNoticeLines' });
  text('authorizedRepresentative', data.authorizedRepresentative, 'authorizedRepresentative');
}

/** The limits `checkTextLimits` enforces when rendering (the rest are one-page guarantees for API validation). */
export const CHECKED_TEXT_LIMITS = [
  'descriptionOfOperations',
  'descriptionOfOperationsLines',
  'cancellationNotice',
  'cancellationNoticeLines',
  'authorizedRepresentative',
] as const satisfies readonly CertificateTextLimit[];

/** `revision` checked: an integer ≥ 1 (absent: 1). */
function revisionOf(data: CertificateData): number {
  const revision = data.revision ?? 1;
  if (!Number.isSafeInteger(revision) || revision < 1)
    throw new CertificateTemplateError(`revision must be an integer ≥ 1, got ${String(revision)}`);
  return revision;
}

/** Fixed stylesheet; it contains no data, so it is inserted as is. */
const STYLES = new SafeHtml(`
  * { box-sizing: border-box; }
  html, body { margin: 0; padding: 0; }
  body { font-family: "Helvetica Neue", Helvetica, Arial, "Liberation Sans", "DejaVu Sans", sans-serif;
         font-size: 8pt; line-height: 1.1; color: #111; overflow-wrap: anywhere; word-break: break-word; }
  h1 { font-size: 14pt; margin: 0 0 2px; letter-spacing: 0.02em; }
  .top { display: flex; gap: 8px; align-items: flex-start; margin-bottom: 4px; }
  .top > .main { flex: 1 1 auto; min-width: 0; }
  .top > .qr { flex: none; width: 24mm; text-align: center; }
  .top > .qr img { display: block; width: 24mm; height: 24mm; image-rendering: pixelated; }
  .top > .qr.signed, .top > .qr.signed img { width: 32mm; height: 32mm; }
  .meta { border-bottom: 2px solid #111; padding-bottom: 2px; margin-bottom: 4px; }
  .meta > span { margin-right: 10px; white-space: nowrap; }
  .meta #certificate-number { white-space: normal; }
  .revised { font-weight: 700; }
  .notice { font-size: 6.5pt; line-height: 1.2; border: 1px solid #111; padding: 2px 4px; }
  table { width: 100%; border-collapse: collapse; table-layout: fixed; margin-bottom: 4px; }
  th, td { border: 1px solid #111; padding: 1px 4px; vertical-align: top; text-align: left; }
  th { background: #e6e6e6; font-size: 6.5pt; text-transform: uppercase; font-weight: 600; }
  th.mark, td.mark { text-align: center; }
  td.mark { font-weight: 700; }
  .label { font-size: 6.5pt; text-transform: uppercase; color: #444; }
  .zone { font-size: 6.5pt; color: #444; }
  .amount { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
  .name { font-weight: 600; }
  .small { font-size: 7.5pt; }
  img.signature { display: block; max-height: 9mm; max-width: 60mm; }
  .insurers td { font-size: 6.5pt; padding: 0 3px; }
  .endorsement { font-size: 7.5pt; margin-top: 2px; }
  .footer { font-size: 6.5pt; color: #333; }
  .specimen { position: fixed; top: 45%; left: 0; right: 0; text-align: center;
              font-size: 84pt; font-weight: 700; white-space: nowrap; color: rgba(200, 0, 0, 0.16);
              transform: rotate(-35deg); z-index: 10; pointer-events: none; letter-spacing: 0.08em; }
`);

/** A box of the form: an upper-case heading row over one cell. */
function box(heading: string, id: string, content: SafeHtml, cellClass?: string): SafeHtml {
  return html`<table><tr><th>${heading}</th></tr><tr><td id="${id}"${cellClass ? html` class="${cellClass}"` : undefined}>${content}</td></tr></table>`;
}

/** A party's name (bold, element `id`) over its address lines. */
function party(id: string, name: string, address: string | undefined): SafeHtml {
  return html`<div class="name" id="${id}">${name}</div>${address ? html`<div>${lines(address)}</div>` : undefined}`;
}

/**
 * The QR code of `text` (error correction M, one module of quiet zone) as an SVG of filled
 * squares, one run of dark modules per rectangle. Not the library's own SVG: it draws each row as
 * a 1-unit stroke with `crispEdges`, which Chromium's PDF output thins to hairlines once a module
 * is under about 1.5 CSS px (a signed link's QR code, version 19 or so, could not be decoded).
 */
function qrCodeSvg(text: string): string {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const n = modules.size;
  let d = '';
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      if (!modules.get(y, x)) continue;
      let run = 1;
      while (x + run < n && modules.get(y, x + run)) run++;
      d += `M${x + 1} ${y + 1}h${run}v1h-${run}z`;
      x += run - 1;
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${n + 2} ${n + 2}"><path fill="#fff" d="M0 0h${n + 2}v${n + 2}H0z"/><path fill="#000" d="${d}"/></svg>`;
}

/** The printed certificate itself (everything inside `<body>` but the watermark). */
async function certificateBody(data: CertificateData): Promise<SafeHtml> {
  if (data.insurers.length === 0) throw new CertificateTemplateError('a certificate needs at least one insurer');
  checkTextLimits(data);
  const revision = revisionOf(data);
  assertTimeZone(data.coverage.timeZone);
  const limitRows = data.limits.map((l) => html`<tr><td>${l.label}</td><td class="amount">${formatMoneyMinor(l)}</td></tr>`);
  const deductible = formatMoneyMinor(data.deductible);
  // Vector, not PNG: sharp at any zoom or print size, and encoding a PNG took about 7 ms of the
  // worker's CPU per certificate (issue 16). An SVG shown by <img> runs no script.
  const qrSvg = qrCodeSvg(data.qrUrl ?? data.verificationUrl);
  const qrDataUrl = `data:image/svg+xml;base64,${Buffer.from(qrSvg, 'utf8').toString('base64')}`;
  const letter = (i: number) => String.fromCharCode(65 + (i % 26));
  const holder = data.certificateHolder;
  const additionalInsured = holder.additionalInsured === true;
  const waiverOfSubrogation = holder.waiverOfSubrogation === true;
  const mark = (yes: boolean) => (yes ? 'Y' : 'N');
  const order = data.dateOrder ?? 'iso';
  if (data.signatureImage !== undefined && !/^data:image\/(png|jpeg);base64,[A-Za-z0-9+/]+={0,2}$/.test(data.signatureImage))
    throw new CertificateTemplateError('signatureImage must be a base64 PNG or JPEG data: URI');
  const signature = data.signatureImage
    ? html`<img id="signature" class="signature" alt="Signature of the authorized representative" src="${data.signatureImage}"><br>`
    : undefined;
  const end = data.endorsements ?? {};
  const form = (f: string | null | undefined) => (f ? html` (form ${f})` : undefined);
  const insurerRows: SafeHtml[] = [];
  const insurerCell = (i: number) => {
    const ins = data.insurers[i];
    if (!ins) return html`<td></td><td></td><td></td>`;
    return html`<td>INSURER ${letter(i)}</td><td id="insurer-${letter(i).toLowerCase()}">${ins.name}</td><td id="insurer-${letter(i).toLowerCase()}-naic">${ins.naic ?? ''}</td>`;
  };
  for (let i = 0; i < data.insurers.length; i += 2) insurerRows.push(html`<tr>${insurerCell(i)}${insurerCell(i + 1)}</tr>`);
  const ct = data.coverageType;
  const box2 = (on: boolean) => (on ? '[X]' : '[ ]');
  const typeCell = ct
    ? html`<span id="coverage-type" class="name">${ct.type}</span><br><span class="zone"><span id="coverage-trigger">${box2(ct.trigger === 'claims_made')} Claims-made ${box2(
        ct.trigger === 'occurrence',
      )} Occurrence</span> <span id="aggregate-basis">Gen'l aggregate applies per: ${BASIS_LABEL[ct.aggregateBasis]}</span></span>`
    : html`<span id="product">${data.productName}</span>`;
  const revisionText =
    revision === 1
      ? html`<span id="revision">Revision 1</span>`
      : html`<span id="revision"><span class="revised">Revision ${revision}</span> (replaces revision ${revision - 1})</span>`;
  return html`<div class="top">
  <div class="main">
    <h1>CERTIFICATE OF LIABILITY INSURANCE</h1>
    <div class="meta"><span><span class="label">Certificate number</span> <strong id="certificate-number">${data.certificateNumber}</strong></span> ${revisionText} <span><span class="label">Date issued (${DATE_LABEL[order]})</span> <span id="issue-date">${orderedDate(data.issueDate, order)}</span></span></div>
    <div class="notice" id="information-notice">FOR INFORMATION ONLY. This certificate gives the certificate holder no rights and does not add to,
reduce or otherwise change the coverage of the policy described below. It is not a contract between the insurer(s), the authorized
representative or producer, and the certificate holder. Additional-insured and subrogation-waived marks apply only as far as the
policy's endorsements provide.</div>
  </div>
  <div class="qr${data.qrUrl ? ' signed' : ''}"><img id="qr" alt="QR code to the verification page" src="${qrDataUrl}"></div>
</div>
${box(
  'Producer',
  'producer-box',
  html`${party('producer', data.producer.name, data.producer.address)}${data.producer.contact ? html`<div id="producer-contact">${data.producer.contact}</div>` : undefined}`,
)}
${box('Insured', 'named-insured-box', party('named-insured', data.namedInsured.name, data.namedInsured.address))}
<table class="insurers">
  <colgroup><col style="width:9%"><col style="width:33%"><col style="width:8%"><col style="width:9%"><col style="width:33%"><col style="width:8%"></colgroup>
  <tr><th colspan="2">Insurer(s) affording coverage</th><th>NAIC #</th><th colspan="2">Insurer(s) affording coverage</th><th>NAIC #</th></tr>
  ${insurerRows}
  <tr><td colspan="2">Claims phone</td><td colspan="4" id="claims-phone">${data.claimsPhone}</td></tr>
</table>
<table>
  <colgroup><col style="width:5%"><col style="width:26%"><col style="width:6%"><col style="width:6%"><col style="width:25%"><col style="width:16%"><col style="width:16%"></colgroup>
  <tr><th>Insr ltr</th><th>Type of insurance</th><th class="mark">Addl insd</th><th class="mark">Subr wvd</th><th>Policy number(s)</th><th>Policy effective</th><th>Policy expiration</th></tr>
  <tr>
    <td>A</td>
    <td>${typeCell}</td>
    <td class="mark" id="additional-insured-mark">${mark(additionalInsured)}</td>
    <td class="mark" id="subrogation-waived-mark">${mark(waiverOfSubrogation)}</td>
    <td><span class="label">Master</span> ${data.masterPolicyNumber}${
      data.policyNumberTwo ? html`<br><span class="label">Policy two</span> ${data.policyNumberTwo}` : undefined
    }</td>
    <td id="policy-effective">${orderedDate(data.coverage.startsAtLocal, order)}<br><span class="zone">${data.coverage.timeZone}</span></td>
    <td id="policy-expiration">${orderedDate(data.coverage.endsAtLocal, order)}<br><span class="zone">${data.coverage.timeZone}</span></td>
  </tr>
</table>
<table>
  <colgroup><col><col style="width:26%"></colgroup>
  <tr><th>Limits</th><th class="amount">Amount</th></tr>
  ${limitRows}
  <tr><td>Deductible (per claim)</td><td class="amount" id="deductible">${deductible}</td></tr>
</table>
${box(
  'Description of operations / locations / events',
  'description-of-operations',
  data.descriptionOfOperations ? lines(data.descriptionOfOperations) : html`None stated`,
  'small',
)}
${box(
  'Certificate holder',
  'certificate-holder-box',
  html`${party('certificate-holder', holder.name, holder.address)}${
    additionalInsured
      ? html`<div class="endorsement" id="additional-insured">Additional insured: by endorsement to the policy above, the certificate holder is an additional insured under it${form(end.additionalInsuredForm)}.${
          end.primaryNonContributory ? html` <span id="primary-non-contributory">Primary and non-contributory.</span>` : undefined
        }</div>`
      : undefined
  }${
    waiverOfSubrogation
      ? html`<div class="endorsement" id="subrogation-waived">Subrogation waived: by endorsement to the policy above, the insurer gives up its right of recovery against the certificate holder${form(end.waiverForm)}.</div>`
      : undefined
  }`,
)}
<table>
  <colgroup><col><col style="width:36%"></colgroup>
  <tr><th>Cancellation</th><th>Authorized representative</th></tr>
  <tr><td class="small" id="cancellation">${lines(data.cancellationNotice || DEFAULT_CANCELLATION_NOTICE)}</td><td>${signature}<span id="authorized-representative">${data.authorizedRepresentative || data.producer.name}</span></td></tr>
</table>
<div class="footer">Verify this certificate and see its current status (scan the QR code above or visit): <span id="verification-url">${data.verificationUrl}</span></div>
`;
}

/** The self-contained document around certificate bodies, one per printed page. */
function certificateDocument(title: string, bodies: SafeHtml[], testMode: boolean, format: PdfPageFormat): string {
  const pageCss = new SafeHtml(`@page { size: ${PAGE_SIZE[format]}; margin: 12mm; }`);
  const pages = bodies.map((b, i) =>
    i < bodies.length - 1
      ? html`<section class="certificate" style="break-after: page">${b}</section>`
      : html`<section class="certificate">${b}</section>`,
  );
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
export async function renderCertificateHtml(
  data: CertificateData,
  options: { format: PdfPageFormat } = { format: 'Letter' },
): Promise<string> {
  return certificateDocument(
    `Certificate of Insurance ${data.certificateNumber}`,
    [await certificateBody(data)],
    data.testMode,
    options.format,
  );
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
  if (pages.some((p) => p.testMode !== testMode))
    throw new CertificateTemplateError('test-mode and live certificates cannot share a document');
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
  const title =
    pages.length === 1
      ? `Certificate of Insurance ${pages[0]!.certificateNumber}`
      : `Certificates of Insurance ${pages[0]!.certificateNumber} …`;
  return certificateDocument(title, bodies, testMode, options.format);
}

/**
 * Builds one HTML document holding several certificates, one per printed page in the given
 * order (`certificatePage` for each, then `certificatesDocumentHtml`). Throws
 * `CertificateTemplateError` for an empty list, mixed modes, or any certificate
 * `renderCertificateHtml` would refuse.
 */
export async function renderCertificatesHtml(
  data: readonly CertificateData[],
  options: { format: PdfPageFormat } = { format: 'Letter' },
): Promise<string> {
  checkCertificatePages(data); // before any QR code is made
  return certificatesDocumentHtml(await Promise.all(data.map((d) => certificatePage(d))), options);
}
