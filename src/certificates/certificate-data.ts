/**
 * From stored rows to what a certificate prints and links to (issue 6; ARCHITECTURE §4).
 *
 * - `toCertificateData(row, publicBaseUrl)`: the template's `CertificateData` for one planned
 *   certificate (amounts stay in minor units; instants become local date-times in the unit's
 *   IANA time zone): its holder with the endorsement marks, the holder's description of
 *   operations (by default the product and the unit's covered dates), the agency as authorized
 *   representative, the producer block (the account's address, phone, email and licence number,
 *   issue 50 item 1), insurers A–F with their NAIC numbers, the type of insurance and the
 *   endorsement forms of the product's certificate setting, dates in the holder's locale
 *   (`dateOrderFor`), and the version's revision.
 * - `verificationUrl(publicBaseUrl, code, proof?)`: `<base>/verify/<code>`, with `?proof=<jws>`
 *   when the certificate's signed proof is given (the QR target and the API's verification link;
 *   issue 50 item 3). The short form is printed under the QR code for typing in.
 * - `certificateFacts(row)`: what a certificate's proof signs (./signed-proof.ts), from the row it
 *   is printed from: number, revision, named insured, holder, window, status at issue, issue date.
 * - `proofCode(certificateNumbers)`: the id of a product's proof-of-coverage page, derived from
 *   its certificate numbers so a retried zip build encodes the same QR (no stored state needed),
 *   and as unguessable as the numbers' random tails.
 */
import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import type { CertificateData, DateOrder } from '../pdf/certificate-template';
import type { Address, IssuanceRow } from './repository';
import type { CertificateFacts } from './signed-proof';
import type { ProducerProfile } from '../accounts/types';

/** Printed when a product line names no insurer (the master policy still identifies it). */
export const UNNAMED_INSURER = 'Insurer of record under the master policy';
/** Printed when the product's template asks for no certificate holder. */
export const NO_CERTIFICATE_HOLDER = 'To whom it may concern';

export function verificationUrl(publicBaseUrl: string, code: string, proof?: string | null): string {
  const url = `${publicBaseUrl.replace(/\/+$/, '')}/verify/${encodeURIComponent(code)}`;
  return proof ? `${url}?proof=${proof}` : url;
}

/** ISO 8601 UTC without milliseconds (shorter tokens: the QR code carries them). */
const isoSeconds = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The facts a certificate printed from `row`, as its signed proof carries them. */
export function certificateFacts(row: IssuanceRow): CertificateFacts {
  return {
    certificate_number: row.certificateNumber,
    revision: row.revision,
    named_insured_name: row.namedInsured?.name ?? row.buyerName,
    certificate_holder_name: row.certificateHolder?.name ?? null,
    coverage_starts_at: isoSeconds(row.startsAt),
    coverage_ends_at: isoSeconds(row.endsAt),
    coverage_time_zone: row.timeZone,
    status: row.testMode ? 'specimen' : 'issued',
    issued_at: row.issueDate,
  };
}

/** `POC-` and 20 upper-case hex characters of SHA-256 over the sorted numbers. */
export function proofCode(certificateNumbers: readonly string[]): string {
  if (certificateNumbers.length === 0) throw new RangeError('a proof of coverage needs at least one certificate');
  const digest = createHash('sha256')
    .update([...certificateNumbers].sort().join('\n'))
    .digest('hex');
  return `POC-${digest.slice(0, 20).toUpperCase()}`;
}

/** An address as printed lines: street, optional second line, `city, region postal`, country. */
export function formatAddress(a: Address | undefined): string | undefined {
  if (!a) return undefined;
  return [a.line1, a.line2, `${a.city}, ${a.region} ${a.postal_code}`, a.country].filter((l) => l && l.trim() !== '').join('\n');
}

/** The producer's phone, email and licence number as one printed line ('' when none is set). */
export function producerContact(p: Partial<ProducerProfile> | null): string {
  return [p?.phone && `Phone ${p.phone}`, p?.email && `Email ${p.email}`, p?.licence_number && `Licence no. ${p.licence_number}`]
    .filter(Boolean)
    .join(' · ');
}

