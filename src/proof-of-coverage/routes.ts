/**
 * `POST /platform-agency-certs/teamEmailProofofCoverage` (teammate scope) and
 * `POST /platform-agency-root-certs/teamEmailProofofCoverage` (root scope): spec §4.5, §7.2.
 */
import type { RouteRegistration } from '../container';
import { parseBody } from '../http/validation';
import { bareError, bareSurfaceResponses } from '../http/openapi';
import type { AccountScopes } from '../certificates/account-scope';
import type { ProofOfCoverageService } from './service';
import { EmailProofRequest, EmailProofResponse, RootEmailProofRequest } from './schemas';

const description =
  'Emails the certificate bundle of a payment to 1–20 addresses through SMTP, as a durable job: each recipient gets its own record (`email_id`) and is retried with backoff; a retry never sends a second message. The PDFs are attached when they total at most the configured size (PROOF_EMAIL_ATTACHMENT_MAX_BYTES, default 5 MiB), otherwise the email carries 7-day download links; it always carries the proof-of-coverage and verification links. Answers 200 once the emails are queued.';

function register(surface: 'teammate' | 'root', service: ProofOfCoverageService, scopes: AccountScopes): RouteRegistration {
  return (router, registry) => {
    router.post('/teamEmailProofofCoverage', async (ctx) => {
      const principal = ctx.state.principal!;
      if (surface === 'teammate') {
        const req = parseBody(EmailProofRequest, ctx.request.body);
        ctx.body = await service.email(principal, await scopes.teammate(principal, req.idp_teammate_uuid), req);
      } else {
        const req = parseBody(RootEmailProofRequest, ctx.request.body);
        ctx.body = await service.email(principal, await scopes.root(principal, req.idp_root_account_uuid), req);
      }
    });
    const request = surface === 'teammate' ? EmailProofRequest : RootEmailProofRequest;
    registry.registerPath({
      method: 'post',
      path: `/${surface === 'teammate' ? 'platform-agency-certs' : 'platform-agency-root-certs'}/teamEmailProofofCoverage`,
      tags: ['Certificates'],
      summary: `Email a payment's proof of coverage (${surface === 'teammate' ? "the teammate's purchases" : 'any teammate of the root account'})`,
      description,
      request: { body: { content: { 'application/json': { schema: request } } } },
      responses: {
        ...bareSurfaceResponses,
        200: { description: 'Queued', content: { 'application/json': { schema: EmailProofResponse } } },
        400: bareError('VALIDATION_ERROR (bad address, none or more than 20); INVALID_REQUEST: certificates not issued yet (retry with backoff) or voided by a refund'),
        404: bareError(
          surface === 'teammate'
            ? "NOT_FOUND: no payment with that payment_intent in the teammate's purchases; TEAMMATE_NOT_FOUND"
            : "NOT_FOUND: no payment with that payment_intent in the root account; SELLER_NOT_FOUND",
        ),
      },
    });
  };
}

export const teammateProofEmailRoutes = (service: ProofOfCoverageService, scopes: AccountScopes) => register('teammate', service, scopes);
export const rootProofEmailRoutes = (service: ProofOfCoverageService, scopes: AccountScopes) => register('root', service, scopes);
