/**
 * Wraps an `ObjectStore` so every failed call to object storage is counted (the worker's and
 * the API's `dependency_errors_total{dependency="storage",operation}` metric; on-call sees a storage
 * outage before the certificates it delays are missed). Behaviour is otherwise unchanged: the
 * same results, the same errors rethrown. A stream from `openRead` counts when it errors.
 * Answers of a storage that works do not count: an existing object for `putIfAbsent`, `null`
 * from `stat`, a missing object (404) for `openRead`, and `ObjectConflictError` (different bytes
 * stored under the key: a data problem, logged by the caller).
 */
import { ObjectConflictError, type ObjectStore } from './object-store';

/** True for failures of the storage service itself (unreachable, 5xx, timeouts, refusals). */
function isStorageFailure(err: unknown): boolean {
  return !(err instanceof ObjectConflictError) && (err as { code?: unknown }).code !== 404;
}

export type StorageOperation = Exclude<keyof ObjectStore, 'bucket'>;

/**
 * Returns `store` with each method calling `onError(operation)` (the method's name) when it fails
 * per the rules above, then rethrowing; `bucket` and results are the store's own.
 */
export function countStorageErrors(store: ObjectStore, onError: (operation: StorageOperation) => void): ObjectStore {
  const counted =
    <A extends unknown[], R>(operation: StorageOperation, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (err) {
        if (isStorageFailure(err)) onError(operation);
        throw err;
      }
    };
  return {
    ...store,
    putIfAbsent: counted('putIfAbsent', store.putIfAbsent.bind(store)),
    stat: counted('stat', store.stat.bind(store)),
    exists: counted('exists', store.exists.bind(store)),
    list: counted('list', store.list.bind(store)),
    signedReadUrl: counted('signedReadUrl', store.signedReadUrl.bind(store)),
    signedUploadUrl: counted('signedUploadUrl', store.signedUploadUrl.bind(store)),
    deletePrefix: counted('deletePrefix', store.deletePrefix.bind(store)),
    moveAside: counted('moveAside', store.moveAside.bind(store)),
    openRead(key) {
      const stream = store.openRead(key);
      stream.once('error', (err) => {
        if (isStorageFailure(err)) onError('openRead');
      });
      return stream;
    },
  };
}
