/**
 * The route inventory of the resilience suites, derived from the app itself so it cannot drift
 * from what is mounted: the @koa/router stacks the Koa app mounts directly (system routes, the
 * public pages: verification and checkout return pages) plus the routers `createApp` builds from
 * the container's route registrations (`/api/v1`, the bare surfaces, `/webhooks`), cross-checked
 * against the OpenAPI document the running app serves at `/openapi.json`. Each route carries
 * its surface, which decides the error shape the suites expect (spec §2.5, §5.2, §7).
 */
import Router from '@koa/router';
import { createApp } from '../../../src/app';
import { createOpenApiRegistry } from '../../../src/app';
import { BARE_SURFACES, type RouteRegistration } from '../../../src/http/routes';
import type { AppState } from '../../../src/http/context';
import type { TestApp } from '../../helpers/app';

/** Which error shape a route answers with. */
export type Surface = 'api-v1' | 'bare' | 'webhook' | 'public' | 'system';

/** A JSON schema node of the OpenAPI document (the subset the generators read). */
export interface JsonSchema {
  type?: string | string[];
  format?: string;
  pattern?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  $ref?: string;
  example?: unknown;
}

/** One OpenAPI operation, with its request body schema and parameters resolved. */
export interface Operation {
  body?: JsonSchema;
  query: { name: string; schema: JsonSchema }[];
  pathParams: { name: string; schema: JsonSchema }[];
  security: boolean;
}

/** One mounted method + path, e.g. `PATCH /api/v1/bundles/:bundleId`. */
export interface RouteInfo {
  /** `METHOD /koa/path/:param`, the route's identity in reports. */
  key: string;
  method: string;
  /** The Koa path template (`:param`). */
  path: string;
  surface: Surface;
  /** Path parameter names in order. */
  params: string[];
  /** The documented operation; undefined only for the undocumented docs assets. */
  operation?: Operation;
  /** Whether the route sits behind the API key gateway (spec §5). */
  gated: boolean;
}

export interface Inventory {
  routes: RouteInfo[];
  /** OpenAPI operations (`METHOD /path`) with no mounted route: must be empty. */
  documentedButNotMounted: string[];
  /** Mounted routes missing from the OpenAPI document, other than the docs pages themselves. */
  mountedButUndocumented: string[];
  /** Every `METHOD` mounted per path template (to pick methods a path does not have). */
  methodsByPath: Map<string, Set<string>>;
}

/** Routes the OpenAPI document does not list on purpose: the document and its viewer. */
const UNDOCUMENTED = /^GET \/(openapi\.json|docs(\/.*)?)$/;

interface OpenApiDoc {
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
        parameters?: { name: string; in: string; schema: JsonSchema }[];
        security?: unknown[];
      }
    >
  >;
  components?: { schemas?: Record<string, JsonSchema> };
  security?: unknown[];
}

/** Resolves `$ref`s (one level at a time, recursively) against the document's components. */
export function resolveSchema(
  doc: { components?: { schemas?: Record<string, JsonSchema> } },
  s: JsonSchema | undefined,
): JsonSchema | undefined {
  if (!s) return undefined;
  if (s.$ref) return resolveSchema(doc, doc.components?.schemas?.[s.$ref.replace('#/components/schemas/', '')]);
  const out: JsonSchema = { ...s };
  if (s.properties) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, resolveSchema(doc, v)!]));
  if (s.items) out.items = resolveSchema(doc, s.items);
  if (s.anyOf) out.anyOf = s.anyOf.map((v) => resolveSchema(doc, v)!);
  return out;
}

function stackOf(router: Router<AppState>): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  for (const layer of router.stack as unknown as { methods: string[]; path: string | RegExp }[]) {
    if (typeof layer.path !== 'string') continue;
    for (const m of layer.methods) if (m !== 'HEAD') out.push({ method: m, path: layer.path });
  }
  return out;
}

function routerOf(prefix: string, registrations: RouteRegistration[]): Router<AppState> {
  const router = new Router<AppState>({ prefix });
  const registry = createOpenApiRegistry();
  for (const register of registrations) register(router, registry);
  return router;
}

/**
 * Builds the inventory of `app`: every method + path the app mounts, with its surface and its
 * OpenAPI operation. `createApp` mounts the system and public routers on the Koa app directly
 * (found through `app.middleware[].router`); the `/api/v1`, bare-surface and webhook routers sit
 * inside composed chains, so they are rebuilt from the same registrations of the container.
 * The OpenAPI document of the running app is the cross-check: an operation it lists that no
 * router mounts, or a mounted route it does not list, is reported (the suites fail on either).
 */
export async function routeInventory(app: TestApp): Promise<Inventory> {
  const koa = createApp(app.container);
  const sources: { router: Router<AppState>; surface: Surface; gated: boolean }[] = [];
  for (const mw of koa.middleware as unknown as { router?: Router<AppState> }[]) {
    if (!mw.router) continue;
    const paths = stackOf(mw.router).map((r) => r.path);
    sources.push({ router: mw.router, surface: paths.includes('/healthz') ? 'system' : 'public', gated: false });
  }
  const c = app.container;
  sources.push({ router: routerOf('/api/v1', c.apiV1Routes), surface: 'api-v1', gated: true });
  for (const prefix of BARE_SURFACES) sources.push({ router: routerOf(prefix, c.surfaceRoutes[prefix]), surface: 'bare', gated: true });
  sources.push({ router: routerOf('/webhooks', c.webhookRoutes), surface: 'webhook', gated: false });

  const res = await fetch(`${app.baseUrl}/openapi.json`);
  const doc = (await res.json()) as OpenApiDoc;
  const documented = new Map<string, Operation>();
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = op.parameters ?? [];
      const body = op.requestBody?.content?.['application/json']?.schema;
      documented.set(`${method.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`, {
        body: resolveSchema(doc, body),
        query: params.filter((x) => x.in === 'query').map((x) => ({ name: x.name, schema: x.schema })),
        pathParams: params.filter((x) => x.in === 'path').map((x) => ({ name: x.name, schema: x.schema })),
        security: (op.security ?? doc.security ?? []).length > 0,
      });
    }
  }

  const routes: RouteInfo[] = [];
  const methodsByPath = new Map<string, Set<string>>();
  for (const { router, surface, gated } of sources) {
    for (const { method, path } of stackOf(router)) {
      const key = `${method} ${path}`;
      if (routes.some((r) => r.key === key)) continue;
      routes.push({
        key,
        method,
        path,
        surface,
        gated,
        params: [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!),
        operation: documented.get(key),
      });
      methodsByPath.set(path, (methodsByPath.get(path) ?? new Set()).add(method));
    }
  }
  const mounted = new Set(routes.map((r) => r.key));
  return {
    routes,
    documentedButNotMounted: [...documented.keys()].filter((k) => !mounted.has(k)),
    mountedButUndocumented: routes.filter((r) => !r.operation && !UNDOCUMENTED.test(r.key)).map((r) => r.key),
    methodsByPath,
  };
}

/**
 * The routes of `inventory` that `covered` (route key → requests sent) reached fewer than
 * `min` times: the suites fail when this is not empty, so a newly mounted route cannot go
 * without fuzz or security coverage.
 */
export function uncoveredRoutes(inventory: Inventory, covered: Map<string, number>, min = 1): string[] {
  return inventory.routes.filter((r) => (covered.get(r.key) ?? 0) < min).map((r) => `${r.key} (${covered.get(r.key) ?? 0} requests)`);
}
