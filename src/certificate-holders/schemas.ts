/**
 * Wire contracts of `/api/v1/purchases/{id}/certificate_holders`: who a purchase's certificates
 * are issued to. snake_case; instants ISO 8601 UTC. Text that is printed on the certificate is
 * limited to what its boxes hold (the certificate template's stated limits): a longer value is
 * refused with VALIDATION_ERROR, never cut.
 */
import { z } from 'zod';
import { CERTIFICATE_TEXT_LIMITS as L } from '../pdf/certificate-template';

const line = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .refine((s) => !/[\r\n]/.test(s), { message: 'must be one line' });

/**
 * The text printed in a holder's description of operations / locations box: trimmed, 1 to
 * `L.descriptionOfOperations` characters in at most `L.descriptionOfOperationsLines` lines (else
 * VALIDATION_ERROR "must have at most … lines"). Used when a holder is added and by the endorsement
 * that changes it.
 */
export const DescriptionOfOperationsText = z
  .string()
  .trim()
  .min(1)
  .max(L.descriptionOfOperations)
  .refine((s) => s.split(/\r\n|\r|\n/).length <= L.descriptionOfOperationsLines, {
    message: `must have at most ${L.descriptionOfOperationsLines} lines`,
  });

/** A postal address as a holder's box prints it: street, optional second line, city/region/postal code, country. */
export const HolderAddress = z
  .strictObject({
    line1: line(L.holderAddressLineLength).pipe(z.string().min(1)),
    line2: line(L.holderAddressLineLength).optional(),
    city: line(60).pipe(z.string().min(1)),
    region: line(40).pipe(z.string().min(1)),
    postal_code: line(20).pipe(z.string().min(1)),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/, { message: 'must be an ISO 3166-1 alpha-2 code such as US' })
      .meta({ description: 'ISO 3166-1 alpha-2 code', example: 'US' }),
  })
  .superRefine((a, ctx) => {
    // The third printed line is `city, region postal_code`.
    const printed = `${a.city}, ${a.region} ${a.postal_code}`;
    if (printed.length > L.holderAddressLineLength)
      ctx.addIssue({
        code: 'custom',
        path: ['city'],
        message: `city, region and postal_code print on one line of at most ${L.holderAddressLineLength} characters (here ${printed.length})`,
      });
  })
  .meta({
    id: 'CertificateHolderAddress',
    description: `Printed in the certificate holder box: each line at most ${L.holderAddressLineLength} characters`,
  });

/** Body of `POST /api/v1/purchases/{id}/certificate_holders`. */
export const CreateCertificateHolderRequest = z
  .strictObject({
    name: line(L.holderName)
      .pipe(z.string().min(1))
      .meta({ description: `Who the certificate is issued to (a venue, a client, a city), at most ${L.holderName} characters` }),
    address: HolderAddress,
    email: z
      .email()
      .max(254)
      .optional()
      .meta({ description: 'Where the holder’s own certificates may be emailed (proof of coverage); never printed' }),
    additional_insured: z
      .boolean()
      .default(false)
      .meta({ description: 'The holder is an additional insured under the policy (an endorsement; marked on the certificate)' }),
    waiver_of_subrogation: z
      .boolean()
      .default(false)
      .meta({ description: 'The insurer waives its right of subrogation against the holder (an endorsement; marked on the certificate)' }),
    description_of_operations: DescriptionOfOperationsText.optional().meta({
      description: `Printed in the description of operations / locations box of this holder’s certificates (at most ${L.descriptionOfOperations} characters in ${L.descriptionOfOperationsLines} lines). Omitted: the product and the covered dates`,
    }),
    notify_on_cancellation: z
      .boolean()
      .default(false)
      .meta({ description: 'Whether the holder is to be told (at `email`) when the policy is cancelled' }),
  })
  .superRefine((b, ctx) => {
    if (b.notify_on_cancellation && !b.email)
      ctx.addIssue({ code: 'custom', path: ['email'], message: 'is required when notify_on_cancellation is true' });
  })
  .meta({
    id: 'CreateCertificateHolderRequest',
    example: {
      name: 'Riverside Hall LLC',
      address: { line1: '200 River Rd', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
      email: 'events@riversidehall.example',
      additional_insured: true,
      description_of_operations: 'Spring gala, Riverside Hall, 2027-05-01',
    },
  });
export type CreateCertificateHolderRequest = z.infer<typeof CreateCertificateHolderRequest>;

const HolderCertificate = z
  .object({
    certificate_number: z.string(),
    covered_unit_id: z.number().int(),
    revision: z.number().int().meta({ description: '1 for a certificate’s first version' }),
    status: z
      .enum(['issuing', 'issued', 'voided'])
      .meta({ description: '`issuing` (being rendered and stored), `issued`, or `voided` (its unit cancelled, or the holder removed)' }),
  })
  .meta({ id: 'CertificateHolderCertificate' });

export const CertificateHolder = z
  .object({
    object: z.literal('certificate_holder'),
    id: z.number().int(),
    purchase_id: z.number().int(),
    source: z.enum(['answers', 'api']).meta({
      description:
        '`answers`: the holder the buyer answered at quote time (the first holder, for its own product line’s certificates); `api`: added later, for every product line',
    }),
    purchase_item_id: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The item whose certificates it holds (an `answers` holder); null: every item' }),
    name: z.string(),
    address: z
      .record(z.string(), z.unknown())
      .meta({ description: 'The postal address printed for it (line1, line2, city, region, postal_code, country)' }),
    email: z.string().nullable(),
    additional_insured: z.boolean(),
    waiver_of_subrogation: z.boolean(),
    description_of_operations: z.string().nullable().meta({ description: 'Printed for it; null: the product and the covered dates' }),
    notify_on_cancellation: z.boolean(),
    status: z.enum(['active', 'removed']),
    certificates: z.array(HolderCertificate).meta({ description: 'Its current certificates, one per covered unit it holds' }),
    created_at: z.string(),
    removed_at: z.string().nullable(),
  })
  .meta({ id: 'CertificateHolder' });
export type CertificateHolder = z.infer<typeof CertificateHolder>;