function local(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toFormat("yyyy-MM-dd'T'HH:mm");
}

/**
 * How the certificate prints dates: in the holder's locale, MM/DD/YYYY for a US holder and
 * DD/MM/YYYY for any other; without a holder, by the named insured's country; with neither
 * country known, ISO YYYY-MM-DD.
 */
export function dateOrderFor(row: Pick<IssuanceRow, 'certificateHolder' | 'namedInsured'>): DateOrder {
  const country = (row.certificateHolder?.address?.country ?? row.namedInsured?.address?.country ?? '').trim().toUpperCase();
  if (country === '') return 'iso';
  return ['US', 'USA', 'UNITED STATES'].includes(country) ? 'mdy' : 'dmy';
}

/** The account's authorized representative as certificates print it: the name and the image as a data: URI (loaded once per purchase). */
export interface CertificateSignature {
  representativeName: string;
  imageDataUrl: string;
}

/**
 * `proof`: the certificate's signed proof (`certificateFacts` signed), carried by the QR code;
 * absent: the plain link. `signature`: the account's representative (absent: the agency's name).
 */
export function toCertificateData(
  row: IssuanceRow,
  publicBaseUrl: string,
  proof?: string,
  signature?: CertificateSignature | null,
): CertificateData {
  const currency = row.currency.toUpperCase();
  return {
    certificateNumber: row.certificateNumber,
    issueDate: row.issueDate,
    testMode: row.testMode,
    producer: {
      name: row.producerName,
      address: formatAddress(row.producer?.address ?? undefined),
      contact: producerContact(row.producer),
    },
    namedInsured: {
      name: row.namedInsured?.name ?? row.buyerName,
      address: formatAddress(row.namedInsured?.address),
    },
    insurers: [{ name: row.insurerName || UNNAMED_INSURER, naic: row.insurerNaic }, ...row.otherInsurers],
    coverageType: {
      type: row.coverageSettings.coverageType,
      trigger: row.coverageSettings.coverageTrigger,
      aggregateBasis: row.coverageSettings.aggregateBasis,
    },
    endorsements: {
      additionalInsuredForm: row.coverageSettings.additionalInsuredForm,
      waiverForm: row.coverageSettings.waiverForm,
      primaryNonContributory: row.coverageSettings.primaryNonContributory,
    },
    dateOrder: dateOrderFor(row),
    masterPolicyNumber: row.masterPolicyNumber,
    policyNumberTwo: row.policyNumberTwo || undefined,
    productName: row.productName,
    coverage: { startsAtLocal: local(row.startsAt, row.timeZone), endsAtLocal: local(row.endsAt, row.timeZone), timeZone: row.timeZone },
    limits: row.limits.map((l) => ({ label: l.label, amount_minor: l.amount_minor, currency })),
    deductible: { amount_minor: row.deductibleMinor, currency },
    claimsPhone: row.claimsPhone,
    certificateHolder: row.certificateHolder
      ? {
          name: row.certificateHolder.name,
          address: formatAddress(row.certificateHolder.address) ?? '',
          additionalInsured: row.certificateHolder.additionalInsured,
          waiverOfSubrogation: row.certificateHolder.waiverOfSubrogation,
        }
      : { name: NO_CERTIFICATE_HOLDER, address: '' },
    // The holder's own description, or by default the product and the unit's covered dates.
    descriptionOfOperations: row.certificateHolder?.descriptionOfOperations ?? `${row.productName}: ${row.localLabel} (${row.timeZone})`,
    authorizedRepresentative: signature?.representativeName ?? row.producerName,
    ...(signature ? { signatureImage: signature.imageDataUrl } : {}),
    revision: row.revision,
    verificationUrl: verificationUrl(publicBaseUrl, row.certificateNumber),
    ...(proof ? { qrUrl: verificationUrl(publicBaseUrl, row.certificateNumber, proof) } : {}),
  };
}
