/**
 * `X-Request-Id` on every response (spec §2.5). A well-formed incoming id (1–128 chars of
 * `A-Z a-z 0-9 . _ : -`) is kept so callers can correlate; anything else is replaced by a UUID.
 * The id is bound into the request's logger, so every log line of the request carries it.
 * The closing `request` line also names the purchase the request touched, when its answer or
 * body says (`purchase_id`, also inside the envelope's `data`), with its workflow id
 * (`purchase-<id>`), so a log search leads straight to the Temporal run.
 */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../logger';
import type { AppState } from './context';

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/** A positive integer `purchase_id` at the top of `value` or of its `data`, else undefined. */
function purchaseIdIn(value: unknown): number | undefined {
  if (!value || typeof value !== 'object' || Buffer.isBuffer(value)) return undefined;
  const v = value as { purchase_id?: unknown; data?: { purchase_id?: unknown } };
  const id = v.purchase_id ?? (v.data && typeof v.data === 'object' ? v.data.purchase_id : undefined);
  return typeof id === 'number' && Number.isInteger(id) && id > 0 ? id : undefined;
}

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
      const purchaseId = purchaseIdIn(ctx.body) ?? purchaseIdIn((ctx.request as { body?: unknown }).body);
      ctx.state.log.info(
        {
          method: ctx.method,
          // The codec endpoint's UI mount carries its key in the path: never log it.
          path: ctx.path.startsWith('/codec/ui/') ? ctx.path.replace(/^\/codec\/ui\/[^/]*/, '/codec/ui/[key]') : ctx.path,
          status: ctx.status,
          ms: Math.round(ms * 10) / 10,
          apiKeyId: ctx.state.principal?.apiKeyId,
          ...(purchaseId ? { purchaseId, workflowId: `purchase-${purchaseId}` } : {}),
        },
        'request',
      );
    }
  };
}
