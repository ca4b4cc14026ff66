/**
 * Certificate routes (issue 6; bare bodies without the envelope):
 * - `POST /platform-agency-certs/getCertificates` (teammate scope, `idp_teammate_uuid`) and
 *   `POST /platform-agency-root-certs/getCertificates` (root scope, `idp_root_account_uuid`):
 *   200 JSON without envelope (also for an unpaid or still issuing purchase); failures are the
 *   bare error `{ code, message, details? }`.
 * - `GET /verify/{code}`: the public verification page (no API key), HTML by default and JSON
 *   with `Accept: application/json`; 404 (HTML or bare JSON) for an unknown code. With
 *   `?proof=<jws>` (what a certificate's QR code carries, issue 50 item 3) the token is verified
 *   first: its signed facts are shown beside the live status; a token that does not verify (altered,
 *   unknown key, another certificate's) answers 400, a refusal page or the bare VALIDATION_ERROR
 *   on `proof`, never the live status as if it were proven. Without `proof` the page answers as
 *   before (decisions.md: unsigned links keep working, with no signed facts).
 * - `GET /.well-known/jwks.json`: the public keys that verify certificates' proofs (JWK Set), limited
 *   per address together with the page.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError } from '../shared/errors';
import { rateLimit } from '../http/gateway';
import { BareErrorSchema, bareError } from '../http/openapi';
import type { AccountScopes } from '../accounts/scope';
import type { CertificateService, CoverageState, VerificationView } from './service';
import { ambiguousPaymentIntentResponse, GetCertificatesRequest, GetCertificatesResponse, RootGetCertificatesRequest } from './schemas';
import { scopedRoute, type ScopedOperation } from './scoped-routes';
import { renderNotFoundPage, renderProofRefusedPage, renderVerificationPage } from './verification-page';
import { ProofRefused, type CertificateFacts, type CertificateSigner } from './signed-proof';

const getCertificates = (service: CertificateService): ScopedOperation<GetCertificatesRequest | RootGetCertificatesRequest> => ({
  path: '/getCertificates',
  requests: { teammate: GetCertificatesRequest, root: RootGetCertificatesRequest },
  summary: "A purchase's certificates, zips and proof-of-coverage links",
  description:
    'Every certificate generated for the purchase, each with a time-limited download URL (V4 signed), the per-payment zip and one zip per product with its proof-of-coverage QR link. Name the purchase with exactly one of `purchase_id` (keep this one: adminValidateBuyerResponses returns it, never null), `checkout_session_id` or `payment_intent` (null at checkout until the buyer pays, with the real processor). Certificates are issued asynchronously after payment: while `status` is `unpaid` or `pending` the lists are empty and `purchase_status` says where the purchase is: retry with backoff for up to two minutes after a successful payment. `issued` and `voided` are final. A purchase of another account, teammate, mode or buyer answers 404 exactly like one that does not exist.',
  ok: { description: 'The certificates (empty while pending)', content: { 'application/json': { schema: GetCertificatesResponse } } },
  notFound: "NOT_FOUND: no purchase with that handle in the caller's scope (another account, teammate, mode or buyer reads the same)",
  responses: {
    400: bareError(
      'VALIDATION_ERROR: the body failed validation or is not JSON, or it names none or more than one of purchase_id, checkout_session_id and payment_intent',
    ),
    409: ambiguousPaymentIntentResponse,
  },
  handle: (principal, scope, body) => service.getCertificates(principal, scope, body),
});

/** getCertificates on the teammate surface (mount under `/platform-agency-certs`). */
export const teammateCertificateRoutes = (service: CertificateService, scopes: AccountScopes): RouteRegistration =>
  scopedRoute('teammate', scopes, getCertificates(service));
/** getCertificates on the root surface (mount under `/platform-agency-root-certs`). */
export const rootCertificateRoutes = (service: CertificateService, scopes: AccountScopes): RouteRegistration =>
  scopedRoute('root', scopes, getCertificates(service));

/** A verified proof as the page's JSON gives it. */
export interface SignedProofView {
  kid: string;
  facts: CertificateFacts;
}

const SignedFactsSchema = z
  .object({
    certificate_number: z.string(),
    revision: z.number().int().meta({ description: 'The certificate’s version, 1 first' }),
    named_insured_name: z.string(),
    certificate_holder_name: z.string().nullable().meta({ description: 'null: to whom it may concern' }),
    coverage_starts_at: z.string().meta({ description: 'ISO 8601 date-time (UTC)' }),
    coverage_ends_at: z.string().meta({ description: 'ISO 8601 date-time (UTC), exclusive' }),
    coverage_time_zone: z.string().meta({ description: 'IANA time zone of the coverage' }),
    status: z.enum(['issued', 'specimen']).meta({ description: 'Status at issue: `specimen` when issued in test mode (no real cover)' }),
    issued_at: z.string().meta({ description: 'The issue date printed on the certificate, YYYY-MM-DD' }),
  } satisfies Record<keyof CertificateFacts, z.ZodType>)
  .meta({ id: 'CertificateSignedFacts', description: 'The facts a certificate’s proof (a compact JWS, EdDSA) signs' });

