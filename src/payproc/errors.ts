/**
 * Processor errors mapped once to the spec's codes (spec §7.1):
 * card declined → CARD_ERROR (400); request rejected (incl. idempotency misuse) → INVALID_REQUEST
 * (400); authentication or permission → AUTHENTICATION_ERROR (401); rate limited →
 * RATE_LIMIT_ERROR (429, Retry-After 1 s); unreachable → CONNECTION_ERROR (503); anything else
 * from the processor → API_ERROR (500). Non-processor errors are returned unchanged.
 * Messages never echo credentials: authentication failures get a fixed message.
 */
import { AppError } from '../shared/errors';

interface StripeLikeError {
  type?: string;
  message?: string;
  rawType?: string;
}

export function isProcessorError(err: unknown): boolean {
  const t = (err as StripeLikeError | null)?.type;
  return typeof t === 'string' && t.startsWith('Stripe');
}

export function mapProcessorError(err: unknown): unknown {
  if (!isProcessorError(err)) return err;
  const e = err as StripeLikeError;
  const msg = (fallback: string) => `Payment processor: ${e.message?.slice(0, 300) || fallback}`;
  switch (e.type) {
    case 'StripeCardError':
      return new AppError('CARD_ERROR', msg('the card was declined'), { cause: err });
    case 'StripeInvalidRequestError':
    case 'StripeIdempotencyError':
      return new AppError('INVALID_REQUEST', msg('the request was rejected'), { cause: err });
    case 'StripeAuthenticationError':
    case 'StripePermissionError':
      return new AppError('AUTHENTICATION_ERROR', 'Payment processor: the connected account could not be authenticated', { cause: err });
    case 'StripeRateLimitError':
      return new AppError('RATE_LIMIT_ERROR', 'Payment processor: too many requests', { cause: err, headers: { 'Retry-After': '1' } });
    case 'StripeConnectionError':
      return new AppError('CONNECTION_ERROR', 'Payment processor could not be reached', { cause: err });
    default:
      return new AppError('API_ERROR', 'Payment processor returned an error', { cause: err });
  }
}

/** Runs `fn`, rethrowing processor errors as their AppError. */
export async function withProcessorErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapProcessorError(err);
  }
}
