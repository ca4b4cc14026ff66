/**
 * `searchTeammatePurchasedProducts` on `/platform-agency-certs` (teammate) and
 * `/platform-agency-root-certs` (root account) (spec §4.5, §7.2): POST, snake_case JSON, 200
 * without envelope; failures are the bare error `{ code, message, details? }`.
 */
import type { RouteRegistration } from '../http/routes';
import { parseBody } from '../http/validation';
import { bareError, bareSurfaceResponses } from '../http/openapi';
import type { PurchaseSearchService } from './service';
import { PurchaseSearchResponse, SearchRootPurchasesRequest, SearchTeammatePurchasesRequest } from './schemas';
import * as resource from '../http/resource-routes';

const PATH = '/searchTeammatePurchasedProducts';

const description =
  'Free-text search over the PAID purchases in scope, in the API key’s mode (a test key sees test purchases only). The search text is ' +
  'one case-insensitive phrase found anywhere inside the buyer’s name ("first last"), the buyer’s email, a product’s name or a ' +
  'certificate number; every character is plain text. Results: newest payment first, except that a purchase holding a certificate ' +
  'whose number equals the search text comes first. Empty search text lists every paid purchase. `total` counts up to 1 000 ' +
  '(`total_exact` false beyond). Pages are zero-based over a window of 10 000 purchases: `(page_index + 1) × page_size` may not ' +
  'exceed 10 000; narrow the search to reach older purchases.';

const validation = bareError(
  'VALIDATION_ERROR: unknown field, search_text over 10 000 characters, page_size outside 1–100, page_index negative or past the 10 000-purchase window',
);

/** Mounts the teammate search (under `/platform-agency-certs`) and registers it in OpenAPI. */
export function purchaseSearchRoutes(service: PurchaseSearchService): RouteRegistration {
  return (router, registry) => {
    router.post(PATH, async (ctx) => {
      ctx.body = await service.searchAsTeammate(ctx.state.principal!, parseBody(SearchTeammatePurchasesRequest, ctx.request.body));
    });
    registry.registerPath({
      method: 'post',
      path: `/platform-agency-certs${PATH}`,
      operationId: 'teammateSearchTeammatePurchasedProducts',
      tags: ['Certificates'],
      summary: 'Search the purchases made through the calling teammate (buyer name, email, product name, certificate number)',
      description,
      request: { body: resource.jsonBody(SearchTeammatePurchasesRequest) },
      responses: {
        ...bareSurfaceResponses,
        200: resource.jsonResponse('One page of matching purchases', PurchaseSearchResponse),
        400: validation,
        404: bareError('TEAMMATE_NOT_FOUND: idp_teammate_uuid is not a teammate of this API key’s account'),
      },
    });
  };
}

/** Mounts the root-account search (under `/platform-agency-root-certs`) and registers it in OpenAPI. */
export function rootPurchaseSearchRoutes(service: PurchaseSearchService): RouteRegistration {
  return (router, registry) => {
    router.post(PATH, async (ctx) => {
      ctx.body = await service.searchAsRoot(ctx.state.principal!, parseBody(SearchRootPurchasesRequest, ctx.request.body));
    });
    registry.registerPath({
      method: 'post',
      path: `/platform-agency-root-certs${PATH}`,
      operationId: 'rootSearchTeammatePurchasedProducts',
      tags: ['Certificates'],
      summary: 'Search the purchases of the whole root account, whichever teammate made them',
      description,
      request: { body: resource.jsonBody(SearchRootPurchasesRequest) },
      responses: {
        ...bareSurfaceResponses,
        200: resource.jsonResponse('One page of matching purchases', PurchaseSearchResponse),
        400: validation,
        404: bareError('SELLER_NOT_FOUND: idp_root_account_uuid is not this API key’s root account'),
      },
    });
  };
}
