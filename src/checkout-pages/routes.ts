/**
 * The buyer's return pages after checkout (no API key; the processor sends the buyer here when
 * the key and its account set no return URLs of their own):
 *
 * - `GET /checkout/complete?purchase=<id>&token=<token>`: the purchase's live status; while it
 *   can still move on, the HTML reloads itself every few seconds (meta refresh, no script).
 *   Once issued it lists each certificate number with its verification link and each product's
 *   proof-of-coverage link.
 * - `GET /checkout/cancelled?purchase=<id>&token=<token>`: the payment was cancelled and nothing
 *   was charged, with the purchase's status (a purchase paid after all says so).
 *
 * HTML by default; with `Accept: application/json`, the same view as JSON. A malformed query, an
 * unknown purchase or a wrong token answers one 404 (HTML page, or the bare NOT_FOUND body), so
 * ids cannot be probed. Every answer carries `Cache-Control: no-store` and
 * `Referrer-Policy: no-referrer` (the token is in the URL). Limited per client address, with the
 * verification page's limit (VERIFY_RATE_LIMIT_PER_MINUTE) and a budget of its own.
 */
import { z } from 'zod';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RouteRegistration } from '../http/routes';
import { AppError } from '../shared/errors';
import { rateLimit } from '../http/gateway';
import { markTokenPage } from '../http/buyer-pages';
import { BareErrorSchema, bareError } from '../http/openapi';
import { CANCELLED_PAGE_PATH, COMPLETE_PAGE_PATH } from '../purchases/return-urls';
import { PURCHASE_ID_PATTERN, RETURN_TOKEN_PATTERN, parseReturnQuery, type CheckoutPageService, type ReturnPageView } from './service';
import { renderCancelledPage, renderCompletePage, renderNotFoundPage } from './page';

const ReturnPageQuery = z.object({
  purchase: z.string().regex(PURCHASE_ID_PATTERN).meta({ description: 'The purchase id', example: '42' }),
  token: z.string().regex(RETURN_TOKEN_PATTERN).meta({
    description: "The purchase's return token, as the checkout's return URL carries it",
    example: 'q3Vt1m0cY8nK2pZr5LwX7aBdE9fGhJkM4sTuVxYz1Ac',
  }),
});

const ReturnPageJson = z
  .object({
    purchase_id: z.number().int(),
    state: z.enum(['awaiting_payment', 'issuing', 'issued', 'refunded', 'expired', 'failed']),
    purchase_status: z.string(),
    final: z.boolean().meta({ description: 'True once the state no longer changes by itself' }),
    refresh_after_seconds: z.number().int().nullable(),
    test_mode: z.boolean(),
    paid_at: z.string().nullable(),
    certificates_issued_at: z.string().nullable(),
    certificates: z.array(
      z.object({
        certificate_number: z.string(),
        product_name: z.string(),
        coverage_label: z.string(),
        named_insured_name: z.string().nullable(),
        verification_url: z.string(),
      }),
    ),
    proofs_of_coverage: z.array(
      z.object({ product_name: z.string(), certificate_count: z.number().int(), proof_of_coverage_url: z.string() }),
    ),
    withdrawal_url: z.string().nullable().meta({
      description:
        "The buyer's online withdrawal page (a signed, single-use link) once the purchase is paid, when its products' cancellation terms allow the buyer's own withdrawal; null otherwise",
    }),
    checked_at: z.string(),
  })
  .meta({
    id: 'CheckoutReturnPage',
    description: 'The return page as JSON (`Accept: application/json`); certificates and proofs are listed once issued.',
  });

const NOT_FOUND_MESSAGE = 'No purchase for this link';

/** The two return pages (mounted on the public router, beside the verification page). */
export function checkoutPageRoutes(service: CheckoutPageService, limiter: RateLimiterAbstract): RouteRegistration {
  const limit = rateLimit(limiter, { key: (ctx) => `checkout-page:${ctx.ip}`, subject: 'address' });
  const pages: {
    path: string;
    operationId: string;
    summary: string;
    description: string;
    render: (v: ReturnPageView, token: string) => string;
  }[] = [
    {
      path: COMPLETE_PAGE_PATH,
      operationId: 'getCheckoutCompletePage',
      summary: "The buyer's page after paying: live purchase status and, once issued, the certificates",
      description:
        "No API key; the default checkout success URL. HTML by default (reloads itself every 3 s while the status can still change); JSON with `Accept: application/json`. Shows waiting for payment confirmation, certificates being issued, certificates ready (each certificate number with its verification link, and each product's proof-of-coverage link), refunded, expired or failed; test-mode purchases say so. Once paid, it links the buyer's withdrawal page when the products allow the buyer's own withdrawal. Nothing personal beyond the named insured.",
      render: (v) => renderCompletePage(v),
    },
    {
      path: CANCELLED_PAGE_PATH,
      operationId: 'getCheckoutCancelledPage',
      summary: "The buyer's page after cancelling a checkout",
      description:
        "No API key; the default checkout cancel URL. HTML by default; JSON (the same view as the complete page) with `Accept: application/json`. Says the payment was cancelled and nothing was charged, with the purchase's status (a purchase paid after all says so).",
      render: (v, token) => renderCancelledPage(v, service.completePageUrl(v.purchase_id, token)),
    },
  ];
  return (router, registry) => {
    for (const p of pages) {
      router.get(
        p.path,
        async (ctx, next) => {
          // On every answer, the 404 and 429 included: the URL holds the return token.
          markTokenPage(ctx);
          ctx.set('Vary', 'Accept');
          await limit(ctx, next);
        },
        async (ctx) => {
          const view = await service.view(ctx.query);
          const wantsJson = ctx.accepts('html', 'json') === 'json';
          if (!view) {
            if (wantsJson) throw new AppError('NOT_FOUND', NOT_FOUND_MESSAGE);
            ctx.status = 404;
          }
          if (wantsJson) {
            ctx.body = view;
            return;
          }
          ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
          ctx.type = 'text/html; charset=utf-8';
          ctx.body = view ? p.render(view, parseReturnQuery(ctx.query)!.token) : renderNotFoundPage();
        },
      );
      registry.registerPath({
        method: 'get',
        path: p.path,
        operationId: p.operationId,
        tags: ['Checkout'],
        security: [],
        summary: p.summary,
        description: p.description,
        request: { query: ReturnPageQuery },
        responses: {
          200: {
            description: 'The page (HTML) or its JSON',
            content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: ReturnPageJson } },
          },
          404: {
            description:
              'NOT_FOUND: no purchase for this link (a missing or wrong token, an unknown purchase and a malformed query read the same); an HTML page, or the bare error with `Accept: application/json`',
            content: { 'text/html': { schema: { type: 'string' } }, 'application/json': { schema: BareErrorSchema } },
          },
          429: bareError('RATE_LIMIT_ERROR: too many requests from this address; retry after the Retry-After header (seconds)'),
        },
      });
    }
  };
}
