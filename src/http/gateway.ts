/**
 * The gateway rules in front of every `/api/v1` route (spec §5, §8, §9).
 *
 * Order: API key (403 `{ "message": "Forbidden" }`, not the envelope, spec §5.2) → rate limit
 * per key (429 RATE_LIMIT_ERROR with `Retry-After` in seconds, spec §8) → optional headers
 * (`api-version` must be `v1`, `payproc-account` must start with `acct_`, spec §5.6 and §9.1).
 */
import type { Middleware } from 'koa';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ApiKeyService } from '../api-keys/service';
import { AppError } from '../shared/errors';
import type { AppState } from './context';

/** The exact body of the gateway's 403 (spec §5.2). */
export const FORBIDDEN_BODY = Object.freeze({ message: 'Forbidden' });

/** Rejects a missing, unknown, expired, frozen or deleted key with the gateway 403. */
export function apiKeyAuth(apiKeys: Pick<ApiKeyService, 'authenticate'>): Middleware<AppState> {
  return async (ctx, next) => {
    const principal = await apiKeys.authenticate(ctx.get('x-api-key') || undefined);
    if (!principal) {
      ctx.status = 403;
      ctx.body = { ...FORBIDDEN_BODY };
      return;
    }
    ctx.state.principal = principal;
    await next();
  };
}

/**
 * Consumes one point per request for the calling key (or, with `by`, for another subject such
 * as the client address of a public page). When the limiter's store fails (Redis down and no
 * insurance limiter), the request is let through and a warning logged: availability over
 * strictness for a soft limit. Over the limit: 429 RATE_LIMIT_ERROR with `Retry-After` (seconds).
 */
export function rateLimit(
  limiter: RateLimiterAbstract,
  by: { key: (ctx: Parameters<Middleware<AppState>>[0]) => string; subject: string } = {
    key: (ctx) => String(ctx.state.principal!.apiKeyId),
    subject: 'API key',
  },
): Middleware<AppState> {
  return async (ctx, next) => {
    const key = by.key(ctx);
    try {
      const res = await limiter.consume(key, 1);
      ctx.set('X-RateLimit-Limit', String(limiter.points));
      ctx.set('X-RateLimit-Remaining', String(res.remainingPoints));
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        throw new AppError('RATE_LIMIT_ERROR', `Too many requests for this ${by.subject}; retry after ${retryAfter} s`, {
          headers: { 'Retry-After': String(retryAfter), 'X-RateLimit-Limit': String(limiter.points), 'X-RateLimit-Remaining': '0' },
        });
      }
      ctx.state.log.warn({ err: rejection }, 'rate limiter unavailable; request allowed');
    }
    await next();
  };
}

/** Validates the optional `api-version` and `payproc-account` headers. */
export function apiHeaders(): Middleware<AppState> {
  return async (ctx, next) => {
    const version = ctx.get('api-version');
    if (ctx.headers['api-version'] !== undefined && version !== 'v1') {
      throw new AppError('UNSUPPORTED_API_VERSION', `api-version "${version.slice(0, 32)}" is not supported; use v1`);
    }
    const account = ctx.get('payproc-account');
    if (ctx.headers['payproc-account'] !== undefined && !account.startsWith('acct_')) {
      throw new AppError('INVALID_ACCOUNT_ID', 'payproc-account must start with acct_');
    }
    await next();
  };
}
