/**
 * `POST /platform-agency-certs/teamEmailProofofCoverage` (teammate scope) and
 * `POST /platform-agency-root-certs/teamEmailProofofCoverage` (root scope): spec §4.5, §7.2.
 */
import type { RouteRegistration } from '../http/routes';
import { bareError } from '../http/openapi';
import { ambiguousPaymentIntentResponse } from '../certificates/schemas';
import { scopedRoute, type ScopedOperation } from '../certificates/scoped-routes';
import type { AccountScopes } from '../accounts/scope';
import type { ProofOfCoverageService } from './service';
import { EmailProofRequest, EmailProofResponse, RootEmailProofRequest } from './schemas';

const description =
  'Emails the certificate bundle of a purchase (named by purchase_id, checkout_session_id or payment_intent) to 1–20 addresses through SMTP, as a durable job: each recipient gets its own record (`email_id`) and is retried with backoff; a retry never sends a second message. The PDFs are attached when they total at most the configured size (PROOF_EMAIL_ATTACHMENT_MAX_BYTES, default 5 MiB), otherwise the email carries 7-day download links; it always carries the proof-of-coverage and verification links. Answers 200 once the emails are queued.';

const emailProof = (service: ProofOfCoverageService): ScopedOperation<EmailProofRequest | RootEmailProofRequest> => ({
  path: '/teamEmailProofofCoverage',
  requests: { teammate: EmailProofRequest, root: RootEmailProofRequest },
  summary: "Email a payment's proof of coverage",
  description,
  ok: { description: 'Queued', content: { 'application/json': { schema: EmailProofResponse } } },
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
