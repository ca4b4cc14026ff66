/**
 * Claims on `/api/v1` (issue 51): `POST|GET /purchases/{id}/claims`, `GET /claims/{id}`,
 * `POST /claims/{id}/comments`, `GET|PATCH /products/{id}/claim_settings` and the test-mode helper
 * `POST /test_helpers/claims/{id}/actions`. Path ids that are not positive integers → 400
 * VALIDATION_ERROR; another account's, mode's or teammate's purchase or claim → 404 NOT_FOUND,
 * checked before the body.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency/middleware';
import type { ClaimService } from './service';
import {
  Claim,
  ClaimActionRequest,
  ClaimCommentRequest,
  ClaimSettingsView,
  CreateClaimRequest,
  UpdateClaimSettingsRequest,
} from './schemas';

const PurchaseIdParam = resource.idParam('Purchase id, integer >= 1', '42');
const ClaimIdParam = resource.idParam('Claim id, integer >= 1', '7');
const ProductIdParam = resource.idParam('Product id, integer >= 1', '3');
const CLAIM_404 = resource.errorResponse('NOT_FOUND: no claim with that id for this key');

export function claimRoutes(service: ClaimService): RouteRegistration {
  return (router, registry) => {
    resource.scopedIdRoute(router, 'post', '/purchases/:id/claims', {
      scope: service.assertPurchaseOwned,
      body: CreateClaimRequest,
      run: (principal, id, body, header) => service.file(principal, id, body, header(IDEMPOTENCY_KEY_HEADER) || undefined),
      answer: ({ claim, created }) =>
        created ? { status: 201, data: claim, message: 'Claim filed' } : { data: claim, message: 'Claim already filed by this request' },
    });
    resource.idRoute(router, 'get', '/purchases/:id/claims', service.listForPurchase, 'Claims retrieved');
    resource.idRoute(router, 'get', '/claims/:id', service.get, 'Claim retrieved');
    resource.scopedIdRoute(router, 'post', '/claims/:id/comments', {
      scope: service.assertClaimVisible,
      body: ClaimCommentRequest,
      run: (principal, id, body) => service.comment(principal, id, body.text),
      answer: (claim) => ({ status: 201, data: claim, message: 'Comment added' }),
    });
    resource.idRoute(router, 'get', '/products/:id/claim_settings', service.getSettings, 'Claim settings retrieved');
    resource.scopedIdRoute(router, 'patch', '/products/:id/claim_settings', {
      scope: service.getSettings,
      body: UpdateClaimSettingsRequest,
      run: service.updateSettings,
      answer: 'Claim settings updated',
    });
    resource.scopedIdRoute(router, 'post', '/test_helpers/claims/:id/actions', {
      scope: service.assertTestClaimOwned,
      body: ClaimActionRequest,
      run: service.act,
      answer: (claim, body) => ({ data: claim, message: `Claim ${body.action} done` }),
    });

    resource.registerIdPath(registry, {
      method: 'post',
      path: '/api/v1/purchases/{id}/claims',
      operationId: 'fileClaim',
      tags: ['Purchases'],
      summary: 'File a claim (first notice of loss) on a purchase',
      description:
        'Files a claim against the covered unit the incident falls in (that unit and its certificate are named in the answer). The incident must be inside a unit of the purchase that was in force then and not in the future. Each attachment is answered with a signed upload URL: PUT the file there with the headers given; its bytes go straight to storage. Attachments are checked against the declared type and size once uploaded (`GET /api/v1/claims/{id}` shows them `received` or `rejected`). The claim then has one owner that moves it through `submitted`, `acknowledged` (the product’s acknowledgement deadline, default 2 business days), `under_review`, `approved` or `denied`, `paid` and `closed`. Send an Idempotency-Key to retry safely: the same key answers the same claim.',
      params: PurchaseIdParam,
      body: CreateClaimRequest,
      ok: resource.jsonResponse('Filed before by the same Idempotency-Key', successEnvelope(Claim, 'ClaimRefiledResponse')),
      notFound: resource.errorResponse('NOT_FOUND: no purchase with that id for this key'),
      responses: {
        201: resource.jsonResponse('Filed', successEnvelope(Claim, 'ClaimFiledResponse')),
        400: resource.errorResponse(
          'VALIDATION_ERROR (a bad body; an incident in the future; a claim type the product does not offer; a currency other than the purchase’s; an incident in units of several products without covered_unit_id), INCIDENT_NOT_COVERED (the incident is outside every covered unit, or the purchase was never paid), or the gateway’s codes',
        ),
        409: resource.errorResponse(
          'COVERED_UNIT_CANCELLED (the unit was cancelled, or the purchase refunded in full), DUPLICATE_CLAIM (an open claim on the same unit and incident day: the message names it), or an Idempotency-Key in progress',
        ),
      },
    });
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/purchases/{id}/claims',
      operationId: 'listPurchaseClaims',
      tags: ['Purchases'],
      summary: 'List a purchase’s claims',
      description: 'Every claim filed on the purchase, newest first, without their histories (read one claim for its history).',
      params: PurchaseIdParam,
      ok: resource.jsonResponse('The claims', successEnvelope(z.array(Claim), 'ClaimListResponse')),
      notFound: resource.errorResponse('NOT_FOUND: no purchase with that id for this key'),
    });
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/claims/{id}',
      operationId: 'getClaim',
      tags: ['Purchases'],
      summary: 'Read a claim with its history',
      description:
        'The claim, its attachments (an upload URL for each still awaited) and its history: every change with who made it (an API key’s id, or the service for a missed acknowledgement deadline), when, and its reason or comment.',
      params: ClaimIdParam,
      ok: resource.jsonResponse('The claim', successEnvelope(Claim, 'ClaimResponse')),
      notFound: CLAIM_404,
    });
    resource.registerIdPath(registry, {
      method: 'post',
      path: '/api/v1/claims/{id}/comments',
      operationId: 'commentOnClaim',
      tags: ['Purchases'],
      summary: 'Add a comment to a claim’s history',
      description:
        'Agencies follow and comment on their claims; deciding them is the insurer’s (its adjusters comment too, with a key of the insurer or MGA the product names). Comments are kept in the history in order with the claim’s changes.',
      params: ClaimIdParam,
      body: ClaimCommentRequest,
      notFound: CLAIM_404,
      responses: { 201: resource.jsonResponse('Added', successEnvelope(Claim, 'ClaimCommentedResponse')) },
    });
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/products/{id}/claim_settings',
      operationId: 'getProductClaimSettings',
      tags: ['Products'],
      summary: 'Read a product’s claim types and acknowledgement deadline',
      description:
        'The claim types a claim on the product may name and the business days (Monday to Friday) the insurer has to acknowledge one. Until set: property_damage, bodily_injury, cancellation, equipment_damage, liability, other; 2 business days.',
      params: ProductIdParam,
      ok: resource.jsonResponse('The settings', successEnvelope(ClaimSettingsView, 'ClaimSettingsResponse')),
      notFound: resource.errorResponse('NOT_FOUND: no product with that id for this key'),
    });
    resource.registerIdPath(registry, {
      method: 'patch',
      path: '/api/v1/products/{id}/claim_settings',
      operationId: 'updateProductClaimSettings',
      tags: ['Products'],
      summary: 'Change a product’s claim types or acknowledgement deadline',
      description:
        'What is sent changes; the rest stays. Claims filed from then on use the new settings; claims already filed keep their deadline.',
      params: ProductIdParam,
      body: UpdateClaimSettingsRequest,
      ok: resource.jsonResponse('The settings now', successEnvelope(ClaimSettingsView, 'ClaimSettingsUpdatedResponse')),
      notFound: resource.errorResponse('NOT_FOUND: no product with that id for this key'),
    });
    resource.registerIdPath(registry, {
      method: 'post',
      path: '/api/v1/test_helpers/claims/{id}/actions',
      operationId: 'testHelperClaimAction',
      tags: ['Test helpers'],
      summary: 'Move a test claim through its states as the insurer would',
      description:
        'Test-mode keys only (a live key gets 404 ROUTE_NOT_FOUND). Test-mode tooling that stands in for the insurer: the agency’s own test key may take the actions that only the insurer’s or MGA’s keys take on live claims (`POST /api/v1/claims/{id}/actions`), so an integration can see every state and `claim.*` event; the history records them with actor `test_helper`. Takes one action on the claim through its owner, with the same checks an adjuster’s action gets: the claim’s status must allow it (409 CLAIM_TRANSITION_NOT_ALLOWED), an approval names an amount at most the one claimed and a reason, a denial a reason code and text, a reopen a reason (400 VALIDATION_ERROR). Answers the claim with its history.',
      params: ClaimIdParam,
      body: ClaimActionRequest,
      ok: resource.jsonResponse('Done', successEnvelope(Claim, 'ClaimActionResponse')),
      notFound: resource.errorResponse('ROUTE_NOT_FOUND for a live key; NOT_FOUND for a claim that is not this account’s'),
      responses: {
        409: resource.errorResponse(
          'CLAIM_TRANSITION_NOT_ALLOWED (the claim’s status does not allow the action), DUPLICATE_CLAIM (a reopen while another claim is open on the same unit and day)',
        ),
      },
    });
  };
}
