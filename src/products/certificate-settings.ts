/**
 * How a product's certificates describe its coverage (issue 50, item 1, ACORD-25-grade content):
 * the type of insurance, occurrence or claims-made, the aggregate basis, the additional-insured
 * and waiver-of-subrogation endorsements by form reference and edition, primary and
 * non-contributory wording, and the further insurers B–F. Wire contracts of
 * `GET/PATCH /api/v1/products/{id}/certificate_settings` and the defaults of a product without
 * a setting. snake_case.
 */
import { z } from 'zod';

export const COVERAGE_TRIGGERS = ['occurrence', 'claims_made'] as const;
export const AGGREGATE_BASES = ['policy', 'location', 'project'] as const;
export type CoverageTrigger = (typeof COVERAGE_TRIGGERS)[number];
export type AggregateBasis = (typeof AGGREGATE_BASES)[number];

/** A product's certificate setting (camelCase, as stored). */
export interface CertificateSettings {
  coverageType: string;
  coverageTrigger: CoverageTrigger;
  aggregateBasis: AggregateBasis;
  additionalInsuredForm: string | null;
  waiverForm: string | null;
  primaryNonContributory: boolean;
  /** Root account ids of insurers B–F, in order (insurer A is the product's own insurer). */
  otherInsurerIds: number[];
}

/** What a product without a setting prints: a general liability policy written on occurrence, aggregate per policy. */
export const DEFAULT_CERTIFICATE_SETTINGS: CertificateSettings = {
  coverageType: 'Commercial General Liability',
  coverageTrigger: 'occurrence',
  aggregateBasis: 'policy',
  additionalInsuredForm: null,
  waiverForm: null,
  primaryNonContributory: false,
  otherInsurerIds: [],
};

/**
 * An ISO/insurer form reference with its edition: letters and digits in groups, then the edition
 * as MM YY, e.g. `CG 20 26 04 13`, `CG 24 04 05 09`, `ABC-AI 01 10 21`.
 */
const FORM_REFERENCE = /^[A-Z0-9][A-Z0-9-]{0,7}( [A-Z0-9-]{1,6}){0,3} (0[1-9]|1[0-2]) \d{2}$/;

const formReference = (what: string) =>
  z
    .string()
    .max(24)
    .regex(FORM_REFERENCE, 'must be a form reference followed by its edition as MM YY, e.g. "CG 20 26 04 13"')
    .nullable()
    .optional()
    .meta({ description: `The ${what} endorsement's form reference and edition (MM YY), e.g. "CG 20 26 04 13"; null: none named` });

/** Body of `PATCH /api/v1/products/{id}/certificate_settings` (absent fields keep their value). */
export const UpdateCertificateSettingsBody = z
  .strictObject({
    coverage_type: z
      .string()
      .trim()
      .min(3)
      .max(40)
      .regex(/^[^\r\n]*$/, 'must be one line')
      .optional()
      .meta({ description: 'The type of insurance as printed, e.g. "Commercial General Liability" (default)' }),
    coverage_trigger: z
      .enum(COVERAGE_TRIGGERS)
      .optional()
      .meta({ description: 'Occurrence (default) or claims-made, marked beside the type of insurance' }),
    aggregate_basis: z
      .enum(AGGREGATE_BASES)
      .optional()
      .meta({ description: 'What the general aggregate applies per: policy (default), location or project' }),
    additional_insured_form: formReference('additional-insured'),
    waiver_form: formReference('waiver-of-subrogation'),
    primary_non_contributory: z.boolean().optional().meta({
      description:
        'Whether the coverage is primary and non-contributory for an additional-insured holder: the certificate says so for holders that are additional insureds',
    }),
    other_insurer_ids: z.array(z.number().int().min(1).max(2_147_483_647)).max(5).optional().meta({
      description:
        'Insurers B–F in order (party ids of insurers that appointed this account, see GET /api/v1/parties); insurer A is the product’s own insurer. Printed with their NAIC numbers',
    }),
  })
  .meta({
    id: 'UpdateCertificateSettingsRequest',
    example: {
      coverage_type: 'Commercial General Liability',
      coverage_trigger: 'occurrence',
      aggregate_basis: 'location',
      additional_insured_form: 'CG 20 26 04 13',
      waiver_form: 'CG 24 04 05 09',
      primary_non_contributory: true,
    },
  });
export type UpdateCertificateSettingsBody = z.infer<typeof UpdateCertificateSettingsBody>;

/** A product's certificate setting as the API answers it (the defaults when none was set). */
export const CertificateSettingsRead = z
  .object({
    product_id: z.number().int(),
    coverage_type: z.string(),
    coverage_trigger: z.enum(COVERAGE_TRIGGERS),
    aggregate_basis: z.enum(AGGREGATE_BASES),
    additional_insured_form: z.string().nullable(),
    waiver_form: z.string().nullable(),
    primary_non_contributory: z.boolean(),
    other_insurer_ids: z.array(z.number().int()),
    updated_at: z.string().nullable().meta({ description: 'null: never set (the defaults)' }),
  })
  .meta({ id: 'CertificateSettings' });
export type CertificateSettingsRead = z.infer<typeof CertificateSettingsRead>;

/** The setting in API shape. */
export function certificateSettingsRead(productId: number, s: CertificateSettings, updatedAt: Date | null): CertificateSettingsRead {
  return {
    product_id: productId,
    coverage_type: s.coverageType,
    coverage_trigger: s.coverageTrigger,
    aggregate_basis: s.aggregateBasis,
    additional_insured_form: s.additionalInsuredForm,
    waiver_form: s.waiverForm,
    primary_non_contributory: s.primaryNonContributory,
    other_insurer_ids: s.otherInsurerIds,
    updated_at: updatedAt?.toISOString() ?? null,
  };
}

/** `current` with the body's present fields applied. */
export function applyCertificateSettings(current: CertificateSettings, body: UpdateCertificateSettingsBody): CertificateSettings {
  return {
    coverageType: body.coverage_type ?? current.coverageType,
    coverageTrigger: body.coverage_trigger ?? current.coverageTrigger,
    aggregateBasis: body.aggregate_basis ?? current.aggregateBasis,
    additionalInsuredForm: body.additional_insured_form === undefined ? current.additionalInsuredForm : body.additional_insured_form,
    waiverForm: body.waiver_form === undefined ? current.waiverForm : body.waiver_form,
    primaryNonContributory: body.primary_non_contributory ?? current.primaryNonContributory,
    otherInsurerIds: body.other_insurer_ids ?? current.otherInsurerIds,
  };
}
