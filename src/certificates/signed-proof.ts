/**
 * Signed proof of a certificate (issue 50, item 3): a compact JWS (RFC 7515, `alg` EdDSA over an
 * Ed25519 key, RFC 8037; `kid` in the protected header) of the facts a certificate printed, carried
 * by its QR code and verification link (`…/verify/<number>?proof=<jws>`), so a venue can check
 * them offline against the published keys (`GET /.well-known/jwks.json`) and online (live status).
 *
 * - The keys: config `CERTIFICATE_SIGNING_KEYS`, parsed by `parseSigningKeys` in src/config.ts;
 *   the first signs, all verify (rotation: put a new key first, keep the old ones while their
 *   certificates matter).
 * - `createCertificateSigner(keys)`: `sign(facts)` → the compact JWS; `jwks()` → the public keys
 *   (JWK Set, RFC 7517); `verify(token)` → `{ kid, facts }` or throws `ProofRefused`.
 * - `verifyProof(token, jwks)`: the same check against any JWK Set (the offline command's).
 *
 * Ed25519 signatures are deterministic: the same facts under the same key give the same token, so
 * a retried render prints the same QR code.
 */
import { createPublicKey } from 'node:crypto';
import { CompactSign, compactVerify, createLocalJWKSet, decodeProtectedHeader, errors, type JSONWebKeySet, type JWK } from 'jose';
import type { SigningKey } from '../config';

/** The facts a certificate's token signs (spec wire names; instants ISO 8601 UTC). */
export interface CertificateFacts {
  certificate_number: string;
  /** The certificate's version, 1 first. */
  revision: number;
  named_insured_name: string;
  /** The certificate holder's name; null for "to whom it may concern". */
  certificate_holder_name: string | null;
  coverage_starts_at: string;
  /** Exclusive. */
  coverage_ends_at: string;
  coverage_time_zone: string;
  /** Status at issue: `issued` (live) or `specimen` (test mode: no real cover). */
  status: 'issued' | 'specimen';
  /** The issue date printed on the certificate, `YYYY-MM-DD`. */
  issued_at: string;
}

/** Why a token was refused; `reason` is a stable word, `message` a sentence for a person. */
export class ProofRefused extends Error {
  override name = 'ProofRefused';
  constructor(
    readonly reason: 'malformed' | 'unknown_key' | 'bad_signature' | 'bad_facts',
    message: string,
  ) {
    super(message);
  }
}

/** The public JWK of a signing key (`kty` OKP, `crv` Ed25519, `alg` EdDSA, `use` sig). */
function publicJwk(key: SigningKey): JWK {
  const { kty, crv, x } = createPublicKey(key.privateKey).export({ format: 'jwk' });
  return { kty: kty!, crv: crv!, x: x!, kid: key.kid, alg: 'EdDSA', use: 'sig' };
}

const isString = (v: unknown): v is string => typeof v === 'string';

/** Checks a verified payload has every fact with its type; throws `ProofRefused('bad_facts')`. */
function factsOf(payload: Uint8Array): CertificateFacts {
  let f: Record<string, unknown>;
  try {
    f = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
  } catch {
    throw new ProofRefused('bad_facts', 'The signed facts are not JSON');
  }
  const ok =
    f !== null &&
    typeof f === 'object' &&
    isString(f.certificate_number) &&
    Number.isInteger(f.revision) &&
    isString(f.named_insured_name) &&
    (f.certificate_holder_name === null || isString(f.certificate_holder_name)) &&
    isString(f.coverage_starts_at) &&
    isString(f.coverage_ends_at) &&
    isString(f.coverage_time_zone) &&
    (f.status === 'issued' || f.status === 'specimen') &&
    isString(f.issued_at);
  if (!ok) throw new ProofRefused('bad_facts', 'The signed facts are not those of a certificate');
  return f as unknown as CertificateFacts;
}

/**
 * Verifies a compact JWS against a JWK Set: EdDSA only, the key named by its `kid`. Returns the
 * key id and the facts; throws `ProofRefused` (malformed, unknown_key, bad_signature, bad_facts).
 */
export async function verifyProof(token: string, jwks: JSONWebKeySet): Promise<{ kid: string; facts: CertificateFacts }> {
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    throw new ProofRefused('malformed', 'The proof is not a signed token');
  }
  if (typeof kid !== 'string') throw new ProofRefused('malformed', 'The proof names no signing key');
  try {
    const { payload } = await compactVerify(token, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
    return { kid, facts: factsOf(payload) };
  } catch (err) {
    if (err instanceof ProofRefused) throw err;
    if (err instanceof errors.JWKSNoMatchingKey) throw new ProofRefused('unknown_key', `The proof is signed by an unknown key (${kid})`);
    if (err instanceof errors.JWSSignatureVerificationFailed) {
      throw new ProofRefused('bad_signature', 'The signature does not match the facts: the token was altered or not issued here');
    }
    throw new ProofRefused('malformed', 'The proof is not a valid signed token');
  }
}

/** Signs with the first key, verifies with any (see the module comment). */
export function createCertificateSigner(keys: readonly SigningKey[]) {
  if (keys.length === 0) throw new Error('at least one signing key is required');
  const current = keys[0]!;
  const set: JSONWebKeySet = { keys: keys.map(publicJwk) };
  return {
    /** The id of the key that signs new tokens. */
    kid: current.kid,
    /** The compact JWS of `facts` (EdDSA, `kid` in the header; nothing more: the QR code carries it). */
    sign(facts: CertificateFacts): Promise<string> {
      return new CompactSign(new TextEncoder().encode(JSON.stringify(facts)))
        .setProtectedHeader({ alg: 'EdDSA', kid: current.kid })
        .sign(current.privateKey);
    },
    /** The public keys, newest first (served at `/.well-known/jwks.json`). */
    jwks(): JSONWebKeySet {
      return set;
    },
    verify(token: string) {
      return verifyProof(token, set);
    },
  };
}

export type CertificateSigner = ReturnType<typeof createCertificateSigner>;
