/**
 * Wire contracts of `/public-quote` (spec §4.4 steps 1–2): snake_case, no envelope.
 */
import { z } from 'zod';

export const CatalogRequest = z
  .strictObject({
    idp_root_account_uuid: z.string().min(1).max(64),
    connected_ins_products_pagination_response_length_limit: z.number().int().min(1).max(100),
    selected_table_page: z.number().int().min(0).max(1_000_000),
  })
  .meta({
    id: 'CatalogRequest',
    example: { idp_root_account_uuid: '6f1c3a52-3f0e-4a4e-9d86-2b1f7c9e4d10', connected_ins_products_pagination_response_length_limit: 10, selected_table_page: 0 },
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
    product_line_insurer_name: z.string(),
    product_line_question_template: z.object({ question_set_id: z.number().int(), questions: z.array(z.record(z.string(), z.unknown())) }),
  })
  .meta({ id: 'CatalogItem' });

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

export const ValidateRequest = z
  .strictObject({
    idp_accnt_uuid: z.string().min(1).max(64),
    access_token: z.string().min(1).max(256),
    selected_product_lines_to_purchase: z.array(z.record(z.string(), z.unknown())).min(1).max(20),
    save_payment_method: z
      .boolean()
      .optional()
      .meta({ description: "Addition: when true, checkout saves the buyer's card for later off-session charges (processUserDirectPayprocPayment)" }),
  })
  .meta({
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
          certificate_holder: { name: 'Grand Hall LLC', address: { line1: '1 Main St', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' } },
          coverage: { time_zone: 'America/Chicago', start_date: '2026-12-24', end_date: '2026-12-26' },
        },
      ],
    },
  });
export type ValidateRequest = z.infer<typeof ValidateRequest>;

export const CoverageDatetime = z.object({
  product_line_id: z.number().int(),
  unit_index: z.number().int(),
  starts_at: z.string(),
  ends_at: z.string(),
  time_zone: z.string(),
  local_label: z.string(),
});

export const CheckoutResponse = z
  .object({
    id: z.string().meta({ description: 'Checkout session id at the processor' }),
    url: z.string().meta({ description: 'Send the buyer here to pay' }),
    payment_intent: z.string().nullable().meta({ description: 'The payment intent, when the processor has created it (it may appear only once the buyer pays)' }),
    subscription_invoice: z.string().nullable().meta({
      description: 'Subscription products (billed monthly): the subscription invoice when the processor returns one with the session (spec §4.4); null otherwise',
    }),
    amount_total: z.number().int().meta({ description: "Minor units (the currency's smallest unit); for a subscription, the amount of each monthly period" }),
    currency: z.string(),
    expires_at: z.string().meta({ description: 'ISO 8601: after this the session can no longer be paid' }),
    purchase_id: z.number().int(),
    status: z.literal('awaiting_payment'),
    amount_subtotal: z.number().int(),
    platform_fee: z.object({ bps: z.number().int().nullable(), amount: z.number().int() }),
    line_items: z.array(
      z.object({ product_line_id: z.number().int(), units: z.number().int(), unit_amount: z.number().int(), price_factor: z.number(), amount: z.number().int() }),
    ),
    product_line_data: z.array(z.object({ product_line_id: z.number().int(), product_line_is_trip_excess_product: z.boolean() })),
    certificate_coverage_datetimes: z.array(CoverageDatetime),
  })
  .meta({ id: 'CheckoutResponse', description: 'The checkout session (spec §4.4 step 2) with the priced purchase behind it; amounts in minor units.' });
export type CheckoutResponse = z.infer<typeof CheckoutResponse>;
