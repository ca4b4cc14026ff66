/**
 * Routes outside the gateway (no API key): `GET /healthz` (the process is up),
 * `GET /readyz` (PostgreSQL and Temporal answer and a worker polls the purchase task queue; 503 otherwise), `GET /openapi.json`
 * and `GET /docs` (Swagger UI over the generated document).
 */
import fs from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import { z } from 'zod';
import type { AppState } from './context';
import type { OpenAPIRegistry } from './openapi';

const HealthSchema = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });
const ReadinessSchema = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    checks: z.object({
      database: z.boolean(),
      temporal: z.boolean(),
      workers: z.boolean().meta({
        description: 'A worker polled the purchase task queue within the last 90 s (without one, every checkout would wait and fail)',
      }),
    }),
  })
  .meta({ id: 'Readiness' });

export function registerSystemOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/healthz',
    operationId: 'checkLiveness',
    tags: ['System'],
    summary: 'Liveness: the process is up',
    security: [],
    responses: { 200: { description: 'Up', content: { 'application/json': { schema: HealthSchema } } } },
  });
  registry.registerPath({
    method: 'get',
    path: '/readyz',
    operationId: 'checkReadiness',
    tags: ['System'],
    summary: 'Readiness: PostgreSQL and Temporal answer and a worker polls the purchase task queue',
    security: [],
    responses: {
      200: { description: 'Ready', content: { 'application/json': { schema: ReadinessSchema } } },
      503: { description: 'A dependency does not answer', content: { 'application/json': { schema: ReadinessSchema } } },
    },
  });
}

const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const DOC_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

const docsHtml = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;
const docsInit = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui' });`;

export function systemRouter(deps: {
  checkDb: () => Promise<boolean>;
  checkTemporal: () => Promise<boolean>;
  /** Whether a worker polls the purchase task queue (cached by the caller). */
  checkWorkers: () => Promise<boolean>;
  openApiDocument: () => unknown;
  docsEnabled: boolean;
}): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const [database, temporal] = await Promise.all([deps.checkDb(), deps.checkTemporal()]);
    const workers = temporal && (await deps.checkWorkers());
    const ready = database && temporal && workers;
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ready' : 'not_ready', checks: { database, temporal, workers } };
  });
  router.get('/openapi.json', (ctx) => {
    ctx.body = deps.openApiDocument();
  });
  if (deps.docsEnabled) {
    router.get('/docs', (ctx) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = docsHtml;
    });
    router.get('/docs/init.js', (ctx) => {
      ctx.type = 'application/javascript; charset=utf-8';
      ctx.body = docsInit;
    });
    router.get('/docs/:asset', (ctx, next) => {
      // Own keys only: `__proto__` or `constructor` must not find Object.prototype's members.
      const asset = ctx.params.asset ?? '';
      const type = Object.hasOwn(DOC_ASSETS, asset) ? DOC_ASSETS[asset] : undefined;
      if (!type) return next();
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = fs.createReadStream(path.join(swaggerDir, ctx.params.asset!));
    });
  }
  return router;
}
