/**
 * The certificate template's one-page text limits (split from ./certificate-template.ts, which
 * re-exports them).
 */
/**
 * Longest values the template prints, and most lines of its multi-line values, such that a
 * certificate with EVERY field at its limit at once still prints on ONE page, Letter or A4.
 * Lengths count UTF-16 code units (JavaScript `string.length`, what zod's `.max()` counts); a
 * line count splits at `\n`, `\r\n` or `\r`; a line-length limit applies to each line; a
 * text limit of a multi-line value includes its line breaks. Nothing is ever cut to fit: API
 * input that ends up on a certificate is validated against these same numbers (the certificate
 * holder routes), and the template throws `CertificateTemplateError` for a box only such input
 * fills (`CHECKED_TEXT_LIMITS`). Values accepted before these limits existed (a quote answer's
 * holder name of up to 200 characters, a product name of 255) still print, possibly over two
 * pages.
 *
 * Checked by test/integration/certificate-fuller.test.ts with every field at its limit in
 * capital Latin letters and spaces (e.g. "CITY OF SPRINGFIELD PARKS AND RECREATION …", the
 * widest realistic Latin text, about 0.7 em a character), each multi-line value in its worst
 * shape (one-character lines first, the rest in the last line), under DejaVu Sans (wider than
 * the Liberation Sans the image prints with); it leaves about 3% of a Letter page free. Text
 * made mostly of glyphs near 1 em wide (a run of `W`, CJK) at several limits at once can still
 * overflow onto a second page: the printer (src/pdf/certificate-printer.ts) then prints that
 * certificate on its own and keeps it whole, complete and searchable, over two pages.
 */
export const CERTIFICATE_TEXT_LIMITS = {
  /** `certificateNumber` (the certificates table holds 64). */
  certificateNumber: 64,
  /** `issueDate` (normally `YYYY-MM-DD`). */
  issueDate: 32,
  /** `producer.name`. */
  producerName: 120,
  /** `producer.contact`. */
  producerContact: 200,
  /** Lines of `producer.address`. */
  producerAddressLines: 4,
  /** Each line of `producer.address`. */
  producerAddressLineLength: 80,
  /** `namedInsured.name`. */
  namedInsuredName: 120,
  /** Lines of `namedInsured.address`. */
  namedInsuredAddressLines: 4,
  /** Each line of `namedInsured.address`. */
  namedInsuredAddressLineLength: 80,
  /** Entries of `insurers` (INSURER A to F, printed two a row). */
  insurers: 6,
  /** Each `insurers[].name` (longer names still print, possibly over two pages). */
  insurerName: 40,
  /** `productName`. */
  productName: 80,
  /** Each `insurers[].naic` (a NAIC company code is 5 digits). */
  insurerNaic: 6,
  /** `coverageType.type` (the product's certificate setting takes 40). */
  coverageType: 40,
  /** `endorsements.additionalInsuredForm` and `endorsements.waiverForm`, each. */
  endorsementForm: 24,
  /** `masterPolicyNumber` and `policyNumberTwo`, each. */
  policyNumber: 40,
  /** `coverage.startsAtLocal` and `coverage.endsAtLocal`, each (normally 16 or 19). */
  coverageDateTime: 32,
  /** `coverage.timeZone` (an IANA name; the longest, `America/Argentina/ComodRivadavia`, is 32). */
  timeZone: 32,
  /** `claimsPhone`. */
  claimsPhone: 64,
  /** Entries of `limits`. */
  limits: 6,
  /** Each `limits[].label`. */
  limitLabel: 60,
  /** `certificateHolder.name`. */
  holderName: 120,
  /** Lines of `certificateHolder.address`. */
  holderAddressLines: 5,
  /** Each line of `certificateHolder.address`. */
  holderAddressLineLength: 80,
  /** `descriptionOfOperations`, line breaks included. */
  descriptionOfOperations: 600,
  /** Lines of `descriptionOfOperations`. */
  descriptionOfOperationsLines: 5,
  /** `cancellationNotice`, line breaks included. */
  cancellationNotice: 240,
  /** Lines of `cancellationNotice`. */
  cancellationNoticeLines: 3,
  /** `authorizedRepresentative` (and `producer.name` when it stands in for it). */
  authorizedRepresentative: 120,
  /** `verificationUrl`. */
  verificationUrl: 160,
} as const;

/** The keys of `CERTIFICATE_TEXT_LIMITS`. */
export type CertificateTextLimit = keyof typeof CERTIFICATE_TEXT_LIMITS;
