/**
 * The sale's repository: the only writer of `purchases`, `purchase_items` and `covered_units`.
 * The quote path creates a purchase (and a subscription's renewals go through the same insert,
 * `insertPurchase`, ./sale-insert-repository), each item keeping the cancellation terms its product had then; the purchase
 * workflow's activities record what happened to it (checkout session, payment, subscription,
 * certificates, refunds); endorsements correct its named insured and move its units; every status
 * change goes through `transition`, which applies the status rules of ./purchase-record once.
 * Other domains read purchases through the reads here (`findById`, `findInScope`,
 * `findByHandle`, …: the one read model `PurchaseRecord`), never write them.
 *
 * Changes of another aggregate that take its units or add to them in one transaction (a
 * cancellation taking, giving back or cancelling units; an endorsement adding units) are the
 * ledger's (./ledger-repository), which writes those `covered_units` columns there. `recordRefund`
 * is the sale's and writes the ledger's `refund` row in its transaction.
 *
 * Amounts are integer minor units; instants are `Date`s (UTC).
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { NEWEST_FIRST, pageWithTotal } from '../db/paging';
import { redactJsonString } from '../db/json-redaction';
import { DEFAULT_CANCELLATION_TERMS } from '../products/cancellation-terms';
import { spreadByWeight } from './refund-rule';
import { predecessorsOf, statusAfterCancellations, toPurchaseRecord } from './purchase-record';
import type {
  NewPurchase,
  PurchaseItemDetail,
  PurchaseListFilter,
  PurchaseRecord,
  PurchaseScope,
  WriteAnsweredHolders,
} from './purchase-record';
import type { PurchaseHandle, PurchaseLookup } from './purchase-record';
import { dashboardRefundsByPaymentIntent, type CancellationRefund, type LedgerUnitPremium } from './ledger-record';
import type { PurchaseStatus } from '../../workflows/contracts';
import { insertPurchase } from './sale-insert-repository';

/**
 * Gives an issued purchase the status its covered units tell (`statusAfterCancellations`):
 * `partly_cancelled` once some are cancelled (their cancellation completed), `cancelled` once every
 * one is; a conditional update by the status rules, so a purchase refunded in full, or not issued,
 * keeps its status. Run in the transaction `q` that completes a cancellation (the ledger's
 * `completeCancellation`), so no reader sees a completed cancellation on a purchase still `issued`.
 * Returns the status after it; undefined when the purchase does not exist.
 */
export async function settleStatusAfterCancellation(q: Knex | Knex.Transaction, purchaseId: number): Promise<PurchaseStatus | undefined> {
  const units = await q('covered_units').where({ purchase_id: purchaseId }).select('cancelled_at');
  const next = statusAfterCancellations(units.map((u) => ({ cancelled: u.cancelled_at !== null })));
  if (next !== 'issued') {
    await q('purchases')
      .where({ id: purchaseId })
      .whereIn(
        'status',
        predecessorsOf(next).filter((s) => s !== next),
      )
      .update({ status: next, updated_at: q.fn.now() });
  }
  const row = await q('purchases').where({ id: purchaseId }).first('status');
  return row ? (row.status as PurchaseStatus) : undefined;
}

/**
 * The sale's repository over `db` (or a caller's transaction): creates purchases, reads them
 * (by id, in a key's scope, by a request's handle, by payment intent, one page of a list, their
 * items and checkout context) and records what happens to them. Methods are documented one by
 * one; none throws for a late or repeated step (each write is conditional or idempotent).
 */
