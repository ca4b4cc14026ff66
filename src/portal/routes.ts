/**
 * The agency portal under /portal: staff of an agency sign in through the OpenID Connect
 * provider and manage their account's API keys and webhook endpoints, follow events and their
 * deliveries, find purchases and their certificates, and read the audit log and account. It
 * calls the same domain services as the API (keys, webhook endpoints, events, purchases,
 * search, certificates; the accounts and audit repositories) in this process, for the
 * teammate's account in the mode the page shows; it writes no table of its own but its sessions.
 *
 *   GET  /portal                      → /portal/keys
 *   GET  /portal/sign-in?next=/portal/… → the provider's sign-in (authorization code + PKCE)
 *   GET  /portal/callback             ← the provider; the teammate whose `idp_teammate_uuid` is the `sub`
 *   POST /portal/sign-out             → the provider's sign-out, then /portal/signed-out
 *   GET  /portal/keys?mode=test|live  the keys of one mode; POST /portal/keys creates one (admin)
 *   POST /portal/keys/{id}/rotate|freeze|unfreeze, GET+POST /portal/keys/{id}/delete (admin)
 *   GET  /portal/webhooks?mode=…      endpoints; POST creates one (secret shown once), POST …/{id}/enable|disable,
 *                                     GET+POST …/{id}/delete (admin)
 *   GET  /portal/events?mode=…        newest events; GET …/{id} its deliveries and attempts; POST …/{id}/resend (admin)
 *   GET  /portal/purchases?mode=…&q=… the API's purchase search; GET …/{id} timeline, units, certificates (links, QR);
 *                                     GET …/{id}/cancel, POST …/{id}/cancel/preview (the refund quote), POST …/{id}/cancel;
 *                                     GET …/{id}/holders/new, POST …/{id}/holders; GET …/{id}/endorse,
 *                                     POST …/{id}/endorse/preview (the endorsement quote), POST …/{id}/endorse (admin)
 *   GET  /portal/audit                the account's audit log
 *   GET  /portal/account              slug, public ids, return URLs, teammates and roles;
 *   POST /portal/account/return-urls, POST /portal/teammates/{id}/role (admin; the last admin stays one)
 *
 * Sessions are server-side (src/portal/session-store.ts): an HttpOnly, SameSite=Lax cookie
 * (Secure when PUBLIC_BASE_URL is https) holding a random id, an idle timeout (rolling) and an
 * absolute one from sign-in; a new id at sign-in. Every POST carries the session's CSRF token
 * (koa-csrf); a page answers 403 without it. A viewer's POST is refused (403) before anything
 * runs. Every change is recorded in the audit log (actor `portal`, the teammate's email and the
 * client's address) before it runs. `next` only ever leads to a path under /portal.
 * Pages are `no-store` with a Content-Security-Policy that allows only this origin's assets.
 */
import type Koa from 'koa';
import Router from '@koa/router';
import compose from 'koa-compose';
import bodyParser from 'koa-bodyparser';
import session from 'koa-session';
import CSRF from 'koa-csrf';
import crypto from 'node:crypto';
import type { AppState } from '../http/context';
import type { AccountsRepository, Teammate } from '../accounts/repository';
import type { ApiKeyService, CreateKeyInput } from '../api-keys/service';
import type { KeyMode } from '../api-keys/secrets';
import type { AccountView } from '../api-keys/service';
import QRCode from 'qrcode';
import { CreateWebhookEndpointBody } from '../webhook-endpoints/schemas';
import { returnUrlProblem } from '../checkout-pages/return-urls';
import {
  deleteEndpointPage,
  emptyEndpointForm,
  endpointCreatedPage,
  eventPage,
  eventsPage,
  purchasePage,
  purchasesPage,
  webhooksPage,
  cancelFormPage,
  cancelPreviewPage,
  endorseFormPage,
  endorsePreviewPage,
  holderFormPage,
  type HolderForm,
  type CancellableUnit,
  type EndpointForm,
} from './views-activity';
import type { AuditRepository } from '../audit/repository';
import type { WebhookEndpointService } from '../webhook-endpoints/service';
import type { EventService } from '../events/service';
import type { PurchaseService } from '../purchases/service';
import type { PurchaseDetail } from '../purchases/schemas';
import type { CertificateHolderService } from '../certificate-holders/service';
import type { EndorsementService } from '../endorsements/service';
import { CreateCertificateHolderRequest } from '../certificate-holders/schemas';
import { EndorsementQuoteRequest } from '../endorsements/schemas';
import type { PurchaseSearchService } from '../purchase-search/service';
import type { CertificateService } from '../certificates/service';
import { audited } from '../audit/audited';
import { AppError } from '../shared/errors';
import type { PortalSessionStore } from './session-store';
import type { PendingSignIn, RelyingParty } from './oidc';
import { PORTAL_CSS, PORTAL_JS } from './assets';
import {
  accountPage,
  auditPage,
  deleteKeyPage,
  emptyCreateKeyForm,
  issuedKeyPage,
  keysPage,
  messagePage,
  type CreateKeyForm,
  type Frame,
  type ReturnUrlsForm,
  type Viewer,
} from './views';

export interface PortalDeps {
  apiKeys: ApiKeyService;
  accounts: AccountsRepository;
  webhookEndpoints: WebhookEndpointService;
  events: EventService;
  purchases: Pick<PurchaseService, 'get' | 'sellingKeyOf' | 'quoteCancellation' | 'cancel'>;
  certificateHolders: Pick<CertificateHolderService, 'list' | 'add'>;
  endorsements: Pick<EndorsementService, 'quote' | 'endorse'>;
  purchaseSearch: Pick<PurchaseSearchService, 'searchAsRoot'>;
  certificates: Pick<CertificateService, 'getCertificates'>;
  audit: AuditRepository;
  sessions: PortalSessionStore;
  relyingParty: RelyingParty;
}

