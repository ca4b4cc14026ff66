/**
 * The insurer decides (issue 51, item 3): `GET /api/v1/claims` (the claims a key sees: an insurer's
 * or MGA's key, those on products naming it; an agency's, its own) and
 * `POST /api/v1/claims/{id}/actions`, an adjuster's decision with a key of the insurer or MGA the
 * claim's product names (actor `adjuster` in the history). The agency's own key gets 403
 * CLAIM_DECISION_NOT_ALLOWED; another agency's or another insurer's 404 NOT_FOUND, checked before
 * the body.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { successEnvelope } from '../http/openapi';
import { pageQueryFields } from '../http/query';
import * as resource from '../http/resource-routes';
import type { ClaimService } from './service';
import { Claim, ClaimActionRequest } from './schemas';

const STATUSES = ['submitted', 'acknowledged', 'under_review', 'approved', 'denied', 'paid', 'closed', 'reopened'] as const;

/** Query of `GET /api/v1/claims`: a status filter and the page. */
export const ListClaimsQuery = z
  .strictObject({
    status: z.enum(STATUSES).optional().meta({ description: 'Only claims in this status' }),
    ...pageQueryFields(20),
  })
  .meta({ id: 'ListClaimsQuery' });

const ClaimIdParam = resource.idParam('Claim id, integer >= 1', '7');

export function adjusterClaimRoutes(service: ClaimService): RouteRegistration {
  return (router, registry) => {
    resource.listRoute(router, '/claims', ListClaimsQuery, service.list, 'Claims retrieved');
    resource.scopedIdRoute(router, 'post', '/claims/:id/actions', {
      scope: service.assertClaimVisible,
      body: ClaimActionRequest,
      run: (principal, id, body) => service.decide(principal, id, body),
      answer: (claim, body) => ({ data: claim, message: `Claim ${body.action} done` }),
    });

    resource.registerListPath(registry, {
      path: '/api/v1/claims',
      operationId: 'listClaims',
      tags: ['Purchases'],
      summary: 'List the claims this key sees',
      description:
        'An insurer’s or MGA’s key (its adjusters): the claims on products naming it as insurer or MGA, of the key’s mode. An agency’s key: its own claims (a teammate’s key, the teammate’s). Newest first, without histories; `status` filters.',
      query: ListClaimsQuery,
      item: Claim,
      envelopeId: 'ClaimPageResponse',
      responses: { 400: resource.errorResponse('QUERY_VALIDATION_ERROR: a bad page or status, or an unknown query parameter') },
    });
    resource.registerIdPath(registry, {
      method: 'post',
      path: '/api/v1/claims/{id}/actions',
      operationId: 'decideClaim',
      tags: ['Purchases'],
      summary: 'An adjuster’s decision on a claim',
      description:
        'Only a key of the insurer or MGA the claim’s product names (its adjusters): `acknowledge`, `start_review` (to under_review), `approve` (an `amount` at most the one claimed, and a `reason`), `deny` (a `reason_code` and a `reason` text), `record_payment` (a payment made outside the service, with its `reference`), `close`, `reopen` (a `reason`). Each goes through the claim’s owner with the same checks as every change, and is recorded in the history with actor `adjuster` and the key’s id; the agency gets its `claim.*` event. An approved claim with a payout account is then paid by the service. Answers the claim with its history.',
      params: ClaimIdParam,
      body: ClaimActionRequest,
      ok: resource.jsonResponse('Done', successEnvelope(Claim, 'ClaimDecisionResponse')),
      notFound: resource.errorResponse(
        'NOT_FOUND: no claim with that id that this key owns or decides (another agency’s, another insurer’s)',
      ),
      responses: {
        400: resource.errorResponse(
          'VALIDATION_ERROR (an approval above the amount claimed or without a reason, a denial without its code or text, a reopen without a reason, a payment without its reference)',
        ),
        403: resource.errorResponse(
          'CLAIM_DECISION_NOT_ALLOWED: the agency’s own key (agencies follow and comment; deciding is the insurer’s)',
        ),
        409: resource.errorResponse(
          'CLAIM_TRANSITION_NOT_ALLOWED (the claim’s status does not allow the action), DUPLICATE_CLAIM (a reopen while another claim is open on the same unit and day)',
        ),
      },
    });
  };
}
