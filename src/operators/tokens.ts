/**
 * Operator token values (issue 55, item 8): one per person, the way an operator is named to the
 * ops CLI (`OPERATOR_TOKEN`) and to the codec endpoint (`Authorization: Bearer <token>`).
 *
 * A value is `opk_<43 base64url chars>` (32 random bytes). Only its hex SHA-256 is stored, as for
 * API keys (src/api-keys/secrets.ts); it is shown once, when issued.
 */
import { createHash, randomBytes } from 'node:crypto';

const TOKEN_PATTERN = /^opk_[A-Za-z0-9_-]{43}$/;

/** A fresh random operator token. */
export function generateOperatorToken(): string {
  return `opk_${randomBytes(32).toString('base64url')}`;
}

/** Whether `value` has an operator token's shape (checked before any database lookup). */
export function isOperatorTokenShaped(value: string | undefined): value is string {
  return value !== undefined && TOKEN_PATTERN.test(value);
}

/** Hex SHA-256 of a token: the only form stored. */
export function hashOperatorToken(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** The part of a token safe to show in listings: `opk_` and four characters. */
export function operatorTokenPrefix(value: string): string {
  return value.slice(0, 8);
}
