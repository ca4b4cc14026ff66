/**
 * API key lifecycle (spec §3 key state table, §5) and request authentication.
 *
 * States: active --rotate--> active (new value; old values work until the grace expiry),
 * active --freeze--> frozen --unfreeze--> active, active|frozen --delete--> deleted (final).
 * `authenticate` returns the caller's `Principal` or null; the gateway turns null into the
 * spec's 403 `{ "message": "Forbidden" }`. A value that authenticates is recorded as used (its
 * `lastUsedAt`, for the portal's "last used"), at most once a minute per value and process,
 * without waiting for the write. Errors: AppError NOT_FOUND for an unknown key id,
 * VALIDATION_ERROR for an operation the key's state does not allow or a bad attachment.
 */
import { AppError, notFound } from '../shared/errors';
import type { AccountsRepository, RootAccount } from '../accounts/repository';
import { returnUrlProblem } from '../shared/return-url';
import type { ApiKeyRecord, ApiKeySecretRecord, ApiKeysRepository } from './repository';
import { displayPrefix, generateKeyValue, hashKeyValue, hashesEqual, parseKeyValue, type KeyMode } from './secrets';

/**
 * Whose data a read sees: the account, the mode, and the teammate it is narrowed to (null: the
 * whole account). An API key's principal is one; the agency portal makes one for the signed-in
 * teammate's account in the mode the page shows.
 */
export type AccountView = Pick<Principal, 'rootAccountId' | 'mode' | 'agentId'>;

/** Who is calling: everything the gateway and the services need to know about the key. */
export interface Principal {
  apiKeyId: number;
  rootAccountId: number;
  mode: KeyMode;
  agentId: number | null;
  /** Surcharge added at checkout for sales attributed to the key, in basis points (1/100 %). */
  platformFeeBps: number | null;
  /**
   * The root account's public id (lower case), when the principal came from an API key: the root
   * surface checks the body's `idp_root_account_uuid` against it without a query.
   */
  idpRootAccountUuid?: string;
}

export interface CreateKeyInput {
  rootAccountId: number;
  name: string;
  description?: string;
  mode?: KeyMode;
  agentId?: number | null;
  platformFeeBps?: number | null;
  /** Where the buyer lands after paying (absolute http(s) URL); default: the account's, else the service's page. */
  checkoutSuccessUrl?: string | null;
  /** Where the buyer lands after cancelling; default: the account's, else the service's page. */
  checkoutCancelUrl?: string | null;
}

/**
 * Checkout return URLs to change: a URL sets one, null clears it (the next default applies:
 * the account's for a key, the service's pages for an account), undefined leaves it.
 */
export interface ReturnUrlsChange {
  successUrl?: string | null;
  cancelUrl?: string | null;
}

/**
 * A key together with a value, returned once by create and rotate: the key's record (never its
 * creation time) with the value in clear (`key`), always `active`.
 */
export interface IssuedKey extends Omit<ApiKeyRecord, 'status' | 'createdAt'> {
  key: string;
  status: 'active';
  /** Rotate only: when the previous value stops working. */
  previousValueExpiresAt?: string;
}

export interface KeyListing extends ApiKeyRecord {
  values: (Omit<ApiKeySecretRecord, 'apiKeyId'> & { state: 'current' | 'grace' | 'expired' })[];
}

