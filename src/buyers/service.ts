/**
 * Buyer connection (spec §4.3, §5.5, §5.7; ARCHITECTURE §3 step 1): find or create a buyer,
 * connect it to the seller (the calling API key's root account) with the attribution code, and
 * issue short-lived access tokens that the quote endpoints verify.
 *
 * Tenancy: `seller_slug` must be the slug of the key's own root account, else 404
 * SELLER_NOT_FOUND (same message for unknown and foreign slugs). Buyers are global (one per
 * normalised email) but existence is reported per seller: a buyer connected only to another
 * account reads as missing. Tokens: `bat_…`, stored as SHA-256 hex, valid for
 * `tokenTtlSeconds` seconds, bound to the buyer and the root account that obtained them.
 * Errors thrown: AppError SELLER_NOT_FOUND (404), ACCESS_TOKEN_INVALID (401),
 * ACCESS_TOKEN_EXPIRED (401).
 */
import { AppError } from '../shared/errors';
import type { Principal } from '../api-keys/service';
import type { AccountsRepository } from '../accounts/repository';
import type { Buyer, BuyersRepository, BuyersTransaction } from './repository';
import type { CheckIfBuyerExistsBody, CheckIfBuyerExistsResponse, NewConnectBody, NewConnectResponse } from './schemas';
import { generateAccessToken, hashAccessToken, hashesEqual, isAccessTokenShape, isUuidShape } from './tokens';

/** Expired tokens are kept this long (so verification can still say "expired"), then pruned. */
const EXPIRED_TOKEN_RETENTION_MS = 24 * 3600_000;

/** One message for unknown and foreign slugs alike, and without the slug: nothing to tell apart. */
const SELLER_NOT_FOUND_MESSAGE = "seller_slug does not name this API key's seller";

/** The buyer behind a verified access token. */
export interface VerifiedBuyer {
  buyerId: number;
  idpAccntUuid: string;
  email: string;
  firstName: string;
  lastName: string;
}

interface IssuedToken {
  access_token: string;
  access_token_expires_at: string;
}

