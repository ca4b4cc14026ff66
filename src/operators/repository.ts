/**
 * The only writer of `operator_tokens`: the per-person tokens that name an operator to the ops CLI
 * and the codec endpoint (migrations/20261208000600_operator_tokens.ts). Stores and compares
 * hashes only (./tokens.ts); a revoked token is kept, for the record, and names nobody.
 */
import type { Db } from '../db/knex';
import { dbConstraint, dbErrorKind } from '../db/errors';

export interface OperatorToken {
  id: number;
  /** The person (email or handle), as issued. */
  name: string;
  /** `opk_` and four characters. */
  prefix: string;
  createdAt: Date;
  createdBy: string;
  revokedAt: Date | null;
  revokedBy: string | null;
  lastUsedAt: Date | null;
}

const fromRow = (r: Record<string, unknown>): OperatorToken => ({
  id: r.id as number,
  name: r.name as string,
  prefix: r.prefix as string,
  createdAt: r.created_at as Date,
  createdBy: r.created_by as string,
  revokedAt: (r.revoked_at as Date | null) ?? null,
  revokedBy: (r.revoked_by as string | null) ?? null,
  lastUsedAt: (r.last_used_at as Date | null) ?? null,
});

export function createOperatorTokensRepository(db: Db) {
  return {
    /**
     * Stores a new live token for `name`; undefined when `name` already has a live one (names are
     * compared case-insensitively: revoke it first).
     */
    async issue(input: { name: string; tokenHash: string; prefix: string; createdBy: string }): Promise<OperatorToken | undefined> {
      try {
        const [row] = await db('operator_tokens')
          .insert({ name: input.name, token_hash: input.tokenHash, prefix: input.prefix, created_by: input.createdBy })
          .returning('*');
        return fromRow(row);
      } catch (err) {
        if (dbErrorKind(err) === 'unique' && dbConstraint(err) === 'operator_tokens_live_name_idx') return undefined;
        throw err;
      }
    },

    /** The live (not revoked) token with this hash, its use recorded (`last_used_at`); undefined when none. */
    async useLive(tokenHash: string): Promise<OperatorToken | undefined> {
      const [row] = await db('operator_tokens')
        .where({ token_hash: tokenHash })
        .whereNull('revoked_at')
        .update({ last_used_at: db.fn.now() })
        .returning('*');
      return row ? fromRow(row) : undefined;
    },

    /** Revokes `name`'s live token (case-insensitive), by `revokedBy`; the revoked token, or undefined when it had none. */
    async revoke(name: string, revokedBy: string): Promise<OperatorToken | undefined> {
      const [row] = await db('operator_tokens')
        .whereRaw('lower(name) = lower(?)', [name])
        .whereNull('revoked_at')
        .update({ revoked_at: db.fn.now(), revoked_by: revokedBy })
        .returning('*');
      return row ? fromRow(row) : undefined;
    },

    /** Every token, live first, then by name and id (revoked ones too, with who revoked them). */
    async list(): Promise<OperatorToken[]> {
      const rows = await db('operator_tokens').orderByRaw('revoked_at is not null, lower(name), id');
      return rows.map(fromRow);
    },
  };
}

export type OperatorTokensRepository = ReturnType<typeof createOperatorTokensRepository>;
