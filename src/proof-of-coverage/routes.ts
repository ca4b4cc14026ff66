/**
 * `POST /platform-agency-certs/teamEmailProofofCoverage` (teammate scope) and
 * `POST /platform-agency-root-certs/teamEmailProofofCoverage` (root scope): spec §4.5, §7.2;
 * `GET /api/v1/proof_of_coverage_emails/{id}`: one of those emails and how far it got (the key's
 * purchases only: another account, mode or teammate reads 404 NOT_FOUND).
 */
import type { RouteRegistration } from '../http/routes';
import { bareError, gatewayResponses, successEnvelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import { ambiguousPaymentIntentResponse } from '../certificates/schemas';
import { scopedRoute, type ScopedOperation } from '../certificates/scoped-routes';
import type { AccountScopes } from '../accounts/scope';
import type { ProofOfCoverageService } from './service';
import { EmailProofRequest, EmailProofResponse, ProofOfCoverageEmail, RootEmailProofRequest } from './schemas';

const description =
  'Emails the certificate bundle of a purchase (named by purchase_id, checkout_session_id or payment_intent) to 1–20 addresses through SMTP, as a durable job: each recipient gets its own record (`email_id`) and is retried with backoff; a retry never sends a second message. The PDFs are attached when they total at most the configured size (PROOF_EMAIL_ATTACHMENT_MAX_BYTES, default 5 MiB), otherwise the email carries 7-day download links; it always carries the proof-of-coverage and verification links. Answers 200 once the emails are queued.';

const emailProof = (service: ProofOfCoverageService): ScopedOperation<EmailProofRequest | RootEmailProofRequest> => ({
  path: '/teamEmailProofofCoverage',
  requests: { teammate: EmailProofRequest, root: RootEmailProofRequest },
  summary: "Email a payment's proof of coverage",
  description,
  ok: resource.jsonResponse('Queued', EmailProofResponse),
  notFound: "NOT_FOUND: no purchase with that purchase_id, checkout_session_id or payment_intent in the caller's scope",
  responses: {
    400: bareError(
      'VALIDATION_ERROR (bad address, none or more than 20; none or more than one of purchase_id, checkout_session_id, payment_intent); INVALID_REQUEST: certificates not issued yet (retry with backoff) or voided by a refund',
    ),
    409: ambiguousPaymentIntentResponse,
  },
  handle: (principal, scope, body) => service.email(principal, scope, body),
});

export const teammateProofEmailRoutes = (service: ProofOfCoverageService, scopes: AccountScopes): RouteRegistration =>
  scopedRoute('teammate', scopes, emailProof(service));
export const rootProofEmailRoutes = (service: ProofOfCoverageService, scopes: AccountScopes): RouteRegistration =>
  scopedRoute('root', scopes, emailProof(service));

/** `GET /api/v1/proof_of_coverage_emails/{id}` (an API key's route). */
export const proofEmailStatusRoutes =
  (service: ProofOfCoverageService): RouteRegistration =>
  (router, registry) => {
    resource.idRoute(router, 'get', '/proof_of_coverage_emails/:id', service.get, 'Email retrieved');
    registry.registerPath({
      method: 'get',
      path: '/api/v1/proof_of_coverage_emails/{id}',
      operationId: 'getProofOfCoverageEmail',
      tags: ['Certificates'],
      summary: 'One proof-of-coverage email and how far it got (queued, sent or failed)',
      description:
        'The `email_id` that teamEmailProofofCoverage answered for each recipient: its status, the attempts so far, how it was delivered (PDFs attached or download links) and, after a failed attempt, the mail relay’s answer. Only emails of the key’s own purchases (its account, mode and, for a teammate’s key, that teammate’s).',
      request: { params: resource.idParam('The `email_id`, integer >= 1', '7') },
      responses: {
        200: resource.jsonResponse('The email', successEnvelope(ProofOfCoverageEmail, 'ProofOfCoverageEmailResponse')),
        ...gatewayResponses,
        400: resource.errorResponse('VALIDATION_ERROR: the id is not an integer >= 1'),
        404: resource.errorResponse('NOT_FOUND: no such email of this key’s purchases'),
      },
    });
  };
