/**
 * The fuller certificate (issue 25 item 2) against Debian's real Chromium, read back with poppler
 * (`pdftotext`, `pdfinfo`, `pdftoppm`): revision, the additional-insured and subrogation-waived
 * marks, the description of operations, the cancellation and authorized-representative boxes, the
 * information-only notice, and `CERTIFICATE_TEXT_LIMITS`: every field at its limit at once still
 * prints on one page, and one character more is refused with `CertificateTemplateError`.
 */
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import type { PdfPageFormat } from '../../src/pdf/browser-pool';
import { PDF_PAGE_FORMAT, useBrowserPool } from '../helpers/browser-pool';
import {
  CERTIFICATE_TEXT_LIMITS,
  CHECKED_TEXT_LIMITS,
  DEFAULT_CANCELLATION_NOTICE,
  renderCertificateHtml,
  type CertificateData,
  type CertificateTextLimit,
} from '../../src/pdf/certificate-template';
import { CertificateTemplateError, escapeHtml } from '../../src/pdf/certificate-format';
import { pdfFirstPagePng, pdfPages, pdfText } from '../helpers/documents';
import { TEMPLATE_TAGS, certificateData } from '../helpers/certificate-data';

const format = PDF_PAGE_FORMAT;
const L = CERTIFICATE_TEXT_LIMITS;

/** `count` copies of `line`, one a line (`eol` between them): a multi-line field's value. */
const lines = (count: number, line: string, eol = '\n') => Array(count).fill(line).join(eol);

/** The shared certificate with one insurer, no second policy number, on a Chicago day in May. */
function certificate(overrides: Partial<CertificateData> = {}): CertificateData {
  const { policyNumberTwo: _none, ...shared } = certificateData({
    insurers: [{ name: 'First Mutual Insurance Co.' }],
    coverage: { startsAtLocal: '2026-05-02T00:00', endsAtLocal: '2026-05-03T00:00', timeZone: 'America/Chicago' },
    certificateHolder: { name: 'Riverside Hall Inc.', address: '100 River Rd\nChicago, IL 60601' },
  });
  return { ...shared, ...overrides };
}

// ---- every field at its limit -------------------------------------------------------------

/**
 * Capital letters and spaces: the widest realistic Latin text (names on certificates are often
 * written in capitals), the reference `CERTIFICATE_TEXT_LIMITS` is checked with.
 */
const CAPITALS = 'CITY OF SPRINGFIELD PARKS AND RECREATION DEPARTMENT MAIN OFFICE ';

/** Exactly `length` characters of capitals ending in the word `end`, so a test can find the end on the page. */
function capitals(length: number, end: string): string {
  const body = CAPITALS.repeat(Math.ceil(length / CAPITALS.length)).slice(0, length - end.length - 1);
  const text = `${body} ${end}`;
  if (text.length !== length) throw new Error(`filler of ${text.length} characters, wanted ${length}`);
  return text;
}

/** `count` lines of exactly `each` characters (an address at its limits); the last ends in `end`. */
function fullLines(count: number, each: number, end: string): string {
  return Array.from({ length: count }, (_, i) => capitals(each, i === count - 1 ? end : `L${i + 1}`)).join('\n');
}

/**
 * A multi-line text of exactly `total` characters in `count` lines in its worst shape for the
 * page: every line but the last one character long (each costs a whole printed line), the rest
 * in the last, which ends in `end`.
 */
function worstLines(count: number, total: number, end: string): string {
  const text = [...Array.from({ length: count - 1 }, () => 'W'), capitals(total - 2 * (count - 1), end)].join('\n');
  if (text.length !== total) throw new Error(`filler of ${text.length} characters, wanted ${total}`);
  return text;
}

