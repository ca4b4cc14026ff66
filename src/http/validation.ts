/**
 * Turning zod results into the spec's error codes (spec §7.1), in one place.
 *
 * - bodies → 400 VALIDATION_ERROR; query strings → 400 QUERY_VALIDATION_ERROR;
 * - path ids → a positive integer up to 2^31-1, else the caller's code (INVALID_BUNDLE_ID on
 *   bundle paths, VALIDATION_ERROR on product paths; ARCHITECTURE §4).
 * Every problem is listed in `error.details`, the first one in `error.message`.
 */
import type { z } from 'zod';
import { AppError, type ErrorCode, type FieldIssue } from '../shared/errors';

export const MAX_DB_ID = 2_147_483_647;

function issuesOf(error: z.ZodError): FieldIssue[] {
  return error.issues.map((i) => {
    const path = i.path.map(String).join('.');
    if (i.code === 'unrecognized_keys') {
      return {
        path: [path, ...i.keys].filter(Boolean).join('.'),
        message: `unknown field${i.keys.length > 1 ? 's' : ''}: ${i.keys.join(', ')}`,
      };
    }
    return { path, message: i.message };
  });
}

function fail(code: ErrorCode, what: string, error: z.ZodError): never {
  const details = issuesOf(error);
  const first = details[0]!;
  throw new AppError(code, `Invalid ${what}: ${first.path ? `${first.path}: ` : ''}${first.message}`, { details });
}

// NUL (PostgreSQL text cannot hold it) or a UTF-16 surrogate without its partner (not Unicode
// text: the processor's form encoding throws on it, PostgreSQL would store U+FFFD instead).
// eslint-disable-next-line no-control-regex -- finding NUL is the point
const UNSAFE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The path (`a.b.0`) of the first string or object key in `value` holding a NUL character or an
 * unpaired surrogate, or null when there is none. Walks with its own stack, so a body nested
 * thousands of levels deep cannot overflow the call stack.
 */
export function findUnsafeText(value: unknown): string | null {
  const stack: { v: unknown; path: string }[] = [{ v: value, path: '' }];
  const join = (path: string, k: string | number) => (path ? `${path}.${k}` : String(k));
  while (stack.length) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (UNSAFE_TEXT.test(v)) return path;
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ v: item, path: join(path, i) }));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        if (UNSAFE_TEXT.test(k)) return join(path, k.replace(UNSAFE_TEXT, '?'));
        stack.push({ v: item, path: join(path, k) });
      }
    }
  }
  return null;
}

function rejectUnsafeText(code: ErrorCode, what: string, value: unknown): void {
  const path = findUnsafeText(value);
  if (path === null) return;
  const message = 'must not contain NUL characters or unpaired UTF-16 surrogates';
  throw new AppError(code, `Invalid ${what}: ${path ? `${path}: ` : ''}${message}`, { details: [{ path, message }] });
}

/**
 * Parses a JSON body; throws VALIDATION_ERROR listing every problem. Any string (or key) with a
 * NUL character or an unpaired surrogate is refused first, wherever it sits in the body.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  rejectUnsafeText('VALIDATION_ERROR', 'request body', body);
  const r = schema.safeParse(body ?? {});
  if (!r.success) fail('VALIDATION_ERROR', 'request body', r.error);
  return r.data;
}

/** Parses a query string object; throws QUERY_VALIDATION_ERROR listing every problem (NUL in a value included). */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  rejectUnsafeText('QUERY_VALIDATION_ERROR', 'query parameter', query);
  const r = schema.safeParse(query);
  if (!r.success) fail('QUERY_VALIDATION_ERROR', 'query parameter', r.error);
  return r.data;
}

/** Parses a path id (`/^[1-9][0-9]*$/`, at most 2^31-1) or throws `code`. */
export function parsePathId(raw: string | undefined, code: ErrorCode, name = 'id'): number {
  if (!raw || !/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > MAX_DB_ID) {
    throw new AppError(code, `${name} must be a positive integer, got "${String(raw).slice(0, 32)}"`);
  }
  return Number(raw);
}
