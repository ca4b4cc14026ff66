/**
 * The body fields that name a purchase on the certificate surfaces (getCertificates,
 * getInvoiceData, teamEmailProofofCoverage): its `purchase_id` (integer ≥ 1) and the processor's
 * `checkout_session_id` / `payment_intent` ids (letters, digits, `_`; at most 255). Each surface
 * adds its own description and its own rule on how many may be sent.
 *
 * A payment intent is not always one purchase's: the processor's test mode (stripe-mock) gives
 * every checkout the same one, and a saved card can pay two purchases in one intent. When it
 * matches more than one of the caller's purchases, the lookup answers 409
 * AMBIGUOUS_PAYMENT_INTENT with the candidates (`ambiguousPaymentIntent`), never a silent pick;
 * only the caller's own purchases (its scope) are counted or listed.
 */
import { z } from 'zod';
import { AppError } from '../http/errors';
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

/** At most this many candidates are listed in an AMBIGUOUS_PAYMENT_INTENT answer (the newest). */
export const MAX_PAYMENT_INTENT_CANDIDATES = 10;

/** One of the caller's purchases holding the payment intent, as the 409 lists it. */
export interface PaymentIntentCandidate {
  purchaseId: number;
  checkoutSessionId: string | null;
  status: string;
  createdAt: Date;
}

/**
 * 409 AMBIGUOUS_PAYMENT_INTENT: `paymentIntent` names several of the caller's purchases. The bare
 * error body carries `candidates` (newest first, at most MAX_PAYMENT_INTENT_CANDIDATES):
 * `{ purchase_id, checkout_session_id, status, created_at }`, so the caller retries with the
 * `purchase_id` it means.
 */
export function ambiguousPaymentIntent(paymentIntent: string, candidates: readonly PaymentIntentCandidate[]): AppError {
  return new AppError(
    'AMBIGUOUS_PAYMENT_INTENT',
    `payment_intent ${paymentIntent} belongs to ${candidates.length >= MAX_PAYMENT_INTENT_CANDIDATES ? `${MAX_PAYMENT_INTENT_CANDIDATES} or more` : candidates.length} of your purchases; name one with purchase_id or checkout_session_id`,
    {
      extra: {
        candidates: candidates.slice(0, MAX_PAYMENT_INTENT_CANDIDATES).map((c) => ({
          purchase_id: c.purchaseId,
          checkout_session_id: c.checkoutSessionId,
          status: c.status,
          created_at: c.createdAt.toISOString(),
        })),
      },
    },
  );
}
