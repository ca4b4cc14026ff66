/**
 * countProcessorErrors (src/payproc/error-counting.ts): a real stripe-node client over a fake
 * HTTP client (no network). Calls that fail because the processor is down (connection error,
 * timeout, 5xx) are counted by resource and method; the processor's answers (success, declined
 * card, invalid request, missing object, rate limit) are not; results and errors pass through.
 */
import Stripe from 'stripe';
import { countProcessorErrors, isProcessorFailure } from '../../src/payproc/error-counting';
import type { Payproc } from '../../src/payproc/client';
import { mapProcessorError } from '../../src/payproc/errors';
import { countDependencyError, createApiMetrics } from '../../src/metrics/registry';

type Answer = { status: number; body: unknown } | { fail: 'ECONNREFUSED' | 'ETIMEDOUT' };

class FakeResponse extends Stripe.HttpClientResponse {
  constructor(
    status: number,
    private readonly body: unknown,
  ) {
    super(status, { 'request-id': 'req_fake' });
  }
  override getRawResponse(): unknown {
    return {};
  }
  override toJSON(): Promise<unknown> {
    return Promise.resolve(this.body);
  }
}

/** Answers each request with the next of `answers` and records its path. */
class FakeHttpClient extends Stripe.HttpClient {
  readonly paths: string[] = [];
  constructor(private readonly answers: Answer[]) {
    super();
  }
  override getClientName(): string {
    return 'fake';
  }
  override makeRequest(_host: string, _port: string, path: string): Promise<FakeResponse> {
    this.paths.push(path);
    const answer = this.answers.shift();
    if (!answer) return Promise.reject(new Error(`unexpected request ${path}`));
    if ('fail' in answer) {
      return Promise.reject(
        answer.fail === 'ETIMEDOUT'
          ? Stripe.HttpClient.makeTimeoutError()
          : Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:12111'), { code: 'ECONNREFUSED' }),
      );
    }
    return Promise.resolve(new FakeResponse(answer.status, answer.body));
  }
}

const apiError = (status: number, type: string, extra: object = {}) => ({
  status,
  body: { error: { type, message: `answer ${status}`, ...extra } },
});

function payprocAnswering(answers: Answer[]): { payproc: Payproc; http: FakeHttpClient } {
  const http = new FakeHttpClient(answers);
  const stripe = new Stripe('sk_test_fake', { httpClient: http, maxNetworkRetries: 0, telemetry: false });
  return { payproc: { client: () => stripe }, http };
}

test('when processor calls fail (connection refused, timeout, 5xx), then each counts under its resource and method and the error is rethrown', async () => {
  const counted: string[] = [];
  const { payproc } = payprocAnswering([
    { fail: 'ECONNREFUSED' },
    { fail: 'ETIMEDOUT' },
    apiError(500, 'api_error'),
    apiError(503, 'api_error'),
  ]);
  const stripe = countProcessorErrors(payproc, (op) => counted.push(op)).client('test');

  await expect(stripe.products.create({ name: 'x' })).rejects.toMatchObject({ type: 'StripeConnectionError' });
  await expect(stripe.invoices.retrieve('in_1')).rejects.toMatchObject({
    type: 'StripeConnectionError',
    message: expect.stringContaining('timeout'),
  });
  await expect(stripe.checkout.sessions.retrieve('cs_1')).rejects.toMatchObject({ type: 'StripeAPIError', statusCode: 500 });
  await expect(stripe.prices.update('price_1', { active: false })).rejects.toMatchObject({ statusCode: 503 });
  await new Promise((r) => setImmediate(r));

  expect(counted).toEqual(['products.create', 'invoices.retrieve', 'checkout.sessions.retrieve', 'prices.update']);
});

