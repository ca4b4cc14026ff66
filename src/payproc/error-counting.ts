/**
 * Wraps a `Payproc` so every processor call that fails because the processor is unreachable or
 * broken is counted (`dependency_errors_total{dependency="processor",mode,operation}` in the API, the
 * counterpart of `countStorageErrors` for object storage). Behaviour is otherwise unchanged: the
 * same client objects answer, with the same results and the same errors.
 *
 * The operation is the resource path and method called on the client, e.g. `products.create`,
 * `invoices.retrieve` or `checkout.sessions.retrieve`, so the label stays a short, fixed set.
 * A call counts once when its promise rejects, after stripe-node's own network retries; for a
 * list's auto-pagination only the first page is watched.
 */
import Stripe from 'stripe';
import type { Payproc, PayprocMode } from './client';

/**
 * True for failures of the processor itself: no connection or a timeout (`StripeConnectionError`),
 * a 5xx or an unrecognised answer (`StripeAPIError`, or any processor error with status ≥ 500),
 * also when wrapped as the `cause` of another error (the AppError of `mapProcessorError`).
 * The processor's answers to a request do not count: a declined card, an invalid or conflicting
 * request, a missing object, authentication, permission and rate limits (all 4xx), nor errors
 * that are not the processor's (a database error, a bad argument refused before any request).
 */
export function isProcessorFailure(err: unknown): boolean {
  const e = err as { type?: unknown; statusCode?: unknown; cause?: unknown } | null;
  if (typeof e?.type !== 'string' || !e.type.startsWith('Stripe'))
    return e?.cause !== undefined && e.cause !== err ? isProcessorFailure(e.cause) : false;
  return e.type === 'StripeConnectionError' || e.type === 'StripeAPIError' || (typeof e.statusCode === 'number' && e.statusCode >= 500);
}

const isResource = (value: unknown): value is object => value instanceof Stripe.StripeResource;
/** A group of resources such as `stripe.checkout` (`checkout.sessions`). */
const isNamespace = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !isResource(value) && Object.values(value).some(isResource);

/**
 * Returns a `Payproc` whose clients call `onError(operation, mode)` (the client's mode) for each call that fails per
 * `isProcessorFailure`, then reject with the error as before. Resources and resource groups of
 * the client (`stripe.products`, `stripe.checkout.sessions`) are watched; everything else on it
 * (webhook signature checks, error classes, settings) is handed out untouched.
 */
export function countProcessorErrors(payproc: Payproc, onError: (operation: string, mode: PayprocMode) => void): Payproc {
  const wrapped = new WeakMap<object, object>();

  function watch<T extends object>(target: T, prefix: string, resource: boolean, mode: PayprocMode): T {
    const known = wrapped.get(target);
    if (known) return known as T;
    const proxy = new Proxy(target, {
      get(obj, key, receiver) {
        const value: unknown = Reflect.get(obj, key, receiver);
        if (typeof key !== 'string' || key.startsWith('_') || key === 'stripe') return value;
        if (isResource(value) || isNamespace(value)) return watch(value, `${prefix}${key}.`, isResource(value), mode);
        if (!resource || typeof value !== 'function') return value;
        const operation = `${prefix}${key}`;
        return (...args: unknown[]) => {
          const result: unknown = Reflect.apply(value as (...a: unknown[]) => unknown, obj, args);
          if (result && typeof (result as PromiseLike<unknown>).then === 'function') {
            // A side branch: the caller still gets (and handles) the original promise, with its
            // auto-pagination methods.
            (result as PromiseLike<unknown>).then(undefined, (err: unknown) => {
              if (isProcessorFailure(err)) onError(operation, mode);
            });
          }
          return result;
        };
      },
    });
    wrapped.set(target, proxy);
    return proxy;
  }

  return { client: (mode) => watch(payproc.client(mode), '', false, mode) };
}
