/**
 * Wire contracts of `searchTeammatePurchasedProducts` on `/platform-agency-certs` (teammate) and
 * `/platform-agency-root-certs` (root account) (spec §4.5, §7.2, §8): snake_case, no envelope,
 * strict bodies (an unknown field is 400 VALIDATION_ERROR). Instants are ISO 8601 UTC.
 *
 * Paging is zero-based (`page_index`, like GET /products) over a result window of
 * `SEARCH_RESULT_WINDOW` purchases: `(page_index + 1) * page_size` may not exceed it; narrow the
 * search to go further. `total` counts matches up to `SEARCH_COUNT_CAP` (`total_exact` false
 * beyond): counting costs a look at every match, and a capped count keeps that bounded.
 */
import { z } from 'zod';
import { rootScopeFields, teammateScopeFields } from '../accounts/scope';

/** Longest accepted search text, in characters (UTF-16 code units). */
export const MAX_SEARCH_TEXT = 10_000;
/** Purchases reachable by paging. */
export const SEARCH_RESULT_WINDOW = 10_000;
/** `total` counts no further than this. */
export const SEARCH_COUNT_CAP = 1_000;
/** Certificate numbers listed per purchase (the first, in product and unit order). */
export const LISTED_CERTIFICATE_NUMBERS = 20;

const searchFields = {
  search_text: z
    .string()
    .max(MAX_SEARCH_TEXT)
    .default('')
    .meta({
      description:
        'Matched case-insensitively as one phrase, anywhere inside the buyer’s name ("first last"), the buyer’s email, a product’s name, the bundle’s name or a ' +
        'certificate number. Leading and trailing whitespace is ignored and runs of whitespace count as one space. Every character is plain ' +
        'text (`%`, `_`, `\\`, quotes included). Empty: every paid purchase in scope, newest first.',
      example: 'kim park',
    }),
  page_size: z.number().int().min(1).max(100).default(20).meta({ description: 'Purchases per page, 1 to 100' }),
  page_index: z
    .number()
    .int()
    .min(0)
    .default(0)
    .meta({ description: 'Zero-based page; (page_index + 1) × page_size may not exceed 10 000' }),
};

function withinWindow(body: { page_index: number; page_size: number }, ctx: z.RefinementCtx): void {
  if ((body.page_index + 1) * body.page_size > SEARCH_RESULT_WINDOW) {
    ctx.addIssue({
      code: 'custom',
      path: ['page_index'],
      message: `(page_index + 1) * page_size must not exceed ${SEARCH_RESULT_WINDOW}; narrow the search instead`,
    });
  }
}

export const SearchTeammatePurchasesRequest = z
  .strictObject({ ...teammateScopeFields, ...searchFields })
  .superRefine(withinWindow)
  .meta({
    id: 'SearchTeammatePurchasesRequest',
    example: { idp_teammate_uuid: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f', search_text: 'kim park', page_size: 20, page_index: 0 },
  });
export type SearchTeammatePurchasesRequest = z.infer<typeof SearchTeammatePurchasesRequest>;

export const SearchRootPurchasesRequest = z
  .strictObject({ ...rootScopeFields, ...searchFields })
  .superRefine(withinWindow)
  .meta({
    id: 'SearchRootPurchasesRequest',
    example: {
      idp_root_account_uuid: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b',
      search_text: 'COI-1042-1-1-9F3A61C2B7',
      page_size: 20,
      page_index: 0,
    },
  });
export type SearchRootPurchasesRequest = z.infer<typeof SearchRootPurchasesRequest>;

export const PurchaseSearchHit = z.object({
  purchase_id: z.number().int(),
  payment_intent: z.string().nullable().meta({ description: 'The payment intent that paid the purchase (input of getCertificates)' }),
  paid_at: z.string().meta({ description: 'ISO 8601 UTC instant of the payment; results are ordered by it, newest first' }),
  status: z.string().meta({ description: '`paid`, `awaiting_certificates`, `issued` (certificates ready) or `refunded`' }),
  teammate: z
    .object({ idp_teammate_uuid: z.string(), name: z.string() })
    .nullable()
    .meta({ description: 'The teammate the sale is attributed to; null for a sale through a key without one' }),
  buyer: z.object({
    idp_accnt_uuid: z.string(),
    name: z.string().meta({ description: '"first last"' }),
    email: z.string().meta({ description: 'The email the purchase was made with' }),
  }),
  products: z.array(z.object({ product_line_id: z.number().int(), product_name: z.string() })).meta({
    description: 'Distinct product lines of the purchase, in the order they were quoted; product_name is the current customer-facing name',
  }),
  bundle: z.object({ id: z.number().int().nullable(), name: z.string() }).nullable().meta({
    description:
      'The bundle it was sold as: its id (null once the bundle was deleted) and customer-facing name when sold; null for product lines bought on their own. The search text matches this name too.',
  }),
  certificate_count: z.number().int().meta({ description: 'Certificates planned for the purchase (0 until issuance starts)' }),
  certificate_numbers: z.array(z.string()).meta({
    description: `The first ${LISTED_CERTIFICATE_NUMBERS} certificate numbers in product then covered-unit order; getCertificates lists them all`,
  }),
  matched_certificate_number: z
    .string()
    .nullable()
    .meta({ description: 'The certificate number the search text matched (the exact one when it names a certificate), else null' }),
});
export type PurchaseSearchHit = z.infer<typeof PurchaseSearchHit>;

export const PurchaseSearchResponse = z
  .object({
    total: z.number().int().meta({ description: 'Matching purchases, counted up to 1 000' }),
    total_exact: z
      .boolean()
      .meta({ description: 'false when more than 1 000 purchases match (total is then 1 000; keep paging with has_more)' }),
    page_index: z.number().int(),
    page_size: z.number().int(),
    has_more: z
      .boolean()
      .meta({ description: 'Another page can be requested (false at the end of the results or of the 10 000-purchase window)' }),
    purchases: z.array(PurchaseSearchHit).meta({
      description:
        'Newest payment first (paid_at, then purchase_id, descending); a purchase whose certificate number equals the search text comes first',
    }),
  })
  .meta({
    id: 'PurchaseSearchResponse',
    example: {
      total: 1,
      total_exact: true,
      page_index: 0,
      page_size: 20,
      has_more: false,
      purchases: [
        {
          purchase_id: 1042,
          payment_intent: 'pi_3Q2w3E4r5T6y7U8i',
          paid_at: '2026-11-20T17:04:31.512Z',
          status: 'issued',
          teammate: { idp_teammate_uuid: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f', name: 'Ana Agent' },
          buyer: { idp_accnt_uuid: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b', name: 'Kim Park', email: 'kim.park@example.com' },
          products: [{ product_line_id: 7, product_name: 'Special Event Liability' }],
          bundle: null,
          certificate_count: 2,
          certificate_numbers: ['COI-1042-1-1-9F3A61C2B7', 'COI-1042-1-2-04D1E8A5C3'],
          matched_certificate_number: null,
        },
      ],
    },
  });
export type PurchaseSearchResponse = z.infer<typeof PurchaseSearchResponse>;
