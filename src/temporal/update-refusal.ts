/**
 * What an update's caller throws when the update failed: a refusal whose failure type (on the
 * update's failure itself or on any cause beneath it, such as the activity that refused) is one of
 * the API's error codes becomes that AppError (its status from ERROR_STATUS, its message as the
 * workflow wrote it); an AppError passes as it is; anything else is rethrown unchanged.
 * Used by every workflow client that answers an API call from an update (the purchase's and the
 * claim's owners).
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { AppError, ERROR_STATUS, type ErrorCode } from '../shared/errors';

/** Rethrows `err` as described above; never returns. */
export function rethrowUpdateFailure(err: unknown): never {
  if (err instanceof AppError) throw err;
  if (err instanceof WorkflowUpdateFailedError) {
    for (let e = err.cause as { type?: unknown; message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
      if (typeof e.type === 'string' && e.type in ERROR_STATUS)
        throw new AppError(e.type as ErrorCode, e.message ?? 'The change was refused', { cause: err });
    }
  }
  throw err;
}
