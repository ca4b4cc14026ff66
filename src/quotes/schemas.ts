/**
 * Wire contracts of `/public-quote` (spec §4.4 steps 1–2): snake_case, no envelope.
 *
 * The answers of adminValidateBuyerResponses are parsed loosely here (an object per selected
 * product line) and validated against each product's own template in `answers.ts`, which
 * reports every problem at once. `ValidateRequestDocumented` is the same request with the
 * answers typed, for the OpenAPI document only: it does not change what the API accepts.
 */
import { z } from 'zod';
import { TAX_METHODS } from '../taxes/premium-tax';
import { Question } from '../question-sets/definition';
import { Address } from './answers';

export const CatalogRequest = z
  .strictObject({
    idp_root_account_uuid: z.string().min(1).max(64),
    connected_ins_products_pagination_response_length_limit: z.number().int().min(1).max(100),
    selected_table_page: z.number().int().min(0).max(1_000_000),
  })
  .meta({
    id: 'CatalogRequest',
    example: {
      idp_root_account_uuid: '6f1c3a52-3f0e-4a4e-9d86-2b1f7c9e4d10',
      connected_ins_products_pagination_response_length_limit: 10,
      selected_table_page: 0,
    },
  });
export type CatalogRequest = z.infer<typeof CatalogRequest>;

export const CatalogItem = z
  .object({
    product_line_meta_data: z.object({
      product_line_id: z.number().int(),
      product_line_array_of_agreements: z.array(z.object({ id: z.string(), title: z.string(), text: z.string() })),
    }),
    product_line_name: z.string(),
    product_line_description: z.string(),
    product_line_default_price: z.number().meta({ description: 'Major currency units per covered unit' }),
    product_line_currency: z.string(),
    product_line_is_recurring: z.boolean(),
    product_line_is_trip_excess_product: z.boolean(),
    product_line_is_bundle: z.boolean().meta({
      description:
        'True for a bundle: `product_line_meta_data.product_line_id` is then the bundle’s id, the price is the sum of its products’ default prices, and the template holds every question of its products once. Quote it with `product_line_is_bundle: true`.',
    }),
    product_line_insurer_name: z.string(),
    product_line_question_template: z.object({
      question_set_id: z.number().int().meta({ description: 'For a bundle: its primary product’s question set' }),
      questions: z
        .array(Question)
        .meta({ description: 'Ask these; each answer goes under the question’s `id` in adminValidateBuyerResponses' }),
    }),
    bundle_products: z
      .array(
        z.object({
          product_line_id: z.number().int(),
          product_line_name: z.string(),
          product_line_is_primary: z.boolean(),
          product_line_default_price: z.number().meta({ description: 'Major currency units per covered unit' }),
          product_line_is_trip_excess_product: z.boolean(),
        }),
      )
      .optional()
      .meta({ description: 'Bundles only: the products a purchase of the bundle covers, the primary product first' }),
  })
  .meta({
    id: 'CatalogItem',
    description:
      'A product line, or a bundle of product lines sold together in one payment (`product_line_is_bundle`); product lines come first, then bundles',
  });

export const CatalogResponse = z
  .object({
    rich_ins_product_pagination_total_approved_products: z.number().int(),
    rich_ins_product_pagination_total_approved_products_pages: z.number().int(),
    rich_ins_product_pagination_selected_page: z.number().int(),
    rich_ins_product_pagination_response_limit_per_page: z.number().int(),
    rich_ins_product_array_of_objects: z.array(CatalogItem),
  })
  .meta({ id: 'CatalogResponse' });
export type CatalogResponse = z.infer<typeof CatalogResponse>;

export const ValidateRequest = z.strictObject({
  idp_accnt_uuid: z.string().min(1).max(64),
  access_token: z.string().min(1).max(256),
  selected_product_lines_to_purchase: z.array(z.record(z.string(), z.unknown())).min(1).max(20),
  metadata: z
    .record(
      z
        .string()
        .min(1)
        .max(40)
        .regex(/^[^[\]]+$/, { message: 'a metadata key may not contain square brackets' }),
      z.string().max(500),
    )
    .refine((m) => Object.keys(m).length <= 20, { message: 'at most 20 metadata keys' })
    .optional()
    .meta({
      description:
        'Your own key-value pairs for the purchase (an order number, a booking reference): at most 20 keys of 1–40 characters without square brackets, string values of up to 500 characters. Returned on the purchase and in its events; the service never reads them.',
      example: { order_id: 'ORD-20261122-0042' },
    }),
  save_payment_method: z
    .boolean()
    .optional()
    .meta({ description: "When true, checkout saves the buyer's card for later off-session charges (processUserDirectPayprocPayment)" }),
});
export type ValidateRequest = z.infer<typeof ValidateRequest>;

