/**
 * `/api/v1/purchases`: the key's purchases (list, one in full), the cancellation quote, the
 * cancellation and its rescission. GET → 200, the quote → 201 (a stored quote), cancel → 200 (the
 * accepted or scheduled cancellation), rescind → 200 (the rescinded cancellation). Path ids that are not positive integers → 400
 * VALIDATION_ERROR; another account's, mode's or teammate's purchase → 404 NOT_FOUND.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { listMetadata } from '../http/query';
import { parseBody, parsePathId, parseQuery } from '../http/validation';
import { ErrorEnvelopeSchema, gatewayResponses, listEnvelope, successEnvelope } from '../http/openapi';
import type { PurchaseService } from './service';
import {
  Cancellation,
  CancellationQuote,
  CancellationQuoteRequest,
  CancelRequest,
  ListPurchasesQuery,
  PurchaseDetail,
  PurchaseSummary,
} from './schemas';

const RescindRequest = z.strictObject({}).meta({ id: 'RescindCancellationRequest' });
const CancellationIdParams = z.object({
  id: z.string().meta({ description: 'Purchase id, integer >= 1', example: '42' }),
  cancellationId: z.string().meta({ description: 'Cancellation id (`id` of the cancellation), integer >= 1', example: '7' }),
});
const IdParam = z.object({
  id: z.string().meta({ description: 'Purchase id (`purchase_id` of adminValidateBuyerResponses), integer >= 1', example: '42' }),
});
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ErrorEnvelopeSchema } } });
const notFoundResponse = errorResponse(
  'NOT_FOUND: no purchase with that id for this key (another account, mode or teammate reads the same)',
);

export function purchaseRoutes(service: PurchaseService): RouteRegistration {
  return (router, registry) => {
    router.get('/purchases', async (ctx) => {
      const q = parseQuery(ListPurchasesQuery, ctx.query);
      const page = await service.list(ctx.state.principal!, q);
      ctx.body = ok(page.items, 'Purchases retrieved', listMetadata(page.total, page.items.length, q.pageSize, q.pageIndex));
    });

    router.get('/purchases/:id', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      ctx.body = ok(await service.get(ctx.state.principal!, id), 'Purchase retrieved');
    });

    router.post('/purchases/:id/cancellation_quote', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      const body = parseBody(CancellationQuoteRequest, ctx.request.body ?? {});
      ctx.status = 201;
      ctx.body = ok(await service.quoteCancellation(ctx.state.principal!, id, body), 'Cancellation quoted');
    });

    router.post('/purchases/:id/cancel', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      const body = parseBody(CancelRequest, ctx.request.body ?? {});
      ctx.body = ok(await service.cancel(ctx.state.principal!, id, body), 'Cancellation accepted');
    });

    router.post('/purchases/:id/cancellations/:cancellationId/rescind', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      const cancellationId = parsePathId(ctx.params.cancellationId, 'VALIDATION_ERROR');
      parseBody(RescindRequest, ctx.request.body ?? {});
      ctx.body = ok(await service.rescind(ctx.state.principal!, id, cancellationId), 'Cancellation rescinded');
    });

    registry.registerPath({
      method: 'get',
      path: '/api/v1/purchases',
      operationId: 'listPurchases',
      tags: ['Purchases'],
      summary: "List this key's purchases, newest first",
      description:
        "The key's root account's purchases in the key's mode (a teammate's key: that teammate's only). Filters combine; amounts are integer minor units.",
      request: { query: ListPurchasesQuery },
      responses: {
        200: { description: 'A page', content: { 'application/json': { schema: listEnvelope(PurchaseSummary, 'PurchaseListResponse') } } },
        ...gatewayResponses,
      },
    });
    registry.registerPath({
      method: 'get',
      path: '/api/v1/purchases/{id}',
      operationId: 'getPurchase',
      tags: ['Purchases'],
      summary: 'Get one purchase with its items, covered units and timeline',
      description:
        'Each covered unit (a day or a trip) has its state (`unpaid`, `active`, `cancellation_scheduled`, `cancellation_pending`, `cancelled`), whether its coverage has started, and the certificate that proves it. Amounts paid, refunded and outstanding are integer minor units.',
      request: { params: IdParam },
      responses: {
        200: {
          description: 'The purchase',
          content: { 'application/json': { schema: successEnvelope(PurchaseDetail, 'PurchaseResponse') } },
        },
        404: notFoundResponse,
        ...gatewayResponses,
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/purchases/{id}/cancellation_quote',
      operationId: 'quoteCancellation',
      tags: ['Purchases'],
      summary: 'Price a cancellation of some covered units (nothing is cancelled)',
      description:
        'What cancelling the named covered units (default: every unit not started at `effective_at`) would give back, by the cancellation terms each item was bought with (see getCancellationTerms): the refund split into premium, tax and platform fee, and per unit the premium, what the insurer keeps and what comes back. A unit whose coverage has started is earned and cannot be cancelled. Never more than was paid less what was already refunded. The quote holds 15 minutes, or until its first unit starts if sooner. Send an Idempotency-Key header to retry safely.',
      request: { params: IdParam, body: { required: false, content: { 'application/json': { schema: CancellationQuoteRequest } } } },
      responses: {
        201: {
          description: 'The quote',
          content: { 'application/json': { schema: successEnvelope(CancellationQuote, 'CancellationQuoteResponse') } },
        },
        ...gatewayResponses,
        400: errorResponse(
          'VALIDATION_ERROR (a bad body, effective_at in the past), UNKNOWN_COVERED_UNIT (not a unit of this purchase), DUPLICATE_COVERED_UNIT, or the gateway’s codes',
        ),
        404: notFoundResponse,
        409: errorResponse(
          'PURCHASE_NOT_CANCELLABLE (not paid), PURCHASE_ALREADY_CANCELLED (refunded in full), COVERED_UNIT_STARTED, COVERED_UNIT_ALREADY_CANCELLED, NOTHING_TO_CANCEL (every unit has started), or an Idempotency-Key reused or in progress',
        ),
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/purchases/{id}/cancel',
      operationId: 'cancelPurchase',
      tags: ['Purchases'],
      summary: 'Cancel covered units: carry out a quote, or price and cancel at once',
      description:
        'With `quote_id`: carries out that quote at its price (a quote whose effective_at is later than now is accepted `scheduled`: carried out at that time, rescindable until then), or answers 409 CANCELLATION_QUOTE_EXPIRED / CANCELLATION_QUOTE_STALE when it no longer holds (its 15 minutes passed, a unit started, or another change took a unit) so nothing happens by surprise. Without it: prices `covered_unit_ids` (default: every unit not started) as cancellation_quote does and carries that out. ' +
        'Changes to one purchase are applied one at a time. The answer is the accepted cancellation (`accepted` or `refund_pending`); then the refund is created at the payment processor, and once it succeeded the units are `cancelled`, their certificates voided (the verification page says so) and `purchase.cancelled` is sent to the webhook endpoints. Follow it on GET /api/v1/purchases/{id}. ' +
        'The same quote again answers the same cancellation (one refund, ever). While the purchase’s certificates are still being issued the cancellation waits for them; past 30 s the answer is 503 CONNECTION_ERROR: call again. Send an Idempotency-Key header to retry safely.',
      request: { params: IdParam, body: { required: false, content: { 'application/json': { schema: CancelRequest } } } },
      responses: {
        200: {
          description: 'The accepted cancellation',
          content: { 'application/json': { schema: successEnvelope(Cancellation, 'CancellationResponse') } },
        },
        ...gatewayResponses,
        400: errorResponse(
          'VALIDATION_ERROR (a bad body, quote_id with units), UNKNOWN_COVERED_UNIT, DUPLICATE_COVERED_UNIT, or the gateway’s codes',
        ),
        404: errorResponse('NOT_FOUND (no such purchase for this key) or CANCELLATION_QUOTE_NOT_FOUND (no such quote of this purchase)'),
        409: errorResponse(
          'CANCELLATION_QUOTE_EXPIRED, CANCELLATION_QUOTE_STALE, PURCHASE_NOT_CANCELLABLE, PURCHASE_ALREADY_CANCELLED, COVERED_UNIT_STARTED, COVERED_UNIT_ALREADY_CANCELLED, NOTHING_TO_CANCEL, or an Idempotency-Key reused or in progress',
        ),
        503: errorResponse(
          'CONNECTION_ERROR: not answered within 30 s (certificates still being issued, or Temporal unreachable); call again, nothing is cancelled twice',
        ),
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/purchases/{id}/cancellations/{cancellationId}/rescind',
      operationId: 'rescindCancellation',
      tags: ['Purchases'],
      summary: 'Rescind a cancellation dated in the future, before it takes effect',
      description:
        'A cancellation carried out with a quote whose effective_at is later than now is `scheduled`: its units stay covered and held until then. Rescinding it before that time gives the units back (`active`) and refunds nothing; the cancellation ends `rescinded`. Rescinding it again answers the same. Once its time came it cannot be rescinded (409). Send an Idempotency-Key header to retry safely.',
      request: { params: CancellationIdParams, body: { required: false, content: { 'application/json': { schema: RescindRequest } } } },
      responses: {
        200: {
          description: 'The rescinded cancellation',
          content: { 'application/json': { schema: successEnvelope(Cancellation, 'RescindCancellationResponse') } },
        },
        ...gatewayResponses,
        400: errorResponse('VALIDATION_ERROR (an id that is not an integer >= 1, a body with fields), or the gateway’s codes'),
        404: errorResponse('NOT_FOUND (no such purchase for this key) or CANCELLATION_NOT_FOUND (no such cancellation of this purchase)'),
        409: errorResponse(
          'CANCELLATION_NOT_RESCINDABLE: its effective time came (or it was never scheduled), or an Idempotency-Key reused or in progress',
        ),
        503: errorResponse('CONNECTION_ERROR: not answered within 30 s; call again, rescinding twice changes nothing'),
      },
    });
  };
}
