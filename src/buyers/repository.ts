/**
 * Persistence of buyers, their seller connections and access tokens (tables `buyers`,
 * `buyer_connections`, `buyer_access_tokens`; migration 20261122000300; their one writer, a
 * buyer's erasure included). Returns plain objects.
 *
 * The "if absent" inserts use `INSERT … ON CONFLICT DO NOTHING`, so concurrent connects of the
 * same buyer to the same seller create one row each at most; they return null when the row
 * already existed. Emails reach this layer already normalised (trimmed, lower case); lookups
 * still go through `lower(email)` so they use the case-insensitive unique index.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';

export interface Buyer {
  id: number;
  idpAccntUuid: string;
  email: string;
  firstName: string;
  lastName: string;
  createdAt: Date;
}

export interface BuyerConnectionWrite {
  buyerId: number;
  rootAccountId: number;
  apiKeyId: number | null;
  agentId: number | null;
  queryParam: string;
}

/** A stored access token with its buyer; the token value itself is never stored. */
export interface AccessTokenRecord {
  tokenHash: string;
  rootAccountId: number;
  expiresAt: Date;
  buyer: Buyer;
}

interface BuyerRow {
  id: number;
  idp_accnt_uuid: string;
  email: string;
  first_name: string;
  last_name: string;
  created_at: Date;
}

const toBuyer = (r: BuyerRow): Buyer => ({
  id: r.id,
  idpAccntUuid: r.idp_accnt_uuid,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  createdAt: r.created_at,
});

type Conn = Db | Knex.Transaction;

/** A transaction of this repository's (`transaction`), for a caller that passes it back to its writes. */
export type BuyersTransaction = Knex.Transaction;

export function createBuyersRepository(db: Db) {
  return {
    transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
      return db.transaction(fn);
    },

    /**
     * Buyer `id` (its email, names and `idp_accnt_uuid`: what it is known by as a processor
     * customer), or null when there is none.
     */
    async findById(id: number): Promise<Buyer | null> {
      const row = await db<BuyerRow>('buyers')
        .where({ id })
        .first('id', 'idp_accnt_uuid', 'email', 'first_name', 'last_name', 'created_at');
      return row ? toBuyer(row) : null;
    },

    /** The buyer with this email if it is connected to `rootAccountId`, else null. */
    async findConnectedByEmail(email: string, rootAccountId: number): Promise<Buyer | null> {
      const row = await db<BuyerRow>('buyers as b')
        .join('buyer_connections as c', function () {
          this.on('c.buyer_id', 'b.id').andOn('c.root_account_id', db.raw('?', [rootAccountId]));
        })
        .whereRaw('lower(b.email) = lower(?)', [email])
        .first('b.*');
      return row ? toBuyer(row) : null;
    },

    /** Inserts the buyer unless one with the same email (case-insensitive) exists; null then. */
    async insertBuyerIfAbsent(trx: Conn, input: { email: string; firstName: string; lastName: string }): Promise<Buyer | null> {
      const res = await trx.raw<{ rows: BuyerRow[] }>(
        'insert into buyers (email, first_name, last_name) values (?, ?, ?) on conflict ((lower(email))) do nothing returning *',
        [input.email, input.firstName, input.lastName],
      );
      const row = res.rows[0];
      return row ? toBuyer(row) : null;
    },

    async findByEmail(trx: Conn, email: string): Promise<Buyer | null> {
      const row = await trx<BuyerRow>('buyers').whereRaw('lower(email) = lower(?)', [email]).first();
      return row ? toBuyer(row) : null;
    },

    /** Inserts the connection unless the buyer is already connected to the account; returns its id or null. */
    async insertConnectionIfAbsent(trx: Conn, input: BuyerConnectionWrite): Promise<number | null> {
      const rows: { id: number }[] = await trx('buyer_connections')
        .insert({
          buyer_id: input.buyerId,
          root_account_id: input.rootAccountId,
          api_key_id: input.apiKeyId,
          agent_id: input.agentId,
          query_param: input.queryParam,
        })
        .onConflict(['buyer_id', 'root_account_id'])
        .ignore()
        .returning('id');
      return rows[0]?.id ?? null;
    },

    async insertAccessToken(
      trx: Conn,
      input: { buyerId: number; rootAccountId: number; tokenHash: string; expiresAt: Date },
    ): Promise<void> {
      await trx('buyer_access_tokens').insert({
        buyer_id: input.buyerId,
        root_account_id: input.rootAccountId,
        token_hash: input.tokenHash,
        expires_at: input.expiresAt,
      });
    },

    /** Deletes the buyer's tokens that expired before `before` (keeps the table small). */
    async deleteExpiredTokens(trx: Conn, buyerId: number, before: Date): Promise<void> {
      await trx('buyer_access_tokens').where({ buyer_id: buyerId }).andWhere('expires_at', '<', before).delete();
    },

    /** The token with this hash and its buyer, or null. */
    async findAccessToken(tokenHash: string): Promise<AccessTokenRecord | null> {
      const row = await db('buyer_access_tokens as t')
        .join('buyers as b', 'b.id', 't.buyer_id')
        .where('t.token_hash', tokenHash)
        .first(
          't.token_hash',
          't.root_account_id',
          't.expires_at',
          'b.id',
          'b.idp_accnt_uuid',
          'b.email',
          'b.first_name',
          'b.last_name',
          'b.created_at',
        );
      if (!row) return null;
      return { tokenHash: row.token_hash, rootAccountId: row.root_account_id, expiresAt: row.expires_at, buyer: toBuyer(row as BuyerRow) };
    },

    /**
     * Buyer `id` locked for its erasure (`SELECT … FOR UPDATE` in `trx`, so two erasures of one
     * buyer take turns): its email and names as they are before it. The buyer must exist.
     */
    async lockForErasure(trx: Knex.Transaction, id: number): Promise<Pick<Buyer, 'email' | 'firstName' | 'lastName'>> {
      const row = await trx('buyers').where({ id }).forUpdate().first<BuyerRow>('email', 'first_name', 'last_name');
      return { email: row.email, firstName: row.first_name, lastName: row.last_name };
    },

    /**
     * A buyer's erasure of its contact data, in `trx`: its email becomes `placeholderEmail`, its
     * names empty, and its access tokens are deleted (its buyer links stop working).
     */
    async eraseContact(trx: Knex.Transaction, id: number, placeholderEmail: string): Promise<void> {
      await trx('buyers').where({ id }).update({ email: placeholderEmail, first_name: '', last_name: '' });
      await trx('buyer_access_tokens').where({ buyer_id: id }).delete();
    },
  };
}

export type BuyersRepository = ReturnType<typeof createBuyersRepository>;
