/**
 * `POST /api/v1/buyers/{id}/erasure` (issue 52, item 3): the agency erases a buyer's personal
 * data on the buyer's request (./erasure-service.ts). Answers 201 with the erasure, or 200 with
 * the same erasure when it was already made; 404 NOT_FOUND in the error envelope for a buyer
 * outside the key's account and mode. The request has no body.
 */
import type { RouteRegistration } from '../http/routes';
import { gatewayResponses, successEnvelope } from '../http/openapi';
import { ok } from '../http/envelope';
import * as resource from '../http/resource-routes';
import type { BuyerErasureService } from './erasure-service';
import { BuyerErasure } from './erasure-schemas';

/** Mounts the erasure route under `/api/v1` and registers it in OpenAPI. */
export const buyerErasureRoutes =
  (service: BuyerErasureService): RouteRegistration =>
  (router, registry) => {
    router.post('/buyers/:id/erasure', async (ctx) => {
      const { erasure, created } = await service.erase(ctx.state.principal!, String(ctx.params.id));
      ctx.status = created ? 201 : 200;
      ctx.body = ok(erasure, created ? 'Buyer erased' : 'Buyer already erased');
    });
    const answer = successEnvelope(BuyerErasure, 'BuyerErasureResponse');
    registry.registerPath({
      method: 'post',
      path: '/api/v1/buyers/{id}/erasure',
      operationId: 'eraseBuyer',
      tags: ['Buyer connection'],
      summary: "Erase a buyer's personal data, on the buyer's request",
      description:
        'Erases at once the contact data the insurance record does not need (the buyer’s email and names, its access tokens, the buyer email of its purchases in this account and mode, the addresses of emails sent to it). The names on its policies are part of the insurance record: from now on no answer, page or new document shows them (they read `(name erased)`), and they are kept apart until the account’s retention period after the last coverage ends (default 7 years), then dropped. The certificates already issued stay valid documents and still verify. Idempotent: a second call answers the same erasure (200). Written to the audit log.',
      request: { params: resource.idParam('The buyer’s `idp_accnt_uuid`', '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b') },
      responses: {
        201: resource.jsonResponse('Erased', answer),
        200: resource.jsonResponse('Already erased: the same erasure', answer),
        ...gatewayResponses,
        404: resource.errorResponse('NOT_FOUND: no such buyer in this key’s account and mode'),
      },
    });
  };
