/**
 * Wire contracts of getCertificates on `/platform-agency-certs` and `/platform-agency-root-certs`:
 * snake_case, no envelope, strict bodies (unknown field → 400
 * VALIDATION_ERROR). Instants are ISO 8601 UTC; sizes are bytes.
 */
import { z } from 'zod';
import type { PurchaseStatus } from '../../workflows/contracts';
import { rootScopeFields, teammateScopeFields } from '../accounts/scope';
import { checkoutSessionIdField, paymentIntentField, purchaseIdField } from './purchase-handles';

/** How the caller names the purchase: exactly one of these (`purchase_id` and `checkout_session_id` come back from checkout; `payment_intent` may exist only once the buyer paid). */
const handleFields = {
  purchase_id: purchaseIdField(
    'The purchase_id returned by adminValidateBuyerResponses: the handle to keep (always present from checkout on)',
  ),
  checkout_session_id: checkoutSessionIdField('The checkout session `id` returned by adminValidateBuyerResponses'),
  payment_intent: paymentIntentField(
    'The payment intent (from checkout or processUserDirectPayprocPayment); it may be null at checkout and exist only once the buyer paid',
  ),
};
/** The optional buyer the purchase must belong to, in every operation naming one purchase. */
const buyerField = z
  .guid({ message: 'must be a UUID' })
  .optional()
  .meta({ description: "Optional: the buyer's idp_accnt_uuid; when sent it must be the purchase's buyer" });

const HANDLES = ['purchase_id', 'checkout_session_id', 'payment_intent'] as const;
const exactlyOneHandle = (b: Partial<Record<(typeof HANDLES)[number], unknown>>) => HANDLES.filter((h) => b[h] !== undefined).length === 1;
const exactlyOneHandleIssue = { message: 'send exactly one of purchase_id, checkout_session_id or payment_intent', path: ['purchase_id'] };
const handleDescription =
  "Name the purchase with exactly one of purchase_id (keep this one: it is returned at checkout and never null), checkout_session_id or payment_intent (none or more than one → 400 VALIDATION_ERROR). A payment intent shared by several of your purchases (the processor's test mode gives every checkout the same one) answers 409 AMBIGUOUS_PAYMENT_INTENT with the candidates' purchase_id.";

/** The 409 answer of a payment intent that names several of the caller's purchases (every operation that takes a handle). */
export const AmbiguousPaymentIntentError = z
  .object({
    code: z.literal('AMBIGUOUS_PAYMENT_INTENT'),
    message: z.string().meta({ description: 'For humans; may change' }),
    candidates: z
      .array(
        z.object({
          purchase_id: z.number().int().meta({ description: 'Send this as purchase_id to name the purchase you mean' }),
          checkout_session_id: z.string().nullable(),
          status: z.string().meta({ description: "The purchase's status" }),
          created_at: z.string().meta({ description: 'When the purchase was quoted, ISO 8601 UTC' }),
        }),
      )
      .meta({ description: 'Your purchases holding this payment intent, newest first (at most 10)' }),
  })
  .meta({
    id: 'AmbiguousPaymentIntentError',
    example: {
      code: 'AMBIGUOUS_PAYMENT_INTENT',
      message: 'payment_intent pi_3Q2w3E4r5T6y7U8i belongs to 2 of your purchases; name one with purchase_id or checkout_session_id',
      candidates: [
        { purchase_id: 43, checkout_session_id: 'cs_test_b2C3d4E5f6G7h8I9', status: 'issued', created_at: '2026-11-25T10:02:00.000Z' },
        { purchase_id: 42, checkout_session_id: 'cs_test_a1B2c3D4e5F6g7H8', status: 'issued', created_at: '2026-11-25T10:00:00.000Z' },
      ],
    },
  });
export const ambiguousPaymentIntentResponse = {
  description:
    "AMBIGUOUS_PAYMENT_INTENT: the payment_intent belongs to several of your purchases (the processor's test mode gives every checkout the same one); retry with one of the candidates' purchase_id",
  content: { 'application/json': { schema: AmbiguousPaymentIntentError } },
};

/**
 * A strict request body naming one purchase: the caller's `scope` fields, the handles, the
 * operation's own `fields` and the optional buyer (`idp_accnt_uuid`), refused unless exactly one
 * handle is sent (400 VALIDATION_ERROR), documented with the handle rule. Used by
 * getCertificates, getInvoiceData and teamEmailProofofCoverage, teammate and root variants.
 */
export function purchaseRequest<S extends z.ZodRawShape, F extends z.ZodRawShape = Record<never, never>>(
  scope: S,
  meta: { id: string; example: Record<string, unknown> },
  fields?: F,
) {
  return z
    .strictObject({ ...scope, ...handleFields, ...(fields as F), idp_accnt_uuid: buyerField })
    .refine(exactlyOneHandle, exactlyOneHandleIssue)
    .meta({ id: meta.id, description: handleDescription, example: meta.example });
}