/** Every field at its limit; each text ends in a marker word (`END…`) to find it on the page. */
function atLimits(): { data: CertificateData; markers: string[] } {
  const url = `https://certificates.example.com/verify/${'COI9A7F3K2M9Q4TXB8'.repeat(10)}`.slice(0, L.verificationUrl);
  const data: CertificateData = {
    certificateNumber: capitals(L.certificateNumber, 'ENDNUMBER'),
    revision: 12,
    issueDate: capitals(L.issueDate, 'ENDDATE'),
    testMode: true, // the SPECIMEN watermark too
    producer: {
      name: capitals(L.producerName, 'ENDPRODUCER'),
      address: fullLines(L.producerAddressLines, L.producerAddressLineLength, 'ENDPRODUCERADDRESS'),
      contact: capitals(L.producerContact, 'ENDPRODUCERCONTACT'),
    },
    namedInsured: {
      name: capitals(L.namedInsuredName, 'ENDINSURED'),
      address: fullLines(L.namedInsuredAddressLines, L.namedInsuredAddressLineLength, 'ENDINSUREDADDRESS'),
    },
    insurers: Array.from({ length: L.insurers }, (_, i) => ({
      name: capitals(L.insurerName, `ENDINSURER${'ABCDEF'[i] ?? i}`),
      naic: '9'.repeat(L.insurerNaic),
    })),
    coverageType: { type: capitals(L.coverageType, 'ENDCOVERAGETYPE'), trigger: 'claims_made', aggregateBasis: 'location' },
    endorsements: {
      additionalInsuredForm: capitals(L.endorsementForm, 'ENDAIFORM'),
      waiverForm: capitals(L.endorsementForm, 'ENDWAIVERFORM'),
      primaryNonContributory: true,
    },
    masterPolicyNumber: capitals(L.policyNumber, 'ENDMASTER'),
    policyNumberTwo: capitals(L.policyNumber, 'ENDPOLICYTWO'),
    productName: capitals(L.productName, 'ENDPRODUCT'),
    // not date-times: printed as given, at full length
    coverage: {
      startsAtLocal: capitals(L.coverageDateTime, 'ENDSTART'),
      endsAtLocal: capitals(L.coverageDateTime, 'ENDEND'),
      timeZone: 'America/Argentina/ComodRivadavia',
    },
    limits: Array.from({ length: L.limits }, (_, i) => ({
      label: capitals(L.limitLabel, `ENDLIMIT${i + 1}`),
      amount_minor: Number.MAX_SAFE_INTEGER,
      currency: 'USD',
    })),
    deductible: { amount_minor: Number.MAX_SAFE_INTEGER, currency: 'USD' },
    claimsPhone: capitals(L.claimsPhone, 'ENDPHONE'),
    certificateHolder: {
      name: capitals(L.holderName, 'ENDHOLDER'),
      address: fullLines(L.holderAddressLines, L.holderAddressLineLength, 'ENDHOLDERADDRESS'),
      additionalInsured: true,
      waiverOfSubrogation: true,
    },
    descriptionOfOperations: worstLines(L.descriptionOfOperationsLines, L.descriptionOfOperations, 'ENDDESCRIPTION'),
    cancellationNotice: worstLines(L.cancellationNoticeLines, L.cancellationNotice, 'ENDCANCELLATION'),
    authorizedRepresentative: capitals(L.authorizedRepresentative, 'ENDREPRESENTATIVE'),
    verificationUrl: url,
  };
  const markers = [
    'ENDNUMBER',
    'ENDDATE',
    'ENDPRODUCER',
    'ENDPRODUCERADDRESS',
    'ENDINSURED',
    'ENDINSUREDADDRESS',
    'ENDINSURERA',
    'ENDINSURERB',
    'ENDINSURERC',
    'ENDINSURERD',
    'ENDINSURERE',
    'ENDINSURERF',
    'ENDCOVERAGETYPE',
    'ENDAIFORM',
    'ENDWAIVERFORM',
    'ENDMASTER',
    'ENDPOLICYTWO',
    // 'ENDPRODUCT': the type of insurance stands where the product name would (the description names the product)
    'ENDSTART',
    'ENDEND',
    'ENDPHONE',
    'ENDHOLDER',
    'ENDHOLDERADDRESS',
    'ENDDESCRIPTION',
    'ENDCANCELLATION',
    'ENDREPRESENTATIVE',
    ...Array.from({ length: L.limits }, (_, i) => `ENDLIMIT${i + 1}`),
  ];
  return { data, markers };
}

