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
 * only the caller's own purchases (its scope) are counted or listed. `handleOf` turns a body into
 * its `PurchaseHandle`, and `onePurchase` makes the decision (one, 409 or 404) from a scoped
 * lookup's rows, for every operation that takes a handle.
 */
import { z } from 'zod';
import { AppError, notFound } from '../shared/errors';
import { MAX_DB_ID } from '../http/validation';
import type { PurchaseHandle, PurchaseRecord } from '../purchases/purchase-record';

export type { PurchaseHandle } from '../purchases/purchase-record';

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

/** What the 409 lists of each of the caller's purchases holding the payment intent (the purchase as read). */
export type PaymentIntentCandidate = Pick<PurchaseRecord, 'id' | 'checkoutSessionId' | 'status' | 'createdAt'>;

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
          purchase_id: c.id,
          checkout_session_id: c.checkoutSessionId,
          status: c.status,
          created_at: c.createdAt.toISOString(),
        })),
      },
    },
  );
}

/** The handle of a parsed body that passed the exactly-one rule (`purchaseRequest`). */
export function handleOf(b: { purchase_id?: number; checkout_session_id?: string; payment_intent?: string }): PurchaseHandle {
  if (b.purchase_id !== undefined) return { purchaseId: b.purchase_id };
  if (b.checkout_session_id !== undefined) return { checkoutSessionId: b.checkout_session_id };
  return { paymentIntent: b.payment_intent! };
}

/**
 * The purchase a scoped lookup by `handle` found (`found`: the caller's purchases it names,
 * newest first, at most MAX_PAYMENT_INTENT_CANDIDATES). Throws 409 AMBIGUOUS_PAYMENT_INTENT when a
 * payment intent named several, and 404 NOT_FOUND naming the handle when none (`purchaseIdName`
 * is how the message names a purchase id: `purchase_id 42 not found`).
 */
export function onePurchase<T extends PaymentIntentCandidate>(
  handle: PurchaseHandle,
  found: readonly T[],
  purchaseIdName = 'purchase_id',
): T {
  if (found.length > 1 && 'paymentIntent' in handle) throw ambiguousPaymentIntent(handle.paymentIntent, found);
  const purchase = found[0];
  if (purchase) return purchase;
  if ('purchaseId' in handle) throw notFound(purchaseIdName, handle.purchaseId);
  if ('checkoutSessionId' in handle) throw notFound('checkout_session_id', handle.checkoutSessionId);
  throw notFound('payment_intent', handle.paymentIntent);
}
