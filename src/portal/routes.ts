/**
 * The agency portal under /portal: staff of an agency sign in through the OpenID Connect
 * provider and manage their account's API keys and webhook endpoints, follow events and their
 * deliveries, find purchases and their certificates, follow claims (an insurer's or MGA's
 * adjusters decide them), and read the audit log and account. It
 * calls the same domain services as the API (keys, webhook endpoints, events, purchases,
 * search, certificates; the accounts domain's teammate service and the audit service) in this
 * process, for the teammate's account in the mode the page shows; it holds no repository or
 * database handle: even its sessions are the accounts service's (koa-session's store).
 *
 *   GET  /portal?mode=test|live       the overview (where sign-in leads without `next`): recent purchases,
 *                                     failing webhook endpoints, keys to check (src/portal/pages/overview.ts)
 *   GET  /portal/sign-in?next=/portal/… → the provider's sign-in (authorization code + PKCE)
 *   GET  /portal/callback             ← the provider; the teammate whose `idp_teammate_uuid` is the `sub`
 *   POST /portal/sign-out             → the provider's sign-out (RP-initiated logout: id_token_hint,
 *                                     post_logout_redirect_uri), then /portal/signed-out; the next
 *                                     sign-in from that browser asks for the password (prompt=login)
 *   GET  /portal/keys?mode=test|live  the keys of one mode; POST /portal/keys creates one (admin)
 *   POST /portal/keys/{id}/rotate|freeze|unfreeze, GET+POST /portal/keys/{id}/delete (admin);
 *                                     GET …/{id}/rotate|freeze asks first for a live key
 *   GET  /portal/keys/{id}/issued     a created or rotated key's value, shown once (admin)
 *   GET  /portal/webhooks?mode=…      endpoints; GET …/{id} its recent deliveries, POST …/{id}/test (admin) the newest event
 *                                     it takes sent to it alone; POST creates one, POST …/{id}/enable|disable,
 *                                     GET+POST …/{id}/delete (admin); GET …/{id}/created its secret, shown once
 *   GET  /portal/events?mode=…        newest events; GET …/{id} its deliveries and attempts; POST …/{id}/resend (admin; endpoint_id: to that one only)
 *   GET  /portal/purchases?mode=…&q=… the API's purchase search; GET …/{id} timeline, units, certificates (links, QR);
 *                                     GET …/{id}/cancel, POST …/{id}/cancel/preview (the refund quote; GET …/preview/{quote} shows it), POST …/{id}/cancel;
 *                                     GET …/{id}/holders/new, POST …/{id}/holders; GET+POST …/{id}/holders/{holderId}/remove; GET …/{id}/endorse,
 *                                     POST …/{id}/endorse/preview (the endorsement quote; GET …/preview/{quote}), POST …/{id}/endorse (admin)
 *   GET  /portal/claims?mode=…&status=… the claims the account sees; GET …/{id} one with its history;
 *                                     POST …/{id}/actions an adjuster's decision (src/portal/pages/claims.ts)
 *   GET  /portal/audit                the account's audit log
 *   GET  /portal/account              slug, public ids, return URLs, teammates and roles;
 *   POST /portal/account/return-urls, POST /portal/teammates/{id}/role (admin; the last admin stays one)
 *
 * Sessions are server-side (the accounts service's `sessionStore`): an HttpOnly, SameSite=Lax cookie
 * (Secure when PUBLIC_BASE_URL is https) holding a random id, an idle timeout (rolling) and an
 * absolute one from sign-in; a new id at sign-in. Every POST carries the session's CSRF token
 * (koa-csrf); a page answers 403 without it. A viewer's POST is refused (403) before anything
 * runs. Every change answers with a 303 to a page showing its result (post/redirect/get; a
 * one-time secret waits in the session for that page and is removed as it is shown) and a form
 * sent twice is carried out once (src/portal/form-once.ts). Every change is recorded in the audit log (actor `portal`, the teammate's email and the
 * client's address) before it runs. `next` only ever leads to a path under /portal.
 * Pages are `no-store` with a Content-Security-Policy that allows only this origin's assets.
 *
 * This file holds the session, CSRF and sign-in flow and the middleware chain; the pages are in
 * src/portal/pages/ (keys, activity: webhooks and events, purchases, account and audit), each
 * registered on the signed-in router with the shared helpers of src/portal/kit.ts.
 */
