/**
 * `/platform-seller-invites` routes (spec §4.3): parse the body, call the service, answer 200
 * with the snake_case JSON as is (no envelope, spec §7.2). Errors are AppErrors rendered by the
 * error handler as the bare `{ code, message, details? }`: 400 VALIDATION_ERROR for a bad body,
 * 404 SELLER_NOT_FOUND for a slug other than the key's own. Bodies are never logged: they
 * lead to access tokens.
 */
import type { RouteRegistration } from '../http/routes';
import { parseBody } from '../http/validation';
import { bareError, bareSurfaceResponses } from '../http/openapi';
import type { BuyerService } from './service';
import { CheckIfBuyerExistsBody, CheckIfBuyerExistsResponse, NewConnectBody, NewConnectResponse } from './schemas';
import * as resource from '../http/resource-routes';

const PREFIX = '/platform-seller-invites';
const sellerNotFound = bareError("SELLER_NOT_FOUND: seller_slug is not the calling API key's own root account slug");

/** Mounts the buyer connection routes (under the `/platform-seller-invites` router) and registers them in OpenAPI. */
export function buyerConnectRoutes(service: BuyerService): RouteRegistration {
  return (router, registry) => {
    router.post('/checkIfBuyerExists', async (ctx) => {
      const body = parseBody(CheckIfBuyerExistsBody, ctx.request.body);
      ctx.status = 200;
      ctx.body = await service.checkIfBuyerExists(ctx.state.principal!, body);
    });

    router.post('/newConnect', async (ctx) => {
      const body = parseBody(NewConnectBody, ctx.request.body);
      ctx.status = 200;
      ctx.body = await service.newConnect(ctx.state.principal!, body);
    });

    registry.registerPath({
      method: 'post',
      path: `${PREFIX}/checkIfBuyerExists`,
      operationId: 'checkIfBuyerExists',
      tags: ['Buyer connection'],
      summary: 'Report whether a buyer is connected to this seller; if so, return a fresh access token',
      description:
        "Existence is per seller: a buyer connected only to another seller reads as missing. Call newConnect when buyer_exists is false. The access token lives BUYER_ACCESS_TOKEN_TTL_SECONDS (default 900 s) and is bound to the buyer and this key's root account.",
      request: { body: resource.jsonBody(CheckIfBuyerExistsBody) },
      responses: {
        200: resource.jsonResponse('Existence, and the buyer credentials when it exists', CheckIfBuyerExistsResponse),
        404: sellerNotFound,
        ...bareSurfaceResponses,
      },
    });
    registry.registerPath({
      method: 'post',
      path: `${PREFIX}/newConnect`,
      operationId: 'newConnect',
      tags: ['Buyer connection'],
      summary: 'Create the buyer if needed, connect it to this seller, and return a fresh access token',
      description:
        'Idempotent: calling it again (or concurrently) creates nothing twice. An existing buyer keeps its stored names. query_param, the API key and its agent are recorded by the call that creates the connection.',
      request: { body: resource.jsonBody(NewConnectBody) },
      responses: {
        200: resource.jsonResponse('The buyer, what this call inserted, and its credentials', NewConnectResponse),
        404: sellerNotFound,
        ...bareSurfaceResponses,
      },
    });
  };
}
