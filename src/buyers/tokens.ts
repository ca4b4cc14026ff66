/**
 * Buyer access token values (spec §5.5, §5.7; ARCHITECTURE §3 step 1), built like API key
 * values (`src/api-keys/secrets.ts`): `bat_` + 32 random bytes in base64url (43 characters).
 * Only the hex SHA-256 is stored; hashes are compared in constant time. Values are returned to
 * the caller once and never logged.
 */
import { createHash, randomBytes } from 'node:crypto';

export { hashesEqual } from '../api-keys/secrets';

const TOKEN_PATTERN = /^bat_[A-Za-z0-9_-]{43}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A fresh random access token value. */
export function generateAccessToken(): string {
  return `bat_${randomBytes(32).toString('base64url')}`;
}

/** Hex SHA-256 of a token value: the only form stored (64 characters). */
export function hashAccessToken(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Cheap shape check before any database lookup; false for anything not a string. */
export function isAccessTokenShape(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_PATTERN.test(value);
}

/** True for a string shaped like a UUID (any version), the form of `idp_accnt_uuid`. */
export function isUuidShape(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}
