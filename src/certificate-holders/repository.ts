/**
 * The one writer of `certificate_holders` (migration 20261127000200): who a purchase's
 * certificates are issued to.
 *
 * - The holder a buyer answered at quote time is written with the purchase (`insertFromAnswers`,
 *   inside the purchase's own transaction), scoped to its purchase item: the first holder.
 * - Holders added through the API (`add`) hold one certificate per covered unit of every item that
 *   was still active when they were added; `remove` marks one removed (its certificates are voided
 *   by the certificates repository after it, each step safe to repeat).
 * It also writes `certificate_holder_notices` (migration 20261127000400): the cancellation notices
 * of holders that asked for them.
 * Names and addresses are stored as given (validated by the route against the certificate's
 * printed limits); `address` is the quote answers' postal address shape.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { Address } from '../certificates/repository';

export interface CertificateHolderRecord {
  id: number;
  purchaseId: number;
  /** The item the buyer's answer belongs to (its certificates only); null: every item. */
  purchaseItemId: number | null;
  source: 'answers' | 'api';
  name: string;
  address: Address;
  email: string | null;
  additionalInsured: boolean;
  waiverOfSubrogation: boolean;
  /** Printed in the description-of-operations box; null: the default (product and covered dates). */
  descriptionOfOperations: string | null;
  notifyOnCancellation: boolean;
  /** The API request that added it (null for the buyer's answer). */
  requestKey: string | null;
  createdAt: Date;
  removedAt: Date | null;
}

/** What adding a holder stores (the route's validated body). */
export type NewCertificateHolder = Pick<
  CertificateHolderRecord,
  'name' | 'address' | 'email' | 'additionalInsured' | 'waiverOfSubrogation' | 'descriptionOfOperations' | 'notifyOnCancellation'
>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const toHolder = (r: Record<string, any>): CertificateHolderRecord => ({
  id: r.id,
  purchaseId: r.purchase_id,
  purchaseItemId: r.purchase_item_id ?? null,
  source: r.source,
  name: r.name,
  address: r.address,
  email: r.email ?? null,
  additionalInsured: r.additional_insured,
  waiverOfSubrogation: r.waiver_of_subrogation,
  descriptionOfOperations: r.description_of_operations ?? null,
  notifyOnCancellation: r.notify_on_cancellation,
  requestKey: r.request_key ?? null,
  createdAt: r.created_at,
  removedAt: r.removed_at ?? null,
});

/**
 * Writes the holders of a new purchase's items, as the buyer answered them (one per item that
 * has one), inside the purchase's transaction `trx`.
 */
export async function insertHoldersFromAnswers(
  trx: Knex.Transaction,
  purchaseId: number,
  items: Array<{ purchaseItemId: number; holder: { name: string; address: Address } | null }>,
): Promise<void> {
  const rows = items
    .filter((i) => i.holder !== null)
    .map((i) => ({
      purchase_id: purchaseId,
      purchase_item_id: i.purchaseItemId,
      source: 'answers',
      name: i.holder!.name,
      address: JSON.stringify(i.holder!.address),
    }));
  if (rows.length) await trx('certificate_holders').insert(rows);
}

