/**
 * The only writer of `idempotency_keys`: claims a key for one request, stores that request's
 * response, releases a key whose request failed on our side, and prunes expired keys.
 *
 * A key is scoped by (root account, key mode, idempotency key): two agencies, or the test and
 * live keys of one agency, never see each other's keys. Times are database times; durations are
 * given in milliseconds.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/knex';
import type { KeyMode } from '../api-keys/secrets';

/** Whose key it is. */
export interface IdempotencyScope {
  rootAccountId: number;
  mode: KeyMode;
}

/** What the request was: a retry must match all three. */
export interface RequestFingerprint {
  method: string;
  /** Path with query string. */
  path: string;
  /** Hex SHA-256 of method, path and raw body (see the middleware). */
  requestHash: string;
}

export interface StoredResponse {
  status: number;
  /** The response body as sent (JSON text). */
  body: string;
}

/**
 * The outcome of a claim:
 * - `claimed`: this request runs; finish it with `complete` or `release` using `lockToken`;
 * - `replay`: the key's first request finished; answer its stored response;
 * - `mismatch`: the key was first used for another method, path or body;
 * - `in_progress`: the key's first request is still running.
 */
export type Claim =
  | { kind: 'claimed'; lockToken: string }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'mismatch'; method: string; path: string }
  | { kind: 'in_progress' };

interface Row {
  method: string;
  path: string;
  request_hash: string;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: string | null;
}

/** The row of `key` in `scope` while the request holding `lockToken` is still in progress. */
function heldBy(scope: IdempotencyScope, key: string, lockToken: string) {
  return { root_account_id: scope.rootAccountId, mode: scope.mode, idempotency_key: key, lock_token: lockToken, state: 'in_progress' };
}

export function createIdempotencyRepository(db: Db) {
  return {
    /**
     * Claims `key` for this request, or says why not. A key past its `expires_at` counts as new;
     * an `in_progress` key whose request has held it longer than `takeoverAfterMs` (its process
     * died) is taken over by a retry of the same request. One request of a key runs at a time:
     * the claim is a single INSERT … ON CONFLICT on the primary key.
     */
    async claim(scope: IdempotencyScope, key: string, request: RequestFingerprint, ttlMs: number, takeoverAfterMs: number): Promise<Claim> {
      const lockToken = randomUUID();
      const claimed = await db.raw<{ rows: unknown[] }>(
        `insert into idempotency_keys (root_account_id, mode, idempotency_key, method, path, request_hash, state, lock_token, locked_at, created_at, expires_at)
         values (?, ?, ?, ?, ?, ?, 'in_progress', ?, now(), now(), now() + (? * interval '1 millisecond'))
         on conflict (root_account_id, mode, idempotency_key) do update
           set method = excluded.method, path = excluded.path, request_hash = excluded.request_hash, state = 'in_progress',
               lock_token = excluded.lock_token, locked_at = now(), response_status = null, response_body = null,
               created_at = now(), expires_at = excluded.expires_at
           where idempotency_keys.expires_at <= now()
              or (idempotency_keys.state = 'in_progress' and idempotency_keys.request_hash = excluded.request_hash
                  and idempotency_keys.locked_at < now() - (? * interval '1 millisecond'))
         returning lock_token`,
        [scope.rootAccountId, scope.mode, key, request.method, request.path, request.requestHash, lockToken, ttlMs, takeoverAfterMs],
      );
      if (claimed.rows.length > 0) return { kind: 'claimed', lockToken };
      const row = (await db('idempotency_keys')
        .where({ root_account_id: scope.rootAccountId, mode: scope.mode, idempotency_key: key })
        .first('method', 'path', 'request_hash', 'state', 'response_status', 'response_body')) as Row | undefined;
      // Pruned between the two statements: claim again (a fresh insert wins or sees the new row).
      if (!row) return this.claim(scope, key, request, ttlMs, takeoverAfterMs);
      if (row.request_hash !== request.requestHash) return { kind: 'mismatch', method: row.method, path: row.path };
      if (row.state === 'in_progress') return { kind: 'in_progress' };
      return { kind: 'replay', response: { status: row.response_status!, body: row.response_body! } };
    },

    /** Stores the response of the request holding `lockToken`; false if it no longer holds the key. */
    async complete(scope: IdempotencyScope, key: string, lockToken: string, response: StoredResponse): Promise<boolean> {
      const n = await db('idempotency_keys')
        .where(heldBy(scope, key, lockToken))
        .update({ state: 'completed', response_status: response.status, response_body: response.body });
      return n > 0;
    },

    /** Frees the key held by `lockToken` (its request failed on our side): a retry runs again. */
    async release(scope: IdempotencyScope, key: string, lockToken: string): Promise<void> {
      await db('idempotency_keys')
        .where(heldBy(scope, key, lockToken))
        .delete();
    },

    /** Deletes up to `batch` expired keys; returns how many went. */
    async pruneExpired(batch = 10_000): Promise<number> {
      const result = await db.raw<{ rowCount: number }>(
        `delete from idempotency_keys where ctid in (select ctid from idempotency_keys where expires_at <= now() limit ?)`,
        [batch],
      );
      return result.rowCount;
    },
  };
}

export type IdempotencyRepository = ReturnType<typeof createIdempotencyRepository>;
