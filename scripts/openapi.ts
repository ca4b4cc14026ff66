/**
 * `tsx scripts/openapi.ts [--server-url <url>] [out]`: writes the OpenAPI 3.1 document that
 * `GET /openapi.json` serves to `out` (default `var/openapi.json`), so `redocly lint` can check
 * it without a running server (`npm run openapi:lint` does both).
 *
 * The document's server is PUBLIC_BASE_URL unless `--server-url` names another. The lint passes
 * `--server-url http://127.0.0.1:3000` (the config default) so its result does not depend on the
 * local environment: a PUBLIC_BASE_URL of localhost or example.com (docker-compose.yml,
 * .env.example) is right for that deployment but is what Redocly's no-server-example.com rule
 * rightly flags in a published document.
 *
 * The document is built in-process the way the app builds it: the container's route
 * registrations are mounted on throwaway routers and registered in a fresh registry. Nothing
 * listens and nothing connects (the database pool and the Temporal connection are lazy and
 * no request runs); the container is closed at the end.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Router from '@koa/router';
import { loadConfigOrExit } from '../src/config';
import { createContainer, type Container } from '../src/container';
import { createLogger } from '../src/logger';
import type { AppState } from '../src/http/context';
import { BARE_SURFACES, type RouteRegistration } from '../src/http/routes';
import { buildOpenApiDocument } from '../src/http/openapi';
import { createOpenApiRegistry } from '../src/app';
import { registerSystemOpenApi } from '../src/http/system-routes';

/** The document the app serves, from the container's route registrations (same order as the app). */
export function openApiDocumentOf(c: Pick<Container, 'config' | 'apiV1Routes' | 'surfaceRoutes' | 'webhookRoutes' | 'publicRoutes'>) {
  const registry = createOpenApiRegistry();
  registerSystemOpenApi(registry);
  const mount = (routes: RouteRegistration[], prefix?: string) => {
    const router = new Router<AppState>(prefix ? { prefix } : {});
    for (const register of routes) register(router, registry);
  };
  mount(c.apiV1Routes, '/api/v1');
  for (const prefix of BARE_SURFACES) mount(c.surfaceRoutes[prefix], prefix);
  mount(c.webhookRoutes, '/webhooks');
  mount(c.publicRoutes);
  return buildOpenApiDocument(registry, c.config.PUBLIC_BASE_URL);
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ options: { 'server-url': { type: 'string' } }, allowPositionals: true });
  const out = path.resolve(positionals[0] ?? 'var/openapi.json');
  // No Redis: the document does not need the shared rate-limit store, and nothing should connect.
  const serverUrl = values['server-url'] ? { PUBLIC_BASE_URL: values['server-url'] } : {};
  const config = loadConfigOrExit({ ...process.env, LOG_LEVEL: 'silent', REDIS_URL: '', ...serverUrl });
  const container = createContainer(config, createLogger(config, 'openapi'));
  try {
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `${JSON.stringify(openApiDocumentOf(container), null, 2)}\n`);
    console.log(`wrote ${path.relative(process.cwd(), out)}`);
  } finally {
    await container.close();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
