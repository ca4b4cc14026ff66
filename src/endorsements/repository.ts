/**
 * The one writer of `endorsements` (migration 20261127000300): quotes of mid-term changes and,
 * once carried out, what they reissued. Reads the product lines' question sets for the longest
 * trip each product allows (a move is validated like a quote).
 */
import type { Knex } from 'knex';
import { replaceJsonStrings } from '../db/json-redaction';
import type { Db } from '../db/knex';
import type { EndorsementChange } from './schemas';
import type { PlannedReissue, UnitAddition } from './planning';
import type { CancellationRefund, LedgerUnitPremium } from '../purchases/ledger-record';

export type { UnitAddition } from './planning';

/** A holder endorsement premium an endorsement prices on an existing unit (negative: given back), with the unit's label. */
export type StoredHolderPremium = Required<LedgerUnitPremium> & { localLabel: string };

/** Where an endorsement stands: quoted, its difference being collected, applied, or ended without a change. */
export type EndorsementStatus = 'quoted' | 'awaiting_payment' | 'applied' | 'payment_failed' | 'refunded';

export interface StoredEndorsement {
  id: number;
  quoteId: string;
  purchaseId: number;
  apiKeyId: number | null;
  status: EndorsementStatus;
  changes: EndorsementChange[];
  currency: string;
  premiumDifferenceMinor: number;
  platformFeeDifferenceMinor: number;
  /** Premium tax on the premium added (0 when the item is not taxed or nothing is added). */
  taxDifferenceMinor: number;
  totalDifferenceMinor: number;
  /** The certificates the change reissues, each with the window its current version prints and its new version's. */
  reissues: PlannedReissue[];
  fingerprint: string;
  reissued: Array<{ from: string; to: string }> | null;
  /** Units the endorsement adds (empty for the unpriced change kinds); instants as ISO strings once stored. */
  additions: UnitAddition[];
  /** Holder endorsement premiums on existing units (certificate_holder_endorsements). */
  holderPremiums: StoredHolderPremium[];
  /** Once applied, a negative difference's refund split as the ledger holds it (null: nothing given back). */
  refunds: CancellationRefund[] | null;
  /** Why the processor refused that refund, if it did. */
  refundFailure: string | null;
  /** How the difference is collected (null: nothing to collect). */
  paymentMethod: 'saved_card' | 'checkout_link' | null;
  paymentMethodId: string | null;
  paymentIntentId: string | null;
  checkoutSessionId: string | null;
  checkoutUrl: string | null;
  checkoutExpiresAt: Date | null;
  paidAt: Date | null;
  failureCode: string | null;
  failureMessage: string | null;
  /** The ledger row of an applied endorsement that collected premium. */
  policyTransactionId: number | null;
  createdAt: Date;
  expiresAt: Date;
  appliedAt: Date | null;
}

/** Stored additions back to Dates (jsonb keeps instants as strings). */
const additionsOf = (raw: unknown): UnitAddition[] =>
  ((raw as UnitAddition[] | null) ?? []).map((a) => ({
    itemId: a.itemId,
    units: a.units.map((u) => ({ ...u, startsAt: new Date(u.startsAt), endsAt: new Date(u.endsAt) })),
  }));

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const toEndorsement = (r: Record<string, any>): StoredEndorsement => ({
  id: r.id,
  quoteId: r.quote_id,
  purchaseId: r.purchase_id,
  apiKeyId: r.api_key_id ?? null,
  status: r.status,
  changes: r.changes,
  currency: r.currency,
  premiumDifferenceMinor: Number(r.premium_difference_minor),
  platformFeeDifferenceMinor: Number(r.platform_fee_difference_minor),
  taxDifferenceMinor: Number(r.tax_difference_minor ?? 0),
  totalDifferenceMinor: Number(r.total_difference_minor),
  reissues: r.reissues,
  fingerprint: r.fingerprint,
  reissued: r.reissued ?? null,
  additions: additionsOf(r.additions),
  holderPremiums: r.holder_premiums ?? [],
  refunds: r.ledger_refunds ?? null,
  refundFailure: r.ledger_failure_reason ?? null,
  paymentMethod: r.payment_method ?? null,
  paymentMethodId: r.payment_method_id ?? null,
  paymentIntentId: r.payment_intent_id ?? null,
  checkoutSessionId: r.checkout_session_id ?? null,
  checkoutUrl: r.checkout_url ?? null,
  checkoutExpiresAt: r.checkout_expires_at ?? null,
  paidAt: r.paid_at ?? null,
  failureCode: r.failure_code ?? null,
  failureMessage: r.failure_message ?? null,
  policyTransactionId: r.policy_transaction_id ?? null,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  appliedAt: r.applied_at ?? null,
});

