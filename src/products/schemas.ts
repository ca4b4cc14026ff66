/**
 * Wire contracts of the products API (spec §2.1, §2.2, §4.2): one strict zod schema per shape;
 * they validate, give the TypeScript types and feed the OpenAPI document.
 *
 * Prices (`defaultPrice`, `deductible`) are decimal major units (12.5 = $12.50); stored and sent
 * to the processor as integer minor units (ARCHITECTURE §4).
 */
import { z } from 'zod';
import { majorAmount } from '../shared/money';
import { queryBool, queryInt } from '../http/query';
import { CoverageUnit } from '../question-sets/schemas';

const name = z.string().trim().min(1, { message: 'must not be empty' }).max(255);
const text = (max: number) => z.string().trim().max(max);
const rootId = z.number().int().min(1).max(2_147_483_647);

/** The example product's own fields, as the create request sends them and its answer repeats them. */
const productExample = {
  customerName: 'Special Event Liability',
  internalName: 'SEL-DAY-2026',
  description: 'General liability for one-day special events, per covered day.',
  defaultPrice: 49.5,
  insurerName: 'Evergreen Mutual Insurance Co.',
  claimsPhoneNumber: '+1-800-555-0134',
};

/** Body of `POST /products` (spec §2.2). Required: customerName and defaultPrice (decision). */
export const CreateProductBody = z
  .strictObject({
    customerName: name,
    internalName: name.optional(),
    description: text(5000).optional(),
    defaultPrice: majorAmount(),
    insurerName: text(255).optional(),
    claimsPhoneNumber: text(64).optional(),
    agencyRootAccountID: rootId.optional(),
    masterPolicyNumber: text(128).optional(),
    questionSetId: rootId.nullable().optional(),
    deductible: majorAmount(99_999_999.99).optional(),
    isRecurring: z.boolean().optional(),
    isTestMode: z.boolean().optional(),
    insurerRootAccountID: rootId.nullable().optional().meta({
      description:
        'The insurer’s root account (kind insurer) whose policy the product sells: its premium bordereau lists the product’s transactions. Shown as ins_product_line_insurer_root_accnt_id.',
    }),
    mgaRootAccountID: rootId.nullable().optional().meta({
      description:
        'The MGA’s root account (kind mga) the product is written through: its premium bordereau lists the product’s transactions. Shown as ins_product_line_mga_root_accnt_id.',
    }),
  })
  .meta({
    id: 'CreateProductRequest',
    example: {
      ...productExample,
      masterPolicyNumber: 'EVM-GL-2026-0001',
      questionSetId: 1,
      deductible: 250,
      isRecurring: false,
      isTestMode: true,
    },
  });
export type CreateProductBody = z.infer<typeof CreateProductBody>;

/**
 * Body of `PATCH /products/{id}`: every create field optional, plus `isActive` (the product is
 * deactivated instead of deleted). `agencyRootAccountID` and `isTestMode` may be sent only
 * with their current value.
 */
export const UpdateProductBody = CreateProductBody.partial()
  .extend({ isActive: z.boolean().optional() })
  .strict()
  .meta({ id: 'UpdateProductRequest', example: { defaultPrice: 54, description: 'Now includes liquor liability.' } });
export type UpdateProductBody = z.infer<typeof UpdateProductBody>;

/** Query of `GET /products` (spec §4.2); unknown parameters are rejected. */
export const ListProductsQuery = z.strictObject({
  pageSize: queryInt(1, 100).default(10),
  pageIndex: queryInt(0, 1_000_000).default(0),
  agencyRootAccountID: queryInt(1, 2_147_483_647).optional(),
  isActive: queryBool.optional(),
  isTestMode: queryBool.optional(),
});
export type ListProductsQuery = z.infer<typeof ListProductsQuery>;

const readExample = {
  id: 12,
  ins_product_line_product_name_customer: 'Special Event Liability',
  ins_product_line_product_name_internal: 'SEL-DAY-2026',
  ins_product_line_product_description: 'General liability for one-day special events, per covered day.',
  ins_product_line_product_default_price: 49.5,
  ins_product_line_product_insurer_name: 'Evergreen Mutual Insurance Co.',
  ins_product_line_claims_phone_number: '+1-800-555-0134',
  ins_product_line_agency_product_video_url: '',
  ins_product_line_agency_root_accnt_id: 1,
  ins_product_line_master_policy_number: 'EVM-GL-2026-0001',
  ins_product_line_policy_number_two: '',
  ins_product_line_deductible_dollar_amount: 250,
  ins_product_line_is_recurring: 0,
  ins_product_line_is_bundle: 0,
  ins_product_line_payproc_product_is_test_mode: 1,
  ins_product_line_payproc_product_uuid: 'prod_RkN2lXojRj2Gwa9',
  ins_product_line_question_set_id: 1,
  ins_product_line_mga_root_accnt_id: null,
  ins_product_line_insurer_root_accnt_id: null,
  ins_product_line_is_active: 1,
  ins_product_line_creation_datetime: '2026-11-22T04:00:00.000Z',
  ins_product_line_last_updated_datetime: '2026-11-22T04:00:00.000Z',
  ins_product_line_coverage_unit: 'day',
};

