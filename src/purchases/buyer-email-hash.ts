/**
 * The keyed hash of a buyer's email kept in the `BuyerEmailHash` search attribute instead of the
 * email itself: HMAC-SHA256 under BUYER_EMAIL_HASH_KEY of the trimmed, lower-cased address, as
 * 64 lowercase hex characters. An operator finds a buyer's purchases with
 * `npm run ops -- find --email <address>`, which hashes the same way; without the key the hash
 * cannot be tested against guessed addresses.
 */
import crypto from 'node:crypto';

export function buyerEmailHash(key: string, email: string): string {
  return crypto.createHmac('sha256', key).update(email.trim().toLowerCase(), 'utf8').digest('hex');
}