export function createCertificateHoldersRepository(db: Db | Knex.Transaction) {
  return {
    /** The purchase's holders in the order they were added; removed ones only with `includeRemoved`. */
    async list(purchaseId: number, opts: { includeRemoved?: boolean } = {}): Promise<CertificateHolderRecord[]> {
      const q = db('certificate_holders').where({ purchase_id: purchaseId }).orderBy('id');
      if (!opts.includeRemoved) q.whereNull('removed_at');
      return (await q).map(toHolder);
    },

    async find(purchaseId: number, holderId: number): Promise<CertificateHolderRecord | undefined> {
      const row = await db('certificate_holders').where({ purchase_id: purchaseId, id: holderId }).first();
      return row ? toHolder(row) : undefined;
    },

    /**
     * Adds a holder of every item of the purchase for the units still active at `activeUnitsAt`
     * (the purchase's now); `requestKey` names the request, so adding it again answers the first row.
     */
    async add(purchaseId: number, h: NewCertificateHolder, requestKey: string, activeUnitsAt: Date): Promise<CertificateHolderRecord> {
      const inserted = await db('certificate_holders')
        .insert({
          request_key: requestKey,
          active_units_at: activeUnitsAt,
          purchase_id: purchaseId,
          source: 'api',
          name: h.name,
          address: JSON.stringify(h.address),
          email: h.email,
          additional_insured: h.additionalInsured,
          waiver_of_subrogation: h.waiverOfSubrogation,
          description_of_operations: h.descriptionOfOperations,
          notify_on_cancellation: h.notifyOnCancellation,
        })
        .onConflict(['purchase_id', 'request_key'])
        .ignore()
        .returning('*');
      const row = inserted[0] ?? (await db('certificate_holders').where({ purchase_id: purchaseId, request_key: requestKey }).first());
      return toHolder(row);
    },

    /** An endorsement's new description of operations for holder `holderId`. */
    async updateDescription(holderId: number, description: string): Promise<void> {
      await db('certificate_holders').where({ id: holderId }).update({ description_of_operations: description });
    },

    /** An endorsement's change of a holder's additional-insured and waiver-of-subrogation marks. */
    async updateEndorsementMarks(holderId: number, marks: { additionalInsured: boolean; waiverOfSubrogation: boolean }): Promise<void> {
      await db('certificate_holders')
        .where({ id: holderId })
        .update({ additional_insured: marks.additionalInsured, waiver_of_subrogation: marks.waiverOfSubrogation });
    },

    /**
     * Queues a cancellation notice for each active holder of the purchase that asked for one
     * (`notify_on_cancellation`, with an email) and holds a certificate in `voidedNumbers`; once per
     * holder and cancellation. Returns the ids of the notices not sent yet.
     */
    async queueCancellationNotices(purchaseId: number, cancellationId: number, voidedNumbers: string[]): Promise<number[]> {
      if (voidedNumbers.length === 0) return [];
      await db.raw(
        `insert into certificate_holder_notices (certificate_holder_id, cancellation_id, recipient)
         select distinct h.id, ?::integer, h.email from certificate_holders h join certificates c on c.certificate_holder_id = h.id
          where h.purchase_id = ? and h.removed_at is null and h.notify_on_cancellation and h.email is not null and c.certificate_number = any(?::text[])
         on conflict do nothing`,
        [cancellationId, purchaseId, voidedNumbers],
      );
      const rows = await db('certificate_holder_notices as n')
        .join('certificate_holders as h', 'h.id', 'n.certificate_holder_id')
        .where({ 'h.purchase_id': purchaseId, 'n.cancellation_id': cancellationId })
        .whereNot('n.status', 'sent')
        .orderBy('n.id')
        .select('n.id');
      return rows.map((r) => r.id as number);
    },

    /** A notice with its holder, for sending. */
    async notice(
      noticeId: number,
    ): Promise<
      | { id: number; holder: CertificateHolderRecord; cancellationId: number; recipient: string; status: 'queued' | 'sent' | 'failed' }
      | undefined
    > {
      const n = await db('certificate_holder_notices').where({ id: noticeId }).first();
      if (!n) return undefined;
      const h = await db('certificate_holders').where({ id: n.certificate_holder_id }).first();
      return { id: n.id, holder: toHolder(h), cancellationId: n.cancellation_id, recipient: n.recipient, status: n.status };
    },

    async countNoticeAttempt(noticeId: number): Promise<void> {
      await db('certificate_holder_notices').where({ id: noticeId }).increment('attempts', 1);
    },

    async markNoticeSent(noticeId: number, messageId: string): Promise<void> {
      await db('certificate_holder_notices')
        .where({ id: noticeId })
        .update({ status: 'sent', message_id: messageId, sent_at: db.fn.now(), last_error: null });
    },

    /** Records that every attempt failed (a sent notice stays sent). */
    async markNoticeFailed(noticeId: number, reason: string): Promise<void> {
      await db('certificate_holder_notices')
        .where({ id: noticeId })
        .whereNot('status', 'sent')
        .update({ status: 'failed', last_error: reason.slice(0, 2000) });
    },

    /** Marks the holder removed at `at` (once; a holder removed before keeps its time). Answers the row as it is now. */
    async markRemoved(holderId: number, at: Date): Promise<CertificateHolderRecord | undefined> {
      await db('certificate_holders').where({ id: holderId }).whereNull('removed_at').update({ removed_at: at });
      const row = await db('certificate_holders').where({ id: holderId }).first();
      return row ? toHolder(row) : undefined;
    },
  };
}

export type CertificateHoldersRepository = ReturnType<typeof createCertificateHoldersRepository>;
