/**
 * `/api/v1/purchases`: the key's purchases (list, one in full) and the cancellation quote.
 * GET → 200, the quote → 201 (a stored quote). Path ids that are not positive integers → 400
 * VALIDATION_ERROR; another account's, mode's or teammate's purchase → 404 NOT_FOUND.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { listMetadata } from '../http/query';
import { parseBody, parsePathId, parseQuery } from '../http/validation';
import { ErrorEnvelopeSchema, gatewayResponses, listEnvelope, successEnvelope } from '../http/openapi';
import type { PurchaseService } from './service';
import { CancellationQuote, CancellationQuoteRequest, ListPurchasesQuery, PurchaseDetail, PurchaseSummary } from './schemas';

const IdParam = z.object({ id: z.string().meta({ description: 'Purchase id (`purchase_id` of adminValidateBuyerResponses), integer >= 1', example: '42' }) });
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ErrorEnvelopeSchema } } });
const notFoundResponse = errorResponse('NOT_FOUND: no purchase with that id for this key (another account, mode or teammate reads the same)');

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

    registry.registerPath({
      method: 'get',
      path: '/api/v1/purchases',
      operationId: 'listPurchases',
      tags: ['Purchases'],
      summary: "List this key's purchases, newest first",
      description: "The key's root account's purchases in the key's mode (a teammate's key: that teammate's only). Filters combine; amounts are integer minor units.",
      request: { query: ListPurchasesQuery },
      responses: { 200: { description: 'A page', content: { 'application/json': { schema: listEnvelope(PurchaseSummary, 'PurchaseListResponse') } } }, ...gatewayResponses },
    });
    registry.registerPath({
      method: 'get',
      path: '/api/v1/purchases/{id}',
      operationId: 'getPurchase',
      tags: ['Purchases'],
      summary: 'Get one purchase with its items, covered units and timeline',
      description:
        'Each covered unit (a day or a trip) has its state (`unpaid`, `active`, `cancelled`), whether its coverage has started, and the certificate that proves it. Amounts paid, refunded and outstanding are integer minor units.',
      request: { params: IdParam },
      responses: { 200: { description: 'The purchase', content: { 'application/json': { schema: successEnvelope(PurchaseDetail, 'PurchaseResponse') } } }, 404: notFoundResponse, ...gatewayResponses },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/purchases/{id}/cancellation_quote',
      operationId: 'quoteCancellation',
      tags: ['Purchases'],
      summary: 'Price a cancellation of some covered units (nothing is cancelled)',
      description:
        "What cancelling the named covered units (default: every unit not started at `effective_at`) would give back, by the cancellation terms each item was bought with (see getCancellationTerms): the refund split into premium, tax and platform fee, and per unit the premium, what the insurer keeps and what comes back. A unit whose coverage has started is earned and cannot be cancelled. Never more than was paid less what was already refunded. The quote holds 15 minutes, or until its first unit starts if sooner. Send an Idempotency-Key header to retry safely.",
      request: { params: IdParam, body: { required: false, content: { 'application/json': { schema: CancellationQuoteRequest } } } },
      responses: {
        201: { description: 'The quote', content: { 'application/json': { schema: successEnvelope(CancellationQuote, 'CancellationQuoteResponse') } } },
        ...gatewayResponses,
        400: errorResponse('VALIDATION_ERROR (a bad body, effective_at in the past), UNKNOWN_COVERED_UNIT (not a unit of this purchase), DUPLICATE_COVERED_UNIT, or the gateway’s codes'),
        404: notFoundResponse,
        409: errorResponse('PURCHASE_NOT_CANCELLABLE (not paid), PURCHASE_ALREADY_CANCELLED (refunded in full), COVERED_UNIT_STARTED, COVERED_UNIT_ALREADY_CANCELLED, NOTHING_TO_CANCEL (every unit has started), or an Idempotency-Key reused or in progress'),
      },
    });
  };
}