import type Koa from 'koa';
import Router from '@koa/router';
import compose from 'koa-compose';
import bodyParser from 'koa-bodyparser';
import session from 'koa-session';
import CSRF from 'koa-csrf';
import crypto from 'node:crypto';
import type { AppState } from '../http/context';
import { PORTAL_CSS, PORTAL_JS } from './assets';
import { messagePage } from './views';
import { createPortalKit, type PortalCtx as Ctx, type PortalDeps, type PortalOptions } from './kit';
import { registerKeyPages } from './pages/keys';
import { registerWebhookAndEventPages } from './pages/activity';
import { registerPurchasePages } from './pages/purchases';
import { registerAccountPages } from './pages/account';
import { registerOverviewPage } from './pages/overview';
import { registerClaimPages } from './pages/claims';
import { formOnce } from './form-once';

export type { PortalDeps, PortalOptions } from './kit';

export const PORTAL_PREFIX = '/portal';
const COOKIE = 'coi_portal_session';
/**
 * Set at sign-out (signed, 30 days): the next sign-in from this browser makes the provider ask
 * for the password (`prompt=login`), even when the provider's own session outlived the sign-out
 * (its question answered "stay", the tab closed on it); cleared by that sign-in.
 */
const REAUTH_COOKIE = 'coi_portal_reauth';

/**
 * A `next` parameter that stays inside the portal: a path under /portal, no scheme, host or `//`;
 * anything else (or none) is the overview, /portal.
 */
export function safeNext(value: unknown): string {
  if (typeof value !== 'string' || value.length > 512) return '/portal';
  if (!/^\/portal(\/[A-Za-z0-9._~\-/]*)?(\?[A-Za-z0-9._~\-=&%]*)?$/.test(value) || value.includes('//') || value.includes('/..')) {
    return '/portal';
  }
  return value;
}

/** One route of the portal; `signedIn`: only for a signed-in teammate (the rest: assets and the sign-in flow). */
export interface PortalRoute {
  method: string;
  path: string;
  signedIn: boolean;
}

/**
 * The portal as one Koa middleware: handles /portal and everything under it, passes any other
 * path on. Errors inside are answered as pages (never the API's JSON envelope). `routes` lists
 * what it serves (the security suite calls each).
 */
