/**
 * What every page of the agency portal shares: the services it calls (`PortalDeps`), its
 * settings, the request context it sees (`PortalCtx`: the session, the signed-in teammate), and
 * the helpers a page handler uses (`PortalKit`): the page frame, sending a page or a redirect,
 * refusing a viewer, running a change on the audit log, the account view of a mode, the `:id`
 * parameter and the 404 page of something this account does not have.
 */
import type Koa from 'koa';
import type { AppState } from '../http/context';
import type { TeammateService } from '../accounts/service';
import type { Teammate } from '../accounts/types';
import type { AccountView, ApiKeyService } from '../api-keys/service';
import type { KeyMode } from '../api-keys/secrets';
import type { AuditService } from '../audit/service';
import type { WebhookEndpointService } from '../webhook-endpoints/service';
import type { EventService } from '../events/service';
import type { PurchaseService } from '../purchases/service';
import type { CertificateHolderService } from '../certificate-holders/service';
import type { EndorsementService } from '../endorsements/service';
import type { PurchaseSearchService } from '../purchase-search/service';
import type { CertificateService } from '../certificates/service';
import type { ClaimService } from '../claims/service';
import { AppError } from '../shared/errors';
import type { PendingSignIn, RelyingParty } from './oidc';
import { messagePage, type Frame, type Viewer } from './views';

/** The domain services the portal calls, in this process (the API's own). */
export interface PortalDeps {
  apiKeys: ApiKeyService;
  /** Teammates, roles and the portal's sessions (koa-session's store). */
  accounts: TeammateService;
  webhookEndpoints: WebhookEndpointService;
  events: EventService;
  purchases: Pick<PurchaseService, 'get' | 'answers' | 'sellingKeyOf' | 'quoteCancellation' | 'cancel'>;
  certificateHolders: Pick<CertificateHolderService, 'list' | 'add' | 'remove'>;
  endorsements: Pick<EndorsementService, 'quote' | 'endorse'>;
  purchaseSearch: Pick<PurchaseSearchService, 'searchAccount'>;
  certificates: Pick<CertificateService, 'getCertificates'>;
  /** The claims the account sees (its own, or an insurer's or MGA's products'), and an adjuster's decisions. */
  claims: Pick<ClaimService, 'list' | 'get' | 'decide'>;
  audit: Pick<AuditService, 'record' | 'list'>;
  relyingParty: RelyingParty;
}

export interface PortalOptions {
  /** Signing keys of the session cookie (the first signs). */
  sessionKeys: string[];
  idleMinutes: number;
  absoluteHours: number;
  /** The cookie is Secure (PUBLIC_BASE_URL is https; TLS may end at a proxy). */
  secureCookie: boolean;
  /** Hours an old key value keeps working after a rotation, unless the form says otherwise. */
  defaultGraceHours: number;
  /**
   * The event deliveries' retry schedule (config WEBHOOK_RETRY_INITIAL_SECONDS, …_WINDOW_HOURS in
   * seconds), from which an endpoint's page tells a failing delivery's next retry; default the
   * config's defaults, 60 s and 72 h.
   */
  deliveryRetry?: { initialSeconds: number; windowSeconds: number };
}

/** What the portal keeps in a session. */
export interface PortalSession {
  teammateSub?: string;
  signedInAt?: number;
  idToken?: string;
  pending?: PendingSignIn;
  flash?: string;
  /** koa-csrf's secret (the session's CSRF tokens are made from it). */
  secret?: string;
  /**
   * A change's one-time result, kept from the POST to the page its redirect leads to and removed
   * there when first shown: a new or rotated key's value, a new endpoint's signing secret.
   */
  reveal?: Reveal;
  /** The newest previews (cancellation and endorsement quotes) a redirect led to, newest first; at most 5. */
  previews?: KeptPreview[];
  /** Forms already carried out: a hash of the form's CSRF token and action → where its redirect led; at most 50. */
  sent?: [string, string][];
}

/** A one-time result (see `PortalSession.reveal`); `at`: when it was kept (ms since the epoch). */
export type Reveal =
  | {
      kind: 'key';
      id: number;
      at: number;
      change: 'created' | 'rotated';
      name: string;
      mode: KeyMode;
      value: string;
      previousValueExpiresAt?: string;
    }
  | { kind: 'endpoint'; id: number; at: number; url: string; mode: KeyMode; secret: string };

/** A preview kept for its result page: the quote as the service answered it, and labels of its units. */
export interface KeptPreview {
  kind: 'cancel' | 'endorse';
  quoteId: string;
  purchaseId: number;
  quote: unknown;
  labels?: [number, string][];
  /** A cancellation: the labels of the covered units that stay in force after it. */
  staying?: string[];
}

/** How long a one-time result waits in the session for its page (ms): a redirect is followed at once. */
export const REVEAL_TTL_MS = 10 * 60_000;

/** A portal request: koa-session's session, koa-csrf's token, the signed-in teammate. */
export type PortalCtx = Koa.ParameterizedContext<AppState & { _csrf?: string; teammate?: Teammate; viewer?: Viewer }> & {
  session: (PortalSession & { regenerate(): Promise<void> }) | null;
};

/** The data mode a page shows (`?mode=`): test unless it says live. */
export const modeOf = (v: unknown): KeyMode => (v === 'live' ? 'live' : 'test');

