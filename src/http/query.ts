/**
 * zod building blocks for query strings, where every value arrives as a string (a repeated
 * parameter arrives as an array and is rejected). Used with `parseQuery` → QUERY_VALIDATION_ERROR.
 */
import { z } from 'zod';

const INTEGER_TEXT = /^-?\d{1,10}$/;

/**
 * An integer query value in [min, max], written in plain decimal digits (`-`, `1.5`, `1e3`
 * rejected with "must be an integer"). Built as a preprocess (text → number) so the OpenAPI
 * document shows what it is: `type: integer` with `minimum` and `maximum`.
 */
/**
 * `pageSize` (1–100, default `defaultSize`) and `pageIndex` (0-based, default 0) of the
 * `/api/v1` lists, to spread into a list's query schema.
 */
export function pageQueryFields(defaultSize: number) {
  return { pageSize: queryInt(1, 100).default(defaultSize), pageIndex: queryInt(0, 1_000_000).default(0) };
}

export function queryInt(min: number, max: number) {
  return z.preprocess(
    (v) => (typeof v === 'string' && INTEGER_TEXT.test(v) ? Number(v) : v),
    z
      .number({ error: (issue) => (issue.code === 'invalid_type' ? notAnInteger(issue.input) : undefined) })
      .int()
      .min(min)
      .max(max),
  );
}

/** Text that is not an integer, or (a repeated parameter) not text at all. */
function notAnInteger(input: unknown): string {
  if (typeof input === 'string') return 'must be an integer';
  return `Invalid input: expected string, received ${Array.isArray(input) ? 'array' : input === null ? 'null' : typeof input}`;
}

/** A boolean query value written exactly `true` or `false`. */
export const queryBool = z.enum(['true', 'false'], { message: 'must be "true" or "false"' }).transform((v) => v === 'true');

/** Builds the spec §2.5 list metadata; `pageIndex` is zero-based. */
export function listMetadata(total: number, count: number, pageSize: number, pageIndex: number, withHasMore = false) {
  const base = { total, count, pagination: { pageSize, pageIndex } };
  return withHasMore ? { ...base, hasMore: (pageIndex + 1) * pageSize < total } : base;
}
