/**
 * API key values: generation, hashing and shape checks (spec §5.1–5.2, ARCHITECTURE §4).
 *
 * A value is `ik_<mode>_<43 base64url chars>` (32 random bytes). Only its hex SHA-256 is
 * stored; comparisons of hashes use `timingSafeEqual`. Values are shown once, at create/rotate.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type KeyMode = 'live' | 'test';

const KEY_PATTERN = /^ik_(live|test)_[A-Za-z0-9_-]{43}$/;

/** A fresh random key value for `mode`. */
export function generateKeyValue(mode: KeyMode): string {
  return `ik_${mode}_${randomBytes(32).toString('base64url')}`;
}

/** Hex SHA-256 of a key value: the only form stored. */
export function hashKeyValue(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** The part of a value safe to show in listings: `ik_live_` plus four characters. */
export function displayPrefix(value: string): string {
  const mode = value.startsWith('ik_test_') ? 'ik_test_' : 'ik_live_';
  return value.slice(0, mode.length + 4);
}

/** Cheap shape check before any database lookup; also tells the mode from the prefix. */
export function parseKeyValue(value: string | undefined): { mode: KeyMode } | null {
  if (!value) return null;
  const m = KEY_PATTERN.exec(value);
  return m ? { mode: m[1] as KeyMode } : null;
}

/** Constant-time equality of two hex hashes of equal length. */
export function hashesEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
