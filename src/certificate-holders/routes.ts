/**
 * `/api/v1/purchases/{id}/certificate_holders`: list (200), add (201, its certificates issued after
 * the answer), remove (200, its certificates voided). Path ids that are not positive integers → 400
 * VALIDATION_ERROR; another account's, mode's or teammate's purchase → 404 NOT_FOUND.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody, parsePathId } from '../http/validation';
import { gatewayResponses, successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency/middleware';
import type { CertificateHolderService } from './service';
import { CertificateHolder, CreateCertificateHolderRequest } from './schemas';

const IdParam = resource.idParam('Purchase id, integer >= 1', '42');
const HolderParams = IdParam.extend({
  holderId: z.string().meta({ description: 'Certificate holder id (`id` of the holder), integer >= 1', example: '12' }),
});

export function certificateHolderRoutes(service: CertificateHolderService): RouteRegistration {
  return (router, registry) => {
    resource.idRoute(router, 'get', '/purchases/:id/certificate_holders', service.list, 'Certificate holders retrieved');
    router.post('/purchases/:id/certificate_holders', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      // Whose purchase first (another account's id: 404 whatever the body), then the body.
      await service.assertOwned(ctx.state.principal!, id);
      const body = parseBody(CreateCertificateHolderRequest, ctx.request.body ?? {});
      const key = ctx.get(IDEMPOTENCY_KEY_HEADER) || undefined;
      ctx.status = 201;
      ctx.body = ok(await service.add(ctx.state.principal!, id, body, key), 'Certificate holder added');
    });
    router.delete('/purchases/:id/certificate_holders/:holderId', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      const holderId = parsePathId(ctx.params.holderId, 'VALIDATION_ERROR');
      ctx.body = ok(await service.remove(ctx.state.principal!, id, holderId), 'Certificate holder removed');
    });

    registry.registerPath({
      method: 'get',
      path: '/api/v1/purchases/{id}/certificate_holders',
      operationId: 'listCertificateHolders',
      tags: ['Purchases'],
      summary: 'List who a purchase’s certificates are issued to',
      description:
        'Every certificate holder of the purchase in the order added (removed ones too, `status: removed`), each with its current certificates. The holder the buyer answered at quote time is the first.',
      request: { params: IdParam },
      responses: {
        ...gatewayResponses,
        200: resource.jsonResponse('The holders', successEnvelope(z.array(CertificateHolder), 'CertificateHolderListResponse')),
        400: resource.errorResponse('VALIDATION_ERROR: the id is not a positive integer, or the gateway’s codes'),
        404: resource.errorResponse('NOT_FOUND: no purchase with that id for this key'),
      },
    });
    registry.registerPath({
      method: 'post',
      path: '/api/v1/purchases/{id}/certificate_holders',
      operationId: 'addCertificateHolder',
      tags: ['Purchases'],
      summary: 'Add a certificate holder (a venue, a client, a city) to a paid purchase',
      description:
        'Issues the holder one certificate per covered unit still active (not ended, not cancelled), at no charge, with its own name, address, endorsement marks (additional insured, waiver of subrogation) and description of operations. The answer comes at once with its certificates `issuing`; they are rendered and stored durably after it, then `certificate_holder.added` is sent with their numbers, and getCertificates, the zips and proof-of-coverage emails include them (grouped by holder). Changes of one purchase (cancellations, holders) are applied one at a time. While the purchase’s first certificates are still being issued the call waits for them. A certificate holder gains no rights from a certificate; the endorsement marks record what the policy grants. A mark a product of the purchase charges a premium for (its endorsement_terms) is refused here (402): add the holder without it, then ask for it through an endorsement quote, which collects the premium first. Send an Idempotency-Key header to retry safely: the holder is added once.',
      request: { params: IdParam, body: resource.jsonBody(CreateCertificateHolderRequest) },
      responses: {
        ...gatewayResponses,
        201: resource.jsonResponse(
          'Added; its certificates are being issued',
          successEnvelope(CertificateHolder, 'CertificateHolderCreatedResponse'),
        ),
        400: resource.errorResponse(
          'VALIDATION_ERROR: a bad body (a field too long for the certificate’s boxes, an address line break, a bad email or country), or the id is not a positive integer, or the gateway’s codes',
        ),
        404: resource.errorResponse('NOT_FOUND: no purchase with that id for this key'),
        402: resource.errorResponse(
          'PAYMENT_REQUIRED: additional insured or a waiver of subrogation that a product of the purchase charges a premium for; add the holder without it, then quote a certificate_holder_endorsements endorsement and endorse it with a payment',
        ),
        409: resource.errorResponse(
          'PURCHASE_NOT_CHANGEABLE (not paid, or refunded in full), NO_ACTIVE_COVERED_UNITS (every unit ended or was cancelled), ENDORSEMENT_NOT_ALLOWED (additional insured or a waiver of subrogation that a product of the purchase does not allow: see its endorsement_terms), or an Idempotency-Key reused or in progress',
        ),
      },
    });
    registry.registerPath({
      method: 'delete',
      path: '/api/v1/purchases/{id}/certificate_holders/{holderId}',
      operationId: 'removeCertificateHolder',
      tags: ['Purchases'],
      summary: 'Remove a certificate holder; its certificates are voided',
      description:
        'Voids every certificate issued to the holder (its verification page says so) and sends `certificate_holder.removed` with their numbers. The last holder of a purchase cannot be removed while a covered unit is active: add the new one first. A holder that paid for additional insured or a waiver of subrogation on units not started keeps it until an endorsement removes it (its premium goes back).',
      request: { params: HolderParams },
      responses: {
        ...gatewayResponses,
        200: resource.jsonResponse('Removed', successEnvelope(CertificateHolder, 'CertificateHolderRemovedResponse')),
        400: resource.errorResponse('VALIDATION_ERROR: an id is not a positive integer, or the gateway’s codes'),
        404: resource.errorResponse('NOT_FOUND: no purchase with that id for this key, or no such holder (or removed already)'),
        409: resource.errorResponse(
          'LAST_CERTIFICATE_HOLDER (the only holder while units are active), HOLDER_ENDORSEMENT_PAID (its additional-insured or waiver premium was paid on units not started: remove the endorsement first with a certificate_holder_endorsements endorsement, which gives it back), PURCHASE_NOT_CHANGEABLE',
        ),
      },
    });
  };
}
