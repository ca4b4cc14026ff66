/**
 * `POST /webhooks/payproc`: the processor's notifications (no API key; authenticity is the
 * signature over the raw body, header `stripe-signature`). 200 `{ received, duplicate,
 * purchase_id, relayed }`; 400 WEBHOOK_SIGNATURE_INVALID for an unsigned, forged or stale event.
 */
import type { RouteRegistration } from '../http/routes';
import { bareError } from '../http/openapi';
import type { WebhookService } from './service';

export function webhookRoutes(service: WebhookService): RouteRegistration {
  return (router, registry) => {
    router.post('/payproc', async (ctx) => {
      const raw = (ctx.request as unknown as { rawBody?: string }).rawBody;
      ctx.body = await service.handle(raw, ctx.get('stripe-signature') || undefined);
    });
    registry.registerPath({
      method: 'post',
      path: '/webhooks/payproc',
      tags: ['Webhooks'],
      summary: "The payment processor's event notifications (signed)",
      security: [],
      responses: {
        200: { description: 'Stored (once) and relayed to the purchase' },
        400: bareError('WEBHOOK_SIGNATURE_INVALID'),
      },
    });
  };
}
