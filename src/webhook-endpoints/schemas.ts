/**
 * Wire shapes of `/api/v1/webhook_endpoints` (snake_case, like Stripe's webhook endpoints).
 */
import { z } from 'zod';
import { pageQueryFields } from '../http/query';
import { ENABLED_EVENT_VALUES } from '../events/types';

const EnabledEvents = z
  .array(z.enum(ENABLED_EVENT_VALUES))
  .min(1)
  .max(ENABLED_EVENT_VALUES.length)
  .transform((events) => [...new Set(events)])
  .meta({ description: 'Event types this endpoint receives, or `["*"]` for all', example: ['purchase.paid', 'certificates.issued'] });

export const CreateWebhookEndpointBody = z
  .strictObject({
    url: z.string().max(2048).meta({
      description: 'https URL (test-mode keys may also use http, loopback included)',
      example: 'https://agency.example/hooks/coi',
    }),
    enabled_events: EnabledEvents,
    description: z.string().max(500).optional(),
  })
  .meta({ id: 'CreateWebhookEndpointRequest' });
export type CreateWebhookEndpointBody = z.infer<typeof CreateWebhookEndpointBody>;

export const UpdateWebhookEndpointBody = z
  .strictObject({
    url: z.string().max(2048).optional(),
    enabled_events: EnabledEvents.optional(),
    description: z.string().max(500).optional(),
    disabled: z
      .boolean()
      .optional()
      .meta({ description: 'true stops deliveries; false (re)enables the endpoint, also after it was marked failing' }),
  })
  .meta({ id: 'UpdateWebhookEndpointRequest' });
export type UpdateWebhookEndpointBody = z.infer<typeof UpdateWebhookEndpointBody>;

export const ListWebhookEndpointsQuery = z.strictObject({
  ...pageQueryFields(20),
});
export type ListWebhookEndpointsQuery = z.infer<typeof ListWebhookEndpointsQuery>;

export const WebhookEndpointRead = z
  .object({
    id: z.number().int(),
    object: z.literal('webhook_endpoint'),
    url: z.string(),
    enabled_events: z.array(z.string()),
    description: z.string(),
    status: z.enum(['enabled', 'disabled', 'failing']).meta({
      description:
        '`failing`: a delivery gave up after its retry window (3 days); deliveries still go out. PATCH `disabled: false` to clear it.',
    }),
    livemode: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpointRead = z.infer<typeof WebhookEndpointRead>;

export const WebhookEndpointCreated = WebhookEndpointRead.extend({
  secret: z.string().meta({
    description: 'The signing secret (`whsec_…`), shown only in this answer: store it to verify the Signature header',
    example: 'whsec_5Vx…',
  }),
}).meta({ id: 'WebhookEndpointCreated' });

export const WebhookEndpointDeleted = z
  .object({ id: z.number().int(), object: z.literal('webhook_endpoint'), deleted: z.literal(true) })
  .meta({ id: 'WebhookEndpointDeleted' });
