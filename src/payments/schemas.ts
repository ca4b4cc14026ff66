/**
 * Wire contracts of the payment options on `/public-quote` (spec §4.4 step 3 (b) and (c)):
 * snake_case, no envelope, strict (unknown fields → 400 VALIDATION_ERROR). Amounts are never
 * sent by the agent: the purchase's priced total (minor units) is what gets charged.
 */
import { z } from 'zod';
import { MAX_DB_ID } from '../http/validation';

const buyerFields = {
  idp_accnt_uuid: z.string().min(1).max(64),
  access_token: z.string().min(1).max(256),
  purchase_id: z.number().int().min(1).max(MAX_DB_ID).meta({ description: 'The purchase_id returned by adminValidateBuyerResponses' }),
};

export const EmailCheckoutLinkRequest = z.strictObject(buyerFields).meta({
  id: 'EmailCheckoutLinkRequest',
  example: { idp_accnt_uuid: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b', access_token: 'bat_…', purchase_id: 42 },
});
export type EmailCheckoutLinkRequest = z.infer<typeof EmailCheckoutLinkRequest>;

export const EmailCheckoutLinkResponse = z
  .object({
    purchase_id: z.number().int(),
    emailed_to: z.string().meta({ description: "The buyer's email address the link was sent to" }),
    checkout_session_id: z.string().meta({ description: 'The same checkout session adminValidateBuyerResponses returned' }),
    expires_at: z.string().meta({ description: 'ISO 8601: after this the link can no longer be paid' }),
    emailed_at: z.string().meta({ description: 'ISO 8601: when the email was sent (by this call, or by the earlier one it repeats)' }),
    deduplicated: z.boolean().meta({
      description:
        'True when the same link went to the same buyer within the service’s window (10 minutes unless configured otherwise): no second email was sent, and `emailed_at` is the earlier send',
    }),
  })
  .meta({
    id: 'EmailCheckoutLinkResponse',
    example: {
      purchase_id: 42,
      emailed_to: 'jordan@example.com',
      checkout_session_id: 'cs_test_a1b2c3',
      expires_at: '2026-12-01T18:00:00.000Z',
      emailed_at: '2026-11-30T18:00:00.000Z',
      deduplicated: false,
    },
  });
export type EmailCheckoutLinkResponse = z.infer<typeof EmailCheckoutLinkResponse>;

export const DirectPaymentRequest = z
  .strictObject({
    ...buyerFields,
    payment_method_id: z
      .string()
      .max(255)
      .regex(/^(pm|card|src)_[A-Za-z0-9_]+$/, 'must be a processor payment method id (pm_…)')
      .meta({ description: "A payment method saved on the buyer's processor customer" }),
  })
  .meta({
    id: 'DirectPaymentRequest',
    example: {
      idp_accnt_uuid: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b',
      access_token: 'bat_…',
      purchase_id: 42,
      payment_method_id: 'pm_1Q2w3E4r5T6y7U8i',
    },
  });
export type DirectPaymentRequest = z.infer<typeof DirectPaymentRequest>;

export const DirectPaymentResponse = z
  .object({
    purchase_id: z.number().int(),
    payment_intent: z.string().meta({ description: 'The payment intent at the processor (the same one on every repeat of a charge)' }),
    status: z.enum(['succeeded', 'processing']).meta({
      description: '`succeeded`: paid, certificates follow; `processing`: the processor confirms later and certificates follow its webhook',
    }),
  })
  .meta({ id: 'DirectPaymentResponse', example: { purchase_id: 42, payment_intent: 'pi_3Q2w3E4r5T6y7U8i', status: 'succeeded' } });
export type DirectPaymentResponse = z.infer<typeof DirectPaymentResponse>;