export function createSaleRepository(db: Db | Knex.Transaction) {
  return {
    /**
     * Writes a quoted purchase, its items, their answered certificate holders (through
     * `writeHolders`, the holders' repository's insert) and covered units atomically; returns its id.
     */
    async create(p: NewPurchase, writeHolders: WriteAnsweredHolders): Promise<number> {
      return db.transaction((trx) => insertPurchase(trx, p, 'quoted', null, writeHolders));
    },

    /** The purchase by id, or undefined. */
    async findById(purchaseId: number): Promise<PurchaseRecord | undefined> {
      const r = await db('purchases').where({ id: purchaseId }).first();
      return r ? toPurchaseRecord(r) : undefined;
    },

    /** The purchase if `scope` may read it (another account's, mode's or teammate's reads as absent). */
    async findInScope(purchaseId: number, scope: PurchaseScope): Promise<PurchaseRecord | undefined> {
      const q = db('purchases').where({ id: purchaseId, root_account_id: scope.rootAccountId, mode: scope.mode });
      if (scope.agentId !== null) q.where('agent_id', scope.agentId);
      const row = await q.first();
      return row ? toPurchaseRecord(row) : undefined;
    },

    /**
     * The purchases `handle` names among those `lookup` allows (its root account; and its mode,
     * teammate and buyer when given), newest first, at most `limit`: none (unknown and out of scope
     * read alike), one, or several (a payment intent held by several purchases: the processor's
     * test mode gives every checkout the same one). The scope is part of the query, so another
     * account's purchase holding the same payment intent is never counted. The one read behind
     * getCertificates, getInvoiceData, teamEmailProofofCoverage and the payment options.
     */
    async findByHandle(handle: PurchaseHandle, lookup: PurchaseLookup, limit: number): Promise<PurchaseRecord[]> {
      const q = db('purchases as p').join('buyers as b', 'b.id', 'p.buyer_id').where('p.root_account_id', lookup.rootAccountId);
      if ('purchaseId' in handle) q.where('p.id', handle.purchaseId);
      else if ('checkoutSessionId' in handle) q.where('p.checkout_session_id', handle.checkoutSessionId);
      else q.where('p.payment_intent_id', handle.paymentIntent);
      if (lookup.mode !== undefined) q.where('p.mode', lookup.mode);
      if (lookup.agentId !== undefined && lookup.agentId !== null) q.where('p.agent_id', lookup.agentId);
      if (lookup.buyerId !== undefined) q.where('p.buyer_id', lookup.buyerId);
      if (lookup.buyerIdpUuid !== undefined) q.where('b.idp_accnt_uuid', lookup.buyerIdpUuid.toLowerCase());
      const rows = await q.orderBy('p.id', 'desc').limit(limit).select('p.*');
      return rows.map(toPurchaseRecord);
    },

    /** One page of the purchases `scope` may read, newest first, and how many match. */
    async list(scope: PurchaseScope, f: PurchaseListFilter): Promise<{ items: PurchaseRecord[]; total: number }> {
      const base = db('purchases').where({ root_account_id: scope.rootAccountId, mode: scope.mode });
      if (scope.agentId !== null) base.where('agent_id', scope.agentId);
      if (f.status) base.where('status', f.status);
      if (f.createdFrom) base.where('created_at', '>=', f.createdFrom);
      if (f.createdTo) base.where('created_at', '<', f.createdTo);
      if (f.buyerEmail) base.whereRaw('lower(buyer_email) = lower(?)', [f.buyerEmail]);
      const { rows, total } = await pageWithTotal<Record<string, unknown>>(base, {
        orderBy: NEWEST_FIRST,
        limit: f.limit,
        offset: f.offset,
      });
      return { items: rows.map(toPurchaseRecord), total };
    },

    /** The newest purchase holding this payment intent, or undefined. */
    async findByPaymentIntent(paymentIntentId: string): Promise<PurchaseRecord | undefined> {
      const r = await db('purchases').where({ payment_intent_id: paymentIntentId }).orderBy('id', 'desc').first();
      return r ? toPurchaseRecord(r) : undefined;
    },

    /**
     * The purchase one of whose charges payment intent `paymentIntentId` paid: the sale's
     * (as findByPaymentIntent), else a priced endorsement's difference; undefined when neither.
     */
    async findByChargePaymentIntent(paymentIntentId: string): Promise<PurchaseRecord | undefined> {
      const sale = await this.findByPaymentIntent(paymentIntentId);
      if (sale) return sale;
      const r = await db('purchases as p')
        .join('policy_transactions as t', 't.purchase_id', 'p.id')
        .where({ 't.payment_intent_id': paymentIntentId, 't.kind': 'endorsement' })
        .orderBy('p.id', 'desc')
        .first('p.*');
      return r ? toPurchaseRecord(r) : undefined;
    },

    /**
     * What the checkout session is made from: the purchase, its lines (with the processor product
     * and name, and the premium tax lines of each) and where the buyer returns (the key's URLs, else the account's; null where neither).
     */
    async checkoutContext(purchaseId: number) {
      const r = await db('purchases as p')
        .join('root_accounts as a', 'a.id', 'p.root_account_id')
        .join('api_keys as k', 'k.id', 'p.api_key_id')
        .where('p.id', purchaseId)
        .first(
          'p.*',
          'a.checkout_success_url as account_success_url',
          'a.checkout_cancel_url as account_cancel_url',
          'k.checkout_success_url as key_success_url',
          'k.checkout_cancel_url as key_cancel_url',
        );
      if (!r) return undefined;
      const lines = await db('purchase_items as i')
        .join('product_lines as pl', 'pl.id', 'i.product_line_id')
        .where('i.purchase_id', purchaseId)
        .orderBy('i.position')
        .select('i.amount_minor', 'i.tax_lines', 'pl.customer_name', 'pl.payproc_product_id');
      return {
        purchase: toPurchaseRecord(r),
        lines: lines.map((l) => ({
          amountMinor: Number(l.amount_minor),
          name: l.customer_name as string,
          payprocProductId: (l.payproc_product_id as string | null) ?? null,
          taxLines: (l.tax_lines as PurchaseItemDetail['taxLines']) ?? [],
        })),
        successUrl: (r.key_success_url as string | null) ?? (r.account_success_url as string | null) ?? null,
        cancelUrl: (r.key_cancel_url as string | null) ?? (r.account_cancel_url as string | null) ?? null,
      };
    },

    /** The buyer's name as their buyer record has it now ("first last"), or null when there is none. */
    async buyerName(purchaseId: number): Promise<string | null> {
      const row = await db('purchases as p')
        .join('buyers as b', 'b.id', 'p.buyer_id')
        .where('p.id', purchaseId)
        .first('b.first_name', 'b.last_name');
      return row ? `${row.first_name as string} ${row.last_name as string}`.trim() || null : null;
    },

    /** Each item's answers as the buyer gave them (question id → answer), in item order. */
    async itemAnswers(purchaseId: number): Promise<Array<{ itemId: number; productName: string; answers: Record<string, unknown> }>> {
      const rows = await db('purchase_items as i')
        .join('product_lines as pl', 'pl.id', 'i.product_line_id')
        .where('i.purchase_id', purchaseId)
        .orderBy('i.position')
        .select('i.id', 'pl.customer_name', 'i.answers');
      return rows.map((r) => ({
        itemId: r.id as number,
        productName: r.customer_name as string,
        answers: (r.answers ?? {}) as Record<string, unknown>,
      }));
    },

    /**
     * The purchase's items in order, each with its product's name, its terms and its covered units
     * (ids included, in unit order). One query (items joined with their units): every event of a
     * purchase reads these, three times per paid purchase.
     */
    async itemDetails(purchaseId: number): Promise<PurchaseItemDetail[]> {
      const rows = await db('purchase_items as i')
        .join('product_lines as pl', 'pl.id', 'i.product_line_id')
        .leftJoin('covered_units as cu', 'cu.purchase_item_id', 'i.id')
        .where('i.purchase_id', purchaseId)
        .orderBy([{ column: 'i.position' }, { column: 'cu.unit_index' }])
        .select(
          'i.*',
          'pl.customer_name',
          'cu.id as unit_id',
          'cu.unit_index',
          'cu.kind as unit_kind',
          'cu.starts_at as unit_starts_at',
          'cu.ends_at as unit_ends_at',
          'cu.time_zone as unit_time_zone',
          'cu.local_label as unit_local_label',
          'cu.cancellation_id as unit_cancellation_id',
          'cu.cancelled_at as unit_cancelled_at',
        );
      const items: PurchaseItemDetail[] = [];
      for (const i of rows) {
        let item: PurchaseItemDetail | undefined = items[items.length - 1];
        if (!item || item.id !== i.id) {
          item = {
            id: i.id,
            position: i.position,
            productLineId: i.product_line_id,
            productName: i.customer_name,
            inBundle: i.in_bundle,
            isTripExcess: i.is_trip_excess,
            unitPriceMinor: Number(i.unit_price_minor),
            priceFactor: Number(i.price_factor),
            amountMinor: Number(i.amount_minor),
            namedInsured: i.named_insured,
            certificateHolder: i.certificate_holder,
            cancellationTerms: { ...DEFAULT_CANCELLATION_TERMS, ...(i.cancellation_terms ?? {}) },
            commission:
              i.commission_bps === null || i.commission_bps === undefined
                ? null
                : {
                    partyRootAccountId: Number(i.commission_party_root_account_id),
                    rateBps: Number(i.commission_bps),
                    amountMinor: Number(i.commission_minor),
                  },
            taxMinor: Number(i.tax_minor ?? 0),
            taxLines: (i.tax_lines as PurchaseItemDetail['taxLines']) ?? null,
            units: [],
          };
          items.push(item);
        }
        if (i.unit_id === null) continue; // an item without units (left join)
        item.units.push({
          id: i.unit_id,
          index: i.unit_index,
          kind: i.unit_kind,
          startsAt: i.unit_starts_at,
          endsAt: i.unit_ends_at,
          timeZone: i.unit_time_zone,
          localLabel: i.unit_local_label,
          cancellationId: i.unit_cancellation_id ?? null,
          cancelledAt: i.unit_cancelled_at ?? null,
        });
      }
      return items;
    },

    /** The buyer's `idp_accnt_uuid` (the reference an agency knows the buyer by), or null when the buyer is gone. */
    async buyerIdpAccntUuid(buyerId: number): Promise<string | null> {
      const row = await db('buyers').where({ id: buyerId }).first('idp_accnt_uuid');
      return (row?.idp_accnt_uuid as string | undefined) ?? null;
    },

    /** Stores the checkout session created for the purchase (and its payment intent when known). */
    async recordCheckoutSession(
      purchaseId: number,
      s: { sessionId: string; url: string | null; expiresAt: Date; paymentIntentId: string | null },
    ): Promise<void> {
      await db('purchases')
        .where({ id: purchaseId })
        .update({
          checkout_session_id: s.sessionId,
          checkout_url: s.url,
          checkout_expires_at: s.expiresAt,
          payment_intent_id: db.raw('coalesce(?, payment_intent_id)', [s.paymentIntentId]),
          updated_at: db.fn.now(),
        });
    },

    /**
     * Records the payment once (`paid_at`); the payment intent is kept when already known. A covered
     * unit already under way at payment (a same-day start) starts at the payment: never before it.
     */
    async recordPayment(purchaseId: number, paymentIntentId: string | null): Promise<void> {
      // One statement (one round trip on the payment's hot path): the payment recorded once, and
      // coverage never starting before it is paid for (a known loss): a covered day or trip already
      // under way at payment (a same-day start_date) starts at the payment instead.
      await db.raw(
        `with paid as (
           update purchases set paid_at = coalesce(paid_at, now()), payment_intent_id = coalesce(?, payment_intent_id), updated_at = now()
            where id = ? returning id, paid_at)
         update covered_units cu set starts_at = paid.paid_at from paid
          where cu.purchase_id = paid.id and cu.starts_at < paid.paid_at and cu.ends_at > paid.paid_at`,
        [paymentIntentId, purchaseId],
      );
    },

    /** Remembers the processor subscription a paid subscription checkout created (once). */
    async recordSubscription(purchaseId: number, subscriptionId: string): Promise<void> {
      await db('purchases')
        .where({ id: purchaseId })
        .whereNull('payproc_subscription_id')
        .update({ payproc_subscription_id: subscriptionId, updated_at: db.fn.now() });
    },

    /**
     * Records a subscription's end on its first purchase: `atPeriodEnd` (renewals stop) or
     * `endedAt` (it ended), by whom. Never undone: an end recorded stays (the first wins), a
     * period-end flag stays once set. Returns whether anything changed (the caller announces it once).
     */
    async recordSubscriptionEnd(
      firstPurchaseId: number,
      change: { atPeriodEnd?: boolean; endedAt?: Date; by: 'agency' | 'processor' },
    ): Promise<boolean> {
      const q = db('purchases')
        .where({ id: firstPurchaseId, billing: 'subscription' })
        .whereNull('renewal_of_purchase_id')
        .whereNull('subscription_ended_at');
      if (change.endedAt) {
        const n = await q.update({
          subscription_ended_at: change.endedAt,
          subscription_cancelled_by: db.raw('coalesce(subscription_cancelled_by, ?)', [change.by]),
          updated_at: db.fn.now(),
        });
        return n > 0;
      }
      if (!change.atPeriodEnd) return false;
      const n = await q
        .where({ subscription_cancel_at_period_end: false })
        .update({ subscription_cancel_at_period_end: true, subscription_cancelled_by: change.by, updated_at: db.fn.now() });
      return n > 0;
    },

    /**
     * Moves a test-mode purchase's test clock to `at` (only forward: a time before the clock, or
     * before the real now when it has none, changes nothing). Returns the clock as now stored;
     * undefined for a live or unknown purchase.
     */
    async advanceTestClock(purchaseId: number, at: Date): Promise<Date | undefined> {
      const [row] = await db('purchases')
        .where({ id: purchaseId, mode: 'test' })
        .update({ test_clock_at: db.raw('greatest(coalesce(test_clock_at, now()), ?::timestamptz)', [at]), updated_at: db.fn.now() })
        .returning('test_clock_at');
      return row ? (row.test_clock_at as Date) : undefined;
    },

    /**
     * Marks issuance complete (once) and, where the status rules allow, the purchase `issued`, in
     * one statement, so no reader sees certificates listed on a purchase not yet `issued`.
     */
    async recordCertificatesIssued(purchaseId: number): Promise<void> {
      const from = predecessorsOf('issued');
      await db('purchases')
        .where({ id: purchaseId })
        .update({
          certificates_issued_at: db.raw('coalesce(certificates_issued_at, now())'),
          status: db.raw(`case when status in (${from.map(() => '?').join(', ')}) then 'issued' else status end`, from),
          updated_at: db.fn.now(),
        });
    },

    /**
     * Moves the purchase to `to` when the status rules allow it (one conditional update, so two
     * writers racing cannot break the rules); `reason` is stored with `failed`. Returns the status
     * after the call and whether it changed; undefined when the purchase does not exist.
     */
    async transition(
      purchaseId: number,
      to: PurchaseStatus,
      reason?: string,
    ): Promise<{ status: PurchaseStatus; changed: boolean } | undefined> {
      const [row] = await db('purchases')
        .where({ id: purchaseId })
        .whereIn(
          'status',
          predecessorsOf(to).filter((s) => s !== to),
        )
        .update({
          status: to,
          updated_at: db.fn.now(),
          ...(to === 'failed' ? { failure_reason: (reason ?? 'unknown').slice(0, 2000), failed_at: db.fn.now() } : {}),
          ...(to === 'refunded' ? { refunded_at: db.raw('coalesce(refunded_at, now())') } : {}),
        })
        .returning('status');
      if (row) return { status: row.status as PurchaseStatus, changed: true };
      const now = await db('purchases').where({ id: purchaseId }).first('status');
      return now ? { status: now.status as PurchaseStatus, changed: false } : undefined;
    },

    /**
     * Records a `charge.refunded` event of one of the purchase's charges: the sale's (payment
     * intent `paymentIntentId`, or none given) or an endorsement's (the payment intent that
     * endorsement collected its difference with). For the sale's charge the purchase's refunded
     * amount (minor units) becomes at least `amountRefundedMinor`, and the purchase `refunded`
     * when the charge is refunded in full; an endorsement's charge changes neither (the purchase's
     * refunded amount is its sale charge's). What the processor reports refunded on that charge
     * beyond what the ledger explains there (the parts of our cancellations' and endorsements'
     * refunds taken from that payment intent, planned or created, and earlier `refund` rows of
     * it) was refunded in the processor's dashboard: it is kept as a `refund` row of that payment
     * intent (`completed` at `at`, spread in `breakdown` as `refundableMinor` over the items by
     * what that charge paid for each: the sale's premium per item, or the endorsement's), so the
     * bordereau reports it and later refunds take only what is left on each payment. The refunded
     * amount only grows (events may arrive out of order), and replaying an event adds nothing. A
     * payment intent that paid none of the purchase's charges (a checkout link paid after its
     * endorsement no longer held, which we refund in full) records nothing. Returns the sale's
     * refund state, or undefined when the purchase does not exist.
     *
     * Writes two aggregates' tables in one transaction (the purchase row locked): the change is the
     * sale's (the processor's report of its charges), so it is here; the dashboard's `refund` row
     * is the one write of the ledger's `policy_transactions` outside ./ledger-repository.
     */
    async recordRefund(
      purchaseId: number,
      amountRefundedMinor: number,
      fullyRefunded: boolean,
      at: Date = new Date(),
      paymentIntentId?: string,
    ): Promise<{ refundedMinor: number; refunded: boolean } | undefined> {
      const result = await db.transaction(async (trx) => {
        const p = await trx('purchases')
          .where({ id: purchaseId })
          .forUpdate()
          .first('id', 'refunded_minor', 'payment_intent_id', 'currency', 'api_key_id');
        if (!p) return undefined;
        const chargePi = (paymentIntentId ?? p.payment_intent_id) as string | null;
        const sale = chargePi === p.payment_intent_id;
        const ledger = await trx('policy_transactions')
          .where({ purchase_id: purchaseId })
          .whereIn('kind', ['cancellation', 'endorsement', 'refund'])
          .whereNot({ status: 'rescinded' })
          .select('id', 'kind', 'status', 'refunds', 'refund_id', 'total_minor', 'failure_reason', 'payment_intent_id', 'breakdown');
        // The endorsement whose difference this charge collected, when it is not the sale's.
        const endorsement = sale
          ? undefined
          : ledger.find((t) => t.kind === 'endorsement' && t.payment_intent_id === chargePi && Number(t.total_minor) > 0);
        // A payment intent that paid none of its charges (a checkout link paid after the endorsement no
        // longer held, refunded in full by us): nothing was written for it, so nothing is recorded.
        if (!sale && !endorsement) return { refundedMinor: Number(p.refunded_minor), sale: false };
        let refundedMinor = Number(p.refunded_minor);
        if (sale) {
          const [row] = await trx('purchases')
            .where({ id: purchaseId })
            .update({ refunded_minor: trx.raw('greatest(refunded_minor, ?)', [amountRefundedMinor]), updated_at: trx.fn.now() })
            .returning(['refunded_minor']);
          refundedMinor = Number(row.refunded_minor);
        }
        let explained = (chargePi && dashboardRefundsByPaymentIntent(ledger, p.payment_intent_id).get(chargePi)) || 0;
        for (const t of ledger) {
          if (t.kind === 'refund') continue; // counted above
          if (t.refunds) {
            // A refund refused for good took nothing, except the parts already created.
            const refused = t.status === 'refund_failed' || (t.kind === 'endorsement' && t.failure_reason);
            for (const part of t.refunds as CancellationRefund[])
              if (part.paymentIntentId === chargePi && (!refused || part.refundId)) explained += Number(part.amountMinor);
          } else if (sale && t.kind === 'cancellation' && t.refund_id && t.status !== 'refund_failed') explained += Number(t.total_minor);
        }
        const unexplained = amountRefundedMinor - explained;
        if (unexplained > 0) {
          const items = await trx('purchase_items').where({ purchase_id: purchaseId }).orderBy('position').select('id', 'amount_minor');
          // What the charge paid for each item: the sale's premium, or the endorsement's (by its units).
          const paidFor = new Map<number, number>();
          if (endorsement)
            for (const u of endorsement.breakdown as LedgerUnitPremium[])
              paidFor.set(u.itemId, (paidFor.get(u.itemId) ?? 0) + Math.max(0, u.premiumMinor));
          const weights = items.map((i) => (endorsement ? (paidFor.get(i.id) ?? 0) : Number(i.amount_minor)));
          const shares = spreadByWeight(unexplained, weights.some((w) => w > 0) ? weights : items.map((i) => Number(i.amount_minor)));
          await trx('policy_transactions').insert({
            purchase_id: purchaseId,
            kind: 'refund',
            status: 'completed',
            api_key_id: p.api_key_id,
            requested_by: 'processor',
            covered_unit_ids: [],
            effective_at: at,
            currency: p.currency,
            premium_minor: unexplained,
            tax_minor: 0,
            platform_fee_minor: 0,
            total_minor: unexplained,
            payment_intent_id: chargePi,
            breakdown: JSON.stringify(items.map((i, k) => ({ itemId: i.id, refundableMinor: shares[k] }))),
            completed_at: at,
          });
        }
        return { refundedMinor, sale };
      });
      if (result === undefined) return undefined;
      const { refundedMinor, sale } = result;
      const status =
        sale && fullyRefunded
          ? await this.transition(purchaseId, 'refunded')
          : await db('purchases').where({ id: purchaseId }).first('status');
      return { refundedMinor, refunded: status?.status === 'refunded' };
    },

    /**
     * An endorsement's corrected named insured, on every item of the purchase: `name`, and the
     * address when given (kept otherwise).
     */
    async updateNamedInsured(purchaseId: number, value: { name: string; address?: Record<string, unknown> }): Promise<void> {
      const items = await db('purchase_items').where({ purchase_id: purchaseId }).select('id', 'named_insured');
      for (const i of items) {
        const before = (i.named_insured ?? {}) as { address?: unknown };
        const next = {
          name: value.name,
          ...(value.address ? { address: value.address } : before.address ? { address: before.address } : {}),
        };
        await db('purchase_items')
          .where({ id: i.id })
          .update({ named_insured: JSON.stringify(next) });
      }
    },

    /** An endorsement's move of a covered unit to another window (its label as the certificate prints it). */
    async moveCoveredUnit(coveredUnitId: number, to: { startsAt: Date; endsAt: Date; localLabel: string }): Promise<void> {
      await db('covered_units')
        .where({ id: coveredUnitId })
        .update({ starts_at: to.startsAt, ends_at: to.endsAt, local_label: to.localLabel });
    },

    /**
     * For a buyer's erasure, in `trx`: the ids of `buyerId`'s purchases in the account and mode,
     * the buyer emails they hold, and the last end of their covered units (null when none).
     */
    async buyerPurchases(trx: Knex.Transaction, buyerId: number, rootAccountId: number, mode: 'live' | 'test') {
      const rows: Array<{ id: number; buyer_email: string | null }> = await trx('purchases')
        .where({ buyer_id: buyerId, root_account_id: rootAccountId, mode })
        .select('id', 'buyer_email');
      const ids = rows.map((r) => r.id);
      const last = await trx('covered_units').whereIn('purchase_id', ids).max<{ max: Date | null }>('ends_at as max').first();
      const buyerEmails = rows.map((r) => r.buyer_email).filter((e): e is string => Boolean(e));
      return { ids, buyerEmails, lastCoverageEnd: last?.max ?? null };
    },

    /**
     * A buyer's erasure on purchases `purchaseIds`, in `trx`: their `buyer_email` emptied and each
     * item's named insured name replaced by `placeholder` (the address kept). Answers the names
     * replaced (item id → name), for the erasure to retain until its retention period ends.
     */
    async eraseBuyer(trx: Knex.Transaction, purchaseIds: number[], placeholder: string): Promise<Record<string, string>> {
      await trx('purchases').whereIn('id', purchaseIds).update({ buyer_email: null });
      return redactJsonString(trx, { table: 'purchase_items', column: 'named_insured', key: 'name' }, purchaseIds, placeholder);
    },
  };
}

/** The sale's repository (see `createSaleRepository`). */
export type SaleRepository = ReturnType<typeof createSaleRepository>;
