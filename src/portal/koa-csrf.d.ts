/**
 * The part of koa-csrf 5 the portal uses (its DefinitelyTyped package adds `_csrf` to every Koa
 * state, the API's included): a middleware that puts the token on `ctx.state._csrf` and refuses
 * a request of another method without a valid `_csrf` field or CSRF header (403).
 */
declare module 'koa-csrf' {
  import type { Middleware } from 'koa';
  interface CsrfOptions {
    excludedMethods?: string[];
    disableQuery?: boolean;
    ignoredPathGlobs?: string[];
    errorHandler?: (ctx: unknown) => unknown;
  }
  const CSRF: new (options?: CsrfOptions) => Middleware;
  export = CSRF;
}