export function createEndorsementsRepository(db: Db | Knex.Transaction) {
  /** Endorsements with their ledger row's refund split and refusal (read, never written, here). */
  const read = () =>
    db('endorsements as e')
      .leftJoin('policy_transactions as t', 't.id', 'e.policy_transaction_id')
      .select('e.*', 't.refunds as ledger_refunds', 't.failure_reason as ledger_failure_reason');
  return {
    async saveQuote(
      e: Pick<
        StoredEndorsement,
        | 'quoteId'
        | 'purchaseId'
        | 'apiKeyId'
        | 'changes'
        | 'currency'
        | 'premiumDifferenceMinor'
        | 'platformFeeDifferenceMinor'
        | 'taxDifferenceMinor'
        | 'totalDifferenceMinor'
        | 'reissues'
        | 'fingerprint'
        | 'additions'
        | 'holderPremiums'
        | 'expiresAt'
      >,
    ): Promise<StoredEndorsement> {
      const [row] = await db('endorsements')
        .insert({
          quote_id: e.quoteId,
          purchase_id: e.purchaseId,
          api_key_id: e.apiKeyId,
          status: 'quoted',
          changes: JSON.stringify(e.changes),
          currency: e.currency,
          premium_difference_minor: e.premiumDifferenceMinor,
          platform_fee_difference_minor: e.platformFeeDifferenceMinor,
          tax_difference_minor: e.taxDifferenceMinor,
          total_difference_minor: e.totalDifferenceMinor,
          reissues: JSON.stringify(e.reissues),
          fingerprint: e.fingerprint,
          additions: e.additions.length ? JSON.stringify(e.additions) : null,
          holder_premiums: e.holderPremiums.length ? JSON.stringify(e.holderPremiums) : null,
          expires_at: e.expiresAt,
        })
        .returning('*');
      return toEndorsement(row);
    },

    async findByQuote(quoteId: string, opts: { forUpdate?: boolean } = {}): Promise<StoredEndorsement | undefined> {
      const q = read().where('e.quote_id', quoteId);
      if (opts.forUpdate) q.forUpdate('e');
      const row = await q.first();
      return row ? toEndorsement(row) : undefined;
    },

    /** The purchase's endorsements carried out, oldest first. */
    async applied(purchaseId: number): Promise<StoredEndorsement[]> {
      return (await read().where({ 'e.purchase_id': purchaseId, 'e.status': 'applied' }).orderBy('e.applied_at')).map(toEndorsement);
    },

    /**
     * Marks quote `quoteId` applied at `at` with the certificates it reissued and, for one that
     * collected premium, its ledger row (once; a quote paid for is applied from `awaiting_payment`).
     */
    async markApplied(
      quoteId: string,
      reissued: Array<{ from: string; to: string }>,
      at: Date,
      policyTransactionId: number | null = null,
    ): Promise<StoredEndorsement> {
      await db('endorsements')
        .where({ quote_id: quoteId })
        .whereIn('status', ['quoted', 'awaiting_payment'])
        .update({ status: 'applied', reissued: JSON.stringify(reissued), applied_at: at, policy_transaction_id: policyTransactionId });
      return toEndorsement(await read().where('e.quote_id', quoteId).first());
    },

    /** The difference of quote `quoteId` is being collected by `method` (from `quoted`; a repeat changes nothing). */
    async startPayment(
      quoteId: string,
      payment: { method: 'saved_card' | 'checkout_link'; paymentMethodId: string | null },
    ): Promise<void> {
      await db('endorsements')
        .where({ quote_id: quoteId, status: 'quoted' })
        .update({ status: 'awaiting_payment', payment_method: payment.method, payment_method_id: payment.paymentMethodId });
    },

    /** The payment intent that collects (or collected) quote `quoteId`'s difference, as soon as it is known. */
    async recordPaymentIntent(quoteId: string, paymentIntentId: string): Promise<void> {
      await db('endorsements').where({ quote_id: quoteId }).update({ payment_intent_id: paymentIntentId });
    },

    /** The checkout session sent for quote `quoteId`'s difference. */
    async recordCheckout(quoteId: string, s: { sessionId: string; url: string; expiresAt: Date }): Promise<void> {
      await db('endorsements')
        .where({ quote_id: quoteId })
        .update({ checkout_session_id: s.sessionId, checkout_url: s.url, checkout_expires_at: s.expiresAt });
    },

    /** Quote `quoteId`'s difference was paid (by `paymentIntentId`, at `at`); once. */
    async markPaid(quoteId: string, paymentIntentId: string | null, at: Date): Promise<void> {
      await db('endorsements')
        .where({ quote_id: quoteId, status: 'awaiting_payment' })
        .whereNull('paid_at')
        .update({ paid_at: at, payment_intent_id: db.raw('coalesce(?, payment_intent_id)', [paymentIntentId]) });
    },

    /** The saved card was declined (`payment_failed`) or a payment went back because the quote no longer held (`refunded`). */
    async markEnded(quoteId: string, status: 'payment_failed' | 'refunded', failure: { code: string; message: string }): Promise<void> {
      await db('endorsements')
        .where({ quote_id: quoteId, status: 'awaiting_payment' })
        .update({ status, failure_code: failure.code.slice(0, 64), failure_message: failure.message.slice(0, 1000) });
    },

    /** The endorsement whose difference checkout session `sessionId` collects. */
    async findByCheckoutSession(sessionId: string): Promise<StoredEndorsement | undefined> {
      const row = await read().where('e.checkout_session_id', sessionId).first();
      return row ? toEndorsement(row) : undefined;
    },

    /** The longest trip (days) each of `productLineIds` allows: its question set's trips question (90 when it names none). */
    async maxTripDays(productLineIds: number[]): Promise<Map<number, number>> {
      const rows = productLineIds.length
        ? await db('product_lines as pl')
            .leftJoin('question_sets as qs', 'qs.id', 'pl.question_set_id')
            .whereIn('pl.id', productLineIds)
            .select('pl.id', 'qs.definition')
        : [];
      return new Map(
        rows.map((r) => {
          const questions: Array<{ kind?: string; max_trip_days?: number }> = r.definition?.questions ?? [];
          return [Number(r.id), questions.find((q) => q.kind === 'trips')?.max_trip_days ?? 90];
        }),
      );
    },

    /**
     * A buyer's erasure on purchases `purchaseIds`, in `trx`: in their endorsements' `changes`, every
     * whole JSON string value equal to a pair's first element becomes its second (the buyer's
     * emails and names replaced by their placeholders).
     */
    eraseBuyerValues(trx: Knex.Transaction, purchaseIds: number[], replacements: Array<[string, string]>): Promise<void> {
      return replaceJsonStrings(trx, { table: 'endorsements', column: 'changes' }, purchaseIds, replacements);
    },
  };
}

export type EndorsementsRepository = ReturnType<typeof createEndorsementsRepository>;