export function createApiKeyService(deps: {
  keys: ApiKeysRepository;
  accounts: AccountsRepository;
  defaultGraceHours: number;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  /** Per value's hash: when this process last recorded it as used (ms since the epoch). */
  const touched = new Map<string, number>();
  const recordUse = (secretHash: string, at: Date) => {
    if (at.getTime() - (touched.get(secretHash) ?? 0) < 60_000) return;
    if (touched.size >= 10_000) touched.clear();
    touched.set(secretHash, at.getTime());
    // Best effort: a lost "last used" time must never fail or slow the request it came with.
    deps.keys.touchSecret(secretHash, at).catch(() => touched.delete(secretHash));
  };

  async function loadMutable(id: number, trx: Parameters<Parameters<ApiKeysRepository['transaction']>[0]>[0]) {
    const key = await deps.keys.findKey(id, trx);
    if (!key) throw notFound('API key', id);
    if (key.status === 'deleted') throw new AppError('VALIDATION_ERROR', `API key ${id} is deleted; deletion is permanent`);
    return key;
  }

  return {
    /** Creates a key with one current value; the value is returned once and never stored. */
    async create(input: CreateKeyInput): Promise<IssuedKey> {
      const account = await deps.accounts.findById(input.rootAccountId);
      if (!account) throw notFound('root account', input.rootAccountId);
      if (!input.name.trim()) throw new AppError('VALIDATION_ERROR', 'name must not be empty');
      if (input.agentId != null) {
        const agent = await deps.accounts.findAgent(input.agentId);
        if (!agent || agent.rootAccountId !== account.id) {
          throw new AppError('VALIDATION_ERROR', `agent ${input.agentId} does not belong to root account ${account.id}`);
        }
      }
      const fee = input.platformFeeBps ?? null;
      if (fee !== null && (!Number.isInteger(fee) || fee < 0 || fee > 10000)) {
        throw new AppError('VALIDATION_ERROR', 'platform fee must be an integer number of basis points from 0 to 10000');
      }
      const checkoutSuccessUrl = checkedUrl(input.checkoutSuccessUrl, 'checkout success URL') ?? null;
      const checkoutCancelUrl = checkedUrl(input.checkoutCancelUrl, 'checkout cancel URL') ?? null;
      const mode = input.mode ?? 'live';
      const value = generateKeyValue(mode);
      const key = await deps.keys.transaction(async (trx) => {
        const k = await deps.keys.insertKey(trx, {
          rootAccountId: account.id,
          name: input.name.trim(),
          description: input.description ?? '',
          mode,
          agentId: input.agentId ?? null,
          platformFeeBps: fee,
          checkoutSuccessUrl,
          checkoutCancelUrl,
        });
        await deps.keys.insertSecret(trx, k.id, hashKeyValue(value), displayPrefix(value));
        return k;
      });
      return { ...issued(key), key: value };
    },

    /** The key with this id (any state), or null when there is none. Callers check the account. */
    async get(id: number): Promise<ApiKeyRecord | null> {
      return deps.keys.findKey(id);
    },

    /** Lists an account's keys with their values' prefixes and expiry (never the values). */
    async list(rootAccountId: number): Promise<KeyListing[]> {
      const at = now();
      const keys = await deps.keys.listKeys(rootAccountId);
      return keys.map(({ secrets, ...k }) => ({
        ...k,
        values: secrets.map(({ apiKeyId: _omit, ...s }) => ({
          ...s,
          state: s.expiresAt === null ? 'current' : s.expiresAt > at ? 'grace' : 'expired',
        })),
      }));
    },

    /**
     * Issues a new value; the current values keep working for `graceHours`
     * (default from config, spec §5.3). Only an active key can be rotated.
     */
    async rotate(id: number, graceHours = deps.defaultGraceHours): Promise<IssuedKey> {
      if (!Number.isFinite(graceHours) || graceHours < 0) throw new AppError('VALIDATION_ERROR', 'grace hours must be >= 0');
      const value = await deps.keys.transaction(async (trx) => {
        const key = await loadMutable(id, trx);
        if (key.status !== 'active')
          throw new AppError('VALIDATION_ERROR', `API key ${id} is ${key.status}; only an active key can be rotated`);
        const v = generateKeyValue(key.mode);
        const expiresAt = new Date(now().getTime() + graceHours * 3600_000);
        await deps.keys.expireCurrentSecrets(trx, key.id, expiresAt);
        await deps.keys.insertSecret(trx, key.id, hashKeyValue(v), displayPrefix(v));
        return { key, v, expiresAt };
      });
      return { ...issued(value.key), key: value.v, previousValueExpiresAt: value.expiresAt.toISOString() };
    },

    /** Changes where the key's buyers return after checkout (a deleted key cannot be changed). */
    async setReturnUrls(id: number, change: ReturnUrlsChange): Promise<ApiKeyRecord> {
      const urls = checkedChange(change);
      return deps.keys.transaction(async (trx) => {
        await loadMutable(id, trx);
        const key = await deps.keys.setCheckoutReturnUrls(trx, id, urls);
        if (!key) throw notFound('API key', id);
        return key;
      });
    },

    /** The root account with its default checkout return URLs, or null when there is none. */
    async account(rootAccountId: number): Promise<RootAccount | null> {
      return deps.accounts.findById(rootAccountId);
    },

    /** Changes the account-wide default return URLs (used by keys that set none). */
    async setAccountReturnUrls(rootAccountId: number, change: ReturnUrlsChange): Promise<RootAccount> {
      const account = await deps.accounts.setCheckoutReturnUrls(rootAccountId, checkedChange(change));
      if (!account) throw notFound('root account', rootAccountId);
      return account;
    },

    /** Stops the key at once, reversibly (spec §5.3). */
    async freeze(id: number): Promise<ApiKeyRecord> {
      return deps.keys.transaction(async (trx) => {
        const key = await loadMutable(id, trx);
        await deps.keys.setStatus(trx, id, 'frozen');
        return { ...key, status: 'frozen' };
      });
    },

    /** Reverses a freeze (the spec leaves this operation open; decision recorded). */
    async unfreeze(id: number): Promise<ApiKeyRecord> {
      return deps.keys.transaction(async (trx) => {
        const key = await loadMutable(id, trx);
        await deps.keys.setStatus(trx, id, 'active');
        return { ...key, status: 'active' };
      });
    },

    /** Revokes the key permanently (spec §5.3). */
    async delete(id: number): Promise<ApiKeyRecord> {
      return deps.keys.transaction(async (trx) => {
        const key = await loadMutable(id, trx);
        await deps.keys.setStatus(trx, id, 'deleted');
        return { ...key, status: 'deleted' };
      });
    },

    /**
     * The principal for an `x-api-key` value, or null when the value is missing, malformed,
     * unknown, expired, or belongs to a frozen or deleted key (spec §5.2).
     */
    async authenticate(value: string | undefined): Promise<Principal | null> {
      const parsed = parseKeyValue(value);
      if (!parsed || !value) return null;
      const hash = hashKeyValue(value);
      const match = await deps.keys.findActiveBySecretHash(hash, now());
      if (!match || !hashesEqual(match.secretHash, hash) || match.mode !== parsed.mode) return null;
      recordUse(match.secretHash, now());
      return {
        apiKeyId: match.id,
        rootAccountId: match.rootAccountId,
        mode: match.mode,
        agentId: match.agentId,
        platformFeeBps: match.platformFeeBps,
        idpRootAccountUuid: match.idpRootAccountUuid,
      };
    },
  };
}

/** `value` when it is a valid return URL (or null/undefined); VALIDATION_ERROR naming `field` otherwise. */
function checkedUrl(value: string | null | undefined, field: string): string | null | undefined {
  if (value === undefined || value === null) return value;
  const problem = returnUrlProblem(value);
  if (problem) throw new AppError('VALIDATION_ERROR', `${field} ${problem}`);
  return value;
}

function checkedChange(change: ReturnUrlsChange): ReturnUrlsChange {
  if (change.successUrl === undefined && change.cancelUrl === undefined)
    throw new AppError('VALIDATION_ERROR', 'give a success URL, a cancel URL or both');
  return {
    successUrl: checkedUrl(change.successUrl, 'checkout success URL'),
    cancelUrl: checkedUrl(change.cancelUrl, 'checkout cancel URL'),
  };
}

/** The fields of an issued key, named one by one so that nothing else a record carries is answered. */
function issued(k: ApiKeyRecord): Omit<IssuedKey, 'key'> {
  return {
    id: k.id,
    rootAccountId: k.rootAccountId,
    name: k.name,
    description: k.description,
    mode: k.mode,
    agentId: k.agentId,
    platformFeeBps: k.platformFeeBps,
    checkoutSuccessUrl: k.checkoutSuccessUrl,
    checkoutCancelUrl: k.checkoutCancelUrl,
    status: 'active',
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
