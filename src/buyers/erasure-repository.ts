/**
 * Persistence of buyer erasures (table `buyer_erasures`, its only writer; migration
 * 20261209000600): the record of each erasure, with the names set aside in `retained` until its
 * retention period ends. It writes no other table: ./erasure-service.ts erases the buyer's data
 * through each owning domain's repository, in the transaction this one opens (`transaction`), and
 * records the erasure there (`insert`). Returns plain objects; times are Dates (database time).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { KeyMode } from '../api-keys/secrets';

/** A buyer as the erasure finds it in an account and mode. */
export interface ErasableBuyer {
  id: number;
  idpAccntUuid: string;
}

/** One stored erasure. `retentionEndsAt`: when the retained names are dropped. */
export interface BuyerErasure {
  id: number;
  buyerId: number;
  idpAccntUuid: string;
  rootAccountId: number;
  mode: KeyMode;
  erasedAt: Date;
  purchases: number;
  retentionEndsAt: Date;
  pseudonymisedAt: Date | null;
}

interface ErasureRow {
  id: number;
  buyer_id: number;
  idp_accnt_uuid: string;
  root_account_id: number;
  mode: KeyMode;
  erased_at: Date;
  purchases: number;
  retention_ends_at: Date;
  pseudonymised_at: Date | null;
}

const toErasure = (r: ErasureRow): BuyerErasure => ({
  id: r.id,
  buyerId: r.buyer_id,
  idpAccntUuid: r.idp_accnt_uuid,
  rootAccountId: r.root_account_id,
  mode: r.mode,
  erasedAt: r.erased_at,
  purchases: r.purchases,
  retentionEndsAt: r.retention_ends_at,
  pseudonymisedAt: r.pseudonymised_at,
});

export function createBuyerErasureRepository(db: Db) {
  async function findErasure(conn: Db | Knex.Transaction, buyerId: number, rootAccountId: number, mode: KeyMode) {
    const row = await conn('buyer_erasures as e')
      .join('buyers as b', 'b.id', 'e.buyer_id')
      .where({ 'e.buyer_id': buyerId, 'e.root_account_id': rootAccountId, 'e.mode': mode })
      .first<ErasureRow | undefined>('e.*', 'b.idp_accnt_uuid');
    return row ? toErasure(row) : null;
  }

  return {
    /**
     * The buyer `idpAccntUuid` if it belongs to `rootAccountId` in `mode`: connected to the
     * account, and either a purchase of its in that account and mode or connected by a key of
     * that mode. Null otherwise (unknown, another account's, the other mode's).
     */
    async findInScope(idpAccntUuid: string, rootAccountId: number, mode: KeyMode): Promise<ErasableBuyer | null> {
      const row = await db('buyers as b')
        .join('buyer_connections as c', function () {
          this.on('c.buyer_id', 'b.id').andOn('c.root_account_id', db.raw('?', [rootAccountId]));
        })
        .leftJoin('api_keys as k', 'k.id', 'c.api_key_id')
        .where('b.idp_accnt_uuid', idpAccntUuid)
        .andWhere((q) =>
          q
            .where('k.mode', mode)
            .orWhereExists(
              db('purchases as p').whereRaw('p.buyer_id = b.id').andWhere({ 'p.root_account_id': rootAccountId, 'p.mode': mode }),
            ),
        )
        .first('b.id', 'b.idp_accnt_uuid');
      return row ? { id: row.id as number, idpAccntUuid: row.idp_accnt_uuid as string } : null;
    },

    /** The erasure of `buyerId` in this account and mode, or null. */
    find(buyerId: number, rootAccountId: number, mode: KeyMode): Promise<BuyerErasure | null> {
      return findErasure(db, buyerId, rootAccountId, mode);
    },

    /** Runs `work` in one transaction; commits when it resolves, rolls back when it throws. */
    transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
      return db.transaction(work);
    },

    /** The erasure of `buyerId` in this account and mode as `trx` sees it, or null. */
    findIn(trx: Knex.Transaction, buyerId: number, rootAccountId: number, mode: KeyMode): Promise<BuyerErasure | null> {
      return findErasure(trx, buyerId, rootAccountId, mode);
    },

    /**
     * Records an erasure in `trx` and answers it as stored. `retained`: the names set aside
     * (row id → name, per source); the retention period ends `retentionYears` after
     * `lastCoverageEnd`, or after now when that is earlier or null.
     */
    async insert(
      trx: Knex.Transaction,
      input: {
        buyer: ErasableBuyer;
        rootAccountId: number;
        mode: KeyMode;
        apiKeyId: number | null;
        purchases: number;
        retained: { named_insured: Record<string, string>; printed: Record<string, string> };
        lastCoverageEnd: Date | null;
        retentionYears: number;
      },
    ): Promise<BuyerErasure> {
      const { buyer, rootAccountId, mode } = input;
      const [row] = await trx('buyer_erasures')
        .insert({
          buyer_id: buyer.id,
          root_account_id: rootAccountId,
          mode,
          api_key_id: input.apiKeyId,
          purchases: input.purchases,
          retained: JSON.stringify(input.retained),
          retention_ends_at: trx.raw('greatest(coalesce(?::timestamptz, now()), now()) + make_interval(years => ?)', [
            input.lastCoverageEnd,
            input.retentionYears,
          ]),
        })
        .returning('id');
      const erasure = await findErasure(trx, buyer.id, rootAccountId, mode);
      if (!erasure || erasure.id !== (row as { id: number }).id) throw new Error('buyer erasure not found after insert');
      return erasure;
    },

    /**
     * Pseudonymises every erasure whose retention period ended by `now`: its retained names are
     * dropped (only ERASED_NAME remains anywhere). Answers how many erasures it finished.
     */
    async pseudonymiseDue(now: Date): Promise<number> {
      return db('buyer_erasures')
        .whereNull('pseudonymised_at')
        .andWhere('retention_ends_at', '<=', now)
        .update({ retained: JSON.stringify({ named_insured: {}, printed: {} }), pseudonymised_at: now });
    },
  };
}

export type BuyerErasureRepository = ReturnType<typeof createBuyerErasureRepository>;