const timeZone = z.string().meta({ description: 'IANA time zone the dates are in', example: 'America/Chicago' });

/** Answer to a `coverage_dates` question (per-day products). */
export const CoverageDatesAnswer = z
  .strictObject({
    time_zone: timeZone,
    start_date: z.iso.date().meta({ description: 'First covered day, YYYY-MM-DD; not before today in time_zone', example: '2026-12-24' }),
    end_date: z.iso.date().meta({ description: 'Last covered day (inclusive), YYYY-MM-DD', example: '2026-12-26' }),
  })
  .meta({
    id: 'CoverageDatesAnswer',
    description:
      'Answer to the `coverage_dates` question of a per-day product (its id is `coverage` in the shared templates): an inclusive range of calendar days in time_zone. One certificate per day, each from local midnight to the next; at most the service’s maximum of covered units.',
  });

/** Answer to a `trips` question (per-trip products). */
export const TripsAnswer = z
  .strictObject({
    time_zone: timeZone,
    trips: z
      .array(
        z.strictObject({
          start: z
            .string()
            .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/)
            .meta({ description: 'Local start, YYYY-MM-DDTHH:mm; not in the past', example: '2027-07-01T09:00' }),
          end: z
            .string()
            .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/)
            .meta({ description: 'Local end, YYYY-MM-DDTHH:mm; after start', example: '2027-07-05T18:00' }),
        }),
      )
      .min(1)
      .meta({ description: 'Trips that do not overlap, each at most the question’s max_trip_days long' }),
  })
  .meta({
    id: 'TripsAnswer',
    description:
      'Answer to the `trips` question of a per-trip product (its id is `trips` in the shared template): local start and end date-times in time_zone. One certificate per trip.',
  });

/** Answer to a `date_range` question. */
const DateRangeAnswer = z.strictObject({ start_date: z.iso.date(), end_date: z.iso.date() }).meta({
  id: 'DateRangeAnswer',
  description: 'Answer to a `date_range` question: inclusive dates, at most the question’s max_days apart',
});
const NamedInsuredAnswer = z
  .strictObject({ name: z.string().min(1).max(200), address: Address.optional() })
  .meta({ id: 'NamedInsuredAnswer', description: 'Answer to a `named_insured` question: who the certificate names as insured' });
const CertificateHolderAnswer = z
  .strictObject({ name: z.string().min(1).max(200), address: Address })
  .meta({ id: 'CertificateHolderAnswer', description: 'Answer to a `certificate_holder` question: who the certificate is issued to' });

const Answer = z
  .union([z.string(), z.number(), DateRangeAnswer, NamedInsuredAnswer, CertificateHolderAnswer, CoverageDatesAnswer, TripsAnswer])
  .nullable()
  .meta({
    id: 'Answer',
    description:
      'The answer to one question, by the question’s kind: `dropdown` one option value; `number` a number in [min, max] on the step; `text` a string; `date` YYYY-MM-DD; `date_range`, `named_insured`, `certificate_holder`, `coverage_dates` and `trips` the objects below. An optional question may be left out or null.',
  });

/** One selected product line with the buyer's answers to its template, keyed by question id. */
export const SelectedProductLine = z
  .object({
    product_line_template_id: z
      .number()
      .int()
      .meta({ description: 'The product line (`product_line_meta_data.product_line_id` of the catalog)', example: 12 }),
    product_line_is_trip_excess_product: z
      .boolean()
      .meta({ description: 'Must match the catalog’s `product_line_is_trip_excess_product`' }),
    product_line_is_bundle: z.boolean().optional().meta({
      description:
        'True when `product_line_template_id` names a bundle (the catalog’s `product_line_is_bundle`): the answers then cover the bundle’s template, and each of its products becomes an item of the purchase. At most one bundle per purchase, and none of its products selected again on its own.',
    }),
  })
  .catchall(Answer)
  .meta({
    id: 'SelectedProductLine',
    description:
      'A product line to buy with the buyer’s answers: every other key is the `id` of a question of the product’s template (adminGetApprovedClientProducts returns them), its value the answer. Every required question needs an answer; a key that is not a question of the template is a problem. Problems come back all at once as `errors: [{ product_line_template_id, question, reason }]`.',
  });

