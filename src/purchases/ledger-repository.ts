/**
 * The policy ledger's repository: the writer of `cancellation_quotes` and `policy_transactions`
 * (a row per cancellation and priced endorsement; the processor's dashboard refunds, `refund`
 * rows, are written by the sale's `recordRefund`, see below). A cancellation is quoted, accepted (taking its covered units, or
 * scheduled), its refund split over the purchase's payments and created part by part, then
 * completed (its units cancelled) or refused; a scheduled one may be rescinded. A priced
 * endorsement is recorded with the units it adds, and the premium it gives back is refunded the
 * same way.
 *
 * Writes of the sale's tables in the ledger's transactions belong to the ledger's change: a
 * cancellation takes, gives back and cancels units (`covered_units.cancellation_id`,
 * `cancelled_at`) and raises the purchase's refunded amount (`purchases.refunded_minor`); an
 * endorsement adds units (`covered_units.added_by_transaction_id`). Every other write of those
 * tables is the sale's (./sale-repository), which also writes the `refund` rows of a
 * `charge.refunded` event (`recordRefund`).
 *
 * Amounts are integer minor units; instants are `Date`s (UTC).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { UnitRefund, CancellationRequester } from './refund-rule';
import type { PaymentShare } from './refund-allocation';
import type { NewCoveredUnit, PurchaseRecord } from './purchase-record';
import { settleStatusAfterCancellation } from './sale-repository';
import {
  CoveredUnitTakenError,
  dashboardRefundsByPaymentIntent,
  type CancellationRefund,
  type EndorsementCharge,
  type HolderPremiumOnNewUnit,
  type LedgerUnitPremium,
  type PolicyTransactionStatus,
  type StoredCancellation,
  type StoredCancellationQuote,
} from './ledger-record';

/** What a quote and the cancellation carrying it out share: who asked, which units, when, and the refund (minor units). */
type PricedCancellation = Pick<
  StoredCancellation,
  | 'purchaseId'
  | 'apiKeyId'
  | 'requestedBy'
  | 'reason'
  | 'coveredUnitIds'
  | 'effectiveAt'
  | 'currency'
  | 'premiumMinor'
  | 'taxMinor'
  | 'platformFeeMinor'
  | 'totalMinor'
  | 'breakdown'
>;

const pricedFromRow = (r: Record<string, unknown>): PricedCancellation => ({
  purchaseId: r.purchase_id as number,
  apiKeyId: r.api_key_id as number,
  requestedBy: r.requested_by as CancellationRequester,
  reason: (r.reason as string | null) ?? null,
  coveredUnitIds: (r.covered_unit_ids as number[]).map(Number),
  effectiveAt: r.effective_at as Date,
  currency: r.currency as string,
  premiumMinor: Number(r.premium_minor),
  taxMinor: Number(r.tax_minor),
  platformFeeMinor: Number(r.platform_fee_minor),
  totalMinor: Number(r.total_minor),
  breakdown: r.breakdown as UnitRefund[],
});

const pricedColumns = (c: PricedCancellation) => ({
  purchase_id: c.purchaseId,
  api_key_id: c.apiKeyId,
  requested_by: c.requestedBy,
  reason: c.reason,
  covered_unit_ids: c.coveredUnitIds,
  effective_at: c.effectiveAt,
  currency: c.currency,
  premium_minor: c.premiumMinor,
  tax_minor: c.taxMinor,
  platform_fee_minor: c.platformFeeMinor,
  total_minor: c.totalMinor,
  breakdown: JSON.stringify(c.breakdown),
});

const toStoredCancellation = (r: Record<string, unknown>): StoredCancellation => ({
  ...pricedFromRow(r),
  id: r.id as number,
  status: r.status as PolicyTransactionStatus,
  quoteId: (r.quote_id as string | null) ?? null,
  refundId: (r.refund_id as string | null) ?? null,
  refunds: (r.refunds as CancellationRefund[] | null) ?? null,
  failureReason: (r.failure_reason as string | null) ?? null,
  createdAt: r.created_at as Date,
  completedAt: (r.completed_at as Date | null) ?? null,
  rescindedAt: (r.rescinded_at as Date | null) ?? null,
});

