/**
 * zod building blocks for query strings, where every value arrives as a string (a repeated
 * parameter arrives as an array and is rejected). Used with `parseQuery` → QUERY_VALIDATION_ERROR.
 */
import { z } from 'zod';

/** An integer query value in [min, max], written in plain decimal digits (`-`, `1.5`, `1e3` rejected). */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^-?\d{1,10}$/, { message: 'must be an integer' })
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

/** A boolean query value written exactly `true` or `false`. */
export const queryBool = z.enum(['true', 'false'], { message: 'must be "true" or "false"' }).transform((v) => v === 'true');

/** Builds the spec §2.5 list metadata; `pageIndex` is zero-based. */
export function listMetadata(total: number, count: number, pageSize: number, pageIndex: number, withHasMore = false) {
  const base = { total, count, pagination: { pageSize, pageIndex } };
  return withHasMore ? { ...base, hasMore: (pageIndex + 1) * pageSize < total } : base;
}