export interface PortalKit {
  deps: PortalDeps;
  options: PortalOptions;
  /** The page frame: title, CSRF token, who is signed in, and the flash message (shown once). */
  frame(ctx: PortalCtx, title: string, extra?: Partial<Frame>): Frame;
  send(ctx: PortalCtx, status: number, body: string): void;
  /** 303 to `to` (after a POST the browser GETs it). */
  redirect(ctx: PortalCtx, to: string): void;
  /** Refuses a viewer (403 page) before the handler runs. */
  requireAdmin: Koa.Middleware<AppState>;
  /** Runs `act` on the audit log as the signed-in teammate (actor kind `portal`, the client's address). */
  record<T>(
    ctx: PortalCtx,
    action: string,
    target: { kind: string; id: string | null },
    act: () => Promise<T>,
    details: (r: T) => Record<string, unknown>,
  ): Promise<T>;
  /** The signed-in teammate's account in `mode`, all teammates' data. */
  viewOf(ctx: PortalCtx, mode: KeyMode): AccountView;
  /** The `:id` route parameter as a number (0 when it is not one). */
  idParam(ctx: PortalCtx): number;
  /**
   * The 404 page of a `what` this account does not have (another account's reads the same); the
   * attempt is recorded on the audit log as refused (`refused_unknown_target`, best effort).
   */
  notFoundPage(ctx: PortalCtx, what: string, back: string): void;
  /**
   * Records a refused attempt of the signed-in teammate on the audit log (issue 53, item 8):
   * `action`, the page (method and path) as its target, outcome `refused` with `why`. Best effort:
   * an audit log that cannot be written never changes the answer.
   */
  recordRefusal(ctx: PortalCtx, action: string, why: string): Promise<void>;
  /** `act`'s answer; null once the 404 page is sent, when `act` throws a 404 (NOT_FOUND) AppError. */
  orNotFound<T>(ctx: PortalCtx, what: string, back: string, act: () => Promise<T>): Promise<T | null>;
  /**
   * The one-time result of `kind` for `id` kept in the session, removed from it as it is
   * returned (a reload finds none); null when there is none, it is another's, or it is older
   * than REVEAL_TTL_MS.
   */
  takeReveal<K extends Reveal['kind']>(ctx: PortalCtx, kind: K, id: number): Extract<Reveal, { kind: K }> | null;
}

export function createPortalKit(deps: PortalDeps, options: PortalOptions): PortalKit {
  const frame = (ctx: PortalCtx, title: string, extra: Partial<Frame> = {}): Frame => {
    const flash = ctx.session?.flash ?? null;
    if (ctx.session && flash) delete ctx.session.flash;
    return { title, csrf: ctx.state._csrf ?? '', viewer: ctx.state.viewer, flash, ...extra };
  };
  const send = (ctx: PortalCtx, status: number, body: string) => {
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = body;
  };
  const recordRefusal = async (ctx: PortalCtx, action: string, why: string) => {
    const teammate = ctx.state.teammate;
    if (!teammate) return;
    await deps.audit
      .record(
        {
          actorKind: 'portal',
          actor: teammate.email,
          action,
          targetKind: 'portal_page',
          targetId: `${ctx.method} ${ctx.path}`.slice(0, 200),
          rootAccountId: teammate.rootAccountId,
          reason: null,
          clientAddress: ctx.ip,
        },
        () => Promise.reject(new Error(why)),
        { details: () => ({}), isRefusal: () => true },
      )
      .catch(() => undefined);
  };
  const notFoundPage = (ctx: PortalCtx, what: string, back: string) => {
    void recordRefusal(ctx, 'refused_unknown_target', `no such ${what} in this account and mode`);
    send(
      ctx,
      404,
      messagePage(frame(ctx, `No such ${what}`), `This account has no such ${what} in this mode.`, { href: back, label: 'Back' }),
    );
  };
  return {
    deps,
    options,
    frame,
    send,
    redirect(ctx, to) {
      ctx.status = 303;
      ctx.redirect(to);
    },
    async requireAdmin(rawCtx, next) {
      const ctx = rawCtx as unknown as PortalCtx;
      if (ctx.state.teammate?.portalRole !== 'admin') {
        const role = ctx.state.teammate?.portalRole ?? 'viewer';
        await recordRefusal(ctx, 'refused_change', `the ${role} role can only read`);
        return send(
          ctx,
          403,
          messagePage(
            frame(ctx, 'Not allowed'),
            `Your role (${role}) can only read. Ask an admin of your account to make this change; nothing was changed.`,
            { href: '/portal/keys', label: 'Back to the API keys' },
          ),
        );
      }
      return next();
    },
    record(ctx, action, target, act, details) {
      return deps.audit
        .record(
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
        )
        .then((r) => r.result);
    },
    viewOf: (ctx, mode) => ({ rootAccountId: ctx.state.teammate!.rootAccountId, mode, agentId: null }),
    idParam: (ctx) => (/^\d{1,9}$/.test(String(ctx.params?.id)) ? Number(ctx.params.id) : 0),
    notFoundPage,
    recordRefusal,
    takeReveal<K extends Reveal['kind']>(ctx: PortalCtx, kind: K, id: number) {
      const kept = ctx.session?.reveal;
      if (!kept || kept.kind !== kind || kept.id !== id) return null;
      delete ctx.session!.reveal;
      return Date.now() - kept.at <= REVEAL_TTL_MS ? (kept as Extract<Reveal, { kind: K }>) : null;
    },
    async orNotFound(ctx, what, back, act) {
      try {
        return await act();
      } catch (err) {
        if (!(err instanceof AppError) || err.status !== 404) throw err;
        notFoundPage(ctx, what, back);
        return null;
      }
    },
  };
}
