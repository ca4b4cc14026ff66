/**
 * `X-Request-Id` on every response (spec §2.5). A well-formed incoming id (1–128 chars of
 * `A-Z a-z 0-9 . _ : -`) is kept so callers can correlate; anything else is replaced by a UUID.
 * The id is bound into the request's logger, so every log line of the request carries it.
 */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../logger';
import type { AppState } from './context';

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(log: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = WELL_FORMED.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.state.log = log.child({ reqId: id });
    ctx.state.errorStyle = 'envelope';
    ctx.set('X-Request-Id', id);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      ctx.state.log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10, apiKeyId: ctx.state.principal?.apiKeyId },
        'request',
      );
    }
  };
}