const flag = z.union([z.literal(0), z.literal(1)]);

/** Read shape of spec §2.1 (GET and PATCH responses). */
export const ProductRead = z
  .object({
    id: z.number().int(),
    ins_product_line_product_name_customer: z.string(),
    ins_product_line_product_name_internal: z.string(),
    ins_product_line_product_description: z.string(),
    ins_product_line_product_default_price: z.number().meta({ description: 'Major currency units (USD)' }),
    ins_product_line_product_insurer_name: z.string(),
    ins_product_line_claims_phone_number: z.string(),
    ins_product_line_agency_product_video_url: z.string(),
    ins_product_line_agency_root_accnt_id: z.number().int(),
    ins_product_line_master_policy_number: z.string(),
    ins_product_line_policy_number_two: z.string(),
    ins_product_line_deductible_dollar_amount: z.number().meta({ description: 'Major currency units (USD)' }),
    ins_product_line_is_recurring: flag,
    ins_product_line_is_bundle: flag,
    ins_product_line_payproc_product_is_test_mode: flag,
    ins_product_line_payproc_product_uuid: z.string(),
    ins_product_line_question_set_id: z.number().int().nullable(),
    ins_product_line_mga_root_accnt_id: z.number().int().nullable(),
    ins_product_line_insurer_root_accnt_id: z.number().int().nullable(),
    ins_product_line_is_active: flag.meta({ description: '1 while active; 0 once deactivated by PATCH isActive=false' }),
    ins_product_line_creation_datetime: z.string(),
    ins_product_line_last_updated_datetime: z.string(),
    ins_product_line_coverage_unit: CoverageUnit.nullable().meta({
      description:
        'What one certificate of this product covers, from its question set (`day` or `trip`); null without a question set (not sellable)',
    }),
  })
  .meta({ id: 'Product', example: readExample });
export type ProductRead = z.infer<typeof ProductRead>;

/** Create response `data` of spec §2.2 (camelCase). */
export const ProductCreated = z
  .object({
    id: z.number().int(),
    payprocProductId: z.string(),
    payprocPriceId: z.string(),
    customerName: z.string(),
    internalName: z.string(),
    description: z.string(),
    defaultPrice: z.number(),
    insurerName: z.string(),
    claimsPhoneNumber: z.string(),
    agencyRootAccountID: z.number().int(),
    masterPolicyNumber: z.string(),
    questionSetId: z.number().int().nullable(),
    isTestMode: z.boolean(),
    coverageUnit: CoverageUnit.nullable().meta({
      description: 'What one certificate covers (`day` or `trip`), from the question set; null without one',
    }),
    createdAt: z.string(),
  })
  .meta({
    id: 'ProductCreated',
    example: {
      id: 12,
      payprocProductId: 'prod_RkN2lXojRj2Gwa9',
      payprocPriceId: 'price_1PgafmB7WZ01zgkW02Hf9z6c',
      ...productExample,
      agencyRootAccountID: 1,
      masterPolicyNumber: 'EVM-GL-2026-0001',
      questionSetId: 1,
      isTestMode: true,
      coverageUnit: 'day',
      createdAt: '2026-11-22T04:00:00.000Z',
    },
  });
export type ProductCreated = z.infer<typeof ProductCreated>;

const refundMethod = z.enum(['pro_rata', 'short_rate', 'none']);

/**
 * Body of `PATCH /api/v1/products/{id}/cancellation_terms`: the sent terms change, the others
 * keep their value (the defaults while the product has none of its own). Money in minor units.
 */
export const UpdateCancellationTermsBody = z
  .strictObject({
    free_look_days: z.number().int().min(0).max(60).optional().meta({
      description:
        'Days after payment during which a purchase none of whose covered units has started is refunded in full, platform fee included (0: no free look, as for covers shorter than a month exempt from the 14-day withdrawal right)',
    }),
    refund_method: refundMethod.optional().meta({
      description:
        'How unstarted covered units are refunded outside free look when the buyer or the agency cancels: `pro_rata` (their share of the premium), `short_rate` (the same less `short_rate_penalty_bps`), `none`',
    }),
    insurer_refund_method: refundMethod
      .optional()
      .meta({ description: 'The same when the insurer cancels (policy wordings commonly give pro rata here)' }),
    short_rate_penalty_bps: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .optional()
      .meta({ description: 'Short-rate penalty in basis points of the pro-rata refund (1000 = 10 %)' }),
    platform_fee_refundable: z.boolean().optional().meta({
      description:
        'Whether the platform fee comes back outside free look when a cancellation leaves no covered unit active (a partial cancellation never refunds it)',
    }),
    minimum_earned_premium: z.number().int().min(0).max(99_999_999).optional().meta({
      description:
        'Premium each purchased item keeps however much of it is cancelled outside free look, integer minor units (cents for usd)',
    }),
    buyer_withdrawal: z.boolean().optional().meta({
      description:
        'Whether the buyer may withdraw online on their own: the proof-of-coverage email sent to the buyer and the checkout return page then carry a signed, single-use link to a page showing the buyer their quote (every unstarted covered unit; within 14 days of payment everything of them comes back, platform-fee share included, whatever these terms say; after that priced by these terms with `requested_by` `buyer`) with a button to confirm it; the agency hears of it through the usual events (`purchase.cancelled` with `requested_by: buyer`). Offered on a purchase only when every item’s product allows it. Default true (EU distance contracts must offer an online withdrawal function from 19 June 2026); turn it off for covers exempt from the right of withdrawal',
    }),
  })
  .meta({
    id: 'UpdateCancellationTermsRequest',
    example: { free_look_days: 0, refund_method: 'short_rate', short_rate_penalty_bps: 1000 },
  });
