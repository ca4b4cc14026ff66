import { AppError } from '../../src/shared/errors';
import { mapProcessorError } from '../../src/payproc/errors';

describe('mapProcessorError', () => {
  test.each([
    ['StripeCardError', 'CARD_ERROR', 400],
    ['StripeInvalidRequestError', 'INVALID_REQUEST', 400],
    ['StripeIdempotencyError', 'INVALID_REQUEST', 400],
    ['StripeAuthenticationError', 'AUTHENTICATION_ERROR', 401],
    ['StripePermissionError', 'AUTHENTICATION_ERROR', 401],
    ['StripeRateLimitError', 'RATE_LIMIT_ERROR', 429],
    ['StripeConnectionError', 'CONNECTION_ERROR', 503],
    ['StripeAPIError', 'API_ERROR', 500],
    ['StripeUnknownFutureError', 'API_ERROR', 500],
  ])('when the processor throws %s, then %s (%i)', (type, code, status) => {
    const mapped = mapProcessorError(Object.assign(new Error('Invalid API Key provided: sk_live_****abcd'), { type }));
    expect(mapped).toBeInstanceOf(AppError);
    expect(mapped).toMatchObject({ code, status });
    if (code === 'AUTHENTICATION_ERROR') expect((mapped as Error).message).not.toContain('sk_live');
  });

  test('when the error is not from the processor, then it passes through unchanged', () => {
    const e = new Error('db down');
    expect(mapProcessorError(e)).toBe(e);
  });
});
