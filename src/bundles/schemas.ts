/**
 * Wire contracts of the bundles API (spec §2.3, §4.1, §8): one strict zod schema per shape;
 * they validate, give the TypeScript types and feed the OpenAPI document.
 *
 * Field names are the spec's snake_case. Prices (`default_price`) are decimal major units
 * (12.5 = $12.50); dates are ISO 8601 strings. Limits the spec leaves open (name 255,
 * description 5000, 100 product ids) are recorded in docs/decisions.md.
 */
import { z } from 'zod';
import { queryBool, queryInt } from '../http/query';
import { MAX_DB_ID } from '../http/validation';

export const MAX_PRODUCT_IDS = 100;
export const MAX_SEARCH_LENGTH = 255;

const name = z.string().trim().min(1, { message: 'must not be empty' }).max(255);
const dbId = z.number().int().min(1).max(MAX_DB_ID);

/** Rejects repeated ids, naming each repeat and its position, so the client can fix the list. */
const productIds = z
  .array(dbId)
  .max(MAX_PRODUCT_IDS)
  .superRefine((ids, ctx) => {
    const seen = new Set<number>();
    ids.forEach((id, i) => {
      if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate product id ${id}` });
      seen.add(id);
    });
  })
  .meta({ description: `Product line ids (at most ${MAX_PRODUCT_IDS}, no repeats); the first one is the primary product` });

const createFields = {
  bundle_name: name,
  customer_facing_name: name.optional().meta({ description: 'Defaults to bundle_name' }),
  internally_facing_name: name.optional().meta({ description: 'Defaults to bundle_name' }),
  bundle_description: z.string().trim().max(5000).optional().meta({ description: "Defaults to ''" }),
  is_recurring: z.boolean().optional().meta({ description: 'Defaults to false' }),
  is_test_mode: z
    .boolean()
    .optional()
    .meta({ description: "Defaults to the calling key's mode; a test key can only create test-mode bundles" }),
  root_insurer_db_id: dbId.nullable().optional().meta({ description: "A root account of kind 'insurer'" }),
  root_mga_db_id: dbId.nullable().optional().meta({ description: "A root account of kind 'mga'" }),
  root_seller_db_id: dbId.nullable().optional().meta({ description: "Must be the calling key's own root account" }),
  question_set_id: dbId.nullable().optional(),
  product_ids: productIds.optional(),
};

/** The example bundle's names and flags, shared by the request and response examples. */
const exampleBundle = {
  bundle_name: 'Event Day Bundle',
  customer_facing_name: 'Event Day Protection',
  internally_facing_name: 'EVT-DAY-2026',
  bundle_description: 'Liability and equipment cover for one event day.',
  is_recurring: false,
  is_test_mode: true,
};

/**
 * Body of `POST /bundles` (spec §2.3). Required: `bundle_name`; when `product_ids` is non-empty
 * one of the three root ids is required too (rule 2, checked by the service). Unknown fields
 * are rejected (rule 3).
 */
export const CreateBundleBody = z.strictObject(createFields).meta({
  id: 'CreateBundleRequest',
  description: 'Unknown fields are rejected with VALIDATION_ERROR.',
  example: {
    ...exampleBundle,
    root_seller_db_id: 1,
    question_set_id: 1,
    product_ids: [12, 15],
  },
});
export type CreateBundleBody = z.infer<typeof CreateBundleBody>;

/**
 * Body of `PATCH /bundles/{bundleId}`: every create field optional; only sent fields change.
 * `product_ids`, when sent, replaces the links (`[]` removes them all; spec §2.3 rule 4).
 */
export const UpdateBundleBody = z.strictObject({ ...createFields, bundle_name: name.optional() }).meta({
  id: 'UpdateBundleRequest',
  description: 'Every field optional; only sent fields change. product_ids replaces the links.',
  example: { bundle_description: 'Now with equipment cover.', product_ids: [15, 12] },
});
export type UpdateBundleBody = z.infer<typeof UpdateBundleBody>;

/** `sort` values of spec §4.1 and the column each one orders by. */
export const BUNDLE_SORT_COLUMNS = {
  creation_datetime: 'created_at',
  last_updated_datetime: 'updated_at',
  insurance_bundled_product_customer_facing_name: 'customer_facing_name',
  insurance_bundled_product_name: 'bundle_name',
  insurance_bundled_product_product_line_count: 'product_line_count',
} as const;
export type BundleSortKey = keyof typeof BUNDLE_SORT_COLUMNS;
const sortKeys = Object.keys(BUNDLE_SORT_COLUMNS) as [BundleSortKey, ...BundleSortKey[]];

/** Query of `GET /bundles` (spec §4.1, §8); unknown or repeated parameters are rejected. */
export const ListBundlesQuery = z.strictObject({
  page: queryInt(1, 1_000_000).default(1).meta({ description: 'One-based page number', example: 1 }),
  limit: queryInt(1, 100).default(20).meta({ description: 'Page size, 1 to 100', example: 20 }),
  sort: z.enum(sortKeys).default('creation_datetime'),
  order: z.enum(['asc', 'desc']).default('desc').meta({ description: 'Ties are broken by id in the same direction' }),
  test_mode: queryBool.optional().meta({ description: '"true" or "false"' }),
  is_recurring: queryBool.optional().meta({ description: '"true" or "false"' }),
  root_insurer_db_id: queryInt(1, MAX_DB_ID)
    .optional()
    .meta({ description: 'Only bundles with this insurer root account id (integer >= 1)' }),
  root_mga_db_id: queryInt(1, MAX_DB_ID).optional().meta({ description: 'Only bundles with this MGA root account id (integer >= 1)' }),
  root_seller_db_id: queryInt(1, MAX_DB_ID)
    .optional()
    .meta({ description: 'Only bundles with this seller root account id (integer >= 1)' }),
  search: z.string().max(MAX_SEARCH_LENGTH).optional().meta({
    description:
      'Case-insensitive substring of bundle_name, customer_facing_name, internally_facing_name or bundle_description; % _ \\ and quotes match themselves; empty means no filter',
    example: 'event',
  }),
});
export type ListBundlesQuery = z.infer<typeof ListBundlesQuery>;

/** Path of the single-bundle routes; documentation only (parsing is `parsePathId` → INVALID_BUNDLE_ID). */
export const BundlePathParams = z.object({
  bundleId: z
    .int()
    .min(1)
    .max(MAX_DB_ID)
    .meta({ description: 'Bundle id; anything but a positive integer gives 400 INVALID_BUNDLE_ID', example: 42 }),
});

/** Example list item, reused by the OpenAPI list response. */
export const listItemExample = {
  id: 42,
  ...exampleBundle,
  product_line_count: 2,
  root_insurer_db_id: null,
  root_mga_db_id: null,
  root_seller_db_id: 1,
  question_set_id: 1,
  youtube_link: null,
  creation_datetime: '2026-11-22T04:00:00.000Z',
  last_updated_datetime: '2026-11-22T04:05:00.000Z',
};

const singleExample = {
  ...listItemExample,
  linked_products: [
    { id: 12, product_name: 'Special Event Liability', default_price: 49.5, is_primary: true, link_created_at: '2026-11-22T04:00:00.000Z' },
    { id: 15, product_name: 'Event Equipment Cover', default_price: 19, is_primary: false, link_created_at: '2026-11-22T04:00:00.000Z' },
  ],
  primary_product: { id: 12, product_name: 'Special Event Liability', default_price: 49.5, is_primary: true },
};

/** A bundle as listed by `GET /bundles` (spec §2.3 without linked_products/primary_product). */
export const BundleListItem = z
  .object({
    id: z.number().int(),
    bundle_name: z.string(),
    customer_facing_name: z.string(),
    internally_facing_name: z.string(),
    bundle_description: z.string(),
    is_recurring: z.boolean(),
    is_test_mode: z.boolean(),
    product_line_count: z.number().int().meta({ description: 'Number of linked products' }),
    root_insurer_db_id: z.number().int().nullable(),
    root_mga_db_id: z.number().int().nullable(),
    root_seller_db_id: z.number().int().nullable(),
    question_set_id: z.number().int().nullable(),
    youtube_link: z.string().nullable().meta({ description: 'Not settable through this API yet; always null' }),
    creation_datetime: z.string().meta({ description: 'ISO 8601 date-time' }),
    last_updated_datetime: z.string().meta({ description: 'ISO 8601 date-time' }),
  })
  .meta({ id: 'BundleListItem', description: 'A bundle in a list (no linked_products or primary_product)', example: listItemExample });
export type BundleListItem = z.infer<typeof BundleListItem>;

/** One item of `linked_products` (spec §2.3): a product line linked to the bundle. */
export const LinkedProduct = z
  .object({
    id: z.number().int().meta({ description: 'Product line id' }),
    product_name: z.string().meta({ description: "The product's customer-facing name" }),
    default_price: z.number().meta({ description: 'Major currency units (USD)' }),
    is_primary: z.boolean(),
    link_created_at: z.string().meta({ description: 'ISO 8601 date-time the product was linked to this bundle' }),
  })
  .meta({ id: 'BundleLinkedProduct', example: singleExample.linked_products[0] });

/** `primary_product` (spec §2.3): the first of the linked products. */
export const PrimaryProduct = z
  .object({
    id: z.number().int(),
    product_name: z.string(),
    default_price: z.number().meta({ description: 'Major currency units (USD)' }),
    is_primary: z.literal(true),
  })
  .meta({ id: 'BundlePrimaryProduct', example: singleExample.primary_product });

/** A bundle as returned by create, get and update (spec §2.3 with its links). */
export const Bundle = BundleListItem.extend({
  linked_products: z.array(LinkedProduct).meta({ description: 'In product_ids order; the first is the primary product' }),
  primary_product: PrimaryProduct.nullable().meta({ description: 'null when the bundle has no products' }),
}).meta({ id: 'Bundle', description: 'A bundle with its linked products', example: singleExample });
export type Bundle = z.infer<typeof Bundle>;