export interface PortalOptions {
  /** Signing keys of the session cookie (the first signs). */
  sessionKeys: string[];
  idleMinutes: number;
  absoluteHours: number;
  /** The cookie is Secure (PUBLIC_BASE_URL is https; TLS may end at a proxy). */
  secureCookie: boolean;
  defaultGraceHours: number;
}

/** What the portal keeps in a session. */
interface PortalSession {
  teammateSub?: string;
  signedInAt?: number;
  idToken?: string;
  pending?: PendingSignIn;
  flash?: string;
  secret?: string;
}

type Ctx = Koa.ParameterizedContext<AppState & { _csrf?: string; teammate?: Teammate; viewer?: Viewer }> & {
  session: (PortalSession & { regenerate(): Promise<void> }) | null;
};

export const PORTAL_PREFIX = '/portal';
const COOKIE = 'coi_portal_session';

/** A `next` parameter that stays inside the portal: a path under /portal, no scheme, host or `//`. */
export function safeNext(value: unknown): string {
  if (typeof value !== 'string' || value.length > 512) return '/portal/keys';
  if (!/^\/portal(\/[A-Za-z0-9._~\-/]*)?(\?[A-Za-z0-9._~\-=&%]*)?$/.test(value) || value.includes('//') || value.includes('/..')) {
    return '/portal/keys';
  }
  return value;
}