export const GetCertificatesRequest = purchaseRequest(teammateScopeFields, {
  id: 'GetCertificatesRequest',
  example: { idp_teammate_uuid: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f', purchase_id: 42 },
});
export type GetCertificatesRequest = z.infer<typeof GetCertificatesRequest>;

export const RootGetCertificatesRequest = purchaseRequest(rootScopeFields, {
  id: 'RootGetCertificatesRequest',
  example: { idp_root_account_uuid: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b', payment_intent: 'pi_3Q2w3E4r5T6y7U8i' },
});
export type RootGetCertificatesRequest = z.infer<typeof RootGetCertificatesRequest>;

/**
 * Every purchase status with its meaning for the caller. A Record over `PurchaseStatus`, so a
 * status added to the purchase lifecycle fails to compile here until it is described.
 */
const PURCHASE_STATUS_MEANING: Record<PurchaseStatus, string> = {
  quoted: 'priced, no checkout yet',
  awaiting_payment: 'checkout open, not paid yet',
  paid: 'payment received, issuance starting',
  awaiting_certificates: 'paid, certificates being issued',
  issued: 'every certificate is issued and stored',
  partly_cancelled: 'issued, and some covered units cancelled or withdrawn from (their certificates void)',
  cancelled: 'every covered unit cancelled or withdrawn from, every certificate void (final)',
  expired: 'not paid before the checkout expired (final for the caller; a payment that still arrives is honoured)',
  failed: 'the payment processor refused the payment for good (the buyer may pay again; a payment that arrives is honoured)',
  refunded: 'fully refunded, certificates void (final)',
};
const PURCHASE_STATUSES = Object.keys(PURCHASE_STATUS_MEANING) as [PurchaseStatus, ...PurchaseStatus[]];
const purchaseStatusDescription = `The purchase’s lifecycle status. ${PURCHASE_STATUSES.map((s) => `\`${s}\`: ${PURCHASE_STATUS_MEANING[s]}`).join('; ')}. Poll on \`status\`: this one can trail it by a moment (\`awaiting_certificates\` while \`status\` already says \`issued\`).`;

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
  verification_url: z.string().meta({
    description:
      'The public verification page this certificate’s QR code opens, with the certificate’s signed proof (`?proof=<compact JWS>`, keys at /.well-known/jwks.json)',
  }),
  size_bytes: z.number().int(),
  sha256: z.string().meta({ description: 'SHA-256 of the PDF, lowercase hex' }),
  voided_at: z.string().nullable().meta({
    description:
      'When it was voided (its covered unit cancelled, or its certificate holder removed; ISO 8601 UTC; its verification page says so); null while in force. A zip built before still holds a certificate voided later: this field says which',
  }),
  certificate_holder: z.object({ id: z.number().int(), name: z.string() }).nullable().meta({
    description:
      'Who this certificate is issued to (`id` in listCertificateHolders); null: the product asked for no holder. A purchase with several holders has one certificate per covered unit and holder, and its zips put each holder’s in a folder of its own',
  }),
  revision: z.number().int().meta({
    description:
      'The certificate’s version: 1 first; a change to the policy issues a new version and the old one’s verification page says it was superseded',
  }),
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
    purchase_id: z.number().int(),
    checkout_session_id: z.string().nullable().meta({ description: 'The checkout session of the purchase; null when none was created' }),
    payment_intent: z
      .string()
      .nullable()
      .meta({ description: 'The payment intent of the purchase; null until the processor reports one (often only after payment)' }),
    status: z.enum(['unpaid', 'pending', 'issued', 'voided']).meta({
      description:
        'Where the certificates are. Final: `issued` (every current certificate and the zips over them are stored, read at one moment: never part of the set; a cancellation later voids some, each with its `voided_at`; a change that issues certificates, such as a holder added or an endorsement, makes it `pending` again until its certificates are stored) and `voided` (refunded in full, or every certificate voided by cancellations). Not final, lists empty, retry with backoff (for example 250 ms doubling up to 4 s) for up to two minutes after a successful payment or a change: `unpaid` (no successful payment recorded yet; a payment can take a few seconds to reach the service) and `pending` (paid, certificates being issued: the first ones, or a change’s new ones; keep the set you had). An `unpaid` purchase whose `purchase_status` is `expired` or `failed` was not paid: stop retrying.',
    }),
    purchase_status: z.enum(PURCHASE_STATUSES).meta({ description: purchaseStatusDescription }),
    certificate_count: z.number().int(),
    urls_expire_at: z.string().nullable().meta({ description: 'ISO 8601: when the signed URLs stop working; null when there are none' }),
    certificates: z.array(CertificateItem),
    payment_zip_url: z
      .string()
      .nullable()
      .meta({ description: 'Signed URL of the zip of every PDF of this payment (one folder per product)' }),
    product_zips: z.array(ProductZip),
  })
  .meta({
    id: 'GetCertificatesResponse',
    example: {
      purchase_id: 42,
      checkout_session_id: 'cs_test_a1B2c3D4e5F6g7H8',
      payment_intent: 'pi_3Q2w3E4r5T6y7U8i',
      status: 'issued',
      purchase_status: 'issued',
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
          download_url:
            'https://storage.googleapis.com/certificates/purchases/42/certificates/COI-42-1-1-3FA9C2B71D.pdf?X-Goog-Signature=…',
          verification_url: 'https://coi.example.com/verify/COI-42-1-1-3FA9C2B71D',
          size_bytes: 61234,
          sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
          voided_at: null,
          certificate_holder: { id: 11, name: 'Grand Hall LLC' },
          revision: 1,
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