test('when the processor answers (success, declined card, invalid request, missing object, rate limit), then nothing is counted and the answer passes through', async () => {
  const counted: string[] = [];
  const { payproc, http } = payprocAnswering([
    { status: 200, body: { id: 'prod_1', object: 'product' } },
    apiError(402, 'card_error', { code: 'card_declined' }),
    apiError(400, 'invalid_request_error'),
    apiError(404, 'invalid_request_error', { code: 'resource_missing' }),
    apiError(429, 'rate_limit_error'),
    { status: 200, body: { object: 'list', data: [{ id: 'il_1' }, { id: 'il_2' }], has_more: false, url: '/v1/invoices/in_1/lines' } },
  ]);
  const stripe = countProcessorErrors(payproc, (op) => counted.push(op)).client('live');

  expect(await stripe.products.retrieve('prod_1')).toMatchObject({ id: 'prod_1' });
  await expect(stripe.paymentIntents.create({ amount: 100, currency: 'usd' })).rejects.toMatchObject({ type: 'StripeCardError' });
  await expect(stripe.prices.create({ currency: 'usd' })).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 400 });
  await expect(stripe.invoices.retrieve('in_missing')).rejects.toMatchObject({ type: 'StripeInvalidRequestError', statusCode: 404 });
  await expect(stripe.customers.create({})).rejects.toMatchObject({ type: 'StripeRateLimitError' });
  // A list keeps its auto-pagination methods.
  expect(await stripe.invoices.listLineItems('in_1', { limit: 100 }).autoPagingToArray({ limit: 10 })).toEqual([
    { id: 'il_1' },
    { id: 'il_2' },
  ]);
  await new Promise((r) => setImmediate(r));

  expect(counted).toEqual([]);
  expect(http.paths).toEqual([
    '/v1/products/prod_1',
    '/v1/payment_intents',
    '/v1/prices',
    '/v1/invoices/in_missing',
    '/v1/customers',
    '/v1/invoices/in_1/lines?limit=100',
  ]);
});

test('when the rest of the client is used (webhook signatures, error classes), then it works as the bare client does', () => {
  const { payproc } = payprocAnswering([]);
  const stripe = countProcessorErrors(payproc, () => undefined).client('test');
  const payload = '{"id":"evt_1","object":"event"}';
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_x' });
  expect(stripe.webhooks.constructEvent(payload, header, 'whsec_x')).toMatchObject({ id: 'evt_1' });
  expect(() => stripe.webhooks.constructEvent(payload, 't=1,v1=00', 'whsec_x')).toThrow(stripe.errors.StripeSignatureVerificationError);
  // The same wrapped resource each time, so callers may keep it.
  expect(stripe.products).toBe(stripe.products);
});

test('when an error is classified, then only connection, API and 5xx processor errors are failures', () => {
  expect(isProcessorFailure({ type: 'StripeConnectionError' })).toBe(true);
  expect(isProcessorFailure({ type: 'StripeAPIError', statusCode: 500 })).toBe(true);
  expect(isProcessorFailure({ type: 'StripeInvalidRequestError', statusCode: 502 })).toBe(true);
  for (const type of [
    'StripeCardError',
    'StripeInvalidRequestError',
    'StripeIdempotencyError',
    'StripeAuthenticationError',
    'StripePermissionError',
    'StripeRateLimitError',
    'StripeSignatureVerificationError',
  ]) {
    expect(isProcessorFailure({ type, statusCode: 400 })).toBe(false);
  }
  expect(isProcessorFailure(new Error('Stripe: Argument "id" must be a string'))).toBe(false);
  // Mapped to an AppError by mapProcessorError: the cause decides.
  expect(isProcessorFailure(mapProcessorError({ type: 'StripeConnectionError', message: 'down' }))).toBe(true);
  expect(isProcessorFailure(mapProcessorError({ type: 'StripeCardError', message: 'declined' }))).toBe(false);
  expect(isProcessorFailure(Object.assign(new Error('connection terminated'), { code: '57P01' }))).toBe(false);
  expect(isProcessorFailure(null)).toBe(false);
});

test('when the API’s processor calls fail, then the API registry counts them under processor', async () => {
  const metrics = createApiMetrics();
  const { payproc } = payprocAnswering([apiError(500, 'api_error'), apiError(402, 'card_error')]);
  const stripe = countProcessorErrors(payproc, countDependencyError(metrics, 'processor')).client('test');
  await expect(stripe.invoices.retrieve('in_1')).rejects.toMatchObject({ type: 'StripeAPIError' });
  await expect(stripe.paymentIntents.create({ amount: 100, currency: 'usd' })).rejects.toMatchObject({ type: 'StripeCardError' });
  await new Promise((r) => setImmediate(r));
  const text = await metrics.registry.metrics();
  expect(text).toContain('dependency_errors_total{dependency="processor",mode="test",operation="invoices.retrieve"} 1');
  expect(text).not.toContain('paymentIntents.create');
});
