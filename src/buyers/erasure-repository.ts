/**
 * Persistence of buyer erasures (table `buyer_erasures`, its only writer; migration
 * 20261209000600). `erase` applies ./erasure-rules.ts in one transaction, so an erasure is done
 * whole or not at all: the buyer row locked first (two concurrent erasures of one buyer meet
 * there; the second finds the first's row and answers it), then the contact data erased and the
 * names on the policies set aside in `retained` and replaced by ERASED_NAME.
 *
 * It is the one place outside their domains that writes the buyer's rows in `buyers`,
 * `buyer_access_tokens`, `purchases.buyer_email`, `purchase_items.named_insured`,
 * `certificates.printed`, the email logs' recipients, stored `agency_events` and `endorsements.changes`: an erasure has to
 * reach all of them at once. Returns plain objects; times are Dates (database time).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { KeyMode } from '../api-keys/secrets';
import { ERASED_NAME, erasedEmail } from './erasure-rules';

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

/** `"value"` as JSON text, to replace whole string values inside stored JSON documents. */
const jsonText = (value: string) => JSON.stringify(value);

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

    /**
     * Erases the buyer in the account and mode (./erasure-rules.ts), or answers the erasure
     * already made (`created: false`). The retention period ends the account's
     * `personal_data_retention_years` after the last coverage end of its purchases there (or
     * after now, when later or there is none).
     */
    async erase(input: {
      buyer: ErasableBuyer;
      rootAccountId: number;
      mode: KeyMode;
      apiKeyId: number | null;
    }): Promise<{ erasure: BuyerErasure; created: boolean }> {
      const { buyer, rootAccountId, mode } = input;
      return db.transaction(async (trx) => {
        const person = await trx('buyers').where({ id: buyer.id }).forUpdate().first('email', 'first_name', 'last_name');
        const before = await findErasure(trx, buyer.id, rootAccountId, mode);
        if (before) return { erasure: before, created: false };

        const purchaseIds = (
          await trx('purchases').where({ buyer_id: buyer.id, root_account_id: rootAccountId, mode }).select('id', 'buyer_email')
        ).map((p: { id: number; buyer_email: string | null }) => p);
        const ids = purchaseIds.map((p) => p.id);
        const emails = [
          ...new Set([person.email as string, ...purchaseIds.map((p) => p.buyer_email).filter((e): e is string => Boolean(e))]),
        ];

        const items: Array<{ id: number; name: string | null }> = await trx('purchase_items')
          .whereIn('purchase_id', ids)
          .select('id', trx.raw("named_insured ->> 'name' as name"));
        const printed: Array<{ id: number; name: string | null }> = await trx('certificates')
          .whereIn('purchase_id', ids)
          .select('id', trx.raw("printed ->> 'named_insured_name' as name"));
        const kept = (rows: Array<{ id: number; name: string | null }>) =>
          Object.fromEntries(rows.filter((r) => r.name && r.name !== ERASED_NAME).map((r) => [String(r.id), r.name]));
        const retained = { named_insured: kept(items), printed: kept(printed) };
        const names = [
          ...new Set(
            [
              ...Object.values(retained.named_insured),
              ...Object.values(retained.printed),
              `${person.first_name} ${person.last_name}`.trim(),
            ].filter((n): n is string => Boolean(n)),
          ),
        ];

        await trx('purchases').whereIn('id', ids).update({ buyer_email: null });
        await trx('purchase_items')
          .whereIn('purchase_id', ids)
          .whereRaw("named_insured ->> 'name' is not null")
          .update({ named_insured: trx.raw("jsonb_set(named_insured, '{name}', to_jsonb(?::text))", [ERASED_NAME]) });
        await trx('certificates')
          .whereIn('purchase_id', ids)
          .whereRaw("printed ->> 'named_insured_name' is not null")
          .update({ printed: trx.raw("jsonb_set(printed, '{named_insured_name}', to_jsonb(?::text))", [ERASED_NAME]) });
        const placeholder = erasedEmail(buyer.idpAccntUuid);
        for (const table of ['proof_of_coverage_emails', 'checkout_link_emails']) {
          await trx(table)
            .whereIn('purchase_id', ids)
            .whereRaw(`lower(recipient) in (${emails.map(() => 'lower(?)').join(',')})`, emails)
            .update({ recipient: placeholder });
        }
        // Stored events and endorsements name the buyer only as whole JSON string values: replaced as such.
        const replacements: Array<[string, string]> = [
          ...emails.map((e): [string, string] => [jsonText(e), jsonText(placeholder)]),
          ...names.map((n): [string, string] => [jsonText(n), jsonText(ERASED_NAME)]),
        ];
        const scrubbed = (column: string) => replacements.reduce<string>((sql) => `replace(${sql}, ?, ?)`, `${column}::text`);
        for (const [table, column] of [
          ['agency_events', 'data'],
          ['endorsements', 'changes'],
        ] as const) {
          await trx(table)
            .whereIn('purchase_id', ids)
            .update({ [column]: trx.raw(`(${scrubbed(column)})::jsonb`, replacements.flat()) });
        }

        await trx('buyers').where({ id: buyer.id }).update({ email: placeholder, first_name: '', last_name: '' });
        await trx('buyer_access_tokens').where({ buyer_id: buyer.id }).delete();

        const account = await trx('root_accounts').where({ id: rootAccountId }).first('personal_data_retention_years');
        const lastEnd = await trx('covered_units').whereIn('purchase_id', ids).max<{ max: Date | null }>('ends_at as max').first();
        const [row] = await trx('buyer_erasures')
          .insert({
            buyer_id: buyer.id,
            root_account_id: rootAccountId,
            mode,
            api_key_id: input.apiKeyId,
            purchases: ids.length,
            retained: JSON.stringify(retained),
            retention_ends_at: trx.raw('greatest(coalesce(?::timestamptz, now()), now()) + make_interval(years => ?)', [
              lastEnd?.max ?? null,
              account.personal_data_retention_years as number,
            ]),
          })
          .returning('id');
        const erasure = await findErasure(trx, buyer.id, rootAccountId, mode);
        if (!erasure || erasure.id !== (row as { id: number }).id) throw new Error('buyer erasure not found after insert');
        return { erasure, created: true };
      });
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
