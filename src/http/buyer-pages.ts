/**
 * What the buyer's public pages behind a signed link share (the withdrawal page, the claim page):
 * no API key, HTML answers, and the token in the URL. So every answer, 4xx included, is
 * `no-store`, `no-referrer`, `noindex` and may not be framed; the pages load nothing (CSP
 * `default-src 'none'`, inline style only, forms posted to the page itself); a browser's
 * cross-site or same-site POST is refused before anything is looked at (CSRF); requests are
 * limited per client address with the limiter given (429 RATE_LIMIT_ERROR, bare). `registerBuyerPage`
 * documents a page in the OpenAPI document with the answers every such page gives.
 */
import bodyParser from 'koa-bodyparser';
import type { Middleware, ParameterizedContext } from 'koa';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError } from '../shared/errors';
import { rateLimit } from './gateway';
import type Router from '@koa/router';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import type { AppState } from './context';
import { bareError } from './openapi';

type PageContext = ParameterizedContext<AppState>;

/**
 * Marks the answer of a page whose URL holds a token (these pages, the checkout return pages): its
 * errors bare (no envelope), and neither kept (`no-store`), passed on (`no-referrer`) nor indexed.
 * Set before anything else, so the 4xx and 429 answers carry it too.
 */
export function markTokenPage(ctx: PageContext): void {
  ctx.state.errorStyle = 'bare';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Robots-Tag', 'noindex');
}

/** The headers every answer of a buyer page carries (`markTokenPage`, not framed), and its per-address limit (`name` keys its budget). */
export function buyerPageHeaders(limiter: RateLimiterAbstract, name: string): Middleware<AppState> {
  const limit = rateLimit(limiter, { key: (ctx) => `${name}:${ctx.ip}`, subject: 'address' });
  return async (ctx, next) => {
    markTokenPage(ctx);
    ctx.set('X-Frame-Options', 'DENY');
    await limit(ctx, next);
  };
}

/** Answers `body` (a whole HTML document) with `status` under the pages' content security policy. */
export function answerHtml(ctx: PageContext, status: number, body: string): void {
  ctx.status = status;
  ctx.set(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

/** Whether the browser says the POST came from a form of another site (Sec-Fetch-Site). */
export function crossSitePost(ctx: PageContext): boolean {
  const site = ctx.get('sec-fetch-site');
  return site === 'cross-site' || site === 'same-site';
}

/** The posted form's fields (an empty object for anything that is not a flat form). */
export function formFields(ctx: PageContext): Record<string, unknown> {
  const form = (ctx.request as { body?: unknown }).body;
  return form && typeof form === 'object' && !Array.isArray(form) ? (form as Record<string, unknown>) : {};
}

/** Form bodies only, at most `limit` (e.g. '4kb'): 413 PAYLOAD_TOO_LARGE naming `what`, 400 VALIDATION_ERROR for a body that is not a form. */
export function formBody(limit: string, what: string): Middleware<AppState> {
  return bodyParser({
    enableTypes: ['form'],
    formLimit: limit,
    onerror: (err: Error & { status?: number }) => {
      if (err.status === 413)
        throw new AppError('PAYLOAD_TOO_LARGE', `Request body is larger than the ${limit.replace('kb', ' KiB')} ${what} needs`, {
          cause: err,
        });
      throw new AppError('VALIDATION_ERROR', 'Request body is not a valid form', { cause: err });
    },
  }) as Middleware<AppState>;
}

/** A buyer page behind a signed link: what `mountBuyerPage` serves at `path` (with `:token`). */
export interface BuyerPage<V> {
  path: string;
  /** The per-address limit's budget name, e.g. `withdraw-page`. */
  limitName: string;
  /** The largest form (e.g. '4kb') and what it is, for the 413 message ("a withdrawal form"). */
  formLimit: string;
  formName: string;
  /** The view a GET shows (never changes anything) and the one a POSTed form leads to. */
  show: (token: string) => Promise<V>;
  submit: (token: string, form: Record<string, unknown>) => Promise<V>;
  render: (v: V) => string;
  /** The HTTP status of a view after a GET or a POST. */
  status: (v: V, method: 'GET' | 'POST') => number;
  /** The page answering a cross-site POST (403, nothing looked at). */
  crossSiteRefusal: () => string;
}

/**
 * Mounts `page` on `router`: `GET path` shows it, `POST path` (a form of at most `formLimit`)
 * submits it, a cross-site POST is refused unread (CSRF); every answer HTML under the buyer
 * pages' headers, CSP and per-address limit (`limiter`).
 */
export function mountBuyerPage<V>(router: Router<AppState>, limiter: RateLimiterAbstract, page: BuyerPage<V>): void {
  const headers = buyerPageHeaders(limiter, page.limitName);
  router.get(page.path, headers, async (ctx) => {
    const view = await page.show(ctx.params.token ?? '');
    answerHtml(ctx, page.status(view, 'GET'), page.render(view));
  });
  router.post(page.path, headers, formBody(page.formLimit, page.formName), async (ctx) => {
    if (crossSitePost(ctx)) return answerHtml(ctx, 403, page.crossSiteRefusal());
    const view = await page.submit(ctx.params.token ?? '', formFields(ctx));
    answerHtml(ctx, page.status(view, 'POST'), page.render(view));
  });
}

/** An OpenAPI response of an HTML page, with its `description`. */
export const htmlResponse = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' as const } } } });

/** One operation of a buyer page in the OpenAPI document: its names, texts and answers of its own. */
export interface BuyerPageOperation {
  operationId: string;
  summary: string;
  description: string;
  responses: Record<number, ReturnType<typeof htmlResponse>>;
}

/**
 * Documents `page` (as `mountBuyerPage` serves it) in the OpenAPI document: its GET and its form's
 * POST, without API key, `token` the path parameter and `form` the POST's form. Beside each
 * operation's own answers, what every buyer page answers: 404 for a forged, damaged or unknown
 * link, 429 over the per-address limit, and for the POST 403 cross-site and 413 over `formLimit`.
 */
export function registerBuyerPage(
  registry: OpenAPIRegistry,
  page: Pick<BuyerPage<unknown>, 'path' | 'formLimit'>,
  docs: { token: z.ZodObject; form: z.ZodType; get: BuyerPageOperation; post: BuyerPageOperation },
): void {
  const common = { path: page.path.replace(':token', '{token}'), tags: ['Checkout'], security: [] };
  const rateLimited = bareError('RATE_LIMIT_ERROR: too many requests from this address; retry after the Retry-After header (seconds)');
  const { responses: getAnswers, ...get } = docs.get;
  registry.registerPath({
    ...common,
    method: 'get',
    ...get,
    request: { params: docs.token },
    responses: {
      404: htmlResponse('A forged, damaged or unknown link (one page for all; nothing about any purchase)'),
      429: rateLimited,
      ...getAnswers,
    },
  });
  const { responses: postAnswers, ...post } = docs.post;
  registry.registerPath({
    ...common,
    method: 'post',
    ...post,
    request: { params: docs.token, body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: docs.form } } } },
    responses: {
      403: htmlResponse('Sent from another site (Sec-Fetch-Site): refused, nothing looked at'),
      404: htmlResponse('A forged, damaged or unknown link'),
      413: bareError(`PAYLOAD_TOO_LARGE: the body is larger than ${page.formLimit.replace(/kb$/, ' KiB')}`),
      429: rateLimited,
      ...postAnswers,
    },
  });
}
