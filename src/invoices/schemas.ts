/**
 * Wire contracts of getInvoiceData on `/platform-agency-certs` and `/platform-agency-root-certs`
 * (spec §4.5, §2.4, §7.2): snake_case, no envelope, strict bodies (unknown field → 400
 * VALIDATION_ERROR). Every amount is an integer in the currency's minor units (cents for usd), as
 * the processor reports it; instants are ISO 8601 UTC.
 *
 * The purchase is named like getCertificates names it: exactly one of `purchase_id` (what
 * adminValidateBuyerResponses returned), `checkout_session_id` or `payment_intent` (what the
 * agent holds once the buyer paid; several of the caller's purchases holding it → 409
 * AMBIGUOUS_PAYMENT_INTENT). `invoices` is a list so that a subscription purchase, which has one invoice per
 * billing period, fits the same shape; a one-time purchase has at most one.
 */
import { z } from 'zod';
import { rootScopeFields, teammateScopeFields } from '../accounts/scope';
import { purchaseRequest } from '../certificates/schemas';

const minor = (what: string) =>
  z
    .number()
    .int()
    .meta({ description: `${what}, integer minor units of \`currency\` (e.g. cents)` });
const instant = (what: string) => z.string().meta({ description: `${what}, ISO 8601 UTC` });

