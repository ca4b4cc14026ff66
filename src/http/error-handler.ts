/**
 * The first-registered error middleware: the only place errors become responses.
 *
 * - `AppError` → its status and code; `/api/v1` gets the envelope `{ success: false, error }`
 *   (spec §2.5), the quote/certificate surfaces get the bare error object (spec §7.2).
 * - anything else is a bug: logged with its stack, answered 500 INTERNAL_ERROR with a generic
 *   message (no stack, SQL or secrets in the body).
 * Headers already set (X-Request-Id) survive because Koa keeps them on ctx.response.
 */
import type { Middleware } from 'koa';
import { AppError } from '../shared/errors';
import { errorBody } from './envelope';
import type { AppState } from './context';

export function errorHandler(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const appErr = err instanceof AppError ? err : null;
      const final =
        appErr ?? new AppError('INTERNAL_ERROR', 'An internal error occurred. Retry with backoff; quote the X-Request-Id if it persists.');
      if (appErr) {
        ctx.state.log.info({ code: appErr.code, status: appErr.status }, appErr.message);
      } else {
        ctx.state.log.error({ err }, 'unhandled error');
      }
      ctx.status = final.status;
      for (const [k, v] of Object.entries(final.headers)) ctx.set(k, v);
      ctx.body = errorResponseBody(ctx.state.errorStyle, final);
    }
  };
}

/** The body an AppError is answered with: the `/api/v1` envelope, or the bare error object. */
export function errorResponseBody(style: AppState['errorStyle'], err: AppError): unknown {
  return style === 'bare'
    ? { code: err.code, message: err.message, ...(err.details?.length ? { details: err.details } : {}), ...(err.extra ?? {}) }
    : errorBody(err);
}