const JwksSchema = z
  .object({
    keys: z.array(
      z.object({
        kty: z.literal('OKP'),
        crv: z.literal('Ed25519'),
        x: z.string().meta({ description: 'The public key, base64url' }),
        kid: z.string().meta({ description: 'The key id a proof’s JWS header names' }),
        alg: z.literal('EdDSA'),
        use: z.literal('sig'),
      }),
    ),
  })
  .meta({ id: 'CertificateJwks', description: 'JWK Set (RFC 7517) of the keys verifying certificates’ proofs; the first signs new ones' });

const CoverageStateSchema = z.enum(['valid', 'not_yet_valid', 'expired', 'voided', 'superseded'] satisfies CoverageState[]);

/** The verification page as JSON (`Accept: application/json`): the service's `VerificationView`. */
const VerificationJson = z
  .object({
    code: z.string().meta({ description: 'The code looked up', example: 'COI-42-1-1-3FA9C2B71D' }),
    kind: z.enum(['certificate', 'proof_of_coverage']).meta({
      description: '`certificate` for a COI-… number, `proof_of_coverage` for a POC-… code (all certificates of one product of a payment)',
    }),
    state: CoverageStateSchema.meta({
      description:
        '`superseded` for a past version of a certificate (a change to the policy replaced it: see superseded_by; it no longer proves coverage); `voided` when voided (a cancellation of its covered unit, its certificate holder removed, or a full refund); else `valid` when a coverage window covers now; else `not_yet_valid` when one is ahead; else `expired`',
    }),
    product_name: z.string(),
    named_insured_name: z.string().nullable(),
    test_mode: z.boolean().meta({ description: 'True for a certificate issued in test mode (no real cover)' }),
    checked_at: z.string().meta({ description: 'ISO 8601 date-time of the check' }),
    coverage: z.array(
      z.object({
        certificate_number: z.string(),
        starts_at: z.string().meta({ description: 'ISO 8601 date-time (UTC)' }),
        ends_at: z.string().meta({ description: 'ISO 8601 date-time (UTC), exclusive' }),
        time_zone: z.string().meta({ description: 'IANA time zone of the coverage' }),
        starts_local: z.string().meta({ description: 'Start in the coverage’s time zone, for display' }),
        ends_local: z.string().meta({ description: 'End in the coverage’s time zone, for display' }),
        state: CoverageStateSchema,
        voided_at: z.string().nullable().meta({
          description:
            'When this certificate was voided (its covered unit cancelled, its holder removed, or the purchase refunded in full), ISO 8601 UTC; null while in force',
        }),
      }),
    ),
    superseded_by: z.string().nullable().meta({
      description:
        'A past version of a certificate: the number of the version that replaced it (its own verification page proves coverage); else null',
    }),
    superseded_at: z.string().nullable().meta({ description: 'When it was replaced, ISO 8601 UTC; else null' }),
    revision: z.number().int().nullable().meta({ description: 'The certificate’s version (1 first); null for a proof of coverage' }),
    signed_proof: z
      .object({ kid: z.string().meta({ description: 'The key that signed it' }), facts: SignedFactsSchema })
      .nullable()
      .meta({
        description:
          'With `?proof=`: the verified token’s key and signed facts (what the certificate printed, checked against the published keys); null without `proof`',
      }),
  } satisfies Record<keyof VerificationView | 'signed_proof', z.ZodType>)
  .meta({
    id: 'CertificateVerification',
    description:
      'What the verification page shows, as JSON: the state of the certificate (or of each certificate behind a proof-of-coverage code) with its coverage windows, product and named insured, each as that version printed them (a past version keeps the dates it certified after a change moved its day), and nothing more personal.',
  });

/** A response of the verification page: an HTML page (`page` describes it), or `json` (the bare error unless given) with `Accept: application/json`. */
const pageOrJson = (description: string, page: string, json: z.ZodType = BareErrorSchema) => ({
  description,
  content: {
    'text/html': { schema: { type: 'string' as const, description: page } },
    'application/json': { schema: json },
  },
});

/**
 * The public verification page, `GET /verify/{code}` (no API key; the QR target), which verifies a
 * `proof` with `signer`'s keys, and `GET /.well-known/jwks.json`, those keys.
 */