export const GetInvoiceDataRequest = purchaseRequest(teammateScopeFields, {
  id: 'GetInvoiceDataRequest',
  example: { idp_teammate_uuid: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f', payment_intent: 'pi_3Q2w3E4r5T6y7U8i' },
});
export type GetInvoiceDataRequest = z.infer<typeof GetInvoiceDataRequest>;

export const RootGetInvoiceDataRequest = purchaseRequest(rootScopeFields, {
  id: 'RootGetInvoiceDataRequest',
  example: {
    idp_root_account_uuid: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b',
    purchase_id: 42,
    idp_accnt_uuid: '9d2b6c1e-3f4a-4b5c-8d6e-7f8091a2b3c4',
  },
});
export type RootGetInvoiceDataRequest = z.infer<typeof RootGetInvoiceDataRequest>;

export const InvoiceLine = z
  .object({
    id: z.string().meta({ description: "The processor's invoice line item id (il_…)" }),
    description: z
      .string()
      .nullable()
      .meta({ description: 'What the line is for: the product name, or "Platform fee" for the API key’s platform fee' }),
    quantity: z.number().int().nullable(),
    amount: minor('Line amount (quantity × unit price, before discounts and tax)'),
    currency: z.string().meta({ description: 'ISO 4217, lowercase' }),
    period_start: instant('Start of the period the line covers'),
    period_end: instant('End of the period the line covers'),
    price_id: z.string().nullable().meta({ description: "The processor's price id (price_…), when the line has one" }),
    product_id: z.string().nullable().meta({ description: "The processor's product id (prod_…), when the line has one" }),
  })
  .meta({ id: 'InvoiceLine' });
export type InvoiceLine = z.infer<typeof InvoiceLine>;

export const InvoiceData = z
  .object({
    id: z.string().meta({ description: "The processor's invoice id (in_…)" }),
    number: z.string().nullable().meta({ description: 'The invoice number printed on it; null while a draft' }),
    status: z.string().nullable().meta({ description: "The processor's invoice status: draft, open, paid, uncollectible or void" }),
    currency: z.string().meta({ description: 'ISO 4217, lowercase' }),
    subtotal: minor('Sum of the lines before discounts and tax'),
    tax: minor('Total tax on the invoice (0 when none)'),
    total: minor('Amount the invoice is for, after discounts and tax'),
    amount_paid: minor('Amount paid so far'),
    amount_due: minor('Amount still to be paid'),
    created: instant('When the processor created the invoice'),
    paid_at: z.string().nullable().meta({ description: 'ISO 8601 UTC: when the invoice was paid; null while unpaid' }),
    period_start: instant('Start of the billing period (a one-time purchase: the invoice date)'),
    period_end: instant('End of the billing period (a one-time purchase: the invoice date)'),
    hosted_invoice_url: z.string().nullable().meta({ description: "The processor's hosted page of the invoice; null while a draft" }),
    invoice_pdf: z.string().nullable().meta({ description: "The processor's PDF of the invoice; null while a draft" }),
    lines: z.array(InvoiceLine).meta({ description: 'Every line of the invoice (all pages), in the processor’s order' }),
  })
  .meta({ id: 'InvoiceData' });
export type InvoiceData = z.infer<typeof InvoiceData>;

export const PaymentReceipt = z
  .object({
    charge_id: z.string().meta({ description: "The processor's charge that took the payment (ch_…)" }),
    amount: minor('Amount charged'),
    amount_refunded: minor('Amount refunded of it so far (0 when none)'),
    currency: z.string().meta({ description: 'ISO 4217, lowercase' }),
    paid_at: instant('When the charge was made'),
    receipt_number: z
      .string()
      .nullable()
      .meta({ description: 'The receipt number the processor gave it; null until a receipt was emailed' }),
    receipt_url: z.string().nullable().meta({ description: "The processor's page of the receipt (always current: refunds show on it)" }),
  })
  .meta({ id: 'PaymentReceipt' });
export type PaymentReceipt = z.infer<typeof PaymentReceipt>;

export const INVOICE_DATA_STATUSES = ['invoiced', 'unpaid', 'pending', 'not_invoiced'] as const;
export type InvoiceDataStatus = (typeof INVOICE_DATA_STATUSES)[number];

export const GetInvoiceDataResponse = z
  .object({
    purchase_id: z.number().int(),
    payment_intent: z.string().nullable().meta({ description: 'The payment intent of the purchase; null before the buyer pays' }),
    status: z.enum(INVOICE_DATA_STATUSES).meta({
      description:
        '`invoiced`: `invoices` holds the processor’s invoice(s); `unpaid`: no successful payment yet, `invoices` is empty (the invoice appears once the buyer pays through checkout); `pending`: paid through checkout, but the processor has not attached the invoice yet (`invoices` empty; retry with backoff, it usually appears within seconds); `not_invoiced`: paid without a processor invoice (a saved-card charge through processUserDirectPayprocPayment), `invoices` empty and `receipt` holds the processor’s receipt of the payment',
    }),
    invoices: z.array(InvoiceData).meta({
      description:
        'The processor’s invoices of the purchase, newest first: at most one for a one-time purchase; one per billing period for a subscription',
    }),
    receipt: PaymentReceipt.nullable().meta({
      description:
        'For a purchase paid without a processor invoice (`status` `not_invoiced`: a saved-card charge), the processor’s receipt of the payment, the record to give the buyer; null otherwise (the invoice is the record), and null when the processor holds no paid charge for the payment intent (a test helper’s made-up one)',
    }),
  })
  .meta({
    id: 'GetInvoiceDataResponse',
    example: {
      purchase_id: 42,
      payment_intent: 'pi_3Q2w3E4r5T6y7U8i',
      status: 'invoiced',
      invoices: [
        {
          id: 'in_1Q2w3E4r5T6y7U8i',
          number: 'A1B2C3D4-0001',
          status: 'paid',
          currency: 'usd',
          subtotal: 4200,
          tax: 0,
          total: 4200,
          amount_paid: 4200,
          amount_due: 0,
          created: '2026-11-22T12:00:05.000Z',
          paid_at: '2026-11-22T12:00:06.000Z',
          period_start: '2026-11-22T12:00:05.000Z',
          period_end: '2026-11-22T12:00:05.000Z',
          hosted_invoice_url: 'https://invoice.stripe.com/i/acct_1Q2w3E/test_YWNjdF8x',
          invoice_pdf: 'https://pay.stripe.com/invoice/acct_1Q2w3E/test_YWNjdF8x/pdf',
          lines: [
            {
              id: 'il_1Q2w3E4r5T6y7U8a',
              description: 'Special Event Liability',
              quantity: 1,
              amount: 4000,
              currency: 'usd',
              period_start: '2026-11-22T12:00:05.000Z',
              period_end: '2026-11-22T12:00:05.000Z',
              price_id: 'price_1Q2w3E4r5T6y7U8a',
              product_id: 'prod_Q2w3E4r5T6y7U8',
            },
            {
              id: 'il_1Q2w3E4r5T6y7U8b',
              description: 'Platform fee',
              quantity: 1,
              amount: 200,
              currency: 'usd',
              period_start: '2026-11-22T12:00:05.000Z',
              period_end: '2026-11-22T12:00:05.000Z',
              price_id: 'price_1Q2w3E4r5T6y7U8b',
              product_id: 'prod_Q2w3E4r5T6y7U9',
            },
          ],
        },
      ],
      receipt: null,
    },
  });
export type GetInvoiceDataResponse = z.infer<typeof GetInvoiceDataResponse>;