const toStoredQuote = (r: Record<string, unknown>): StoredCancellationQuote => ({
  ...pricedFromRow(r),
  id: r.id as string,
  method: r.method as StoredCancellationQuote['method'],
  freeLook: Boolean(r.free_look),
  endsPolicy: Boolean(r.ends_policy),
  expiresAt: r.expires_at as Date,
  createdAt: r.created_at as Date,
});

/** A completed `endorsement` or `refund` row of the ledger (`policy_transactions`), as read: amounts in minor units (bigint as text). */
interface ChargeRow {
  id: number;
  kind: 'endorsement' | 'refund';
  premium_minor: string;
  platform_fee_minor: string;
  tax_minor: string;
  total_minor: string;
  payment_intent_id: string | null;
  completed_at: Date;
  breakdown: LedgerUnitPremium[];
}

/** The endorsements of `rows` (completed endorsement and refund rows) as charges, each with its dashboard refunds. */
function endorsementChargesOf(rows: ChargeRow[]): EndorsementCharge[] {
  // Rows that name no payment intent were the sale's, which no endorsement's is.
  const dashboard = dashboardRefundsByPaymentIntent(rows, null);
  return rows
    .filter((r) => r.kind === 'endorsement')
    .map((r) => ({
      id: r.id,
      premiumMinor: Number(r.premium_minor),
      platformFeeMinor: Number(r.platform_fee_minor),
      taxMinor: Number(r.tax_minor ?? 0),
      totalMinor: Number(r.total_minor),
      paymentIntentId: r.payment_intent_id ?? null,
      completedAt: r.completed_at,
      breakdown: r.breakdown,
      dashboardRefundedMinor: (r.payment_intent_id && dashboard.get(r.payment_intent_id)) || 0,
    }));
}

/** What the `refund` rows among `rows` took from the sale's payment intent (rows naming none were the sale's), minor units. */
function saleDashboardRefundOf(
  rows: ReadonlyArray<{ kind: string; payment_intent_id?: string | null; total_minor: unknown }>,
  salePaymentIntentId: string,
): number {
  return dashboardRefundsByPaymentIntent(rows, salePaymentIntentId).get(salePaymentIntentId) ?? 0;
}

/**
 * The ledger's repository over `db` (or a caller's transaction): cancellation quotes,
 * cancellations and their refunds, priced endorsements and their refunds, and the reads pricing
 * and refund splitting need. Methods are documented one by one with the errors they throw.
 */