export function createBuyerService(deps: {
  buyers: BuyersRepository;
  accounts: Pick<AccountsRepository, 'findById'>;
  /** Lifetime of an access token in seconds (config BUYER_ACCESS_TOKEN_TTL_SECONDS). */
  tokenTtlSeconds: number;
  now?: () => Date;
}) {
  const { buyers } = deps;
  const now = deps.now ?? (() => new Date());

  /** Only the key's own slug is accepted; the caller's account is never looked up by slug. */
  async function assertOwnSeller(principal: Principal, slug: string): Promise<void> {
    const account = await deps.accounts.findById(principal.rootAccountId);
    if (!account || account.slug !== slug) {
      throw new AppError('SELLER_NOT_FOUND', SELLER_NOT_FOUND_MESSAGE);
    }
  }

  async function issueToken(conn: BuyersTransaction | undefined, buyerId: number, rootAccountId: number): Promise<IssuedToken> {
    const at = now();
    const value = generateAccessToken();
    const expiresAt = new Date(at.getTime() + deps.tokenTtlSeconds * 1000);
    const write = async (trx: BuyersTransaction) => {
      await buyers.deleteExpiredTokens(trx, buyerId, new Date(at.getTime() - EXPIRED_TOKEN_RETENTION_MS));
      await buyers.insertAccessToken(trx, { buyerId, rootAccountId, tokenHash: hashAccessToken(value), expiresAt });
    };
    await (conn ? write(conn) : buyers.transaction(write));
    return { access_token: value, access_token_expires_at: expiresAt.toISOString() };
  }

  return {
    /**
     * Spec §4.3 `checkIfBuyerExists`: `{ buyer_exists: false }` unless the buyer (by normalised
     * email) is connected to the caller's root account; then also `idp_accnt_uuid` and a fresh
     * access token with its expiry (ISO 8601). `query_param` is accepted but changes nothing:
     * the attribution is recorded by the first `newConnect`. Throws SELLER_NOT_FOUND.
     */
    async checkIfBuyerExists(principal: Principal, body: CheckIfBuyerExistsBody): Promise<CheckIfBuyerExistsResponse> {
      await assertOwnSeller(principal, body.seller_slug);
      const buyer = await buyers.findConnectedByEmail(body.buyer_email, principal.rootAccountId);
      if (!buyer) return { buyer_exists: false };
      const token = await issueToken(undefined, buyer.id, principal.rootAccountId);
      return { buyer_exists: true, idp_accnt_uuid: buyer.idpAccntUuid, ...token };
    },

    /**
     * Spec §4.3 `newConnect`: in one transaction, finds or creates the global buyer by
     * normalised email (an existing buyer's stored names are kept), connects it to the caller's
     * root account unless already connected (recording `query_param`, the API key and the key's
     * agent), and issues a fresh access token. Idempotent under retries and concurrency
     * (INSERT … ON CONFLICT). `buyer_already_exists` is true when the buyer was already
     * connected to this seller; `objectOfInsertedIds` names only what this call created
     * (`buyer_id` is the new buyer's idp_accnt_uuid). Throws SELLER_NOT_FOUND.
     */
    async newConnect(principal: Principal, body: NewConnectBody): Promise<NewConnectResponse> {
      await assertOwnSeller(principal, body.seller_slug);
      return buyers.transaction(async (trx) => {
        const inserted = await buyers.insertBuyerIfAbsent(trx, {
          email: body.buyer_email,
          firstName: body.buyer_first_name,
          lastName: body.buyer_last_name,
        });
        // ON CONFLICT waited for any concurrent insert to commit, so this statement sees it.
        const buyer: Buyer | null = inserted ?? (await buyers.findByEmail(trx, body.buyer_email));
        if (!buyer) throw new Error('buyer neither inserted nor found after ON CONFLICT');
        const connectionId = await buyers.insertConnectionIfAbsent(trx, {
          buyerId: buyer.id,
          rootAccountId: principal.rootAccountId,
          apiKeyId: principal.apiKeyId,
          agentId: principal.agentId,
          queryParam: body.query_param,
        });
        const token = await issueToken(trx, buyer.id, principal.rootAccountId);
        return {
          buyer_already_exists: connectionId === null,
          objectOfInsertedIds: { buyer_id: inserted ? inserted.idpAccntUuid : null, buyer_connection_id: connectionId },
          idp_accnt_uuid: buyer.idpAccntUuid,
          ...token,
        };
      });
    },

    /**
     * Verifies a buyer's `idp_accnt_uuid` + `access_token` for the quote endpoints (spec §5.5).
     * Returns the buyer. Throws AppError ACCESS_TOKEN_INVALID (401) for a malformed uuid or
     * token, an unknown token, a token of another buyer, or one issued to another root
     * account; ACCESS_TOKEN_EXPIRED (401) for a token of this buyer and account past its
     * expiry. Hashes are compared in constant time; the token is never logged or echoed.
     */
    async verifyAccessToken(principal: Principal, idpAccntUuid: unknown, accessToken: unknown): Promise<VerifiedBuyer> {
      const invalid = () => new AppError('ACCESS_TOKEN_INVALID', 'The buyer access token is not valid for this buyer and API key');
      if (!isUuidShape(idpAccntUuid) || !isAccessTokenShape(accessToken)) throw invalid();
      const hash = hashAccessToken(accessToken);
      const record = await buyers.findAccessToken(hash);
      if (!record || !hashesEqual(record.tokenHash, hash)) throw invalid();
      if (record.buyer.idpAccntUuid !== idpAccntUuid.toLowerCase() || record.rootAccountId !== principal.rootAccountId) throw invalid();
      // Checked after the binding, so an expired foreign token still reads as invalid.
      if (record.expiresAt.getTime() <= now().getTime()) {
        throw new AppError('ACCESS_TOKEN_EXPIRED', 'The buyer access token has expired; obtain a new one with checkIfBuyerExists');
      }
      const b = record.buyer;
      return { buyerId: b.id, idpAccntUuid: b.idpAccntUuid, email: b.email, firstName: b.firstName, lastName: b.lastName };
    },
  };
}

export type BuyerService = ReturnType<typeof createBuyerService>;
