/**
 * The Koa application: middleware order and surfaces (ARCHITECTURE §2, spec §2.5, §5, §7–§9).
 *
 *   request id → error handler → system routes (/healthz, /readyz, /openapi.json, /docs) → public pages
 *   → /api/v1: gateway key check → rate limit → header checks → JSON body → idempotency key → domain routes
 *   → /public-quote, /platform-seller-invites, /platform-agency-certs, /platform-agency-root-certs
 *     (spec §4.3–4.5: unversioned, no envelope; errors are the bare serialised error of §7.2):
 *     gateway key check → rate limit → JSON body → idempotency key → domain routes
 *   → /webhooks/payproc: no key (signature over the raw body), JSON body, bare errors
 *   → /portal: the agency portal (HTML pages; signed-in teammates; off without an identity provider)
 *   → /codec/decode, /codec/encode: the operators' Temporal codec endpoint (own bearer token; off without one)
 *   → anything unmatched: 404 ROUTE_NOT_FOUND (also a known path with the wrong method).
 *
 * `createApp` takes already-built dependencies (see `src/container.ts`), so tests start the
 * real app on port 0 against real servers.
 */
import Koa from 'koa';
import Router from '@koa/router';
import compose from 'koa-compose';
import type { AppState } from './http/context';
import { requestId } from './http/request-id';
import { errorHandler } from './http/error-handler';
import { apiHeaders, apiKeyAuth, rateLimit } from './http/gateway';
import { jsonBody } from './http/body';
import { AppError } from './shared/errors';
import { buildOpenApiDocument, createSharedOpenApiRegistry, type OpenAPIRegistry } from './http/openapi';
import { registerAgencyEventWebhooks } from './events/schemas';
import { registerSystemOpenApi, systemRouter } from './http/system-routes';
import type { Container } from './container';
import { BARE_SURFACES } from './http/routes';
import { idempotency } from './idempotency/middleware';
import { httpMetrics } from './http/metrics';
import { codecServer } from './http/codec-server';
import { AesGcmPayloadCodec } from './temporal/codec';
import { createOperatorService } from './operators/service';
import { createOperatorTokensRepository } from './operators/repository';
import { createAuditService } from './audit/service';
import { createAuditRepository } from './audit/repository';
import { createPortal } from './portal/routes';

const API_V1 = '/api/v1';

/** `fn`'s answer, asked again at most every `ms` milliseconds (readiness probes come often). */
function cached<T>(ms: number, fn: () => Promise<T>): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!last || Date.now() - last.at > ms) last = { at: Date.now(), value: fn() };
    return last.value;
  };
}

/**
 * The registry of the whole OpenAPI document before any route registers: the shared components
 * (security scheme, envelope) and the `webhooks` section (every event sent to an agency's
 * endpoints, src/events/schemas.ts). Routes add their operations to it (`createApp`), and
 * `npm run openapi:lint` and the tests build the same document from it.
 */
export function createOpenApiRegistry(): OpenAPIRegistry {
  const registry = createSharedOpenApiRegistry();
  registerAgencyEventWebhooks(registry);
  return registry;
}

