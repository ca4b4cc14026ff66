/**
 * The body fields that name a purchase on the certificate surfaces (getCertificates,
 * getInvoiceData): its `purchase_id` (integer ≥ 1) and the processor's `checkout_session_id` /
 * `payment_intent` ids (letters, digits, `_`; at most 255). Each surface adds its own
 * description and its own rule on how many may be sent.
 */
import { z } from 'zod';
import { MAX_DB_ID } from '../http/validation';

const processorId = (kind: string) =>
  z
    .string()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9_]+$/, `must be a processor ${kind}`);

export const purchaseIdField = (description: string) => z.number().int().min(1).max(MAX_DB_ID).optional().meta({ description });
export const checkoutSessionIdField = (description: string) => processorId('checkout session id (cs_…)').optional().meta({ description });
export const paymentIntentField = (description: string) => processorId('payment intent id (pi_…)').optional().meta({ description });
