/**
 * A certificate's data for template and renderer tests: every field the certificate of insurance
 * prints, filled (two insurers, a second policy number, a certificate holder), in USD on a
 * New York day. `overrides` replaces whole fields.
 */
import type { CertificateData } from '../../src/pdf/certificate-template';

export function certificateData(overrides: Partial<CertificateData> = {}): CertificateData {
  return {
    certificateNumber: 'COI-000123-0001',
    issueDate: '2026-03-01',
    testMode: false,
    producer: { name: 'Acme Agency LLC', address: '1 Main St\nSpringfield, IL 62701' },
    namedInsured: { name: 'Jane Q. Doe', address: '22 Elm Rd\nBoston, MA 02110' },
    insurers: [{ name: 'First Mutual Insurance Co.' }, { name: 'Second Re AG' }],
    masterPolicyNumber: 'MP-2026-0042',
    policyNumberTwo: 'PN2-7788',
    productName: 'Daily Event Liability',
    coverage: { startsAtLocal: '2026-03-07T00:00', endsAtLocal: '2026-03-08T00:00', timeZone: 'America/New_York' },
    limits: [
      { label: 'Each occurrence', amount_minor: 100_000_000, currency: 'USD' },
      { label: 'General aggregate', amount_minor: 200_000_000, currency: 'USD' },
    ],
    deductible: { amount_minor: 50_000, currency: 'USD' },
    claimsPhone: '+1 800 555 0100',
    certificateHolder: { name: 'City Convention Center', address: '100 Hall Ave\nChicago, IL 60601' },
    verificationUrl: 'http://127.0.0.1:3000/verify/COI-000123-0001',
    ...overrides,
  };
}

/** The tags the certificate template itself writes; any other tag in its output came from data. */
export const TEMPLATE_TAGS = [
  'html',
  'head',
  'meta',
  'title',
  'style',
  'body',
  'section',
  'div',
  'h1',
  'span',
  'strong',
  'table',
  'colgroup',
  'col',
  'tr',
  'th',
  'td',
  'br',
  'img',
];