const modeOf = (v: unknown): KeyMode => (v === 'live' ? 'live' : 'test');

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
      store: {
        get: (key: string) => deps.sessions.get(key),
        set: (key: string, sess: Record<string, unknown>, maxAge: number) => deps.sessions.set(key, sess, maxAge),
        destroy: (key: string) => deps.sessions.destroy(key),
      },
    },
    app,
  );

  const frame = (ctx: Ctx, title: string, extra: Partial<Frame> = {}): Frame => {
    const flash = ctx.session?.flash ?? null;
    if (ctx.session && flash) delete ctx.session.flash;
    return { title, csrf: ctx.state._csrf ?? '', viewer: ctx.state.viewer, flash, ...extra };
  };
  const send = (ctx: Ctx, status: number, body: string) => {
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = body;
  };
  const redirect = (ctx: Ctx, to: string) => {
    ctx.status = 303;
    ctx.redirect(to);
  };

  /** The signed-in teammate, re-read on every request (a role change or removal applies at once). */
  const requireTeammate: Koa.Middleware<AppState> = async (rawCtx, next) => {
    const ctx = rawCtx as unknown as Ctx;
    const s = ctx.session;
    const fresh = s?.teammateSub && s.signedInAt && Date.now() - s.signedInAt < absoluteMs;
    const teammate = fresh ? await deps.accounts.findTeammateByIdpUuid(s.teammateSub!) : null;
    const account = teammate ? await deps.accounts.findById(teammate.rootAccountId) : null;
    if (!teammate || !account) {
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

  const requireAdmin: Koa.Middleware<AppState> = async (rawCtx, next) => {
    const ctx = rawCtx as unknown as Ctx;
    if (ctx.state.teammate?.portalRole !== 'admin') {
      return send(
        ctx,
        403,
        messagePage(
          frame(ctx, 'Not allowed'),
          'Your role (viewer) can only read. Ask an admin of your account to make this change; nothing was changed.',
          { href: '/portal/keys', label: 'Back to the API keys' },
        ),
      );
    }
    return next();
  };

  /** Runs a change on the audit log as the signed-in teammate. */
  const record = <T>(
    ctx: Ctx,
    action: string,
    target: { kind: string; id: string | null },
    act: () => Promise<T>,
    details: (r: T) => Record<string, unknown>,
  ) =>
    audited(
      deps.audit,
      {
        actorKind: 'portal',
        actor: ctx.state.teammate!.email,
        action,
        targetKind: target.kind,
        targetId: target.id,
        rootAccountId: ctx.state.teammate!.rootAccountId,
        reason: null,
        clientAddress: ctx.ip,
      },
      act,
      { details, isRefusal: (err) => err instanceof AppError },
    ).then((r) => r.result);

  /** The key with this id if it is the signed-in account's, else a 404 page (another account's key looks absent). */
  const ownKey = async (ctx: Ctx) => {
    const id = /^\d{1,9}$/.test(String(ctx.params?.id)) ? Number(ctx.params.id) : NaN;
    const key = Number.isFinite(id) ? await deps.apiKeys.get(id) : null;
    if (!key || key.rootAccountId !== ctx.state.teammate!.rootAccountId) {
      send(
        ctx,
        404,
        messagePage(frame(ctx, 'No such key'), 'This account has no such API key.', {
          href: '/portal/keys',
          label: 'Back to the API keys',
        }),
      );
      return null;
    }
    return key;
  };

  const keysView = async (ctx: Ctx, mode: KeyMode, form: CreateKeyForm, status = 200) => {
    const teammate = ctx.state.teammate!;
    const [keys, teammates] = await Promise.all([
      deps.apiKeys.list(teammate.rootAccountId),
      deps.accounts.listTeammates(teammate.rootAccountId),
    ]);
    send(
      ctx,
      status,
      keysPage(frame(ctx, 'API keys', { active: 'keys', modes: { current: mode, href: (m) => `/portal/keys?mode=${m}` } }), {
        keys: keys.filter((k) => k.mode === mode && k.status !== 'deleted'),
        mode,
        canChange: teammate.portalRole === 'admin',
        teammates,
        form,
        defaultGraceHours: options.defaultGraceHours,
      }),
    );
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
    const { url, pending } = await deps.relyingParty.begin(safeNext(ctx.query.next));
    ctx.session!.pending = pending;
    redirect(ctx, url);
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
    const teammate = await deps.accounts.findTeammateByIdpUuid(result.sub);
    if (!teammate)
      return failed('Your identity provider account is not a teammate of any agency here. Ask an admin of your agency to add you.', 403);
    // A new session id at sign-in: a session id planted before sign-in is worth nothing after it.
    await ctx.session!.regenerate();
    Object.assign(ctx.session!, { teammateSub: teammate.idpTeammateUuid, signedInAt: Date.now(), idToken: result.idToken });
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
    redirect(ctx, (await deps.relyingParty.signOutUrl(idToken)) ?? '/portal/signed-out');
  });

  const pages = new Router<AppState>({ prefix: PORTAL_PREFIX });
  pages.get('/', (rawCtx) => redirect(rawCtx as unknown as Ctx, '/portal/keys'));
  pages.get('/keys', async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    await keysView(ctx, modeOf(ctx.query.mode), emptyCreateKeyForm());
  });
  pages.post('/keys', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const mode = modeOf(body.mode);
    const str = (v: unknown) => (typeof v === 'string' ? v : '');
    const form: CreateKeyForm = {
      values: {
        name: str(body.name).trim(),
        description: str(body.description).trim(),
        agentId: str(body.agent_id),
        platformFeeBps: str(body.platform_fee_bps).trim(),
      },
      errors: {},
    };
    if (!form.values.name) form.errors.name = 'Enter a name for the key.';
    else if (form.values.name.length > 200) form.errors.name = 'The name is at most 200 characters.';
    if (form.values.description.length > 1000) form.errors.description = 'The description is at most 1000 characters.';
    const fee =
      form.values.platformFeeBps === '' ? null : /^\d{1,5}$/.test(form.values.platformFeeBps) ? Number(form.values.platformFeeBps) : NaN;
    if (fee !== null && !(Number.isInteger(fee) && fee >= 0 && fee <= 10000))
      form.errors.platformFeeBps = 'Enter a whole number from 0 to 10000, or leave it empty.';
    const agentId = form.values.agentId === '' ? null : /^\d{1,9}$/.test(form.values.agentId) ? Number(form.values.agentId) : NaN;
    if (agentId !== null && !Number.isFinite(agentId)) form.errors.agentId = 'Choose one of the listed agents.';
    if (Object.keys(form.errors).length) return keysView(ctx, mode, form, 400);
    const input: CreateKeyInput = {
      rootAccountId: ctx.state.teammate!.rootAccountId,
      name: form.values.name,
      description: form.values.description,
      mode,
      agentId,
      platformFeeBps: fee,
    };
    try {
      const issued = await record(
        ctx,
        'create_key',
        { kind: 'root_account', id: String(input.rootAccountId) },
        () => deps.apiKeys.create(input),
        (k) => ({
          api_key_id: k.id,
          name: k.name,
          mode: k.mode,
          agent_id: k.agentId,
          platform_fee_bps: k.platformFeeBps,
        }),
      );
      ctx.set('Cache-Control', 'no-store');
      send(ctx, 201, issuedKeyPage(frame(ctx, 'Key created', { active: 'keys' }), issued, 'created'));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      form.formError = `The key was not created: ${err.message}.`;
      if (/agent/.test(err.message)) form.errors.agentId = 'Choose one of the listed agents.';
      return keysView(ctx, mode, form, 400);
    }
  });
  pages.post('/keys/:id/rotate', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const key = await ownKey(ctx);
    if (!key) return;
    const raw = String((ctx.request.body as Record<string, unknown> | undefined)?.grace_hours ?? '');
    const grace = /^\d{1,4}$/.test(raw) && Number(raw) <= 8760 ? Number(raw) : NaN;
    if (!Number.isFinite(grace)) {
      ctx.session!.flash = 'The key was not rotated: choose how long the old value keeps working.';
      return redirect(ctx, `/portal/keys?mode=${key.mode}`);
    }
    try {
      const issued = await record(
        ctx,
        'rotate_key',
        { kind: 'api_key', id: String(key.id) },
        () => deps.apiKeys.rotate(key.id, grace),
        (k) => ({
          previous_value_expires_at: k.previousValueExpiresAt,
          grace_hours: grace,
        }),
      );
      ctx.set('Cache-Control', 'no-store');
      send(ctx, 200, issuedKeyPage(frame(ctx, 'Key rotated', { active: 'keys' }), issued, 'rotated'));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      ctx.session!.flash = `Key "${key.name}" was not rotated: ${err.message}.`;
      redirect(ctx, `/portal/keys?mode=${key.mode}`);
    }
  });
  for (const action of ['freeze', 'unfreeze'] as const) {
    pages.post(`/keys/:id/${action}`, requireAdmin, async (rawCtx) => {
      const ctx = rawCtx as unknown as Ctx;
      const key = await ownKey(ctx);
      if (!key) return;
      try {
        const k = await record(
          ctx,
          `${action}_key`,
          { kind: 'api_key', id: String(key.id) },
          () => deps.apiKeys[action](key.id),
          (r) => ({ status: r.status }),
        );
        ctx.session!.flash = `Key "${k.name}" is now ${k.status}.`;
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        ctx.session!.flash = `Key "${key.name}" was not changed: ${err.message}.`;
      }
      redirect(ctx, `/portal/keys?mode=${key.mode}`);
    });
  }
  pages.get('/keys/:id/delete', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const key = await ownKey(ctx);
    if (!key) return;
    send(ctx, 200, deleteKeyPage(frame(ctx, `Delete key "${key.name}"?`, { active: 'keys' }), key));
  });
  pages.post('/keys/:id/delete', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const key = await ownKey(ctx);
    if (!key) return;
    if ((ctx.request.body as Record<string, unknown> | undefined)?.confirm !== 'yes') {
      return send(
        ctx,
        400,
        deleteKeyPage(frame(ctx, `Delete key "${key.name}"?`, { active: 'keys' }), key, 'Tick the box to confirm, or keep the key.'),
      );
    }
    try {
      await record(
        ctx,
        'delete_key',
        { kind: 'api_key', id: String(key.id) },
        () => deps.apiKeys.delete(key.id),
        (r) => ({ status: r.status }),
      );
      ctx.session!.flash = `Key "${key.name}" is deleted.`;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      ctx.session!.flash = `Key "${key.name}" was not deleted: ${err.message}.`;
    }
    redirect(ctx, `/portal/keys?mode=${key.mode}`);
  });
  // Webhook endpoints, events and purchases: the API's services, for the account in the page's mode.
  const viewOf = (ctx: Ctx, mode: KeyMode): AccountView => ({ rootAccountId: ctx.state.teammate!.rootAccountId, mode, agentId: null });
  const idParam = (ctx: Ctx) => (/^\d{1,9}$/.test(String(ctx.params?.id)) ? Number(ctx.params.id) : 0);
  const notFoundPage = (ctx: Ctx, what: string, back: string) =>
    send(
      ctx,
      404,
      messagePage(frame(ctx, `No such ${what}`), `This account has no such ${what} in this mode.`, { href: back, label: 'Back' }),
    );

  const webhooksView = async (ctx: Ctx, mode: KeyMode, form: EndpointForm, status = 200) => {
    const { items } = await deps.webhookEndpoints.list(viewOf(ctx, mode), { pageSize: 100, pageIndex: 0 });
    send(
      ctx,
      status,
      webhooksPage(
        frame(ctx, 'Webhook endpoints', { active: 'webhooks', modes: { current: mode, href: (m) => `/portal/webhooks?mode=${m}` } }),
        {
          endpoints: items,
          mode,
          canChange: ctx.state.teammate!.portalRole === 'admin',
          form,
        },
      ),
    );
  };
  pages.get('/webhooks', async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    await webhooksView(ctx, modeOf(ctx.query.mode), emptyEndpointForm());
  });
  pages.post('/webhooks', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : []);
    const form: EndpointForm = {
      values: { url: String(body.url ?? '').trim(), description: String(body.description ?? '').trim(), events: list(body.events) },
      errors: {},
    };
    const events = form.values.events.includes('*') ? ['*'] : form.values.events;
    const parsed = CreateWebhookEndpointBody.safeParse({
      url: form.values.url,
      enabled_events: events,
      description: form.values.description,
    });
    if (!form.values.url) form.errors.url = 'Enter the URL events are sent to.';
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const at = issue.path[0] === 'enabled_events' ? 'events' : issue.path[0];
        if (at === 'url') form.errors.url ??= 'The URL is at most 2048 characters.';
        if (at === 'events')
          form.errors.events = events.length ? 'Choose event types from the list.' : 'Choose at least one event type, or all events.';
        if (at === 'description') form.errors.description = 'The description is at most 500 characters.';
      }
    }
    if (!parsed.success || Object.keys(form.errors).length) return webhooksView(ctx, mode, form, 400);
    try {
      const created = await record(
        ctx,
        'create_webhook_endpoint',
        { kind: 'root_account', id: String(ctx.state.teammate!.rootAccountId) },
        () => deps.webhookEndpoints.create(viewOf(ctx, mode), parsed.data),
        (e) => ({ webhook_endpoint_id: e.id, url: e.url, mode, enabled_events: e.enabled_events }),
      );
      ctx.set('Cache-Control', 'no-store');
      send(ctx, 201, endpointCreatedPage(frame(ctx, 'Endpoint added', { active: 'webhooks' }), created));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const urlProblem = err.details?.find((d) => d.path === 'url')?.message;
      if (urlProblem) form.errors.url = `This URL cannot be used: ${urlProblem}.`;
      else form.formError = `The endpoint was not added: ${err.message}.`;
      return webhooksView(ctx, mode, form, 400);
    }
  });
  for (const action of ['enable', 'disable'] as const) {
    pages.post(`/webhooks/:id/${action}`, requireAdmin, async (rawCtx) => {
      const ctx = rawCtx as unknown as Ctx;
      const mode = modeOf(ctx.query.mode);
      const id = idParam(ctx);
      try {
        const e = await record(
          ctx,
          `${action}_webhook_endpoint`,
          { kind: 'webhook_endpoint', id: String(id) },
          () => deps.webhookEndpoints.update(viewOf(ctx, mode), id, { disabled: action === 'disable' }),
          (r) => ({ status: r.status }),
        );
        ctx.session!.flash = `Endpoint ${e.url} is now ${e.status}.`;
      } catch (err) {
        if (err instanceof AppError && err.status === 404) return notFoundPage(ctx, 'webhook endpoint', `/portal/webhooks?mode=${mode}`);
        throw err;
      }
      redirect(ctx, `/portal/webhooks?mode=${mode}`);
    });
  }
  const ownEndpoint = async (ctx: Ctx, mode: KeyMode) => {
    try {
      return await deps.webhookEndpoints.get(viewOf(ctx, mode), idParam(ctx));
    } catch (err) {
      if (err instanceof AppError && err.status === 404) {
        notFoundPage(ctx, 'webhook endpoint', `/portal/webhooks?mode=${mode}`);
        return null;
      }
      throw err;
    }
  };
  pages.get('/webhooks/:id/delete', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const endpoint = await ownEndpoint(ctx, modeOf(ctx.query.mode));
    if (endpoint) send(ctx, 200, deleteEndpointPage(frame(ctx, 'Delete the endpoint?', { active: 'webhooks' }), endpoint));
  });
  pages.post('/webhooks/:id/delete', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const endpoint = await ownEndpoint(ctx, mode);
    if (!endpoint) return;
    if ((ctx.request.body as Record<string, unknown> | undefined)?.confirm !== 'yes') {
      return send(
        ctx,
        400,
        deleteEndpointPage(
          frame(ctx, 'Delete the endpoint?', { active: 'webhooks' }),
          endpoint,
          'Tick the box to confirm, or keep the endpoint.',
        ),
      );
    }
    await record(
      ctx,
      'delete_webhook_endpoint',
      { kind: 'webhook_endpoint', id: String(endpoint.id) },
      () => deps.webhookEndpoints.delete(viewOf(ctx, mode), endpoint.id),
      () => ({ url: endpoint.url }),
    );
    ctx.session!.flash = `Endpoint ${endpoint.url} is deleted.`;
    redirect(ctx, `/portal/webhooks?mode=${mode}`);
  });

  pages.get('/events', async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const { items, total } = await deps.events.list(viewOf(ctx, mode), { pageSize: 50, pageIndex: 0 });
    send(
      ctx,
      200,
      eventsPage(frame(ctx, 'Events', { active: 'events', modes: { current: mode, href: (m) => `/portal/events?mode=${m}` } }), {
        events: items,
        mode,
        total,
      }),
    );
  });
  pages.get('/events/:id', async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    try {
      const event = await deps.events.get(viewOf(ctx, mode), String(ctx.params.id));
      send(
        ctx,
        200,
        eventPage(frame(ctx, `Event ${event.type}`, { active: 'events' }), {
          event,
          mode,
          canChange: ctx.state.teammate!.portalRole === 'admin',
        }),
      );
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return notFoundPage(ctx, 'event', `/portal/events?mode=${mode}`);
      throw err;
    }
  });
  pages.post('/events/:id/resend', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const id = String(ctx.params.id);
    try {
      const r = await record(
        ctx,
        'resend_event',
        { kind: 'event', id },
        () => deps.events.resend(viewOf(ctx, mode), id),
        (x) => ({ deliveries: x.deliveries.length }),
      );
      ctx.session!.flash = r.deliveries.length
        ? `The event is being sent again to ${r.deliveries.length} endpoint${r.deliveries.length === 1 ? '' : 's'}.`
        : 'No endpoint takes this event: nothing was sent.';
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return notFoundPage(ctx, 'event', `/portal/events?mode=${mode}`);
      throw err;
    }
    redirect(ctx, `/portal/events/${id}?mode=${mode}`);
  });

  pages.get('/purchases', async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const q = typeof ctx.query.q === 'string' ? ctx.query.q : '';
    const teammate = ctx.state.teammate!;
    const profile = (await deps.accounts.findProfile(teammate.rootAccountId))!;
    const f = frame(ctx, 'Purchases', {
      active: 'purchases',
      modes: { current: mode, href: (m) => `/portal/purchases?mode=${m}${q ? `&q=${encodeURIComponent(q)}` : ''}` },
    });
    const empty = { total: 0, total_exact: true, page_index: 0, page_size: 50, has_more: false, purchases: [] };
    if (q.length > 200) return send(ctx, 400, purchasesPage(f, { mode, q, result: empty, error: 'Search for at most 200 characters.' }));
    const result = await deps.purchaseSearch.searchAsRoot(
      { rootAccountId: teammate.rootAccountId, mode },
      { idp_root_account_uuid: profile.idpRootAccountUuid, search_text: q, page_size: 50, page_index: 0 },
    );
    send(ctx, 200, purchasesPage(f, { mode, q, result }));
  });
  pages.get('/purchases/:id', async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const id = idParam(ctx);
    try {
      const view = viewOf(ctx, mode);
      const [purchase, certificates] = await Promise.all([
        deps.purchases.get(view, id),
        deps.certificates.getCertificates({ mode }, { rootAccountId: view.rootAccountId, agentId: null }, { purchase_id: id }),
      ]);
      const qr = new Map<string, string>();
      for (const c of certificates.certificates) {
        qr.set(c.verification_url, await QRCode.toDataURL(c.verification_url, { errorCorrectionLevel: 'M', margin: 1, width: 192 }));
      }
      const admin = ctx.state.teammate!.portalRole === 'admin';
      const inForce = ['issued', 'paid', 'awaiting_certificates'].includes(purchase.status);
      const holders = await deps.certificateHolders.list(await deps.purchases.sellingKeyOf(view, id), id);
      send(
        ctx,
        200,
        purchasePage(frame(ctx, `Purchase #${id}`, { active: 'purchases' }), {
          purchase,
          certificates,
          qr,
          mode,
          holders,
          canChange: admin && inForce,
          canCancel: admin && cancellableUnits(purchase).length > 0,
        }),
      );
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return notFoundPage(ctx, 'purchase', `/portal/purchases?mode=${mode}`);
      throw err;
    }
  });

  pages.get('/audit', async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const entries = await deps.audit.list({ limit: 200, rootAccountId: ctx.state.teammate!.rootAccountId });
    send(ctx, 200, auditPage(frame(ctx, 'Audit log', { active: 'audit' }), entries));
  });
  // Cancelling covered units: a form, a preview (the API's cancellation quote), then the cancel at that quote's price.
  const unitLabel = (i: PurchaseDetail['items'][number], u: PurchaseDetail['items'][number]['covered_units'][number]) =>
    `${i.product_name}: ${u.local_label}`;
  const cancellableUnits = (p: PurchaseDetail): CancellableUnit[] =>
    p.status === 'refunded'
      ? []
      : p.items.flatMap((i) =>
          i.covered_units.filter((u) => u.state === 'active' && !u.coverage_started).map((u) => ({ id: u.id, label: unitLabel(i, u) })),
        );
  const purchaseFor = async (ctx: Ctx, mode: KeyMode): Promise<PurchaseDetail | null> => {
    try {
      return await deps.purchases.get(viewOf(ctx, mode), idParam(ctx));
    } catch (err) {
      if (err instanceof AppError && err.status === 404) {
        notFoundPage(ctx, 'purchase', `/portal/purchases?mode=${mode}`);
        return null;
      }
      throw err;
    }
  };
  pages.get('/purchases/:id/cancel', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const purchase = await purchaseFor(ctx, mode);
    if (!purchase) return;
    send(
      ctx,
      200,
      cancelFormPage(frame(ctx, `Cancel covered units of purchase #${purchase.id}`, { active: 'purchases' }), {
        purchaseId: purchase.id,
        mode,
        units: cancellableUnits(purchase),
      }),
    );
  });
  pages.post('/purchases/:id/cancel/preview', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const purchase = await purchaseFor(ctx, mode);
    if (!purchase) return;
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const units = (Array.isArray(body.units) ? body.units : typeof body.units === 'string' ? [body.units] : []).map(String);
    const requestedBy = ['agency', 'buyer', 'insurer'].includes(String(body.requested_by))
      ? (String(body.requested_by) as 'agency')
      : 'agency';
    const reason = String(body.reason ?? '').trim();
    const offered = cancellableUnits(purchase);
    const again = (error: string) =>
      send(
        ctx,
        400,
        cancelFormPage(frame(ctx, `Cancel covered units of purchase #${purchase.id}`, { active: 'purchases' }), {
          purchaseId: purchase.id,
          mode,
          units: offered,
          error,
          values: { units, requestedBy, reason },
        }),
      );
    if (units.length === 0) return again('Choose at least one covered unit to cancel.');
    if (!units.every((u) => offered.some((o) => String(o.id) === u))) return again('Choose covered units from the list.');
    if (reason.length > 500) return again('The reason is at most 500 characters.');
    try {
      // A preview changes nothing but the stored quote (its price, held for a while): not an audited change.
      const quote = await deps.purchases.quoteCancellation(await deps.purchases.sellingKeyOf(viewOf(ctx, mode), purchase.id), purchase.id, {
        covered_unit_ids: units.map(Number),
        requested_by: requestedBy,
        reason: reason || undefined,
      });
      const labels = new Map(purchase.items.flatMap((i) => i.covered_units.map((u) => [u.id, unitLabel(i, u)] as const)));
      send(
        ctx,
        200,
        cancelPreviewPage(frame(ctx, `Refund preview for purchase #${purchase.id}`, { active: 'purchases' }), { quote, mode, labels }),
      );
    } catch (err) {
      if (err instanceof AppError && err.status < 500) return again(`No refund could be priced: ${err.message}.`);
      throw err;
    }
  });
  pages.post('/purchases/:id/cancel', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const purchase = await purchaseFor(ctx, mode);
    if (!purchase) return;
    const quoteId = String((ctx.request.body as Record<string, unknown> | undefined)?.quote_id ?? '');
    const back = `/portal/purchases/${purchase.id}?mode=${mode}`;
    if (!/^cq_[0-9a-f]{24}$/.test(quoteId)) {
      ctx.session!.flash = 'Nothing was cancelled: preview the refund first.';
      return redirect(ctx, back);
    }
    try {
      const c = await record(
        ctx,
        'cancel_purchase_units',
        { kind: 'purchase', id: String(purchase.id) },
        async () =>
          deps.purchases.cancel(await deps.purchases.sellingKeyOf(viewOf(ctx, mode), purchase.id), purchase.id, { quote_id: quoteId }),
        (r) => ({ cancellation_id: r.id, quote_id: quoteId, status: r.status }),
      );
      ctx.session!.flash = `Cancellation ${c.id} is ${c.status}: the refund and the voiding of the certificates follow.`;
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      ctx.session!.flash = `Nothing was cancelled: ${err.message}.`;
    }
    redirect(ctx, back);
  });

  // Certificate holders and endorsements, as the API's services do them, for the purchase's selling key.
  const activeUnits = (p: PurchaseDetail): CancellableUnit[] =>
    p.items.flatMap((i) => i.covered_units.filter((u) => u.state === 'active').map((u) => ({ id: u.id, label: unitLabel(i, u) })));
  const holderView = (ctx: Ctx, p: PurchaseDetail, mode: KeyMode, form: HolderForm, status = 200) =>
    send(
      ctx,
      status,
      holderFormPage(frame(ctx, `Add a certificate holder to purchase #${p.id}`, { active: 'purchases' }), {
        purchaseId: p.id,
        mode,
        units: activeUnits(p),
        form,
      }),
    );
  pages.get('/purchases/:id/holders/new', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const purchase = await purchaseFor(ctx, mode);
    if (purchase) holderView(ctx, purchase, mode, { values: { country: 'US' }, errors: {} });
  });
  pages.post('/purchases/:id/holders', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const purchase = await purchaseFor(ctx, mode);
    if (!purchase) return;
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const names = ['name', 'line1', 'line2', 'city', 'region', 'postal_code', 'country', 'email', 'description_of_operations'];
    const flags = ['additional_insured', 'waiver_of_subrogation', 'notify_on_cancellation'];
    const values: Record<string, string> = {};
    for (const n of [...names, ...flags]) values[n] = typeof body[n] === 'string' ? (body[n] as string).trim() : '';
    const opt = (v: string) => (v === '' ? undefined : v);
    const parsed = CreateCertificateHolderRequest.safeParse({
      name: values.name,
      address: {
        line1: values.line1,
        line2: opt(values.line2!),
        city: values.city,
        region: values.region,
        postal_code: values.postal_code,
        country: values.country!.toUpperCase(),
      },
      email: opt(values.email!),
      description_of_operations: opt(values.description_of_operations!),
      additional_insured: values.additional_insured === 'yes',
      waiver_of_subrogation: values.waiver_of_subrogation === 'yes',
      notify_on_cancellation: values.notify_on_cancellation === 'yes',
    });
    if (!parsed.success) {
      const required: Record<string, string> = {
        name: 'Enter the name.',
        line1: 'Enter the first address line.',
        city: 'Enter the city.',
        region: 'Enter the state or region.',
        postal_code: 'Enter the postal code.',
      };
      const errors: Record<string, string> = {};
      for (const issue of parsed.error.issues) {
        const at = String(issue.path[issue.path.length - 1] ?? 'name');
        errors[at] ??=
          values[at] === '' && required[at] ? required[at] : `${issue.message.charAt(0).toUpperCase()}${issue.message.slice(1)}.`;
      }
      return holderView(ctx, purchase, mode, { values, errors }, 400);
    }
    try {
      const holder = await record(
        ctx,
        'add_certificate_holder',
        { kind: 'purchase', id: String(purchase.id) },
        async () =>
          deps.certificateHolders.add(await deps.purchases.sellingKeyOf(viewOf(ctx, mode), purchase.id), purchase.id, parsed.data),
        (h) => ({ certificate_holder_id: h.id, certificates: h.certificates.length }),
      );
      ctx.session!.flash = `${holder.name} is added: ${holder.certificates.length} certificate${holder.certificates.length === 1 ? ' is' : 's are'} being issued.`;
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      return holderView(ctx, purchase, mode, { values, errors: {}, formError: `The holder was not added: ${err.message}.` }, 400);
    }
    redirect(ctx, `/portal/purchases/${purchase.id}?mode=${mode}`);
  });

  const notStartedDays = (p: PurchaseDetail): CancellableUnit[] =>
    p.items.flatMap((i) =>
      i.covered_units
        .filter((u) => u.kind === 'day' && u.state === 'active' && !u.coverage_started)
        .map((u) => ({ id: u.id, label: unitLabel(i, u) })),
    );
  const endorseView = (
    ctx: Ctx,
    p: PurchaseDetail,
    mode: KeyMode,
    values: Record<string, string>,
    errors: Record<string, string>,
    formError?: string,
  ) =>
    send(
      ctx,
      formError || Object.keys(errors).length ? 400 : 200,
      endorseFormPage(frame(ctx, `Change purchase #${p.id}`, { active: 'purchases' }), {
        purchaseId: p.id,
        mode,
        days: notStartedDays(p),
        values,
        errors,
        formError,
      }),
    );
  pages.get('/purchases/:id/endorse', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const purchase = await purchaseFor(ctx, mode);
    if (purchase) endorseView(ctx, purchase, mode, {}, {});
  });
  pages.post('/purchases/:id/endorse/preview', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const purchase = await purchaseFor(ctx, mode);
    if (!purchase) return;
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const values = {
      named_insured: String(body.named_insured ?? '').trim(),
      covered_unit_id: String(body.covered_unit_id ?? ''),
      start_date: String(body.start_date ?? '').trim(),
    };
    const errors: Record<string, string> = {};
    const changes: unknown[] = [];
    if (values.named_insured) changes.push({ type: 'named_insured', name: values.named_insured });
    if (values.covered_unit_id) {
      if (!notStartedDays(purchase).some((d) => String(d.id) === values.covered_unit_id)) errors.start_date = 'Choose a day from the list.';
      else if (!values.start_date) errors.start_date = 'Enter the new date.';
      else changes.push({ type: 'move_covered_unit', covered_unit_id: Number(values.covered_unit_id), start_date: values.start_date });
    }
    if (Object.keys(errors).length) return endorseView(ctx, purchase, mode, values, errors);
    if (changes.length === 0) return endorseView(ctx, purchase, mode, values, {}, 'Nothing to change: correct the name or move a day.');
    const parsed = EndorsementQuoteRequest.safeParse({ changes });
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const at = issue.path.includes('name') ? 'named_insured' : 'start_date';
        errors[at] ??= `${issue.message.charAt(0).toUpperCase()}${issue.message.slice(1)}.`;
      }
      return endorseView(ctx, purchase, mode, values, errors);
    }
    try {
      const quote = await deps.endorsements.quote(
        await deps.purchases.sellingKeyOf(viewOf(ctx, mode), purchase.id),
        purchase.id,
        parsed.data,
      );
      send(
        ctx,
        200,
        endorsePreviewPage(frame(ctx, `Preview of the change to purchase #${purchase.id}`, { active: 'purchases' }), { quote, mode }),
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      return endorseView(ctx, purchase, mode, values, {}, `The change cannot be made: ${err.message}.`);
    }
  });
  pages.post('/purchases/:id/endorse', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const mode = modeOf(ctx.query.mode);
    const purchase = await purchaseFor(ctx, mode);
    if (!purchase) return;
    const quoteId = String((ctx.request.body as Record<string, unknown> | undefined)?.quote_id ?? '');
    const back = `/portal/purchases/${purchase.id}?mode=${mode}`;
    if (!/^eq_[0-9a-f]{24}$/.test(quoteId)) {
      ctx.session!.flash = 'Nothing was changed: preview the change first.';
      return redirect(ctx, back);
    }
    try {
      const e = await record(
        ctx,
        'endorse_purchase',
        { kind: 'purchase', id: String(purchase.id) },
        async () => deps.endorsements.endorse(await deps.purchases.sellingKeyOf(viewOf(ctx, mode), purchase.id), purchase.id, quoteId),
        (r) => ({ quote_id: r.id, status: r.status, reissues: r.reissues.length }),
      );
      ctx.session!.flash = `The change is applied: ${e.reissues.length} certificate${e.reissues.length === 1 ? ' is' : 's are'} reissued as a new version.`;
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      ctx.session!.flash = `Nothing was changed: ${err.message}.`;
    }
    redirect(ctx, back);
  });

  const accountView = async (ctx: Ctx, form?: ReturnUrlsForm, status = 200) => {
    const id = ctx.state.teammate!.rootAccountId;
    const [profile, teammates] = await Promise.all([deps.accounts.findProfile(id), deps.accounts.listTeammates(id)]);
    send(
      ctx,
      status,
      accountPage(frame(ctx, 'Account', { active: 'account' }), {
        account: profile!,
        teammates,
        canChange: ctx.state.teammate!.portalRole === 'admin',
        form,
      }),
    );
  };
  pages.get('/account', async (rawCtx) => accountView(rawCtx as unknown as Ctx));
  pages.post('/account/return-urls', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const form: ReturnUrlsForm = {
      values: { successUrl: String(body.success_url ?? '').trim(), cancelUrl: String(body.cancel_url ?? '').trim() },
      errors: {},
    };
    for (const [field, label] of [
      ['successUrl', 'The success URL'],
      ['cancelUrl', 'The cancel URL'],
    ] as const) {
      const problem = form.values[field] ? returnUrlProblem(form.values[field]) : null;
      if (problem) form.errors[field] = `${label} ${problem}.`;
    }
    if (Object.keys(form.errors).length) return accountView(ctx, form, 400);
    const accountId = ctx.state.teammate!.rootAccountId;
    const change = { successUrl: form.values.successUrl || null, cancelUrl: form.values.cancelUrl || null };
    await record(
      ctx,
      'set_account_return_urls',
      { kind: 'root_account', id: String(accountId) },
      () => deps.apiKeys.setAccountReturnUrls(accountId, change),
      (a) => ({ checkout_success_url: a.checkoutSuccessUrl, checkout_cancel_url: a.checkoutCancelUrl }),
    );
    ctx.session!.flash = 'The checkout return URLs are saved.';
    redirect(ctx, '/portal/account');
  });
  pages.post('/teammates/:id/role', requireAdmin, async (rawCtx) => {
    const ctx = rawCtx as unknown as Ctx;
    const role = (ctx.request.body as Record<string, unknown> | undefined)?.role;
    if (role !== 'admin' && role !== 'viewer') {
      ctx.session!.flash = 'The role was not changed: choose admin or viewer.';
      return redirect(ctx, '/portal/account');
    }
    const accountId = ctx.state.teammate!.rootAccountId;
    const id = idParam(ctx);
    const result = await record(
      ctx,
      'set_teammate_role',
      { kind: 'teammate', id: String(id) },
      async () => {
        const r = await deps.accounts.setPortalRole(accountId, id, role);
        if (r === 'last_admin') throw new AppError('VALIDATION_ERROR', 'the account must keep at least one admin');
        return r;
      },
      (t) => ({ role: t?.portalRole ?? null }),
    ).catch((err: unknown) => {
      if (err instanceof AppError) return err;
      throw err;
    });
    if (result === null) return notFoundPage(ctx, 'teammate', '/portal/account');
    ctx.session!.flash =
      result instanceof AppError
        ? `The role was not changed: ${result.message}.`
        : `${result.name} is now ${result.portalRole === 'admin' ? 'an admin' : 'a viewer'}.`;
    redirect(ctx, '/portal/account');
  });

  const csp = [
    "default-src 'none'",
    "style-src 'self'",
    "script-src 'self'",
    "img-src 'self' data:",
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
          deps.sessions.deleteExpired().catch((e: unknown) => ctx.state.log.warn({ err: e }, 'portal session sweep failed'));
        }
      }
    },
    sessions,
    bodyParser({ enableTypes: ['form'], formLimit: '16kb' }) as unknown as Koa.Middleware<AppState>,
    new CSRF({ excludedMethods: ['GET', 'HEAD', 'OPTIONS'], disableQuery: true }) as Koa.Middleware<AppState>,
    open.routes() as unknown as Koa.Middleware<AppState>,
    requireTeammate,
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