export function verificationRoutes(
  service: CertificateService,
  limiter: RateLimiterAbstract,
  signer: CertificateSigner,
): RouteRegistration {
  // Public and unauthenticated: limited per client address (config VERIFY_RATE_LIMIT_PER_MINUTE).
  const limit = rateLimit(limiter, { key: (ctx) => `verify:${ctx.ip}`, subject: 'address' });
  return (router, registry) => {
    router.get(
      '/verify/:code',
      async (ctx, next) => {
        ctx.state.errorStyle = 'bare';
        await limit(ctx, next);
      },
      async (ctx) => {
        const code = ctx.params.code ?? '';
        const wantsJson = ctx.accepts('html', 'json') === 'json';
        ctx.set('Cache-Control', 'no-store');
        ctx.set('X-Robots-Tag', 'noindex');
        ctx.set('Referrer-Policy', 'no-referrer');
        const proof = ctx.query.proof;
        let signed: SignedProofView | null = null;
        if (proof !== undefined) {
          try {
            if (typeof proof !== 'string') throw new ProofRefused('malformed', 'Give one proof');
            signed = await signer.verify(proof);
            if (signed.facts.certificate_number !== code) {
              throw new ProofRefused('bad_facts', 'The proof is signed for another certificate than the one in the link');
            }
          } catch (err) {
            if (!(err instanceof ProofRefused)) throw err;
            if (wantsJson) throw new AppError('VALIDATION_ERROR', err.message, { details: [{ path: 'proof', message: err.reason }] });
            ctx.status = 400;
            ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
            ctx.type = 'text/html; charset=utf-8';
            ctx.body = renderProofRefusedPage(code, err);
            return;
          }
        }
        const view = await service.verify(code);
        if (!view) {
          if (wantsJson) throw new AppError('NOT_FOUND', 'No certificate or proof of coverage with that number');
          ctx.status = 404;
        }
        if (wantsJson) {
          ctx.body = view && { ...view, signed_proof: signed };
          return;
        }
        ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = view ? renderVerificationPage(view, signed) : renderNotFoundPage();
      },
    );
    // Public too: limited with the page (a verifier caches the keys).
    router.get(
      '/.well-known/jwks.json',
      async (ctx, next) => {
        ctx.state.errorStyle = 'bare';
        await limit(ctx, next);
      },
      (ctx) => {
        ctx.set('Cache-Control', 'public, max-age=300');
        ctx.body = signer.jwks();
      },
    );
    registry.registerPath({
      method: 'get',
      path: '/.well-known/jwks.json',
      operationId: 'getCertificateJwks',
      tags: ['Certificates'],
      summary: 'The public keys verifying certificates’ signed proofs (JWK Set)',
      security: [],
      description:
        'No API key. Ed25519 keys (`alg` EdDSA); the `kid` in a proof’s JWS header names its key. The first key signs new certificates; older keys stay listed so certificates they signed keep verifying. Cache for a few minutes.',
      responses: {
        200: { description: 'The keys', content: { 'application/json': { schema: JwksSchema } } },
        429: bareError(
          'RATE_LIMIT_ERROR: too many requests from this address (shared with /verify); retry after the Retry-After header (seconds)',
        ),
      },
    });
    registry.registerPath({
      method: 'get',
      path: '/verify/{code}',
      operationId: 'verifyCertificate',
      tags: ['Certificates'],
      summary: 'Public verification page of a certificate or proof of coverage (the QR target)',
      security: [],
      description:
        'No API key. HTML by default; JSON with `Accept: application/json`. Says valid / not_yet_valid / expired / voided with the coverage windows, product and named insured, and nothing more personal. With `proof` (the certificate’s QR code and `verification_url` carry it) the signed facts are verified and shown beside the live status.',
      request: {
        params: z.object({
          code: z
            .string()
            .meta({ description: 'A certificate number (COI-…) or proof-of-coverage code (POC-…)', example: 'COI-42-1-1-3FA9C2B71D' }),
        }),
        query: z.object({
          proof: z.string().optional().meta({
            description:
              'The certificate’s signed proof (compact JWS, EdDSA, `kid` in its header; keys at /.well-known/jwks.json), as its QR code and `verification_url` carry it. Verified before anything is shown',
          }),
        }),
      },
      responses: {
        200: pageOrJson(
          'The page: HTML by default, the same view as JSON with `Accept: application/json`',
          'The verification page',
          VerificationJson,
        ),
        404: pageOrJson(
          'NOT_FOUND: no certificate or proof of coverage with that code; an HTML page, or the bare error with `Accept: application/json`',
          'The not-found page',
        ),
        400: pageOrJson(
          'VALIDATION_ERROR on `proof`: the proof does not verify (altered, signed by an unknown key, malformed, or for another certificate); a refusal page, or the bare error with `Accept: application/json`',
          'The refusal page',
        ),
        429: bareError('RATE_LIMIT_ERROR: too many lookups from this address; retry after the Retry-After header (seconds)'),
      },
    });
  };
}
