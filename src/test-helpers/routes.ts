/**
 * `/api/v1/test_helpers/purchases/{id}/pay` and `/expire`: drive a test purchase's checkout
 * without a browser or the platform's webhook secret (see `service.ts`). Test-mode keys only: a
 * live key gets 404 ROUTE_NOT_FOUND. 200 with the event delivered; the workflow then moves the
 * purchase on (poll getCertificates or the purchase's status).
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody, parsePathId } from '../http/validation';
import { ErrorEnvelopeSchema, gatewayResponses, successEnvelope } from '../http/openapi';
import type { TestHelperService } from './service';

const PayBody = z
  .strictObject({
    outcome: z.enum(['paid', 'failed']).default('paid').meta({
      description: '`paid` (default): the checkout completed and was paid. `failed`: the buyer’s payment failed after checkout; the purchase ends `failed`.',
    }),
  })
  .meta({ id: 'TestHelperPayRequest' });
const ExpireBody = z.strictObject({}).meta({ id: 'TestHelperExpireRequest' });

const TestHelperResult = z
  .object({
    purchase_id: z.number().int(),
    event: z.object({ id: z.string().meta({ example: 'evt_testhelper_3f9c…' }), type: z.string().meta({ example: 'checkout.session.completed' }) }),
    relayed: z.boolean().meta({ description: 'The event reached the purchase’s workflow (or started its recovery)' }),
    purchase_status: z.string().meta({ description: 'The purchase’s status after the event: `paid`, `awaiting_certificates` or `issued` after a payment, `failed`, `expired` (or, if its workflow took longer than 5 s to apply it, the status before)', example: 'awaiting_certificates' }),
    payment_intent: z.string().nullable().meta({ description: 'The payment intent the event reported: a new one for each paid test purchase (use it, or better purchase_id, with getCertificates); null for an expiry', example: 'pi_testhelper_5b0e…' }),
  })
  .meta({ id: 'TestHelperResult' });

const IdParam = z.object({ id: z.string().meta({ description: 'Purchase id (`purchase_id` of the checkout), integer >= 1', example: '42' }) });
const errors = {
  400: { description: 'VALIDATION_ERROR (body or id), INVALID_REQUEST (no checkout session yet, or no longer awaiting payment)', content: { 'application/json': { schema: ErrorEnvelopeSchema } } },
  404: { description: 'ROUTE_NOT_FOUND for a live key; NOT_FOUND for a purchase that is not this account’s test purchase', content: { 'application/json': { schema: ErrorEnvelopeSchema } } },
};

export function testHelperRoutes(service: TestHelperService): RouteRegistration {
  return (router, registry) => {
    router.post('/test_helpers/purchases/:id/pay', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      const body = parseBody(PayBody, ctx.request.body);
      const result = await service.pay(ctx.state.principal!, id, body.outcome);
      ctx.body = ok(result, body.outcome === 'paid' ? 'Test payment delivered' : 'Test payment failure delivered');
    });
    router.post('/test_helpers/purchases/:id/expire', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      parseBody(ExpireBody, ctx.request.body);
      ctx.body = ok(await service.expire(ctx.state.principal!, id), 'Test checkout expiry delivered');
    });

    registry.registerPath({
      method: 'post',
      path: '/api/v1/test_helpers/purchases/{id}/pay',
      operationId: 'payTestPurchase',
      tags: ['Test helpers'],
      summary: 'Pay (or fail) a test purchase’s checkout, as the processor’s signed event would',
      description:
        'Test-mode keys only. Sends the purchase the same signed event the processor sends when a checkout is paid (`checkout.session.completed`) or its payment fails afterwards (`checkout.session.async_payment_failed`), through the same webhook handling; certificates follow as after a real payment. No money moves: the payment intent id is made up (`pi_testhelper_…`) unless the purchase has one, and a subscription paid this way has no processor subscription, so no renewals follow.',
      request: { params: IdParam, body: { required: false, content: { 'application/json': { schema: PayBody } } } },
      responses: { 200: { description: 'Delivered', content: { 'application/json': { schema: successEnvelope(TestHelperResult, 'TestHelperPayResponse') } } }, ...gatewayResponses, ...errors },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/test_helpers/purchases/{id}/expire',
      operationId: 'expireTestPurchase',
      tags: ['Test helpers'],
      summary: 'End a test purchase’s checkout unpaid, as the processor’s expiry event would',
      description:
        'Test-mode keys only. Sends the purchase a signed `checkout.session.expired` event through the webhook handling; the purchase ends `expired`. The processor’s own test session is not touched: a payment that still reaches it is honoured, as for any purchase.',
      request: { params: IdParam, body: { required: false, content: { 'application/json': { schema: ExpireBody } } } },
      responses: { 200: { description: 'Delivered', content: { 'application/json': { schema: successEnvelope(TestHelperResult, 'TestHelperExpireResponse') } } }, ...gatewayResponses, ...errors },
    });
  };
}
