/**
 * `/api/v1/bulk_cancellations`: start a batch (202, its first progress) and follow it (200).
 * Path ids that are not positive integers → 400 VALIDATION_ERROR; another key's batch → 404.
 */
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody } from '../http/validation';
import { gatewayResponses, successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import type { BulkCancellationService } from './service';
import { BulkCancellation, CreateBulkCancellationRequest } from './schemas';

const IdParam = resource.idParam('Bulk cancellation id, integer >= 1', '3');

export function bulkCancellationRoutes(service: BulkCancellationService): RouteRegistration {
  return (router, registry) => {
    router.post('/bulk_cancellations', async (ctx) => {
      const body = parseBody(CreateBulkCancellationRequest, ctx.request.body ?? {});
      ctx.status = 202;
      ctx.body = ok(await service.create(ctx.state.principal!, body), 'Bulk cancellation started');
    });
    resource.idRoute(router, 'get', '/bulk_cancellations/:id', service.get, 'Bulk cancellation retrieved');

    registry.registerPath({
      method: 'post',
      path: '/api/v1/bulk_cancellations',
      operationId: 'createBulkCancellation',
      tags: ['Purchases'],
      summary: 'Cancel many purchases at once (an event called off)',
      description:
        'Select the purchases by `purchase_ids` (every covered unit not started yet is cancelled), or by `product_id` and `coverage_date` (every purchase in force of that product with a covered unit on that local date). With `scope: "product_units"` (the default) that product’s units on that date are cancelled; with `scope: "purchase_date"` every unit of those purchases on that date, whatever its product (an event called off: a bundle’s equipment day goes with its liability day). `counts.units` says how many units, of the product and of other products, and `counts.purchases_with_other_products` how many purchases lost other products’ units too. At most 1000 purchases. The batch runs durably in the background: each purchase is cancelled exactly once, like a single cancel (its refund at the processor, then its certificates voided, `purchase.cancelled` to your endpoints), and refunds go to the processor at a capped rate. Follow it with getBulkCancellation. Send an Idempotency-Key header to retry safely.',
      request: { body: resource.jsonBody(CreateBulkCancellationRequest) },
      responses: {
        202: resource.jsonResponse('Started', successEnvelope(BulkCancellation, 'BulkCancellationCreatedResponse')),
        ...gatewayResponses,
        400: resource.errorResponse(
          'VALIDATION_ERROR (a bad body; both or neither selection; a scope with purchase_ids; more than 1000 purchases), or the gateway’s codes',
        ),
        409: resource.errorResponse(
          'NOTHING_TO_CANCEL (the product and date select no purchase in force), or an Idempotency-Key reused or in progress',
        ),
      },
    });
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/bulk_cancellations/{id}',
      operationId: 'getBulkCancellation',
      tags: ['Purchases'],
      summary: 'Follow a bulk cancellation: counts and each purchase’s outcome',
      params: IdParam,
      ok: resource.jsonResponse('The batch', successEnvelope(BulkCancellation, 'BulkCancellationResponse')),
      notFound: resource.errorResponse('NOT_FOUND: no bulk cancellation with that id for this key'),
    });
  };
}