export function createPortal(
  app: Koa<AppState>,
  deps: PortalDeps,
  options: PortalOptions,
): Koa.Middleware<AppState> & { routes: PortalRoute[] } {
  app.keys = options.sessionKeys;
  const idleMs = options.idleMinutes * 60_000;
  const absoluteMs = options.absoluteHours * 3600_000;
  let lastSweep = 0;

  const sessions = session(
    {
      key: COOKIE,
      maxAge: idleMs,
      rolling: true,
      httpOnly: true,
      signed: true,
      sameSite: 'lax',
      secure: options.secureCookie,
      genid: () => crypto.randomBytes(32).toString('base64url'),
      store: deps.accounts.sessionStore,
    },
    app,
  );

  const kit = createPortalKit(deps, options);
  const { frame, send, redirect } = kit;

  /** The signed-in teammate, re-read on every request (a role change or removal applies at once). */
  const requireTeammate: Koa.Middleware<AppState> = async (rawCtx, next) => {
    const ctx = rawCtx as unknown as Ctx;
    const s = ctx.session;
    const fresh = s?.teammateSub && s.signedInAt && Date.now() - s.signedInAt < absoluteMs;
    const signedIn = fresh ? await deps.accounts.findSignedIn(s.teammateSub!) : null;
    if (!signedIn) {
      if (s?.teammateSub) ctx.session = null; // expired or no longer a teammate: a new sign-in
      if (ctx.method === 'GET') return redirect(ctx, `/portal/sign-in?next=${encodeURIComponent(safeNext(ctx.url))}`);
      return send(
        ctx,
        401,
        messagePage({ title: 'Signed out', csrf: '' }, 'Your session has ended; nothing was changed.', {
          href: '/portal/sign-in',
          label: 'Sign in again',
        }),
      );
    }
    const { teammate, account } = signedIn;
    ctx.state.teammate = teammate;
    ctx.state.viewer = {
      name: teammate.name,
      email: teammate.email,
      role: teammate.portalRole,
      accountName: account.name,
      accountSlug: account.slug,
    };
    return next();
  };

  const open = new Router<AppState>({ prefix: PORTAL_PREFIX });
  open.get('/assets/portal.css', (ctx) => {
    ctx.type = 'text/css';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = PORTAL_CSS;
  });
  open.get('/assets/portal.js', (ctx) => {
    ctx.type = 'application/javascript';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = PORTAL_JS;
  });
  open.get('/sign-in', async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    let begun: Awaited<ReturnType<typeof deps.relyingParty.begin>>;
    try {
      begun = await deps.relyingParty.begin(safeNext(ctx.query.next), ctx.cookies.get(REAUTH_COOKIE, { signed: true }) === '1');
    } catch (err) {
      ctx.state.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'portal identity provider unreachable');
      return send(
        ctx,
        503,
        messagePage(frame(ctx, 'Sign-in unavailable'), 'The identity provider cannot be reached right now. Try again in a minute.', {
          href: '/portal/sign-in',
          label: 'Try again',
        }),
      );
    }
    ctx.session!.pending = begun.pending;
    redirect(ctx, begun.url);
  });
  open.get('/callback', async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const pending = ctx.session?.pending;
    const failed = (why: string, status = 400) =>
      send(ctx, status, messagePage(frame(ctx, 'Sign-in failed'), why, { href: '/portal/sign-in', label: 'Sign in again' }));
    if (!pending) return failed('This sign-in was not started in this browser, or it has expired.');
    delete ctx.session!.pending;
    let result: { sub: string; idToken: string | undefined };
    try {
      result = await deps.relyingParty.complete(ctx.querystring, pending);
    } catch (err) {
      ctx.state.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'portal sign-in refused');
      return failed(`The identity provider's answer was refused (${err instanceof Error ? err.message : 'invalid response'}).`);
    }
    const teammate = await deps.accounts.findTeammate(result.sub);
    if (!teammate)
      return failed('Your identity provider account is not a teammate of any agency here. Ask an admin of your agency to add you.', 403);
    // A new session id at sign-in: a session id planted before sign-in is worth nothing after it.
    await ctx.session!.regenerate();
    Object.assign(ctx.session!, { teammateSub: teammate.idpTeammateUuid, signedInAt: Date.now(), idToken: result.idToken });
    ctx.cookies.set(REAUTH_COOKIE, null, { signed: true });
    redirect(ctx, pending.next);
  });
  open.get('/signed-out', (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    send(
      ctx,
      200,
      messagePage(frame(ctx, 'Signed out'), 'You are signed out of the agency portal.', { href: '/portal/sign-in', label: 'Sign in' }),
    );
  });
  open.post('/sign-out', async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const idToken = ctx.session?.idToken;
    ctx.session = null;
    ctx.cookies.set(REAUTH_COOKIE, '1', {
      signed: true,
      httpOnly: true,
      sameSite: 'lax',
      secure: options.secureCookie,
      maxAge: 30 * 24 * 3600_000,
    });
    redirect(ctx, (await deps.relyingParty.signOutUrl(idToken)) ?? '/portal/signed-out');
  });

  const pages = new Router<AppState>({ prefix: PORTAL_PREFIX });
  registerOverviewPage(pages, kit);
  registerKeyPages(pages, kit);
  registerWebhookAndEventPages(pages, kit);
  registerPurchasePages(pages, kit);
  registerClaimPages(pages, kit);
  registerAccountPages(pages, kit);

  const csp = [
    "default-src 'none'",
    "style-src 'self'",
    "script-src 'self'",
    "img-src 'self' data:",
    // The portal's script reads an endpoint's page again to refresh its deliveries in place.
    "connect-src 'self'",
    `form-action 'self' ${deps.relyingParty.issuerOrigin}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');

  const chain = compose([
    async (rawCtx: Koa.ParameterizedContext<AppState>, next: Koa.Next) => {
      const ctx = rawCtx as unknown as Ctx;
      ctx.set('Content-Security-Policy', csp);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Referrer-Policy', 'same-origin');
      if (!ctx.path.startsWith('/portal/assets/')) ctx.set('Cache-Control', 'no-store');
      // TLS may end at a proxy: the cookie is Secure whenever the public URL is https.
      if (options.secureCookie) (ctx.cookies as unknown as { secure: boolean }).secure = true;
      try {
        await next();
        if (ctx.status === 404 && ctx.body === undefined) {
          send(
            ctx,
            404,
            messagePage(frame(ctx, 'Page not found'), 'There is no such page in the portal.', {
              href: '/portal/keys',
              label: 'Go to the API keys',
            }),
          );
        }
      } catch (err) {
        const status = (err as { status?: number }).status;
        if (status === 403 && (err as Error).message === 'Invalid CSRF token') {
          return send(
            ctx,
            403,
            messagePage(
              { title: 'Form expired', csrf: '' },
              'This form expired or did not come from this portal, so nothing was changed. Go back, reload the page and try again.',
              { href: '/portal/keys', label: 'Back to the API keys' },
            ),
          );
        }
        if (status === 400 || status === 413 || status === 415) {
          return send(ctx, status, messagePage({ title: 'Bad request', csrf: '' }, 'The form could not be read, so nothing was changed.'));
        }
        ctx.state.log.error({ err }, 'portal page failed');
        send(
          ctx,
          500,
          messagePage(
            { title: 'Something went wrong', csrf: '' },
            `The page failed; nothing more was changed. Quote request id ${ctx.state.requestId} to your operator.`,
          ),
        );
      } finally {
        if (Date.now() - lastSweep > 600_000) {
          lastSweep = Date.now();
          deps.accounts.deleteExpiredSessions().catch((e: unknown) => ctx.state.log.warn({ err: e }, 'portal session sweep failed'));
        }
      }
    },
    sessions,
    bodyParser({ enableTypes: ['form'], formLimit: '16kb' }) as unknown as Koa.Middleware<AppState>,
    new CSRF({ excludedMethods: ['GET', 'HEAD', 'OPTIONS'], disableQuery: true }) as Koa.Middleware<AppState>,
    open.routes() as unknown as Koa.Middleware<AppState>,
    requireTeammate,
    formOnce(),
    pages.routes() as unknown as Koa.Middleware<AppState>,
  ] as Koa.Middleware<AppState>[]);

  const middleware: Koa.Middleware<AppState> = async (ctx, next) => {
    if (ctx.path === PORTAL_PREFIX || ctx.path.startsWith(`${PORTAL_PREFIX}/`)) return chain(ctx, async () => undefined);
    return next();
  };
  const list = (router: Router<AppState>, signedIn: boolean) =>
    router.stack.flatMap((layer) =>
      layer.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: String(layer.path), signedIn })),
    );
  return Object.assign(middleware, { routes: [...list(open, false), ...list(pages, true)] });
}
