/**
 * Turning zod results into the spec's error codes (spec §7.1), in one place.
 *
 * - bodies → 400 VALIDATION_ERROR; query strings → 400 QUERY_VALIDATION_ERROR;
 * - path ids → a positive integer up to 2^31-1, else the caller's code (INVALID_BUNDLE_ID on
 *   bundle paths, VALIDATION_ERROR on product paths; ARCHITECTURE §4).
 * Every problem is listed in `error.details`, the first one in `error.message`.
 */
import type { z } from 'zod';
import { AppError, type ErrorCode, type FieldIssue } from './errors';

export const MAX_DB_ID = 2_147_483_647;

function issuesOf(error: z.ZodError): FieldIssue[] {
  return error.issues.map((i) => {
    const path = i.path.map(String).join('.');
    if (i.code === 'unrecognized_keys') {
      return { path: [path, ...i.keys].filter(Boolean).join('.'), message: `unknown field${i.keys.length > 1 ? 's' : ''}: ${i.keys.join(', ')}` };
    }
    return { path, message: i.message };
  });
}

function fail(code: ErrorCode, what: string, error: z.ZodError): never {
  const details = issuesOf(error);
  const first = details[0]!;
  throw new AppError(code, `Invalid ${what}: ${first.path ? `${first.path}: ` : ''}${first.message}`, { details });
}

/** Parses a JSON body; throws VALIDATION_ERROR listing every problem. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body ?? {});
  if (!r.success) fail('VALIDATION_ERROR', 'request body', r.error);
  return r.data;
}

/** Parses a query string object; throws QUERY_VALIDATION_ERROR listing every problem. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
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