export type UpdateCancellationTermsBody = z.infer<typeof UpdateCancellationTermsBody>;

/** A product's cancellation terms as the API answers them. */
export const CancellationTermsRead = z
  .object({
    product_id: z.number().int(),
    free_look_days: z.number().int(),
    refund_method: refundMethod,
    insurer_refund_method: refundMethod,
    short_rate_penalty_bps: z.number().int(),
    platform_fee_refundable: z.boolean(),
    minimum_earned_premium: z.number().int().meta({ description: 'Integer minor units (cents for usd)' }),
    buyer_withdrawal: z.boolean().meta({
      description:
        'Whether the buyer may withdraw online through the signed link of the proof-of-coverage email and the checkout return page',
    }),
    is_default: z.boolean().meta({ description: 'true while the product has no terms of its own (these are the defaults)' }),
    updated_at: z.string().nullable().meta({ description: 'When the terms were last set, ISO 8601 UTC; null for the defaults' }),
  })
  .meta({
    id: 'CancellationTerms',
    example: {
      product_id: 12,
      free_look_days: 14,
      refund_method: 'pro_rata',
      insurer_refund_method: 'pro_rata',
      short_rate_penalty_bps: 1000,
      platform_fee_refundable: false,
      minimum_earned_premium: 0,
      buyer_withdrawal: true,
      is_default: true,
      updated_at: null,
    },
  });
export type CancellationTermsRead = z.infer<typeof CancellationTermsRead>;

const endorsementPremium = (what: string) =>
  z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .optional()
    .meta({
      description: `Premium of ${what}: integer minor units of the product’s currency per covered day or trip the holder’s certificates cover (default 0: free). A priced one is added through an endorsement quote and collected before it takes effect; removing it gives back its share of the units not started.`,
    });

/** Body of `PATCH /api/v1/products/{id}/endorsement_terms`: the sent terms change, the others keep their value. */
export const UpdateEndorsementTermsBody = z
  .strictObject({
    allows_additional_insured: z
      .boolean()
      .optional()
      .meta({ description: 'Whether a certificate holder of this product’s purchases may be named additional insured (default true)' }),
    allows_waiver_of_subrogation: z.boolean().optional().meta({
      description: 'Whether the insurer may waive subrogation against a certificate holder of this product’s purchases (default true)',
    }),
    additional_insured_premium: endorsementPremium('naming a certificate holder additional insured'),
    waiver_of_subrogation_premium: endorsementPremium('waiving subrogation against a certificate holder'),
  })
  .meta({ id: 'UpdateEndorsementTermsRequest', example: { allows_waiver_of_subrogation: true, waiver_of_subrogation_premium: 150 } });
export type UpdateEndorsementTermsBody = z.infer<typeof UpdateEndorsementTermsBody>;

/** A product's endorsement terms as the API answers them. */
export const EndorsementTermsRead = z
  .object({
    product_id: z.number().int(),
    allows_additional_insured: z.boolean(),
    allows_waiver_of_subrogation: z.boolean(),
    additional_insured_premium: z
      .number()
      .int()
      .meta({ description: 'Premium of naming a holder additional insured, minor units per covered unit (0: free)' }),
    waiver_of_subrogation_premium: z
      .number()
      .int()
      .meta({ description: 'Premium of a waiver of subrogation for a holder, minor units per covered unit (0: free)' }),
    is_default: z.boolean().meta({ description: 'true while the product has no terms of its own (both allowed, at no premium)' }),
    updated_at: z.string().nullable().meta({ description: 'When the terms were last set, ISO 8601 UTC; null for the defaults' }),
  })
  .meta({
    id: 'EndorsementTerms',
    example: {
      product_id: 12,
      allows_additional_insured: true,
      allows_waiver_of_subrogation: true,
      additional_insured_premium: 0,
      waiver_of_subrogation_premium: 150,
      is_default: false,
      updated_at: '2026-11-26T09:00:00.000Z',
    },
  });
export type EndorsementTermsRead = z.infer<typeof EndorsementTermsRead>;
