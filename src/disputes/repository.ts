/**
 * The one writer of `purchase_disputes`: a buyer's dispute (chargeback) of a purchase's payment as
 * the processor last reported it. Amounts in integer minor units; instants UTC.
 *
 * Processor statuses (its words): `warning_needs_response`, `warning_under_review`,
 * `warning_closed` (an inquiry, no money taken), `needs_response`, `under_review` (open: the
 * amount is withdrawn until decided), `won` (money back to the agency), `lost` (the buyer keeps it).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';

/** A dispute as the processor's event carries it (`charge.dispute.*`'s object). */
export interface ProcessorDispute {
  /** The processor's dispute id (`dp_…`). */
  id: string;
  chargeId: string | null;
  amountMinor: number;
  currency: string;
  reason: string;
  status: string;
  /** When the buyer opened it (the dispute's `created`). */
  openedAt: Date;
}

/** The processor's statuses after which nothing changes any more. */
export const CLOSED_DISPUTE_STATUSES = ['won', 'lost', 'warning_closed'] as const;

/** A dispute as stored for its purchase: the processor's facts (its id as `payprocDisputeId`) and when it closed. */
export interface StoredDispute extends Omit<ProcessorDispute, 'id'> {
  id: number;
  purchaseId: number;
  payprocDisputeId: string;
  /** When it was first seen closed (won, lost, or an inquiry closed); null while open. */
  closedAt: Date | null;
}

const toStored = (r: Record<string, unknown>): StoredDispute => ({
  id: r.id as number,
  purchaseId: r.purchase_id as number,
  payprocDisputeId: r.payproc_dispute_id as string,
  chargeId: (r.payproc_charge_id as string | null) ?? null,
  amountMinor: Number(r.amount_minor),
  currency: r.currency as string,
  reason: r.reason as string,
  status: r.status as string,
  openedAt: r.opened_at as Date,
  closedAt: (r.closed_at as Date | null) ?? null,
});

export function createDisputesRepository(db: Db | Knex.Transaction) {
  return {
    /**
     * Records the dispute of purchase `purchaseId` as the processor's event of `eventAt` (its
     * `created`) reports it: inserted the first time, else its status, amount and reason updated
     * unless a later event set them already (events can arrive out of order; of two events of the
     * same second, a closed status is kept over an open one). `closed_at` is set
     * once, by the first closed status seen. Returns the stored dispute and whether it was opened
     * (first seen) or closed by this call.
     */
    async record(
      purchaseId: number,
      d: ProcessorDispute,
      eventAt: Date,
    ): Promise<{ dispute: StoredDispute; opened: boolean; closed: boolean }> {
      const closedNow = (CLOSED_DISPUTE_STATUSES as readonly string[]).includes(d.status);
      const row = await db.raw(
        `insert into purchase_disputes as d (purchase_id, payproc_dispute_id, payproc_charge_id, amount_minor, currency, reason, status, opened_at, closed_at, status_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         on conflict (payproc_dispute_id) do update
            set status = excluded.status, amount_minor = excluded.amount_minor, reason = excluded.reason,
                status_at = excluded.status_at, closed_at = coalesce(d.closed_at, excluded.closed_at), updated_at = now()
          where d.status_at < excluded.status_at or (d.status_at = excluded.status_at and d.closed_at is null)
         returning *, (xmax = 0) as inserted, (select closed_at from purchase_disputes where id = d.id) as closed_before`,
        [
          purchaseId,
          d.id,
          d.chargeId,
          d.amountMinor,
          d.currency.toLowerCase(),
          d.reason.slice(0, 64),
          d.status.slice(0, 32),
          d.openedAt,
          closedNow ? eventAt : null,
          eventAt,
        ],
      );
      const r = row.rows[0] as Record<string, unknown> | undefined;
      if (!r) {
        // A later event set it already: nothing changed.
        const current = await db('purchase_disputes').where({ payproc_dispute_id: d.id }).first();
        return { dispute: toStored(current), opened: false, closed: false };
      }
      const dispute = toStored(r);
      return { dispute, opened: r.inserted === true, closed: dispute.closedAt !== null && r.closed_before === null };
    },

    /** The purchase's disputes, oldest first. */
    async listForPurchase(purchaseId: number): Promise<StoredDispute[]> {
      return (await db('purchase_disputes').where({ purchase_id: purchaseId }).orderBy('id')).map(toStored);
    },
  };
}

export type DisputesRepository = ReturnType<typeof createDisputesRepository>;
