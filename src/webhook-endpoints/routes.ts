/**
 * `/api/v1/webhook_endpoints`: where this service sends an agency's signed events. POST → 201
 * with the signing secret (shown once), GET list/one → 200, PATCH → 200, DELETE → 200
 * `{ id, object, deleted: true }`. Scoped to the key's account and mode: another account's or
 * mode's endpoint is 404 NOT_FOUND.
 */
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody } from '../http/validation';
import { successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import type { WebhookEndpointService } from './service';
import {
  CreateWebhookEndpointBody,
  ListWebhookEndpointsQuery,
  UpdateWebhookEndpointBody,
  WebhookEndpointCreated,
  WebhookEndpointDeleted,
  WebhookEndpointRead,
} from './schemas';

const IdParam = resource.idParam('Webhook endpoint id, integer >= 1', '4');
const notFoundResponse = resource.errorResponse('NOT_FOUND: no such endpoint for this key’s account and mode');
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
    resource.listRoute(router, '/webhook_endpoints', ListWebhookEndpointsQuery, service.list, 'Webhook endpoints retrieved');
    resource.idRoute(router, 'get', '/webhook_endpoints/:id', service.get, 'Webhook endpoint retrieved');
    resource.idRoute(router, 'patch', '/webhook_endpoints/:id', service.update, 'Webhook endpoint updated', UpdateWebhookEndpointBody);
    resource.idRoute(router, 'delete', '/webhook_endpoints/:id', service.delete, 'Webhook endpoint deleted');

    resource.registerBodyPath(registry, {
      method: 'post',
      path: '/api/v1/webhook_endpoints',
      operationId: 'createWebhookEndpoint',
      tags: [TAG],
      summary: 'Create a webhook endpoint (its signing secret is in this answer only)',
      description: SIGNING,
      body: CreateWebhookEndpointBody,
      responses: {
        201: resource.jsonResponse('Created', successEnvelope(WebhookEndpointCreated, 'WebhookEndpointCreatedResponse')),
      },
    });
    resource.registerListPath(registry, {
      path: '/api/v1/webhook_endpoints',
      operationId: 'listWebhookEndpoints',
      tags: [TAG],
      summary: 'List this key’s account’s webhook endpoints of its mode',
      query: ListWebhookEndpointsQuery,
      item: WebhookEndpointRead,
      envelopeId: 'WebhookEndpointListResponse',
    });
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/webhook_endpoints/{id}',
      operationId: 'getWebhookEndpoint',
      tags: [TAG],
      summary: 'Get one webhook endpoint',
      params: IdParam,
      ok: resource.jsonResponse('The endpoint', successEnvelope(WebhookEndpointRead, 'WebhookEndpointResponse')),
      notFound: notFoundResponse,
    });
    resource.registerIdPath(registry, {
      method: 'patch',
      path: '/api/v1/webhook_endpoints/{id}',
      operationId: 'updateWebhookEndpoint',
      tags: [TAG],
      summary: 'Change the sent fields of a webhook endpoint; disable or re-enable it',
      params: IdParam,
      body: UpdateWebhookEndpointBody,
      ok: resource.jsonResponse('Updated', successEnvelope(WebhookEndpointRead, 'WebhookEndpointUpdatedResponse')),
      notFound: notFoundResponse,
    });
    resource.registerIdPath(registry, {
      method: 'delete',
      path: '/api/v1/webhook_endpoints/{id}',
      operationId: 'deleteWebhookEndpoint',
      tags: [TAG],
      summary: 'Delete a webhook endpoint (its delivery history stays visible on the events)',
      params: IdParam,
      ok: resource.jsonResponse('Deleted', successEnvelope(WebhookEndpointDeleted, 'WebhookEndpointDeletedResponse')),
      notFound: notFoundResponse,
    });
  };
}