/** One over the limit `key`, starting from `certificate()`. */
const OVER_LIMIT: Record<CertificateTextLimit, () => CertificateData> = {
  certificateNumber: () => certificate({ certificateNumber: 'C'.repeat(L.certificateNumber + 1) }),
  issueDate: () => certificate({ issueDate: '2'.repeat(L.issueDate + 1) }),
  producerName: () => certificate({ producer: { name: 'P'.repeat(L.producerName + 1) } }),
  producerContact: () => certificate({ producer: { name: 'P', contact: 'c'.repeat(L.producerContact + 1) } }),
  producerAddressLines: () => certificate({ producer: { name: 'P', address: lines(L.producerAddressLines + 1, 'line') } }),
  producerAddressLineLength: () =>
    certificate({ producer: { name: 'P', address: `1 Main St\n${'a'.repeat(L.producerAddressLineLength + 1)}` } }),
  namedInsuredName: () => certificate({ namedInsured: { name: 'N'.repeat(L.namedInsuredName + 1) } }),
  namedInsuredAddressLines: () =>
    certificate({ namedInsured: { name: 'N', address: lines(L.namedInsuredAddressLines + 1, 'line', '\r\n') } }),
  namedInsuredAddressLineLength: () =>
    certificate({ namedInsured: { name: 'N', address: 'a'.repeat(L.namedInsuredAddressLineLength + 1) } }),
  insurers: () => certificate({ insurers: Array.from({ length: L.insurers + 1 }, (_, i) => ({ name: `Insurer ${i}` })) }),
  insurerName: () => certificate({ insurers: [{ name: 'First' }, { name: 'I'.repeat(L.insurerName + 1) }] }),
  productName: () => certificate({ productName: 'P'.repeat(L.productName + 1) }),
  insurerNaic: () => certificate({ insurers: [{ name: 'First', naic: '9'.repeat(L.insurerNaic + 1) }] }),
  coverageType: () =>
    certificate({ coverageType: { type: 'T'.repeat(L.coverageType + 1), trigger: 'occurrence', aggregateBasis: 'policy' } }),
  endorsementForm: () => certificate({ endorsements: { waiverForm: 'F'.repeat(L.endorsementForm + 1) } }),
  policyNumber: () => certificate({ policyNumberTwo: '9'.repeat(L.policyNumber + 1) }),
  coverageDateTime: () =>
    certificate({
      coverage: { startsAtLocal: '2026-05-02T00:00', endsAtLocal: `2026-05-03T00:00${'0'.repeat(L.coverageDateTime)}`, timeZone: 'UTC' },
    }),
  timeZone: () =>
    certificate({ coverage: { startsAtLocal: '2026-05-02T00:00', endsAtLocal: '2026-05-03T00:00', timeZone: 'Z'.repeat(L.timeZone + 1) } }),
  claimsPhone: () => certificate({ claimsPhone: '5'.repeat(L.claimsPhone + 1) }),
  limits: () =>
    certificate({ limits: Array.from({ length: L.limits + 1 }, (_, i) => ({ label: `Limit ${i}`, amount_minor: 100, currency: 'USD' })) }),
  limitLabel: () => certificate({ limits: [{ label: 'l'.repeat(L.limitLabel + 1), amount_minor: 100, currency: 'USD' }] }),
  holderName: () => certificate({ certificateHolder: { name: 'H'.repeat(L.holderName + 1), address: '' } }),
  holderAddressLines: () => certificate({ certificateHolder: { name: 'H', address: lines(L.holderAddressLines + 1, '') } }),
  holderAddressLineLength: () =>
    certificate({ certificateHolder: { name: 'H', address: `x\n${'a'.repeat(L.holderAddressLineLength + 1)}\ny` } }),
  descriptionOfOperations: () => certificate({ descriptionOfOperations: 'd'.repeat(L.descriptionOfOperations + 1) }),
  descriptionOfOperationsLines: () => certificate({ descriptionOfOperations: lines(L.descriptionOfOperationsLines + 1, 'd') }),
  cancellationNotice: () => certificate({ cancellationNotice: 'c'.repeat(L.cancellationNotice + 1) }),
  cancellationNoticeLines: () => certificate({ cancellationNotice: lines(L.cancellationNoticeLines + 1, 'c') }),
  authorizedRepresentative: () => certificate({ authorizedRepresentative: 'R'.repeat(L.authorizedRepresentative + 1) }),
  verificationUrl: () => certificate({ verificationUrl: `https://example.com/${'v'.repeat(L.verificationUrl)}` }),
};

