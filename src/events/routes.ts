/**
 * `/api/v1/events`: the events recorded for the key's account and mode, newest first (test events
 * left out); one event with its deliveries and their attempts; and resend. 404 NOT_FOUND for
 * another account's event. Also `POST /api/v1/webhook_endpoints/{id}/test` (201): a
 * `webhook_endpoint.test` event to that endpoint alone, answered as the event with its delivery.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { pageQueryFields, queryInt } from '../http/query';
import { parseBody, parsePathId } from '../http/validation';
import { AppError } from '../shared/errors';
import { gatewayResponses, successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import { AGENCY_EVENT_TYPES, DELIVERED_EVENT_TYPES, ENDPOINT_TEST_EVENT_TYPE } from './types';
import { AGENCY_EVENT_SCHEMAS, AgencyWebhookEvent } from './schemas';
import type { EventService } from './service';

const ListEventsQuery = z.strictObject({
  type: z.enum(AGENCY_EVENT_TYPES).optional(),
  purchase_id: queryInt(1, 2_147_483_647).optional().meta({
    description:
      'Only the events of this purchase (integer >= 1), newest first: its life told by its events. A purchase that is not this key’s account’s and mode’s has none here',
  }),
  ...pageQueryFields(20),
});

/**
 * An event as the list and the detail answer it: the same typed envelope an endpoint receives
 * (`AgencyWebhookEvent`, told apart by `type`, each with its own `data.object`), so a typed client
 * reads `data.object` of a listed event as it reads a delivered one.
 */
export const AgencyEventSchema = AgencyWebhookEvent;

const Attempt = z.object({
  attempted_at: z.string(),
  response_status: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
});
const DeliverySchema = z
  .object({
    id: z.number().int(),
    endpoint_id: z.number().int(),
    url: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    resends: z.number().int(),
    created_at: z.string(),
    finished_at: z.string().nullable(),
    attempts: z.array(Attempt),
  })
  .meta({ id: 'EventDelivery' });
const EventWithDeliveries = z
  .discriminatedUnion(
    'type',
    DELIVERED_EVENT_TYPES.map((t) =>
      AGENCY_EVENT_SCHEMAS[t]
        .extend({ deliveries: z.array(DeliverySchema) })
        .meta({ id: `${AGENCY_EVENT_SCHEMAS[t].meta()?.id}WithDeliveries` }),
    ) as unknown as [z.ZodObject, ...z.ZodObject[]],
  )
  .meta({
    id: 'AgencyEventWithDeliveries',
    description: 'The event, typed by `type` as delivered, with its deliveries to the account’s endpoints',
  });
const ResendResult = z
  .object({
    event_id: z.string(),
    deliveries: z.array(
      z.object({ delivery_id: z.number().int(), endpoint_id: z.number().int(), action: z.enum(['resent', 'in_progress']) }),
    ),
  })
  .meta({ id: 'EventResendResult' });
const TestEventSent = AGENCY_EVENT_SCHEMAS[ENDPOINT_TEST_EVENT_TYPE].extend({ deliveries: z.array(DeliverySchema) }).meta({
  id: 'WebhookEndpointTestEventSent',
  description: 'The test event, as the endpoint receives it, with its one delivery (pending until the endpoint answers)',
});
const IdParam = resource.idParam('Event id (`evt_…`)', 'evt_1f3e0c9a7b2d4e6f8a0b1c2d3e4f5a6b');
const notFoundResponse = resource.errorResponse('NOT_FOUND: no such event for this key’s account and mode');

export function eventRoutes(service: EventService): RouteRegistration {
  return (router, registry) => {
    resource.listRoute(router, '/events', ListEventsQuery, service.list, 'Events retrieved');
    router.get('/events/:id', async (ctx) => {
      ctx.body = ok(await service.get(ctx.state.principal!, ctx.params.id ?? ''), 'Event retrieved');
    });
    router.post('/events/:id/resend', async (ctx) => {
      parseBody(z.strictObject({}), ctx.request.body);
      const result = await service.resend(ctx.state.principal!, ctx.params.id ?? '');
      if (result.deliveries.length === 0)
        throw new AppError(
          'INVALID_REQUEST',
          `No webhook endpoint of this account takes ${ctx.params.id}'s type any more: nothing to resend`,
        );
      ctx.body = ok(result, 'Event resent');
    });
    router.post('/webhook_endpoints/:id/test', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      parseBody(z.strictObject({}), ctx.request.body ?? {});
      ctx.status = 201;
      ctx.body = ok(await service.sendTest(ctx.state.principal!, id, 'api'), 'Test event sent to the webhook endpoint');
    });

    resource.registerListPath(registry, {
      path: '/api/v1/events',
      operationId: 'listEvents',
      tags: ['Events'],
      summary: 'List the events recorded for this key’s account and mode, newest first (optionally of one type, or of one purchase)',
      query: ListEventsQuery,
      item: AgencyEventSchema,
      envelopeId: 'AgencyEventListResponse',
    });
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/events/{id}',
      operationId: 'getEvent',
      tags: ['Events'],
      summary: 'Get one event with each delivery and its attempts',
      params: IdParam,
      ok: resource.jsonResponse('The event', successEnvelope(EventWithDeliveries, 'AgencyEventResponse')),
      notFound: notFoundResponse,
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/events/{id}/resend',
      operationId: 'resendEvent',
      tags: ['Events'],
      summary: 'Send an event again to every endpoint that takes its type',
      description:
        'Finished deliveries run again; endpoints added since get their first delivery; a delivery still being retried is left to finish (`in_progress`). 400 INVALID_REQUEST when no endpoint takes the type.',
      request: { params: IdParam, body: resource.jsonBody(z.strictObject({}), false) },
      responses: {
        200: resource.jsonResponse('Resent', successEnvelope(ResendResult, 'EventResendResponse')),
        404: notFoundResponse,
        ...gatewayResponses,
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/webhook_endpoints/{id}/test',
      operationId: 'sendWebhookEndpointTestEvent',
      tags: ['Webhook endpoints'],
      summary: 'Send a test event (webhook_endpoint.test) to one endpoint, and to it alone',
      description:
        'Records a new `webhook_endpoint.test` event whose object names the endpoint and delivers it to that endpoint only, whatever its `enabled_events`, signed and retried like every event; no other endpoint receives it. `GET /api/v1/events/{id}` follows its delivery; the events list leaves test events out. 400 INVALID_REQUEST when the endpoint is disabled.',
      request: {
        params: resource.idParam('Webhook endpoint id, integer >= 1', '4'),
        body: resource.jsonBody(z.strictObject({}), false),
      },
      responses: {
        ...gatewayResponses,
        201: resource.jsonResponse('Sent', successEnvelope(TestEventSent, 'WebhookEndpointTestEventResponse')),
        400: resource.errorResponse('INVALID_REQUEST: the endpoint is disabled; VALIDATION_ERROR: a bad id or a body with fields'),
        404: resource.errorResponse('NOT_FOUND: no such endpoint for this key’s account and mode'),
      },
    });
  };
}
