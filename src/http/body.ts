/**
 * JSON body parsing for the API surfaces (koa-bodyparser). Keeps `ctx.request.rawBody` for
 * webhook signature checks. Malformed JSON → 400 VALIDATION_ERROR; a body over
 * `BODY_LIMIT_BYTES` → 413 PAYLOAD_TOO_LARGE (ARCHITECTURE §4).
 */
import bodyParser from 'koa-bodyparser';
import type { Middleware } from 'koa';
import { AppError } from '../shared/errors';

export function jsonBody(limitBytes: number): Middleware {
  return bodyParser({
    enableTypes: ['json'],
    jsonLimit: `${limitBytes}b`,
    strict: true,
    onerror: (err: Error & { status?: number }) => {
      if (err.status === 413) {
        throw new AppError('PAYLOAD_TOO_LARGE', `Request body is larger than the ${limitBytes}-byte limit`, { cause: err });
      }
      if (err.status === 415) {
        throw new AppError('VALIDATION_ERROR', 'Unsupported request body encoding', { cause: err });
      }
      throw new AppError('VALIDATION_ERROR', 'Request body is not valid JSON', { cause: err });
    },
  });
}