/**
 * The QR code's text, read from the top right quarter of the page image only (where the template
 * puts it): jsQR over a whole 150 dpi page takes many seconds under Jest.
 */
function qrInTopRightCorner(png: Buffer): string | null {
  const page = PNG.sync.read(png);
  const [x0, width, height] = [Math.floor(page.width / 2), Math.ceil(page.width / 2), Math.ceil(page.height / 4)];
  const corner = new PNG({ width, height });
  PNG.bitblt(page, corner, x0, 0, width, height, 0, 0);
  return jsQR(new Uint8ClampedArray(corner.data.buffer, corner.data.byteOffset, corner.data.length), width, height)?.data ?? null;
}

/** All whitespace collapsed to one space. */
const squash = (text: string) => text.replace(/\s+/g, ' ');

describe('a fuller certificate (issue 25 item 2)', () => {
  const shared = useBrowserPool({ pageCount: 2, rendersPerBrowser: 100, renderTimeoutMs: 30_000 });

  const render = async (data: CertificateData, pageFormat: PdfPageFormat = format) => {
    const html = await renderCertificateHtml(data, { format: pageFormat });
    return { html, pdf: await shared.pool.render(html, { format: pageFormat }) };
  };

  test.each(['Letter', 'A4'] as const)(
    'when every field is at its limit at once (capitals, multi-line values in their worst shape), then the %s PDF is one searchable page holding every value whole',
    async (pageFormat) => {
      const { data, markers } = atLimits();

      const { pdf } = await render(data, pageFormat);

      expect(pdfPages(pdf)).toBe(1);
      const text = pdfText(pdf, 'raw').replace(/\s+/g, '');
      for (const marker of markers) expect(text).toContain(marker);
      expect(text).toContain('Revision12');
      expect(text).toContain(data.verificationUrl);
    },
  );

  test('when the verification URL is at its limit, then the QR code (24 mm, under the SPECIMEN watermark) still reads at 150 dpi', async () => {
    const { data } = atLimits();
    expect(data.verificationUrl).toHaveLength(L.verificationUrl);

    const { pdf } = await render(data);

    expect(qrInTopRightCorner(pdfFirstPagePng(pdf))).toBe(data.verificationUrl);
  });

  test('when the holder is an additional insured with subrogation waived, then the coverage line is marked Y Y and the holder box says both; otherwise N and no sentence', async () => {
    const holder = { name: 'Riverside Hall Inc.', address: '100 River Rd\nChicago, IL 60601' };
    const cases = [
      { flags: { additionalInsured: true, waiverOfSubrogation: true }, marks: ['Y', 'Y'] },
      { flags: { additionalInsured: true }, marks: ['Y', 'N'] },
      { flags: { waiverOfSubrogation: true, additionalInsured: false }, marks: ['N', 'Y'] },
      { flags: {}, marks: ['N', 'N'] },
    ];
    for (const { flags, marks } of cases) {
      const { pdf } = await render(certificate({ certificateHolder: { ...holder, ...flags } }));

      const layout = pdfText(pdf, 'layout');
      expect(layout).toMatch(/ADDL\s+SUBR/);
      expect(layout).toMatch(/INSD\s+WVD/);
      expect(layout).toMatch(new RegExp(`Daily Event Liability\\s+${marks[0]}\\s+${marks[1]}\\s+MASTER MP-2026-0042`));
      const text = squash(pdfText(pdf, 'raw'));
      const additional =
        'Additional insured: by endorsement to the policy above, the certificate holder is an additional insured under it.';
      const waived =
        'Subrogation waived: by endorsement to the policy above, the insurer gives up its right of recovery against the certificate holder.';
      expect(text.includes(additional)).toBe(marks[0] === 'Y');
      expect(text.includes(waived)).toBe(marks[1] === 'Y');
      expect(text).toContain('CERTIFICATE HOLDER Riverside Hall Inc. 100 River Rd Chicago, IL 60601');
    }
  });

  test('when the new fields are given, then the PDF shows Revision 2, the description with its line breaks, the cancellation wording and the authorized representative', async () => {
    const { pdf } = await render(
      certificate({
        revision: 2,
        descriptionOfOperations: 'Spring gala, Riverside Hall, 2026-05-02\nSetup from 14:00, 300 guests\nNo fireworks',
        cancellationNotice: 'Cancellation: 30 days written notice to the certificate holder.',
        authorizedRepresentative: 'Harbor & Pine Insurance Agency',
        certificateHolder: { name: 'Riverside Hall Inc.', address: '100 River Rd', additionalInsured: true, waiverOfSubrogation: true },
      }),
    );

    expect(pdfPages(pdf)).toBe(1);
    const layout = pdfText(pdf, 'layout');
    expect(layout).toMatch(/COI-000123-0001\s+Revision 2 \(replaces revision 1\)/);
    // line breaks kept: each line of the description is a line of its own
    expect(layout).toMatch(
      /DESCRIPTION OF OPERATIONS \/ LOCATIONS \/ EVENTS\n\s*Spring gala, Riverside Hall, 2026-05-02\n\s*Setup from 14:00, 300 guests\n\s*No fireworks\n/,
    );
    const text = squash(pdfText(pdf, 'raw'));
    expect(text).toContain(
      'CANCELLATION AUTHORIZED REPRESENTATIVE Cancellation: 30 days written notice to the certificate holder. Harbor & Pine Insurance Agency',
    );
    expect(text).not.toContain(DEFAULT_CANCELLATION_NOTICE);
    expect(text).toContain('FOR INFORMATION ONLY');
    expect(text).toContain('This certificate gives the certificate holder no rights');
  });

  test('when the new fields are absent, then Revision 1, "None stated", the default cancellation wording and the producer as authorized representative are printed, and the old notice wording is gone', async () => {
    const { html, pdf } = await render(certificate());

    const text = squash(pdfText(pdf, 'raw'));
    expect(text).toMatch(/COI-000123-0001 Revision 1 DATE ISSUED/);
    expect(text).not.toContain('replaces revision');
    expect(text).toContain('DESCRIPTION OF OPERATIONS / LOCATIONS / EVENTS None stated');
    expect(text).toContain(`CANCELLATION AUTHORIZED REPRESENTATIVE ${DEFAULT_CANCELLATION_NOTICE} Acme Agency LLC`);
    expect(text).toContain('FOR INFORMATION ONLY'); // pdftotext may set a space before the period
    expect(text).toContain(
      'This certificate gives the certificate holder no rights and does not add to, reduce or otherwise change the coverage',
    );
    expect(text).toContain(
      'It is not a contract between the insurer(s), the authorized representative or producer, and the certificate holder.',
    );
    expect(pdfText(pdf, 'layout')).toMatch(/Daily Event Liability\s+N\s+N\s+MASTER/);
    expect(html).not.toContain('MATTER OF INFORMATION');
    expect(html).not.toContain('id="additional-insured"');
    expect(html).not.toContain('id="subrogation-waived"');
  });

  test('when a box only API input fills is one character (or line) over its limit, then rendering throws CertificateTemplateError naming the field and the limit but not the value; a longer value stored before the limits (a name, a product) still renders', async () => {
    expect(Object.keys(OVER_LIMIT).sort()).toEqual(Object.keys(L).sort());
    for (const [key, make] of Object.entries(OVER_LIMIT)) {
      const data = make();
      const result = await renderCertificateHtml(data, { format }).then(
        (html) => html,
        (err: unknown) => err,
      );
      if ((CHECKED_TEXT_LIMITS as readonly string[]).includes(key)) {
        expect(result).toBeInstanceOf(CertificateTemplateError);
        expect((result as Error).message).toContain(`CERTIFICATE_TEXT_LIMITS.${key}`);
        expect((result as Error).message).not.toMatch(/(.)\1{9}/); // the value (a run of one character) is not in the message
      } else if (key === 'timeZone') {
        expect(result).toBeInstanceOf(CertificateTemplateError); // no IANA zone name is that long: refused as unknown
      } else {
        expect([key, typeof result === 'string' ? 'rendered' : String(result)]).toEqual([key, 'rendered']);
      }
    }
    // at the limit is fine: one character less than each over-limit value
    await expect(
      renderCertificateHtml(certificate({ descriptionOfOperations: 'd'.repeat(L.descriptionOfOperations) }), { format }),
    ).resolves.toContain('ddd');
    await expect(
      renderCertificateHtml(
        certificate({
          certificateHolder: {
            name: 'H'.repeat(L.holderName),
            address: lines(L.holderAddressLines, 'a'.repeat(L.holderAddressLineLength)),
          },
        }),
        { format },
      ),
    ).resolves.toContain('HHH');
  });

  test.each([0, -1, 1.5, Number.NaN, 2 ** 53])(
    'when the revision is %p, then rendering throws CertificateTemplateError',
    async (revision) => {
      await expect(renderCertificateHtml(certificate({ revision }), { format })).rejects.toThrow(CertificateTemplateError);
    },
  );

  test('when the description, cancellation and representative hold markup, then it is escaped, printed literally, and Chromium makes no request', async () => {
    const description = `<b>Gala</b> & "after-party" <img src=x onerror=alert(1)>\n<script>fetch('http://127.0.0.1:9/x')</script>`;
    const cancellation = `<iframe src="http://127.0.0.1:9/c"></iframe> 'notice'`;
    const representative = `<link rel=stylesheet href=http://127.0.0.1:9/a.css>Agency`;
    const blockedBefore = shared.pool.blockedRequests;

    const { html, pdf } = await render(
      certificate({ descriptionOfOperations: description, cancellationNotice: cancellation, authorizedRepresentative: representative }),
    );

    for (const line of description.split('\n')) expect(html).toContain(escapeHtml(line));
    expect(html).toContain(escapeHtml(cancellation));
    expect(html).toContain(escapeHtml(representative));
    const tags = new Set([...html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1]!.toLowerCase()));
    expect([...tags].filter((t) => !TEMPLATE_TAGS.includes(t))).toEqual([]);
    expect(shared.pool.blockedRequests).toBe(blockedBefore);
    const text = squash(pdfText(pdf, 'raw'));
    expect(text).toContain(`<b>Gala</b> & "after-party" <img src=x onerror=alert(1)> <script>fetch('http://127.0.0.1:9/x')</script>`);
    expect(text).toContain(cancellation);
    expect(text).toContain(representative);
  });
});
