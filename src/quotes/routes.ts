/**
 * `/public-quote` routes (spec §4.4 steps 1–2): POST only, snake_case JSON, no envelope;
 * success is 200, failures are the bare error of spec §7.2 (see src/http/error-handler.ts).
 */
import type { RouteRegistration } from '../http/routes';
import { parseBody } from '../http/validation';
import { bareSurfaceResponses, bareError } from '../http/openapi';
import * as resource from '../http/resource-routes';
import type { QuoteService } from './service';
import { CatalogRequest, CatalogResponse, CheckoutResponse, ValidateRequest, ValidateRequestDocumented } from './schemas';

export function quoteRoutes(service: QuoteService): RouteRegistration {
  return (router, registry) => {
    router.post('/adminGetApprovedClientProducts', async (ctx) => {
      ctx.body = await service.catalog(ctx.state.principal!, parseBody(CatalogRequest, ctx.request.body));
    });
    router.post('/adminValidateBuyerResponses', async (ctx) => {
      ctx.body = await service.validateAndPrice(ctx.state.principal!, parseBody(ValidateRequest, ctx.request.body));
    });

    registry.registerPath({
      method: 'post',
      path: '/public-quote/adminGetApprovedClientProducts',
      operationId: 'adminGetApprovedClientProducts',
      tags: ['Quote'],
      summary: 'The products this key may quote, with the question template of each',
      request: { body: resource.jsonBody(CatalogRequest) },
      responses: {
        200: resource.jsonResponse('One page (zero-based)', CatalogResponse),
        404: bareError('SELLER_NOT_FOUND: idp_root_account_uuid is not this key’s account'),
        ...bareSurfaceResponses,
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/public-quote/adminValidateBuyerResponses',
      operationId: 'adminValidateBuyerResponses',
      tags: ['Quote'],
      summary: "Validate the buyer's answers, price them, record the purchase and create its checkout session",
      description:
        'Every problem comes back at once as `errors: [{ product_line_template_id, question, reason }]` with 400 VALIDATION_ERROR. Amounts are minor units.',
      request: { body: resource.jsonBody(ValidateRequestDocumented) },
      responses: {
        200: resource.jsonResponse('The checkout session', CheckoutResponse),
        401: bareError('ACCESS_TOKEN_INVALID or ACCESS_TOKEN_EXPIRED'),
        ...bareSurfaceResponses,
      },
    });
  };
}
