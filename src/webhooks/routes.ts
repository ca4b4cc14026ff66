/**
 * `POST /webhooks/payproc`: the processor's notifications (no API key; authenticity is the
 * signature over the raw body, header `stripe-signature`). 200 `{ received, duplicate,
 * purchase_id, relayed }`; 400 WEBHOOK_SIGNATURE_INVALID for an unsigned, forged or stale event.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { bareError } from '../http/openapi';
import type { VerifiedEvent, WebhookResult, WebhookService } from './service';
import * as resource from '../http/resource-routes';

/** What the processor sends: one event (documentation only; the handler verifies the raw body's signature, then checks the fields it reads). */
const PayprocEvent = z
  .looseObject({
    id: z.string().min(1).max(255).meta({
      description: 'The event id; a delivery of an id already stored is acknowledged as a duplicate',
      example: 'evt_1QxYz2AbCdEfGh',
    }),
    type: z.string().min(1).max(255).meta({
      description:
        'The event type, e.g. checkout.session.completed, checkout.session.expired, payment_intent.succeeded, charge.refunded, invoice.paid; other types are stored and acknowledged',
      example: 'checkout.session.completed',
    }),
    livemode: z.boolean().meta({ description: 'False for a test-mode event' }),
    created: z.number().int().optional().meta({ description: 'When the event happened, Unix time in seconds', example: 1795000000 }),
    data: z.looseObject({
      object: z
        .record(z.string(), z.unknown())
        .meta({ description: 'The object the event is about (a checkout session, payment intent, charge or invoice)' }),
    }),
  })
  .meta({
    id: 'PayprocEvent',
    description: 'A payment processor event, as signed in the `stripe-signature` header. Further fields are allowed and ignored.',
  });

const WebhookReceipt = z
  .object({
    received: z.literal(true),
    duplicate: z.boolean().meta({ description: 'True when this event id was stored by an earlier delivery' }),
    purchase_id: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'The purchase the event names, or null when it names none of this service' }),
    relayed: z.boolean().meta({ description: 'The event reached the purchase’s workflow (or started its refund, renewal or recovery)' }),
  } satisfies Record<keyof WebhookResult, z.ZodType>)
  .meta({ id: 'WebhookReceipt' });

export function webhookRoutes(service: WebhookService): RouteRegistration {
  return (router, registry) => {
    router.post('/payproc', async (ctx) => {
      const raw = (ctx.request as unknown as { rawBody?: string }).rawBody;
      const seen: VerifiedEvent = {};
      try {
        ctx.body = await service.handle(raw, ctx.get('stripe-signature') || undefined, seen);
      } finally {
        // A verified event's mode is the request's for the HTTP metrics: a test-mode event that
        // fails (the database down) is test traffic, which never pages.
        if (seen.livemode !== undefined) ctx.state.trafficMode = seen.livemode ? 'live' : 'test';
      }
    });
    registry.registerPath({
      method: 'post',
      path: '/webhooks/payproc',
      operationId: 'receivePayprocEvent',
      tags: ['Webhooks'],
      summary: "The payment processor's event notifications (signed)",
      description:
        'No API key: the `stripe-signature` header signs the raw body with the webhook secret (events older than 5 minutes are refused). The event is stored once by its id and handed to its purchase; a repeated delivery changes nothing. After a 5xx answer the processor delivers the event again.',
      security: [],
      request: {
        headers: z.object({
          'stripe-signature': z.string().meta({
            description: 'The processor’s signature of the raw body: `t=<unix seconds>,v1=<hex HMAC-SHA256>`',
            example: 't=1795000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
          }),
        }),
        body: resource.jsonBody(PayprocEvent),
      },
      responses: {
        200: resource.jsonResponse('Stored (once) and, when it concerns a purchase, relayed to it', WebhookReceipt),
        400: bareError(
          'WEBHOOK_SIGNATURE_INVALID: no body or signature, a signature that does not match, or a stale event; VALIDATION_ERROR: not JSON, or a signed body that is not an event',
        ),
        413: bareError('PAYLOAD_TOO_LARGE: body over 1 MiB'),
        500: bareError('INTERNAL_ERROR: the processor retries the delivery'),
      },
    });
  };
}
