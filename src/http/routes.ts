/**
 * What a domain hands the HTTP layer: a function that mounts its routes on a router and
 * registers them in the OpenAPI document, and the list of unversioned surfaces that answer
 * without the envelope (quote, buyer connection, certificates). Kept beside the HTTP layer so
 * route files never import the composition root (`src/container.ts`), which imports them.
 */
import type Router from '@koa/router';
import type { AppState } from './context';
import type { OpenAPIRegistry } from './openapi';

/** A domain's routes: mounts them on the router and registers them in OpenAPI. */
export type RouteRegistration = (router: Router<AppState>, registry: OpenAPIRegistry) => void;

/** The unversioned surfaces without the envelope (quote, buyer connection, certificates). */
export const BARE_SURFACES = [
  '/public-quote',
  '/platform-seller-invites',
  '/platform-agency-certs',
  '/platform-agency-root-certs',
] as const;
export type BareSurface = (typeof BARE_SURFACES)[number];