/** `ValidateRequest` with the answers typed: for the OpenAPI document only (see the module comment). */
export const ValidateRequestDocumented = ValidateRequest.extend({
  selected_product_lines_to_purchase: z.array(SelectedProductLine).min(1).max(20),
}).meta({
  id: 'ValidateBuyerResponsesRequest',
  example: {
    idp_accnt_uuid: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b',
    access_token: 'bat_…',
    selected_product_lines_to_purchase: [
      {
        product_line_template_id: 12,
        product_line_is_trip_excess_product: false,
        event_type: 'wedding',
        attendance: 150,
        named_insured: { name: 'Jordan Lee' },
        certificate_holder: {
          name: 'Grand Hall LLC',
          address: { line1: '1 Main St', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
        },
        coverage: { time_zone: 'America/Chicago', start_date: '2026-12-24', end_date: '2026-12-26' },
      },
    ],
  },
});

export const CoverageDatetime = z.object({
  product_line_id: z.number().int(),
  unit_index: z.number().int(),
  starts_at: z.string(),
  ends_at: z.string(),
  time_zone: z.string(),
  local_label: z.string(),
});

/** One premium tax charged on a purchase item (quote and purchase): which tax, where, at what rate, how much. */
export const TaxLineObject = z
  .object({
    tax: z.string().meta({ description: 'Which tax: surplus_lines_tax, stamping_fee, insurance_premium_tax, …' }),
    method: z.enum(TAX_METHODS).meta({
      description:
        '`premium_rate` (rate_bps of premium), `stamping_fee` (rate_bps of premium, for a stamping office) or `fixed_per_policy`',
    }),
    label: z.string(),
    jurisdiction: z.string().meta({ description: 'Where the rate belongs: a country (DE) or a country and region (US-TX)' }),
    rate_bps: z.number().int().nullable().meta({ description: 'The rate in basis points; null for a fixed amount per policy' }),
    amount: z.number().int().meta({ description: 'Minor units, rounded half up once' }),
    source: z.string().meta({ description: 'Where the rate is published' }),
  })
  .meta({ id: 'TaxLine' });

export const CheckoutResponse = z
  .object({
    id: z.string().meta({ description: 'Checkout session id at the processor' }),
    url: z.string().meta({ description: 'Send the buyer here to pay' }),
    payment_intent: z
      .string()
      .nullable()
      .meta({ description: 'The payment intent, when the processor has created it (it may appear only once the buyer pays)' }),
    subscription_invoice: z.string().nullable().meta({
      description:
        'Subscription products (billed monthly): the subscription invoice when the processor returns one with the session; null otherwise',
    }),
    amount_total: z
      .number()
      .int()
      .meta({ description: "Minor units (the currency's smallest unit); for a subscription, the amount of each monthly period" }),
    currency: z.string(),
    expires_at: z.string().meta({ description: 'ISO 8601: after this the session can no longer be paid' }),
    purchase_id: z.number().int(),
    status: z.literal('awaiting_payment'),
    amount_subtotal: z.number().int(),
    platform_fee: z.object({ bps: z.number().int().nullable(), amount: z.number().int() }),
    amount_tax: z.number().int().meta({
      description:
        'Premium tax of all items, minor units (0: no product of the quote is taxed); part of amount_total, after the platform fee',
    }),
    tax_lines: z.array(TaxLineObject.extend({ product_line_id: z.number().int() })).meta({
      description: 'Each tax charged, per item (the product line) and tax: what the processor’s checkout shows as its own lines',
    }),
    bundle: z
      .object({ id: z.number().int(), name: z.string() })
      .nullable()
      .meta({ description: 'The bundle quoted (its id and customer-facing name); null when only product lines were selected' }),
    line_items: z.array(
      z.object({
        product_line_id: z.number().int(),
        in_bundle: z.boolean().meta({ description: 'Whether the line is one of the bundle’s products' }),
        units: z.number().int(),
        unit_amount: z.number().int(),
        price_factor: z.number(),
        amount: z.number().int(),
      }),
    ),
    product_line_data: z.array(z.object({ product_line_id: z.number().int(), product_line_is_trip_excess_product: z.boolean() })),
    certificate_coverage_datetimes: z.array(CoverageDatetime),
  })
  .meta({ id: 'CheckoutResponse', description: 'The checkout session with the priced purchase behind it; amounts in minor units.' });
export type CheckoutResponse = z.infer<typeof CheckoutResponse>;