export function createApp(c: Container): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: false });
  app.silent = true; // errors are logged by the error handler with the request id

  const registry = createOpenApiRegistry();
  registerSystemOpenApi(registry);

  const v1 = new Router<AppState>({ prefix: API_V1 });
  for (const register of c.apiV1Routes) register(v1, registry);

  let openApiDoc: unknown;
  const system = systemRouter({
    checkDb: c.checkDb,
    checkTemporal: () => c.temporal.isHealthy(),
    checkWorkers: cached(5000, () => c.temporal.hasPollers(c.config.TEMPORAL_TASK_QUEUE, c.config.READINESS_POLLER_WINDOW_SECONDS * 1000)),
    openApiDocument: () => (openApiDoc ??= buildOpenApiDocument(registry, c.config.PUBLIC_BASE_URL)),
    docsEnabled: c.config.DOCS_ENABLED,
  });

  // The router's middleware type adds `params`/`router` to the context; compose's typing
  // cannot express that, hence the cast (Koa's own `app.use(router.routes())` does the same).
  const apiV1 = compose([
    apiKeyAuth(c.services.apiKeys),
    rateLimit(c.rateLimiter.limiter),
    apiHeaders(),
    jsonBody(c.config.BODY_LIMIT_BYTES) as Koa.Middleware<AppState>,
    idempotency(c.idempotency.store, c.idempotency.options),
    v1.routes() as unknown as Koa.Middleware<AppState>,
  ]);

  const bare = BARE_SURFACES.map((prefix) => {
    const router = new Router<AppState>({ prefix });
    for (const register of c.surfaceRoutes[prefix]) register(router, registry);
    const chain = compose([
      apiKeyAuth(c.services.apiKeys),
      rateLimit(c.rateLimiter.limiter),
      jsonBody(c.config.BODY_LIMIT_BYTES) as Koa.Middleware<AppState>,
      idempotency(c.idempotency.store, c.idempotency.options),
      router.routes() as unknown as Koa.Middleware<AppState>,
    ]);
    return { prefix, chain };
  });

  const webhooks = new Router<AppState>({ prefix: '/webhooks' });
  for (const register of c.webhookRoutes) register(webhooks, registry);
  const webhookChain = compose([
    jsonBody(c.config.BODY_LIMIT_BYTES) as Koa.Middleware<AppState>,
    webhooks.routes() as unknown as Koa.Middleware<AppState>,
  ]);

  const publicPages = new Router<AppState>();
  for (const register of c.publicRoutes) register(publicPages, registry);

  app.use(requestId(c.log));
  app.use(httpMetrics(c.metrics));
  app.use(errorHandler());
  app.use(system.routes());
  app.use(publicPages.routes());
  if (c.portal) {
    app.use(
      createPortal(app, c.portal, {
        sessionKeys: c.config.PORTAL_SESSION_KEYS,
        idleMinutes: c.config.PORTAL_SESSION_IDLE_MINUTES,
        absoluteHours: c.config.PORTAL_SESSION_ABSOLUTE_HOURS,
        secureCookie: new URL(c.config.PUBLIC_BASE_URL).protocol === 'https:',
        defaultGraceHours: c.config.API_KEY_ROTATION_GRACE_HOURS,
        deliveryRetry: {
          initialSeconds: c.config.WEBHOOK_RETRY_INITIAL_SECONDS,
          windowSeconds: c.config.WEBHOOK_RETRY_WINDOW_HOURS * 3600,
        },
      }),
    );
  }
  app.use(
    codecServer({
      codec: new AesGcmPayloadCodec(c.config.TEMPORAL_PAYLOAD_KEYS),
      token: c.config.TEMPORAL_CODEC_TOKEN,
      uiKey: c.config.TEMPORAL_CODEC_UI_KEY,
      corsOrigins: c.config.TEMPORAL_CODEC_CORS_ORIGINS,
      bodyLimitBytes: c.config.BODY_LIMIT_BYTES,
      operatorOf: createOperatorService({ repo: createOperatorTokensRepository(c.db) }).tokenOf,
      audit: createAuditService({ repo: createAuditRepository(c.db) }),
    }) as Koa.Middleware<AppState>,
  );
  app.use(async (ctx, next) => {
    if (ctx.path === API_V1 || ctx.path.startsWith(`${API_V1}/`)) return apiV1(ctx, next);
    const surface = bare.find((b) => ctx.path === b.prefix || ctx.path.startsWith(`${b.prefix}/`));
    if (surface) {
      ctx.state.errorStyle = 'bare';
      return surface.chain(ctx, next);
    }
    if (ctx.path.startsWith('/webhooks/')) {
      ctx.state.errorStyle = 'bare';
      return webhookChain(ctx, next);
    }
    return next();
  });
  app.use(async (ctx) => {
    throw new AppError('ROUTE_NOT_FOUND', `No route ${ctx.method} ${ctx.path}`);
  });
  return app;
}