export function createLedgerRepository(db: Db | Knex.Transaction) {
  /** The purchase's completed endorsement and refund ledger rows, oldest first. */
  async function completedChargeRows(purchaseId: number): Promise<ChargeRow[]> {
    return db('policy_transactions')
      .where({ purchase_id: purchaseId, status: 'completed' })
      .whereIn('kind', ['endorsement', 'refund'])
      .orderBy('id');
  }

  return {
    /** A cancellation quote by id (any purchase; callers check it is the one they mean). */
    async findCancellationQuote(quoteId: string): Promise<StoredCancellationQuote | undefined> {
      const row = await db('cancellation_quotes').where({ id: quoteId }).first();
      return row ? toStoredQuote(row) : undefined;
    },

    /** The purchase's cancellations, oldest first. */
    async cancellations(purchaseId: number): Promise<StoredCancellation[]> {
      return (await db('policy_transactions').where({ purchase_id: purchaseId, kind: 'cancellation' }).orderBy('id')).map(
        toStoredCancellation,
      );
    },

    /** A cancellation by id (any purchase; callers check it is the one they mean), or undefined. */
    async findCancellation(cancellationId: number): Promise<StoredCancellation | undefined> {
      const row = await db('policy_transactions').where({ id: cancellationId, kind: 'cancellation' }).first();
      return row ? toStoredCancellation(row) : undefined;
    },

    /** The cancellation that carries out `quoteId`, if one was accepted. */
    async findCancellationByQuote(quoteId: string): Promise<StoredCancellation | undefined> {
      const row = await db('policy_transactions').where({ quote_id: quoteId }).first();
      return row ? toStoredCancellation(row) : undefined;
    },

    /** Stores a cancellation quote (its id chosen by the caller) and returns it as stored. */
    async saveCancellationQuote(q: Omit<StoredCancellationQuote, 'createdAt'>): Promise<StoredCancellationQuote> {
      const [row] = await db('cancellation_quotes')
        .insert({
          ...pricedColumns(q),
          id: q.id,
          method: q.method,
          free_look: q.freeLook,
          ends_policy: q.endsPolicy,
          expires_at: q.expiresAt,
        })
        .returning('created_at');
      return { ...q, createdAt: row.created_at as Date };
    },

    /**
     * Records an accepted cancellation and takes its covered units (their `cancellation_id`), in
     * one transaction with the purchase row locked: a unit another change holds already makes
     * the whole write roll back. `scheduled`: it takes effect later (status `scheduled`). The
     * change is the ledger's; it writes the sale's `covered_units.cancellation_id` in its transaction.
     * @throws {CoveredUnitTakenError} naming the units already taken.
     */
    async acceptCancellation(
      c: Omit<
        StoredCancellation,
        'id' | 'status' | 'refundId' | 'refunds' | 'failureReason' | 'createdAt' | 'completedAt' | 'rescindedAt'
      > & {
        scheduled?: boolean;
      },
    ): Promise<StoredCancellation> {
      const { scheduled, ...priced } = c;
      return db.transaction(async (trx) => {
        await trx('purchases').where({ id: c.purchaseId }).forUpdate().first('id');
        const [row] = await trx('policy_transactions')
          .insert({ ...pricedColumns(priced), kind: 'cancellation', status: scheduled ? 'scheduled' : 'accepted', quote_id: c.quoteId })
          .returning('*');
        const taken = await trx('covered_units')
          .where({ purchase_id: c.purchaseId })
          .whereIn('id', c.coveredUnitIds)
          .whereNull('cancellation_id')
          .update({ cancellation_id: row.id })
          .returning('id');
        if (taken.length !== c.coveredUnitIds.length) {
          const got = new Set(taken.map((t: { id: number }) => t.id));
          throw new CoveredUnitTakenError(c.coveredUnitIds.filter((id) => !got.has(id)));
        }
        return toStoredCancellation(row);
      });
    },

    /** A scheduled cancellation's effective time came: `scheduled` → `accepted`. False when it is no longer scheduled and was never due (rescinded). */
    async startScheduledCancellation(cancellationId: number): Promise<boolean> {
      await db('policy_transactions').where({ id: cancellationId, status: 'scheduled' }).update({ status: 'accepted' });
      const row = await db('policy_transactions').where({ id: cancellationId }).first('status');
      return row !== undefined && row.status !== 'rescinded';
    },

    /**
     * Withdraws a scheduled cancellation before its effective time: `rescinded`, its units given
     * back (free for another change), in one transaction with the purchase row locked. Returns the
     * cancellation as now stored; one no longer `scheduled` is returned unchanged (the caller
     * refuses it), one already `rescinded` too (a repeat answers the same); undefined when there is
     * no such cancellation. The change is the ledger's; it clears the sale's
     * `covered_units.cancellation_id` in its transaction.
     */
    async rescindCancellation(cancellationId: number): Promise<StoredCancellation | undefined> {
      return db.transaction(async (trx) => {
        const row = await trx('policy_transactions').where({ id: cancellationId, kind: 'cancellation' }).first('purchase_id');
        if (!row) return undefined;
        await trx('purchases').where({ id: row.purchase_id }).forUpdate().first('id');
        const [done] = await trx('policy_transactions')
          .where({ id: cancellationId, status: 'scheduled' })
          .update({ status: 'rescinded', rescinded_at: trx.fn.now() })
          .returning('id');
        if (done)
          await trx('covered_units').where({ cancellation_id: cancellationId }).whereNull('cancelled_at').update({ cancellation_id: null });
        return toStoredCancellation(await trx('policy_transactions').where({ id: cancellationId }).first());
      });
    },

    /** The refund of a cancellation exists at the processor (`refundId`; null when nothing is due). */
    async markCancellationRefundPending(cancellationId: number, refundId: string | null): Promise<void> {
      await db('policy_transactions')
        .where({ id: cancellationId })
        .whereIn('status', ['accepted', 'refund_pending'])
        .update({ status: 'refund_pending', refund_id: refundId });
    },

    /**
     * Stores how a cancellation's refund is split (`plan`, newest payment first, no refund created
     * yet) unless it was planned already, with the row locked; returns the plan as stored either
     * way (a retry keeps the first plan, so its amounts and idempotency keys never change).
     */
    async planCancellationRefunds(cancellationId: number, plan: PaymentShare[]): Promise<CancellationRefund[]> {
      return db.transaction(async (trx) => {
        const row = await trx('policy_transactions').where({ id: cancellationId, kind: 'cancellation' }).forUpdate().first('refunds');
        if (!row) throw new Error(`cancellation ${cancellationId} does not exist`);
        if (row.refunds) return row.refunds as CancellationRefund[];
        const refunds: CancellationRefund[] = plan.map((e) => ({
          paymentIntentId: e.paymentIntentId,
          amountMinor: e.amountMinor,
          refundId: null,
        }));
        await trx('policy_transactions')
          .where({ id: cancellationId })
          .update({ refunds: JSON.stringify(refunds) });
        return refunds;
      });
    },

    /**
     * The `index`th refund of a cancellation's plan exists at the processor (`refundId`): recorded
     * in `refunds`, the first also in `refund_id` (what readers of a single refund use), and the
     * cancellation `refund_pending`, as `markCancellationRefundPending` (only from `accepted` or
     * `refund_pending`). Throws when the cancellation has no plan with that entry.
     */
    async recordCancellationRefundCreated(cancellationId: number, index: number, refundId: string): Promise<void> {
      await db.transaction(async (trx) => {
        const row = await trx('policy_transactions').where({ id: cancellationId }).forUpdate().first('refunds', 'status');
        const refunds = row?.refunds as CancellationRefund[] | null | undefined;
        if (!refunds || !Number.isInteger(index) || index < 0 || index >= refunds.length)
          throw new Error(`cancellation ${cancellationId} has no planned refund ${index}`);
        if (row.status !== 'accepted' && row.status !== 'refund_pending') return;
        await trx('policy_transactions')
          .where({ id: cancellationId })
          .update({
            refunds: trx.raw(`jsonb_set(refunds, ?::text[], to_jsonb(?::text))`, [`{${index},refundId}`, refundId]),
            status: 'refund_pending',
            ...(index === 0 ? { refund_id: refundId } : {}),
          });
      });
    },

    /**
     * The cancellation is done: its units cancelled at its effective time, the transaction
     * completed, and the purchase's refunded amount at least the sum of its completed
     * cancellations (a `charge.refunded` event may have recorded more, a dashboard refund too), and
     * the purchase `partly_cancelled` or `cancelled` as its units now tell (the sale's
     * `settleStatusAfterCancellation`, in the same transaction). Idempotent. Returns the cancellation
     * as now stored. The change is the ledger's; it writes the sale's `covered_units.cancelled_at`
     * and `purchases.refunded_minor` in its transaction, and the status through the sale's rule.
     */
    async completeCancellation(cancellationId: number): Promise<StoredCancellation> {
      return db.transaction(async (trx) => {
        const row = await trx('policy_transactions').where({ id: cancellationId }).forUpdate().first();
        if (row.status !== 'completed') {
          await trx('covered_units')
            .where({ cancellation_id: cancellationId })
            .whereNull('cancelled_at')
            .update({ cancelled_at: row.effective_at });
          await trx('policy_transactions').where({ id: cancellationId }).update({ status: 'completed', completed_at: trx.fn.now() });
          await trx.raw(
            `update purchases set refunded_minor = greatest(refunded_minor,
               (select coalesce(sum(total_minor), 0) from policy_transactions where purchase_id = ? and kind = 'cancellation' and status = 'completed')),
               updated_at = now()
             where id = ?`,
            [row.purchase_id, row.purchase_id],
          );
          await settleStatusAfterCancellation(trx, row.purchase_id);
        }
        return toStoredCancellation(await trx('policy_transactions').where({ id: cancellationId }).first());
      });
    },

    /** The processor refused the refund for good: the cancellation stays visible as `refund_failed`, its units still held for a retry. */
    async failCancellation(cancellationId: number, reason: string): Promise<void> {
      await db('policy_transactions')
        .where({ id: cancellationId })
        .whereNot('status', 'completed')
        .update({ status: 'refund_failed', failure_reason: reason.slice(0, 1000) });
    },

    /**
     * For another try: the purchase's refused cancellations back to `accepted` (their units still
     * held); returns the ids of every cancellation not completed (refused ones and stalled ones).
     */
    async reopenUnfinishedCancellations(purchaseId: number): Promise<number[]> {
      await db('policy_transactions')
        .where({ purchase_id: purchaseId, kind: 'cancellation', status: 'refund_failed' })
        .update({ status: 'accepted', failure_reason: null });
      const rows = await db('policy_transactions')
        .where({ purchase_id: purchaseId, kind: 'cancellation' })
        .whereIn('status', ['accepted', 'refund_pending'])
        .orderBy('id')
        .select('id');
      return rows.map((r: { id: number }) => r.id);
    },

    /**
     * The payments of a purchase, oldest first, each `{ paymentIntentId, amountMinor }` (minor
     * units collected): the sale's payment intent with the purchase's total (when it has one),
     * then each completed endorsement's payment intent with what it collected, in the order they
     * were recorded. What `allocateRefund` (./refund-allocation) splits a refund over.
     */
    async paymentsOf(purchaseId: number): Promise<PaymentShare[]> {
      const p = await db('purchases').where({ id: purchaseId }).first('payment_intent_id', 'total_minor');
      const endorsements = await db('policy_transactions')
        .where({ purchase_id: purchaseId, kind: 'endorsement', status: 'completed' })
        .whereNotNull('payment_intent_id')
        .orderBy('id')
        .select('payment_intent_id', 'total_minor');
      return [...(p?.payment_intent_id ? [p] : []), ...endorsements].map((r) => ({
        paymentIntentId: r.payment_intent_id as string,
        amountMinor: Number(r.total_minor),
      }));
    },

    /**
     * What the buyer paid on each of `purchaseIds` beyond the sale, minor units: the totals of its
     * completed endorsements that collected a payment (a payment intent of their own, positive
     * total), summed per purchase in one query (absent: none). An endorsement's checkout link not
     * yet paid, or paid after the endorsement no longer held (refunded in full), wrote no row here.
     */
    async endorsementPaymentsOf(purchaseIds: number[]): Promise<Map<number, number>> {
      if (!purchaseIds.length) return new Map();
      const rows = await db('policy_transactions')
        .whereIn('purchase_id', purchaseIds)
        .where({ kind: 'endorsement', status: 'completed' })
        .whereNotNull('payment_intent_id')
        .where('total_minor', '>', 0)
        .groupBy('purchase_id')
        .select('purchase_id', db.raw('sum(total_minor) as paid'));
      return new Map(rows.map((r: { purchase_id: number; paid: string }) => [Number(r.purchase_id), Number(r.paid)]));
    },

    /**
     * What the purchase's other cancellations and endorsements that gave premium back (any but
     * `exceptCancellationId`, rescinded ones aside) and the refunds made in the processor's
     * dashboard take from each payment intent, minor units: their planned `refunds`; a
     * cancellation refunded before refunds could be split (`refunds` null, `refund_id` set) took
     * its total from the sale's payment intent; a dashboard refund (`refund` row) its total from
     * the charge it was made on (the sale's for rows of before they named it).
     */
    async refundedByPaymentIntent(purchaseId: number, exceptCancellationId: number): Promise<Map<string, number>> {
      const [p, rows] = await Promise.all([
        db('purchases').where({ id: purchaseId }).first('payment_intent_id'),
        db('policy_transactions')
          .where({ purchase_id: purchaseId })
          .whereIn('kind', ['cancellation', 'endorsement', 'refund'])
          .whereNot({ id: exceptCancellationId })
          .whereNot({ status: 'rescinded' })
          .select('kind', 'refunds', 'refund_id', 'total_minor', 'payment_intent_id'),
      ]);
      const taken = dashboardRefundsByPaymentIntent(rows, (p?.payment_intent_id as string | null | undefined) ?? null);
      const add = (paymentIntentId: string, minor: number) => taken.set(paymentIntentId, (taken.get(paymentIntentId) ?? 0) + minor);
      for (const r of rows) {
        if (r.kind === 'refund') continue; // counted above
        if (r.refunds) for (const e of r.refunds as CancellationRefund[]) add(e.paymentIntentId, Number(e.amountMinor));
        else if (r.refund_id && p?.payment_intent_id) add(p.payment_intent_id as string, Number(r.total_minor));
      }
      return taken;
    },

    /**
     * Records a priced endorsement in the caller's transaction: a `policy_transactions` row
     * (`kind` endorsement, `completed`, the premium and platform fee in minor units, the payment
     * intent that collected them) with `breakdown` one entry per unit and premium
     * ({ unitId, itemId, premiumMinor } for a unit's own premium; with `certificateHolderId` and
     * `endorsement` for a holder's additional-insured or waiver premium on it), and the units added
     * (`added_by_transaction_id`), numbered after the item's last unit. A negative premium is given
     * back (a holder's endorsement removed): its total is negative, it collects no platform fee and
     * no payment intent, and `refunds` is its refund split (planned by the caller). Returns the
     * transaction's id and the new units' ids. The change is the ledger's; it inserts the sale's
     * `covered_units` rows it adds in the caller's transaction.
     */
    async recordEndorsementTransaction(e: {
      purchaseId: number;
      apiKeyId: number;
      currency: string;
      premiumMinor: number;
      platformFeeMinor: number;
      /** Premium tax on the premium added (0 or absent: none). */
      taxMinor?: number;
      paymentIntentId: string | null;
      effectiveAt: Date;
      additions: Array<{
        itemId: number;
        units: Array<Omit<NewCoveredUnit, 'index'> & { premiumMinor: number; holderPremiums?: HolderPremiumOnNewUnit[] }>;
      }>;
      holderPremiums?: LedgerUnitPremium[];
    }): Promise<{ transactionId: number; unitIds: number[] }> {
      const [row] = await db('policy_transactions')
        .insert({
          purchase_id: e.purchaseId,
          kind: 'endorsement',
          status: 'completed',
          api_key_id: e.apiKeyId,
          requested_by: 'agency',
          covered_unit_ids: [],
          effective_at: e.effectiveAt,
          currency: e.currency,
          premium_minor: e.premiumMinor,
          tax_minor: e.taxMinor ?? 0,
          platform_fee_minor: e.platformFeeMinor,
          total_minor: e.premiumMinor + e.platformFeeMinor + (e.taxMinor ?? 0),
          breakdown: JSON.stringify([]),
          payment_intent_id: e.paymentIntentId,
          completed_at: e.effectiveAt,
        })
        .returning('id');
      const transactionId = row.id as number;
      const unitIds: number[] = [];
      const breakdown: LedgerUnitPremium[] = [...(e.holderPremiums ?? [])];
      for (const a of e.additions) {
        const last = await db('covered_units').where({ purchase_item_id: a.itemId }).max('unit_index as max').first();
        let index = Number(last?.max ?? -1) + 1;
        for (const u of a.units) {
          const [inserted] = await db('covered_units')
            .insert({
              purchase_id: e.purchaseId,
              purchase_item_id: a.itemId,
              unit_index: index++,
              kind: u.kind,
              starts_at: u.startsAt,
              ends_at: u.endsAt,
              time_zone: u.timeZone,
              local_label: u.localLabel,
              added_by_transaction_id: transactionId,
            })
            .returning('id');
          unitIds.push(inserted.id);
          breakdown.push({ unitId: inserted.id, itemId: a.itemId, premiumMinor: u.premiumMinor });
          for (const h of u.holderPremiums ?? []) breakdown.push({ unitId: inserted.id, itemId: a.itemId, ...h });
        }
      }
      const touched = [...new Set([...unitIds, ...breakdown.map((b) => b.unitId)])];
      await db('policy_transactions')
        .where({ id: transactionId })
        .update({ covered_unit_ids: touched, breakdown: JSON.stringify(breakdown) });
      return { transactionId, unitIds };
    },

    /**
     * Stores the refund split of endorsement transaction `transactionId` (a negative one), in the
     * caller's transaction, before any refund of it is created: `plan` newest payment first.
     */
    async planEndorsementRefunds(transactionId: number, plan: PaymentShare[]): Promise<void> {
      await db('policy_transactions')
        .where({ id: transactionId, kind: 'endorsement' })
        .whereNull('refunds')
        .update({
          refunds: JSON.stringify(plan.map((x) => ({ paymentIntentId: x.paymentIntentId, amountMinor: x.amountMinor, refundId: null }))),
        });
    },

    /** The refund split of endorsement transaction `transactionId` as stored (null: nothing to give back). */
    async endorsementRefunds(transactionId: number): Promise<CancellationRefund[] | null> {
      const row = await db('policy_transactions').where({ id: transactionId, kind: 'endorsement' }).first('refunds');
      return (row?.refunds as CancellationRefund[] | null | undefined) ?? null;
    },

    /** The `index`th refund of endorsement transaction `transactionId` exists at the processor (`refundId`). */
    async recordEndorsementRefundCreated(transactionId: number, index: number, refundId: string): Promise<void> {
      await db('policy_transactions')
        .where({ id: transactionId, kind: 'endorsement' })
        .whereRaw('jsonb_array_length(refunds) > ?', [index])
        .update({
          refunds: db.raw(`jsonb_set(refunds, ?::text[], to_jsonb(?::text))`, [`{${index},refundId}`, refundId]),
          ...(index === 0 ? { refund_id: refundId } : {}),
        });
    },

    /** Endorsement transaction `transactionId`'s refund was refused for good (`reason`): kept for the operator. */
    async failEndorsementRefund(transactionId: number, reason: string): Promise<void> {
      await db('policy_transactions')
        .where({ id: transactionId, kind: 'endorsement' })
        .update({ failure_reason: reason.slice(0, 1000) });
    },

    /**
     * The purchase's completed priced endorsements, oldest first: premium and platform fee (minor
     * units; negative premium: given back), the payment intent, the premium per unit and item
     * (a holder's endorsement premium naming its holder and endorsement), and what was refunded
     * of that payment in the processor's dashboard (`refund` rows of its payment intent).
     */
    async endorsementCharges(purchaseId: number): Promise<EndorsementCharge[]> {
      return endorsementChargesOf(await completedChargeRows(purchaseId));
    },

    /**
     * `endorsementCharges` of purchase `p`, and what was refunded of its sale payment in the
     * processor's dashboard (`saleDashboardRefundedMinor`, minor units: its `refund` rows of the
     * sale's payment intent; rows of before they named their payment intent were the sale's), from
     * one read of its ledger: pricing a cancellation needs both. The caller has the purchase already.
     */
    async chargesAndSaleDashboardRefund(
      p: Pick<PurchaseRecord, 'id' | 'paymentIntentId'>,
    ): Promise<{ charges: EndorsementCharge[]; saleDashboardRefundedMinor: number }> {
      const rows = await completedChargeRows(p.id);
      return {
        charges: endorsementChargesOf(rows),
        saleDashboardRefundedMinor: p.paymentIntentId ? saleDashboardRefundOf(rows, p.paymentIntentId) : 0,
      };
    },
  };
}

/** The policy ledger's repository (see `createLedgerRepository`). */
export type LedgerRepository = ReturnType<typeof createLedgerRepository>;
