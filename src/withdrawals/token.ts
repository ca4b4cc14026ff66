/**
 * The buyer's withdrawal link: `<PUBLIC_BASE_URL>/withdraw/<token>`, where the token names one
 * purchase and is signed with WITHDRAWAL_LINK_KEY, so nobody can make one without the key.
 *
 * Token: `w1.<purchase id>.<mac>`, the mac being the HMAC-SHA256 of `buyer-withdrawal/v1/<id>`
 * under the key, base64url without padding (43 characters). It never expires (the withdrawal
 * function must stay available) and is checked before anything is looked up, in constant time,
 * so a forged or damaged token tells nothing about which purchases exist. It is single use by
 * what it does, not by its text: once a withdrawal has been confirmed through it, the page says so
 * (see ./service.ts). The signing is shared with the buyer's other links (`signPurchaseToken`: the
 * claim page's, src/claims/buyer-link.ts), each kind with its own prefix and message. Pure
 * functions: no I/O, no clock.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The withdrawal page (path under PUBLIC_BASE_URL; the token follows). */
export const WITHDRAWAL_PAGE_PATH = '/withdraw';

/** The shape of a token: version, purchase id (a positive PostgreSQL integer), 43-character mac. */
export const WITHDRAWAL_TOKEN_PATTERN = /^w1\.([1-9][0-9]{0,9})\.([A-Za-z0-9_-]{43})$/;

/** The highest purchase id PostgreSQL's `integer` holds. */
const MAX_ID = 2_147_483_647;

/**
 * What a kind of buyer link signs: its token prefix (`w1`, …) and the message it MACs before the
 * purchase id (`buyer-withdrawal/v1`). Kinds sharing one key cannot stand for each other: the
 * message differs, and so does the prefix the pattern checks.
 */
export interface PurchaseLinkKind {
  prefix: string;
  message: string;
}

const WITHDRAWAL: PurchaseLinkKind = { prefix: 'w1', message: 'buyer-withdrawal/v1' };

const macOf = (kind: PurchaseLinkKind, key: string, purchaseId: number): Buffer =>
  createHmac('sha256', key).update(`${kind.message}/${purchaseId}`, 'utf8').digest();

/**
 * The token of purchase `purchaseId` for links of `kind` under `key`: `<prefix>.<id>.<mac>`, the
 * mac base64url without padding (43 characters). Throws RangeError for an id that is not a
 * positive 32-bit integer.
 */
export function signPurchaseToken(kind: PurchaseLinkKind, key: string, purchaseId: number): string {
  if (!Number.isSafeInteger(purchaseId) || purchaseId < 1 || purchaseId > MAX_ID)
    throw new RangeError(`purchase id ${purchaseId} is not a positive 32-bit integer`);
  return `${kind.prefix}.${purchaseId}.${macOf(kind, key, purchaseId).toString('base64url')}`;
}

/**
 * The purchase id a token of `kind` names when it was signed with `key`, else null (malformed,
 * another kind or version, an id out of range, or a mac that does not match: all the same null).
 * Compares the mac in constant time.
 */
export function verifyPurchaseToken(kind: PurchaseLinkKind, key: string, token: string): number | null {
  const m = /^([a-z][0-9])\.([1-9][0-9]{0,9})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m || m[1] !== kind.prefix) return null;
  const purchaseId = Number(m[2]);
  if (purchaseId > MAX_ID) return null;
  const given = Buffer.from(m[3]!, 'base64url');
  const expected = macOf(kind, key, purchaseId);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  // base64url has several spellings of the last character's spare bits; only the canonical one is the token.
  if (given.toString('base64url') !== m[3]) return null;
  return purchaseId;
}

/**
 * The withdrawal token of purchase `purchaseId` under `key` (WITHDRAWAL_LINK_KEY), e.g.
 * `w1.42.Xq3…` (49–58 characters). Throws RangeError for an id that is not a positive 32-bit integer.
 */
export function signWithdrawalToken(key: string, purchaseId: number): string {
  return signPurchaseToken(WITHDRAWAL, key, purchaseId);
}

/** The purchase id a withdrawal token names when it was signed with `key`, else null (see `verifyPurchaseToken`). */
export function verifyWithdrawalToken(key: string, token: string): number | null {
  return verifyPurchaseToken(WITHDRAWAL, key, token);
}

/** The page URL of purchase `purchaseId`: `<publicBaseUrl>/withdraw/<token>` (a base URL with a path keeps it). */
export function withdrawalUrl(publicBaseUrl: string, key: string, purchaseId: number): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${WITHDRAWAL_PAGE_PATH}/${signWithdrawalToken(key, purchaseId)}`;
}
