/**
 * `/api/v1/webhook_endpoints`: where this service sends an agency's signed events. POST → 201
 * with the signing secret (shown once), GET list/one → 200, PATCH → 200, DELETE → 200
 * `{ id, object, deleted: true }`. Scoped to the key's account and mode: another account's or
 * mode's endpoint is 404 NOT_FOUND.
 */
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody } from '../http/validation';
import { gatewayResponses, successEnvelope } from '../http/openapi';
import { errorResponse, idParam, idRoute, jsonBody, jsonResponse, listRoute, registerListPath } from '../http/resource-routes';
import type { WebhookEndpointService } from './service';
import {
  CreateWebhookEndpointBody,
  ListWebhookEndpointsQuery,
  UpdateWebhookEndpointBody,
  WebhookEndpointCreated,
  WebhookEndpointDeleted,
  WebhookEndpointRead,
} from './schemas';

const IdParam = idParam('Webhook endpoint id, integer >= 1', '4');
const notFoundResponse = errorResponse('NOT_FOUND: no such endpoint for this key’s account and mode');
const TAG = 'Webhook endpoints';
const SIGNING =
  'Each event is POSTed as JSON with a `Signature: t=<unix seconds>,v1=<hex>` header: v1 is the HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint’s secret (Stripe’s scheme, so `stripe.webhooks.constructEvent(body, header, secret)` verifies it). Answer 2xx within 10 s; otherwise the delivery is retried with exponential backoff for 3 days, then the endpoint is marked `failing`. Live-mode endpoints must be https on public addresses; test-mode endpoints may use http and loopback (local development).';

export function webhookEndpointRoutes(service: WebhookEndpointService): RouteRegistration {
  return (router, registry) => {
    router.post('/webhook_endpoints', async (ctx) => {
      const body = parseBody(CreateWebhookEndpointBody, ctx.request.body);
      ctx.status = 201;
      ctx.body = ok(
        await service.create(ctx.state.principal!, body),
        'Webhook endpoint created; store its secret now, it is not shown again',
      );
    });
    listRoute(router, '/webhook_endpoints', ListWebhookEndpointsQuery, service.list, 'Webhook endpoints retrieved');
    idRoute(router, 'get', '/webhook_endpoints/:id', service.get, 'Webhook endpoint retrieved');
    idRoute(
      router,
      'patch',
      '/webhook_endpoints/:id',
      (principal, id, ctx) => service.update(principal, id, parseBody(UpdateWebhookEndpointBody, ctx.request.body)),
      'Webhook endpoint updated',
    );
    idRoute(router, 'delete', '/webhook_endpoints/:id', service.delete, 'Webhook endpoint deleted');

    registry.registerPath({
      method: 'post',
      path: '/api/v1/webhook_endpoints',
      operationId: 'createWebhookEndpoint',
      tags: [TAG],
      summary: 'Create a webhook endpoint (its signing secret is in this answer only)',
      description: SIGNING,
      request: { body: jsonBody(CreateWebhookEndpointBody) },
      responses: {
        201: jsonResponse('Created', successEnvelope(WebhookEndpointCreated, 'WebhookEndpointCreatedResponse')),
        ...gatewayResponses,
      },
    });
    registerListPath(registry, {
      path: '/api/v1/webhook_endpoints',
      operationId: 'listWebhookEndpoints',
      tags: [TAG],
      summary: 'List this key’s account’s webhook endpoints of its mode',
      query: ListWebhookEndpointsQuery,
      item: WebhookEndpointRead,
      envelopeId: 'WebhookEndpointListResponse',
    });
    registry.registerPath({
      method: 'get',
      path: '/api/v1/webhook_endpoints/{id}',
      operationId: 'getWebhookEndpoint',
      tags: [TAG],
      summary: 'Get one webhook endpoint',
      request: { params: IdParam },
      responses: {
        200: jsonResponse('The endpoint', successEnvelope(WebhookEndpointRead, 'WebhookEndpointResponse')),
        404: notFoundResponse,
        ...gatewayResponses,
      },
    });
    registry.registerPath({
      method: 'patch',
      path: '/api/v1/webhook_endpoints/{id}',
      operationId: 'updateWebhookEndpoint',
      tags: [TAG],
      summary: 'Change the sent fields of a webhook endpoint; disable or re-enable it',
      request: { params: IdParam, body: jsonBody(UpdateWebhookEndpointBody) },
      responses: {
        200: jsonResponse('Updated', successEnvelope(WebhookEndpointRead, 'WebhookEndpointUpdatedResponse')),
        404: notFoundResponse,
        ...gatewayResponses,
      },
    });
    registry.registerPath({
      method: 'delete',
      path: '/api/v1/webhook_endpoints/{id}',
      operationId: 'deleteWebhookEndpoint',
      tags: [TAG],
      summary: 'Delete a webhook endpoint (its delivery history stays visible on the events)',
      request: { params: IdParam },
      responses: {
        200: jsonResponse('Deleted', successEnvelope(WebhookEndpointDeleted, 'WebhookEndpointDeletedResponse')),
        404: notFoundResponse,
        ...gatewayResponses,
      },
    });
  };
}
