/**
 * The buyer's claim link (issue 51, item 1): `<PUBLIC_BASE_URL>/claim/<token>`, the page where the
 * buyer files a claim on their purchase themselves. The token is signed like the withdrawal link's
 * (src/withdrawals/token.ts, under the same WITHDRAWAL_LINK_KEY, the buyer links' key) with a
 * message of its own: `c1.<purchase id>.<mac>`, the mac the HMAC-SHA256 of
 * `buyer-claim/v1/<id>`, so a withdrawal token never opens the claim page nor the other way
 * round. It never expires (a claim may come after the cover ended). Pure functions: no I/O.
 */
import { signPurchaseToken, verifyPurchaseToken, type PurchaseLinkKind } from '../withdrawals/token';
import { isInForce } from '../purchases/rules';
import type { PurchaseRecord } from '../purchases/purchase-record';

/** The claim page (path under PUBLIC_BASE_URL; the token follows). */
export const CLAIM_PAGE_PATH = '/claim';

const CLAIM_LINK: PurchaseLinkKind = { prefix: 'c1', message: 'buyer-claim/v1' };

/** The claim token of purchase `purchaseId` under `key`, e.g. `c1.42.Xq3…`. Throws RangeError for an id that is not a positive 32-bit integer. */
export function signClaimToken(key: string, purchaseId: number): string {
  return signPurchaseToken(CLAIM_LINK, key, purchaseId);
}

/** The purchase id a claim token names when signed with `key`, else null (malformed, another kind, forged). */
export function verifyClaimToken(key: string, token: string): number | null {
  return verifyPurchaseToken(CLAIM_LINK, key, token);
}

/**
 * The claim page URL of purchase `p` (`<publicBaseUrl>/claim/<token>`) when the purchase offers
 * it, else null: offered while it is paid and not refunded in full (the page itself still answers
 * a link kept from before).
 */
export function claimPageUrl(publicBaseUrl: string, key: string, p: Pick<PurchaseRecord, 'id' | 'status'>): string | null {
  if (!isInForce(p.status)) return null;
  return `${publicBaseUrl.replace(/\/+$/, '')}${CLAIM_PAGE_PATH}/${signClaimToken(key, p.id)}`;
}
