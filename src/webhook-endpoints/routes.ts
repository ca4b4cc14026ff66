/**
 * `/api/v1/webhook_endpoints`: where this service sends an agency's signed events. POST → 201
 * with the signing secret (shown once), GET list/one → 200, PATCH → 200, DELETE → 200
 * `{ id, object, deleted: true }`. Scoped to the key's account and mode: another account's or
 * mode's endpoint is 404 NOT_FOUND.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { listMetadata } from '../http/query';
import { parseBody, parsePathId, parseQuery } from '../http/validation';
import { ErrorEnvelopeSchema, gatewayResponses, listEnvelope, successEnvelope } from '../http/openapi';
import type { WebhookEndpointService } from './service';
import {
  CreateWebhookEndpointBody,
  ListWebhookEndpointsQuery,
  UpdateWebhookEndpointBody,
  WebhookEndpointCreated,
  WebhookEndpointDeleted,
  WebhookEndpointRead,
} from './schemas';

const IdParam = z.object({ id: z.string().meta({ description: 'Webhook endpoint id, integer >= 1', example: '4' }) });
const notFoundResponse = {
  description: 'NOT_FOUND: no such endpoint for this key’s account and mode',
  content: { 'application/json': { schema: ErrorEnvelopeSchema } },
};
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
    router.get('/webhook_endpoints', async (ctx) => {
      const q = parseQuery(ListWebhookEndpointsQuery, ctx.query);
      const page = await service.list(ctx.state.principal!, q);
      ctx.body = ok(page.items, 'Webhook endpoints retrieved', listMetadata(page.total, page.items.length, q.pageSize, q.pageIndex));
    });
    router.get('/webhook_endpoints/:id', async (ctx) => {
      ctx.body = ok(await service.get(ctx.state.principal!, parsePathId(ctx.params.id, 'VALIDATION_ERROR')), 'Webhook endpoint retrieved');
    });
    router.patch('/webhook_endpoints/:id', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      const body = parseBody(UpdateWebhookEndpointBody, ctx.request.body);
      ctx.body = ok(await service.update(ctx.state.principal!, id, body), 'Webhook endpoint updated');
    });
    router.delete('/webhook_endpoints/:id', async (ctx) => {
      ctx.body = ok(await service.delete(ctx.state.principal!, parsePathId(ctx.params.id, 'VALIDATION_ERROR')), 'Webhook endpoint deleted');
    });

    registry.registerPath({
      method: 'post',
      path: '/api/v1/webhook_endpoints',
      operationId: 'createWebhookEndpoint',
      tags: [TAG],
      summary: 'Create a webhook endpoint (its signing secret is in this answer only)',
      description: SIGNING,
      request: { body: { required: true, content: { 'application/json': { schema: CreateWebhookEndpointBody } } } },
      responses: {
        201: {
          description: 'Created',
          content: { 'application/json': { schema: successEnvelope(WebhookEndpointCreated, 'WebhookEndpointCreatedResponse') } },
        },
        ...gatewayResponses,
      },
    });
    registry.registerPath({
      method: 'get',
      path: '/api/v1/webhook_endpoints',
      operationId: 'listWebhookEndpoints',
      tags: [TAG],
      summary: 'List this key’s account’s webhook endpoints of its mode',
      request: { query: ListWebhookEndpointsQuery },
      responses: {
        200: {
          description: 'A page',
          content: { 'application/json': { schema: listEnvelope(WebhookEndpointRead, 'WebhookEndpointListResponse') } },
        },
        ...gatewayResponses,
      },
    });
    registry.registerPath({
      method: 'get',
      path: '/api/v1/webhook_endpoints/{id}',
      operationId: 'getWebhookEndpoint',
      tags: [TAG],
      summary: 'Get one webhook endpoint',
      request: { params: IdParam },
      responses: {
        200: {
          description: 'The endpoint',
          content: { 'application/json': { schema: successEnvelope(WebhookEndpointRead, 'WebhookEndpointResponse') } },
        },
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
      request: { params: IdParam, body: { required: true, content: { 'application/json': { schema: UpdateWebhookEndpointBody } } } },
      responses: {
        200: {
          description: 'Updated',
          content: { 'application/json': { schema: successEnvelope(WebhookEndpointRead, 'WebhookEndpointUpdatedResponse') } },
        },
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
        200: {
          description: 'Deleted',
          content: { 'application/json': { schema: successEnvelope(WebhookEndpointDeleted, 'WebhookEndpointDeletedResponse') } },
        },
        404: notFoundResponse,
        ...gatewayResponses,
      },
    });
  };
}
