/**
 * The `Signature` header of an event delivery, in Stripe's scheme so its libraries (and any
 * HMAC code) verify it: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the
 * endpoint's whole secret, `whsec_` included>`. Receivers should refuse a `t` older than 5 minutes.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const SIGNATURE_HEADER = 'Signature';

/** A new endpoint signing secret: `whsec_` and 32 random bytes in base64url. */
export function newEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** The header value for `payload` signed with `secret` at `timestampSeconds`. */
export function signatureHeader(secret: string, payload: string, timestampSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${timestampSeconds}.${payload}`).digest('hex');
  return `t=${timestampSeconds},v1=${v1}`;
}
