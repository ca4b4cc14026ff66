/**
 * Idempotency keys on every POST and PATCH of the keyed surfaces (`/api/v1` and the quote, buyer
 * and certificate surfaces), like Stripe's: a client that retries with the same `Idempotency-Key`
 * header gets the first answer again instead of a second product, purchase or checkout session.
 *
 * - The header is optional; without it nothing changes. With it, it must be 1–255 printable
 *   ASCII characters (else 400 VALIDATION_ERROR, nothing run).
 * - The first request of a key runs; its answer (status and JSON body, successes and 4xx
 *   refusals alike) is stored for `ttlMs` (24 h) per (root account, key mode, key) and replayed
 *   to every retry with the same method, path and parameters, with `Idempotent-Replayed: true`.
 *   Parameters, like Stripe's: a JSON body is compared in canonical form (keys sorted, no
 *   whitespace), so a retry whose client serialises the same object in another key order or
 *   spacing is the same request; a body that is not JSON is compared byte for byte.
 * - The same key with another method, path or parameters: 409 IDEMPOTENCY_KEY_REUSED, nothing run.
 * - A retry while the first request still runs waits up to `waitMs` for its answer and replays
 *   it; if it is still running then: 409 IDEMPOTENCY_KEY_IN_PROGRESS with `Retry-After: 1`.
 *   Never run twice: the claim is one row on the key's primary key.
 * - A 5xx answer (or a crash) is not stored: the key is freed, so a retry runs the request again
 *   (the server failed; most such failures had no effect, and the purchase flow's own workflow
 *   ids keep a second run from charging twice).
 * Errors render in the surface's own shape (envelope on `/api/v1`, bare elsewhere).
 * Must run after the gateway (needs the principal) and the JSON body parser (needs the raw body).
 */
import { createHash } from 'node:crypto';
import type { Middleware } from 'koa';
import { stringify as stableStringify } from 'safe-stable-stringify';
import type { AppState } from '../http/context';
import { AppError } from '../shared/errors';
import { errorResponseBody } from '../http/error-handler';
import type { IdempotencyRepository, IdempotencyScope } from './repository';

/** Header names, as clients send and read them. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** 1–255 printable ASCII characters (space to tilde). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export interface IdempotencyOptions {
  /** How long a key's answer is kept and replayed, in ms (24 h). */
  ttlMs: number;
  /** How long a retry waits for a still-running first request before 409, in ms. */
  waitMs: number;
  /** After this long (ms) an unfinished first request counts as dead and a retry takes over. */
  takeoverAfterMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The body as compared between a key's requests: a JSON body in canonical form (object keys
 * sorted at every depth, no whitespace; array order kept), anything else as sent.
 */
export function canonicalBody(rawBody: string): string {
  if (rawBody.trim() === '') return '';
  try {
    return stableStringify(JSON.parse(rawBody)) ?? rawBody;
  } catch {
    return rawBody;
  }
}

/** SHA-256 (hex) of what makes two requests the same: method, path with query, and the canonical body. */
export function requestHash(method: string, url: string, rawBody: string): string {
  return createHash('sha256').update(`${method}\n${url}\n`).update(canonicalBody(rawBody)).digest('hex');
}

export function idempotency(store: IdempotencyRepository, options: IdempotencyOptions): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.method !== 'POST' && ctx.method !== 'PATCH') return next();
    const key = ctx.headers['idempotency-key'];
    if (key === undefined) return next();
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
      throw new AppError('VALIDATION_ERROR', `The ${IDEMPOTENCY_KEY_HEADER} header must be 1 to 255 printable ASCII characters`, {
        details: [{ path: IDEMPOTENCY_KEY_HEADER, message: '1 to 255 printable ASCII characters' }],
      });
    }
    const principal = ctx.state.principal;
    if (!principal) return next(); // unkeyed routes have nothing to scope a key by
    const scope: IdempotencyScope = { rootAccountId: principal.rootAccountId, mode: principal.mode };
    const rawBody = (ctx.request as { rawBody?: string }).rawBody ?? '';
    const fingerprint = { method: ctx.method, path: ctx.url, requestHash: requestHash(ctx.method, ctx.url, rawBody) };

    const deadline = Date.now() + options.waitMs;
    let claim = await store.claim(scope, key, fingerprint, options.ttlMs, options.takeoverAfterMs);
    while (claim.kind === 'in_progress' && Date.now() < deadline) {
      await sleep(Math.min(100, Math.max(1, deadline - Date.now())));
      claim = await store.claim(scope, key, fingerprint, options.ttlMs, options.takeoverAfterMs);
    }
    if (claim.kind === 'mismatch') {
      throw new AppError(
        'IDEMPOTENCY_KEY_REUSED',
        `This ${IDEMPOTENCY_KEY_HEADER} was first used for ${claim.method} ${claim.path} with another body; use a new key for a different request`,
      );
    }
    if (claim.kind === 'in_progress') {
      throw new AppError(
        'IDEMPOTENCY_KEY_IN_PROGRESS',
        `The first request with this ${IDEMPOTENCY_KEY_HEADER} is still running; retry after a second`,
        {
          headers: { 'Retry-After': '1' },
        },
      );
    }
    if (claim.kind === 'replay') {
      ctx.status = claim.response.status;
      ctx.type = 'application/json';
      ctx.body = JSON.parse(claim.response.body);
      ctx.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
      return;
    }

    const { lockToken } = claim;
    let stored: { status: number; body: string } | null = null;
    try {
      await next();
      if (ctx.status < 500 && isJson(ctx.body)) stored = { status: ctx.status, body: JSON.stringify(ctx.body) };
    } catch (err) {
      if (err instanceof AppError && err.status < 500)
        stored = { status: err.status, body: JSON.stringify(errorResponseBody(ctx.state.errorStyle, err)) };
      await settle(store, scope, key, lockToken, stored, ctx.state.log);
      throw err;
    }
    await settle(store, scope, key, lockToken, stored, ctx.state.log);
  };
}

/** A body the store can keep and replay as JSON (not a file, stream or HTML page). */
function isJson(body: unknown): boolean {
  return body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && typeof (body as { pipe?: unknown }).pipe !== 'function';
}

/** Stores the answer, or frees the key when there is none to keep (5xx, not JSON). */
async function settle(
  store: IdempotencyRepository,
  scope: IdempotencyScope,
  key: string,
  lockToken: string,
  stored: { status: number; body: string } | null,
  log: AppState['log'],
): Promise<void> {
  try {
    if (stored) {
      if (!(await store.complete(scope, key, lockToken, stored)))
        log.warn({ idempotencyKey: key }, 'idempotency key was taken over before its request finished');
    } else {
      await store.release(scope, key, lockToken);
    }
  } catch (err) {
    // The answer already exists; losing its record only means a retry runs again (or waits for
    // the takeover limit). Never turn a done request into an error.
    log.error({ err, idempotencyKey: key }, 'could not record the idempotency key outcome');
  }
}
