/**
 * Wire contracts of getCertificates on `/platform-agency-certs` and `/platform-agency-root-certs`
 * (spec §4.5, §2.4, §7.2): snake_case, no envelope, strict bodies (unknown field → 400
 * VALIDATION_ERROR). Instants are ISO 8601 UTC; sizes are bytes.
 */
import { z } from 'zod';
import { rootScopeFields, teammateScopeFields } from './account-scope';

const paymentIntent = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[A-Za-z0-9_]+$/, 'must be a processor payment intent id (pi_…)')
  .meta({ description: 'The payment_intent returned by adminValidateBuyerResponses (or by processUserDirectPayprocPayment)' });
const buyer = z.guid({ message: 'must be a UUID' }).optional().meta({ description: "Optional: the buyer's idp_accnt_uuid; when sent it must be the purchase's buyer" });

export const GetCertificatesRequest = z.strictObject({ ...teammateScopeFields, payment_intent: paymentIntent, idp_accnt_uuid: buyer }).meta({
  id: 'GetCertificatesRequest',
  example: { idp_teammate_uuid: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f', payment_intent: 'pi_3Q2w3E4r5T6y7U8i' },
});
export type GetCertificatesRequest = z.infer<typeof GetCertificatesRequest>;

export const RootGetCertificatesRequest = z.strictObject({ ...rootScopeFields, payment_intent: paymentIntent, idp_accnt_uuid: buyer }).meta({
  id: 'RootGetCertificatesRequest',
  example: { idp_root_account_uuid: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b', payment_intent: 'pi_3Q2w3E4r5T6y7U8i' },
});
export type RootGetCertificatesRequest = z.infer<typeof RootGetCertificatesRequest>;

export const CertificateItem = z.object({
  certificate_number: z.string(),
  product_line_id: z.number().int(),
  product_name: z.string(),
  covered_unit_index: z.number().int().meta({ description: 'Zero-based position of the day or trip within its product line' }),
  covered_unit_kind: z.enum(['day', 'trip']),
  coverage_starts_at: z.string().meta({ description: 'ISO 8601 UTC instant' }),
  coverage_ends_at: z.string().meta({ description: 'ISO 8601 UTC instant (exclusive)' }),
  coverage_time_zone: z.string().meta({ description: 'IANA zone the certificate prints its dates in' }),
  coverage_label: z.string().meta({ description: 'The day (YYYY-MM-DD) or trip (start/end) in that zone' }),
  named_insured_name: z.string().nullable(),
  download_url: z.string().meta({ description: 'Time-limited signed URL of the PDF (see urls_expire_at)' }),
  verification_url: z.string().meta({ description: 'The public verification page this certificate’s QR code opens' }),
  size_bytes: z.number().int(),
  sha256: z.string().meta({ description: 'SHA-256 of the PDF, lowercase hex' }),
});

export const ProductZip = z.object({
  product_line_id: z.number().int(),
  product_name: z.string(),
  certificate_count: z.number().int(),
  zip_url: z.string().meta({ description: 'Signed URL of the zip of this product’s PDFs plus proof-of-coverage.png' }),
  proof_of_coverage_url: z.string().meta({ description: 'The QR link: a public page proving this product’s coverage' }),
});

export const GetCertificatesResponse = z
  .object({
    payment_intent: z.string(),
    purchase_id: z.number().int(),
    status: z.enum(['unpaid', 'pending', 'issued', 'voided']).meta({
      description:
        '`unpaid`: no successful payment yet; `pending`: paid, certificates are being issued (lists are empty; retry with backoff for up to two minutes, spec §4.5); `issued`: everything below is stored; `voided`: the purchase was refunded and its certificates are void',
    }),
    certificate_count: z.number().int(),
    urls_expire_at: z.string().nullable().meta({ description: 'ISO 8601: when the signed URLs stop working; null when there are none' }),
    certificates: z.array(CertificateItem),
    payment_zip_url: z.string().nullable().meta({ description: 'Signed URL of the zip of every PDF of this payment (one folder per product)' }),
    product_zips: z.array(ProductZip),
  })
  .meta({
    id: 'GetCertificatesResponse',
    example: {
      payment_intent: 'pi_3Q2w3E4r5T6y7U8i',
      purchase_id: 42,
      status: 'issued',
      certificate_count: 1,
      urls_expire_at: '2026-11-22T13:00:00.000Z',
      certificates: [
        {
          certificate_number: 'COI-42-1-1-3FA9C2B71D',
          product_line_id: 7,
          product_name: 'Special Event Liability',
          covered_unit_index: 0,
          covered_unit_kind: 'day',
          coverage_starts_at: '2026-12-05T05:00:00.000Z',
          coverage_ends_at: '2026-12-06T05:00:00.000Z',
          coverage_time_zone: 'America/Chicago',
          coverage_label: '2026-12-05',
          named_insured_name: 'Jordan Lee',
          download_url: 'https://storage.googleapis.com/certificates/purchases/42/certificates/COI-42-1-1-3FA9C2B71D.pdf?X-Goog-Signature=…',
          verification_url: 'https://coi.example.com/verify/COI-42-1-1-3FA9C2B71D',
          size_bytes: 61234,
          sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
        },
      ],
      payment_zip_url: 'https://storage.googleapis.com/certificates/purchases/42/zips/payment-pi_3Q2w3E4r5T6y7U8i.zip?X-Goog-Signature=…',
      product_zips: [
        {
          product_line_id: 7,
          product_name: 'Special Event Liability',
          certificate_count: 1,
          zip_url: 'https://storage.googleapis.com/certificates/purchases/42/zips/product-7.zip?X-Goog-Signature=…',
          proof_of_coverage_url: 'https://coi.example.com/verify/POC-1A2B3C4D5E6F7A8B9C0D',
        },
      ],
    },
  });
export type GetCertificatesResponse = z.infer<typeof GetCertificatesResponse>;
