/**
 * Money conversion (ARCHITECTURE §4): prices on the wire are decimal major units (e.g. 12.5 =
 * $12.50); the database and the payment processor use integer minor units (1250). Only
 * two-decimal currencies are supported (default `usd`).
 */
import { z } from 'zod';

/** Largest price the processor accepts for a single amount: 999 999.99 in major units. */
export const MAX_PRICE_MAJOR = 999_999.99;

/** Major → minor units; callers validate with `majorAmount` first, so the result is exact. */
export function toMinorUnits(major: number): number {
  return Math.round(major * 100);
}

/** Minor → major units (1250 → 12.5). Accepts the `bigint`-as-string that pg returns. */
export function toMajorUnits(minor: number | string): number {
  return Number(minor) / 100;
}

/** A non-negative major-unit amount with at most two decimals, up to `max`. */
export function majorAmount(max = MAX_PRICE_MAJOR) {
  return z
    .number()
    .min(0)
    .max(max)
    .refine((v) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-6, { message: 'must have at most two decimal places' });
}
