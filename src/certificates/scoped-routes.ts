/**
 * One operation of the certificate surfaces, mounted on both (spec §4.5): under
 * `/platform-agency-certs` the body names the calling teammate (`idp_teammate_uuid`) and the
 * operation sees that teammate's purchases; under `/platform-agency-root-certs` the body names
 * the root account (`idp_root_account_uuid`) and it sees every teammate's. The handler gets the
 * resolved `AccountScope`; a foreign id fails before it with TEAMMATE_NOT_FOUND / SELLER_NOT_FOUND
 * (404, see src/accounts/scope.ts). Bodies are parsed strictly (400 VALIDATION_ERROR); answers are
 * 200 JSON without envelope, failures the bare error of §7.2.
 */
import type { z } from 'zod';
import type { ResponseConfig } from '@asteasolutions/zod-to-openapi';
import type { RouteRegistration } from '../http/routes';
import type { Principal } from '../api-keys/service';
import { parseBody } from '../http/validation';
import { bareError, bareSurfaceResponses } from '../http/openapi';
import type { AccountScope, AccountScopes } from '../accounts/scope';

export type CertSurface = 'teammate' | 'root';

/** Mount prefix of each surface. */
export const CERT_SURFACE_PREFIX: Record<CertSurface, '/platform-agency-certs' | '/platform-agency-root-certs'> = {
  teammate: '/platform-agency-certs',
  root: '/platform-agency-root-certs',
};

const SCOPE_NOTE: Record<CertSurface, { summary: string; notFound: string }> = {
  teammate: {
    summary: "the teammate's purchases",
    notFound: "TEAMMATE_NOT_FOUND: idp_teammate_uuid is not a teammate of this key's account",
  },
  root: { summary: 'any teammate of the root account', notFound: "SELLER_NOT_FOUND: idp_root_account_uuid is not this key's root account" },
};

type ResponseObject = ResponseConfig;

export interface ScopedOperation<TBody> {
  /** Path under the surface, e.g. `/getCertificates`. */
  path: string;
  /** Strict body schemas: the same fields plus the surface's account id. */
  requests: { teammate: z.ZodType<TBody & { idp_teammate_uuid: string }>; root: z.ZodType<TBody & { idp_root_account_uuid: string }> };
  /** Summary without the scope, e.g. "A payment's certificates". */
  summary: string;
  description: string;
  /** The 200 answer. */
  ok: ResponseObject;
  /** What a 404 NOT_FOUND means for this operation (the scope's own 404 is added). */
  notFound: string;
  /** Further responses (status → response), e.g. 400 or processor errors. */
  responses?: Record<number, ResponseObject>;
  handle: (principal: Principal, scope: AccountScope, body: TBody) => Promise<unknown>;
}

/** Mounts `op` on one surface's router and registers it in OpenAPI. */
export function scopedRoute<TBody>(surface: CertSurface, scopes: AccountScopes, op: ScopedOperation<TBody>): RouteRegistration {
  return (router, registry) => {
    router.post(op.path, async (ctx) => {
      const principal = ctx.state.principal!;
      if (surface === 'teammate') {
        const body = parseBody(op.requests.teammate, ctx.request.body);
        ctx.body = await op.handle(principal, await scopes.teammate(principal, body.idp_teammate_uuid), body);
      } else {
        const body = parseBody(op.requests.root, ctx.request.body);
        ctx.body = await op.handle(principal, await scopes.root(principal, body.idp_root_account_uuid), body);
      }
    });
    registry.registerPath({
      method: 'post',
      path: `${CERT_SURFACE_PREFIX[surface]}${op.path}`,
      // Both surfaces share the path's operation name, so the surface prefixes it: teammateGetCertificates, rootGetCertificates.
      operationId: `${surface}${op.path.charAt(1).toUpperCase()}${op.path.slice(2)}`,
      tags: ['Certificates'],
      summary: `${op.summary} (${SCOPE_NOTE[surface].summary})`,
      description: op.description,
      request: { body: { required: true, content: { 'application/json': { schema: op.requests[surface] } } } },
      responses: {
        ...bareSurfaceResponses,
        ...op.responses,
        200: op.ok,
        404: bareError(`${op.notFound}; ${SCOPE_NOTE[surface].notFound}`),
      },
    });
  };
}
