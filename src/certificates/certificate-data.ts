/**
 * From stored rows to what a certificate prints and links to (issue 6; ARCHITECTURE §4).
 *
 * - `toCertificateData(row, publicBaseUrl)`: the template's `CertificateData` for one planned
 *   certificate (amounts stay in minor units; instants become local date-times in the unit's
 *   IANA time zone): its holder with the endorsement marks, the holder's description of
 *   operations (by default the product and the unit's covered dates), the agency as authorized
 *   representative, and the version's revision.
 * - `verificationUrl(publicBaseUrl, code)`: `<base>/verify/<code>`, the QR target.
 * - `proofCode(certificateNumbers)`: the id of a product's proof-of-coverage page, derived from
 *   its certificate numbers so a retried zip build encodes the same QR (no stored state needed),
 *   and as unguessable as the numbers' random tails.
 */
import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import type { CertificateData } from '../pdf/certificate-template';
import type { Address, IssuanceRow } from './repository';

/** Printed when a product line names no insurer (the master policy still identifies it). */
export const UNNAMED_INSURER = 'Insurer of record under the master policy';
/** Printed when the product's template asks for no certificate holder. */
export const NO_CERTIFICATE_HOLDER = 'To whom it may concern';

export function verificationUrl(publicBaseUrl: string, code: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/verify/${encodeURIComponent(code)}`;
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

function local(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toFormat("yyyy-MM-dd'T'HH:mm");
}

export function toCertificateData(row: IssuanceRow, publicBaseUrl: string): CertificateData {
  const currency = row.currency.toUpperCase();
  return {
    certificateNumber: row.certificateNumber,
    issueDate: row.issueDate,
    testMode: row.testMode,
    producer: { name: row.producerName },
    namedInsured: {
      name: row.namedInsured?.name ?? row.buyerName,
      address: formatAddress(row.namedInsured?.address),
    },
    insurers: [{ name: row.insurerName || UNNAMED_INSURER }],
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
    authorizedRepresentative: row.producerName,
    revision: row.revision,
    verificationUrl: verificationUrl(publicBaseUrl, row.certificateNumber),
  };
}
