/**
 * Activities of the policy workflow (workflows/policy.ts): the changes to a purchase after its
 * sale, one at a time. Today: cancellations.
 *
 * - `acceptCancellation` checks a stored quote against the purchase as it is now and, when it
 *   still holds, records the cancellation and takes its covered units (answered to the caller at
 *   once); while the purchase's certificates are still being issued it answers `wait`.
 * - A cancellation dated after the purchase's now (its test clock for a test purchase that has
 *   one) is accepted `scheduled`; `startScheduledCancellation` makes it due when its time came,
 *   `rescindCancellation` withdraws it before that (its units given back).
 * - `createCancellationRefund` splits the refund over the purchase's payments (the sale's payment
 *   intent, then one per priced endorsement): newest payment first, net of what the purchase's
 *   other cancellations take (src/purchases/refund-allocation.ts). The split is stored once, then
 *   each part is created at the processor with an idempotency key of the cancellation's own
 *   (`policy-transaction-<id>-refund` for the first, `…-refund-<k>` for the k-th, k ≥ 2), so a
 *   retried call never refunds twice and a purchase paid once sends the one refund it always did.
 * - `cancellationRefundStatus` asks the processor how the refund stands: every part succeeded,
 *   any part failed, or still pending.
 * - `completeCancellation` cancels the units, voids their certificates, gives the purchase the
 *   status its units now tell (`partly_cancelled`, or `cancelled` once every unit is: the owner's
 *   decision, answered to the workflow, which publishes it as PurchaseStatus) and publishes
 *   `refund.succeeded`, `certificates.voided` and `purchase.cancelled`; `failCancellation` records a
 *   refund the processor refused for good and publishes `refund.failed`;
 *   `reopenUnfinishedCancellations` puts those (and stalled ones) back for an operator's retry.
 *
 * Refusals are non-retryable failures whose type is the API's error code
 * (CANCELLATION_QUOTE_NOT_FOUND, CANCELLATION_QUOTE_EXPIRED, CANCELLATION_QUOTE_STALE,
 * PURCHASE_ALREADY_CANCELLED, PURCHASE_NOT_CANCELLABLE, CANCELLATION_NOT_FOUND,
 * CANCELLATION_NOT_RESCINDABLE); processor outages retry. Amounts in
 * minor units.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../src/db/knex';
import type { EventEmitter } from '../src/events/emitter';
import type { WorkerMetrics } from '../src/metrics/registry';
import type { Payproc } from '../src/payproc/client';
import { CoveredUnitTakenError, type StoredCancellation } from '../src/purchases/ledger-record';
import { createSaleRepository } from '../src/purchases/sale-repository';
import { createLedgerRepository } from '../src/purchases/ledger-repository';
import { createCertificatesRepository } from '../src/certificates/repository';
import { policyClock, priceCancellationOf, storeCancellationQuote } from '../src/purchases/cancellation-pricing';
import { isInForce } from '../src/purchases/rules';
import { RefundRuleError } from '../src/purchases/refund-rule';
import { allocateRefund, RefundNotCoveredError } from '../src/purchases/refund-allocation';
import { processorFailure } from './purchase';
import { createRefundParts } from './refund-parts';
import type { CancellationAccepted, PurchaseStatus, SubscriptionCancelInput, SubscriptionChange } from '../workflows/contracts';

export interface PolicyActivityDeps {
  db: Db;
  payproc: Payproc;
  events: Pick<EventEmitter, 'cancelled' | 'cancellationRefundFailed' | 'subscriptionCancelled'>;
  metrics?: Pick<WorkerMetrics, 'dependencyErrors'>;
  now?: () => Date;
}

const refuse = (code: string, message: string): never => {
  throw ApplicationFailure.nonRetryable(message, code);
};

/** The processor's refund status, as the workflow needs it. */
export type RefundState = 'pending' | 'succeeded' | 'failed';

export function createPolicyActivities(deps: PolicyActivityDeps) {
  const sales = createSaleRepository(deps.db);
  const ledger = createLedgerRepository(deps.db);
  const certificates = createCertificatesRepository(deps.db);
  const now = deps.now ?? (() => new Date());
  /** Counts a processor failure of an activity acting on a purchase of `mode`. */
  const counter = (mode: 'live' | 'test') => (operation: string) =>
    deps.metrics?.dependencyErrors.inc({ dependency: 'processor', mode, operation });
  const view = (c: StoredCancellation, testClockAt: Date | null = null): CancellationAccepted => ({
    cancellationId: c.id,
    status: c.status,
    totalMinor: c.totalMinor,
    effectiveAt: c.effectiveAt.toISOString(),
    testClockAt: testClockAt?.toISOString() ?? null,
  });

  async function mustFind(cancellationId: number): Promise<StoredCancellation> {
    const c = await ledger.findCancellation(cancellationId);
    if (!c) return refuse('CANCELLATION_NOT_FOUND', `cancellation ${cancellationId} does not exist`);
    return c;
  }

  return {
    async acceptCancellation(input: {
      purchaseId: number;
      quoteId: string;
    }): Promise<{ kind: 'accepted'; cancellation: CancellationAccepted } | { kind: 'wait'; status: string }> {
      const earlier = await ledger.findCancellationByQuote(input.quoteId);
      if (earlier) {
        if (earlier.purchaseId !== input.purchaseId)
          refuse('CANCELLATION_QUOTE_NOT_FOUND', `quote ${input.quoteId} is not a quote of purchase ${input.purchaseId}`);
        return { kind: 'accepted', cancellation: view(earlier, (await sales.findById(input.purchaseId))?.testClockAt ?? null) };
      }
      const quote = await ledger.findCancellationQuote(input.quoteId);
      if (!quote || quote.purchaseId !== input.purchaseId)
        return refuse('CANCELLATION_QUOTE_NOT_FOUND', `quote ${input.quoteId} is not a quote of purchase ${input.purchaseId}`);
      if (quote.expiresAt.getTime() <= now().getTime())
        refuse('CANCELLATION_QUOTE_EXPIRED', `quote ${quote.id} expired at ${quote.expiresAt.toISOString()}: ask for a new one`);
      const p = await sales.findById(input.purchaseId);
      if (!p) return refuse('NOT_FOUND', `purchase ${input.purchaseId} does not exist`);
      if (p.status === 'refunded') refuse('PURCHASE_ALREADY_CANCELLED', `purchase ${p.id} was refunded in full: nothing is left to cancel`);
      if (p.status === 'cancelled') refuse('NOTHING_TO_CANCEL', `purchase ${p.id} is cancelled: every covered unit was cancelled already`);
      if (p.status === 'paid' || p.status === 'awaiting_certificates') return { kind: 'wait', status: p.status };
      if (p.status !== 'issued' && p.status !== 'partly_cancelled')
        refuse('PURCHASE_NOT_CANCELLABLE', `purchase ${p.id} is ${p.status}: only a paid purchase can be cancelled`);
      const [items, cancellations, { charges, saleDashboardRefundedMinor: saleDashboard }] = await Promise.all([
        sales.itemDetails(p.id),
        ledger.cancellations(p.id),
        ledger.chargesAndSaleDashboardRefund(p),
      ]);
      let priced;
      try {
        priced = priceCancellationOf(
          p,
          items,
          cancellations,
          // A quote priced as the buyer's withdrawal is repriced as one (its method says so).
          {
            unitIds: quote.coveredUnitIds,
            requestedBy: quote.requestedBy,
            effectiveAt: quote.effectiveAt,
            withdrawal: quote.method === 'withdrawal',
          },
          charges,
          saleDashboard,
        );
      } catch (err) {
        if (err instanceof RefundRuleError) return refuse('CANCELLATION_QUOTE_STALE', `quote ${quote.id} no longer holds: ${err.message}`);
        throw err;
      }
      if (
        priced.totalMinor !== quote.totalMinor ||
        priced.premiumMinor !== quote.premiumMinor ||
        priced.platformFeeMinor !== quote.platformFeeMinor
      ) {
        refuse(
          'CANCELLATION_QUOTE_STALE',
          `quote ${quote.id} no longer holds: the refund is now ${priced.totalMinor}, not ${quote.totalMinor}`,
        );
      }
      try {
        const accepted = await ledger.acceptCancellation({
          purchaseId: p.id,
          quoteId: quote.id,
          apiKeyId: quote.apiKeyId,
          requestedBy: quote.requestedBy,
          reason: quote.reason,
          coveredUnitIds: quote.coveredUnitIds,
          effectiveAt: quote.effectiveAt,
          currency: quote.currency,
          premiumMinor: quote.premiumMinor,
          taxMinor: quote.taxMinor,
          platformFeeMinor: quote.platformFeeMinor,
          totalMinor: quote.totalMinor,
          breakdown: quote.breakdown,
          // Dated after the purchase's now (its test clock, if it has one): a durable timer carries it out then.
          scheduled: quote.effectiveAt.getTime() > (p.testClockAt ?? now()).getTime(),
        });
        return { kind: 'accepted', cancellation: view(accepted, p.testClockAt) };
      } catch (err) {
        if (err instanceof CoveredUnitTakenError)
          return refuse('CANCELLATION_QUOTE_STALE', `quote ${quote.id} no longer holds: ${err.message}`);
        throw err;
      }
    },

    /**
     * Ends a subscription at the processor and records it on its first purchase:
     * `at_period_end` sets the processor subscription to cancel at the period's end (renewals stop),
     * `now` cancels it at once. Idempotency keys of the subscription's own, so a retry changes
     * nothing twice; a subscription the processor no longer has (ended there) counts as ended. A
     * purchase paid without a processor subscription (the test helper) is only recorded.
     * Publishes `subscription.cancelled` once, when the record changed. Refuses
     * NOT_FOUND (not a subscription's first purchase); processor outages retry.
     */
    async endSubscription(input: Pick<SubscriptionCancelInput, 'subscriptionPurchaseId' | 'at'>): Promise<void> {
      const first = await sales.findById(input.subscriptionPurchaseId);
      if (!first || first.billing !== 'subscription' || first.renewalOfPurchaseId !== null)
        return refuse('NOT_FOUND', `purchase ${input.subscriptionPurchaseId} is not a subscription`);
      if (first.payprocSubscriptionId && !first.subscriptionEndedAt) {
        const subscriptions = deps.payproc.client(first.mode).subscriptions;
        try {
          if (input.at === 'now')
            await subscriptions.cancel(first.payprocSubscriptionId, {}, { idempotencyKey: `subscription-${first.id}-cancel-now` });
          else
            await subscriptions.update(
              first.payprocSubscriptionId,
              { cancel_at_period_end: true },
              { idempotencyKey: `subscription-${first.id}-cancel-at-period-end` },
            );
        } catch (err) {
          const code = (err as { code?: string }).code;
          // Already gone at the processor (ended there): nothing left to stop.
          if (code !== 'resource_missing') processorFailure(err, counter(first.mode));
        }
      }
      const changed = await sales.recordSubscriptionEnd(
        first.id,
        input.at === 'now' ? { endedAt: now(), by: 'agency' } : { atPeriodEnd: true, by: 'agency' },
      );
      if (changed) await deps.events.subscriptionCancelled(first.id);
    },

    /**
     * Quotes the cancellation of every covered unit of `purchaseId` (a subscription's current
     * period) not started by the purchase's now, asked by the agency, by the terms it was bought
     * with; null when nothing is left to cancel (every unit started, or already cancelled).
     */
    async quoteSubscriptionPeriodCancellation(input: {
      purchaseId: number;
      apiKeyId: number;
      reason: string | null;
    }): Promise<string | null> {
      const p = await sales.findById(input.purchaseId);
      if (!p || !isInForce(p.status)) return null;
      const realNow = now();
      const clock = policyClock(p, realNow);
      try {
        const quote = await storeCancellationQuote(
          { sales, ledger },
          p,
          { requestedBy: 'agency', effectiveAt: clock, apiKeyId: input.apiKeyId, reason: input.reason ?? 'subscription cancelled' },
          clock,
          realNow,
        );
        return quote.id;
      } catch (err) {
        if (err instanceof RefundRuleError) return null;
        throw err;
      }
    },

    /** The processor changed the subscription by itself (dashboard, unpaid invoice, period end reached): recorded, and announced once. */
    async recordSubscriptionChange(input: SubscriptionChange): Promise<void> {
      const ended = input.ended ? { endedAt: input.endedAt ? new Date(input.endedAt) : now(), by: 'processor' as const } : null;
      let changed = false;
      if (input.cancelAtPeriodEnd)
        changed = (await sales.recordSubscriptionEnd(input.subscriptionPurchaseId, { atPeriodEnd: true, by: 'processor' })) || changed;
      if (ended) changed = (await sales.recordSubscriptionEnd(input.subscriptionPurchaseId, ended)) || changed;
      if (changed) await deps.events.subscriptionCancelled(input.subscriptionPurchaseId);
    },

    /** A scheduled cancellation's time came: true when it is now due (accepted), false when it was rescinded meanwhile. */
    async startScheduledCancellation(input: { cancellationId: number }): Promise<boolean> {
      return ledger.startScheduledCancellation(input.cancellationId);
    },

    /**
     * Rescinds a scheduled cancellation: its units given back, nothing refunded. A repeat answers
     * the same. Refuses CANCELLATION_NOT_FOUND (not a cancellation of this purchase) and
     * CANCELLATION_NOT_RESCINDABLE (no longer scheduled: its effective time came).
     */
    async rescindCancellation(input: { purchaseId: number; cancellationId: number }): Promise<CancellationAccepted> {
      const c = await ledger.findCancellation(input.cancellationId);
      if (!c || c.purchaseId !== input.purchaseId)
        return refuse('CANCELLATION_NOT_FOUND', `purchase ${input.purchaseId} has no cancellation ${input.cancellationId}`);
      const after = (await ledger.rescindCancellation(c.id))!;
      if (after.status !== 'rescinded')
        refuse(
          'CANCELLATION_NOT_RESCINDABLE',
          `cancellation ${c.id} is ${after.status}: only a cancellation still scheduled can be rescinded`,
        );
      return view(after);
    },

    /**
     * Creates the refund of a due cancellation at the processor (see the module docstring): plans
     * the split over the purchase's payments once, then creates each part not created yet, in
     * order, recording each as it is created. Returns the first part's refund id (null when
     * nothing is due). Refuses REFUND_REJECTED (no payment to refund, the payments cannot cover
     * the refund, the processor refuses it); processor outages retry.
     */
    async createCancellationRefund(input: { cancellationId: number }): Promise<{ refundId: string | null }> {
      const c = await mustFind(input.cancellationId);
      // Refunded before refunds could be split (one refund, `refund_id` alone), or done.
      if ((c.refundId && !c.refunds) || c.status === 'completed') return { refundId: c.refundId };
      if (c.totalMinor === 0) {
        await ledger.markCancellationRefundPending(c.id, null);
        return { refundId: null };
      }
      const p = (await sales.findById(c.purchaseId))!;
      let plan = c.refunds;
      if (!plan) {
        const payments = await ledger.paymentsOf(p.id);
        if (payments.length === 0) return refuse('REFUND_REJECTED', `purchase ${p.id} has no payment intent to refund`);
        let split;
        try {
          split = allocateRefund(c.totalMinor, payments, await ledger.refundedByPaymentIntent(p.id, c.id));
        } catch (err) {
          if (err instanceof RefundNotCoveredError) return refuse('REFUND_REJECTED', `cancellation ${c.id}: ${err.message}`);
          throw err;
        }
        plan = await ledger.planCancellationRefunds(c.id, split);
      }
      let first;
      try {
        first = await createRefundParts(
          deps.payproc.client(p.mode).refunds,
          c.id,
          plan,
          { purchase_id: String(p.id), cancellation_id: String(c.id) },
          (index, refundId) => ledger.recordCancellationRefundCreated(c.id, index, refundId),
          counter(p.mode),
        );
      } catch (failure) {
        if (failure instanceof ApplicationFailure) throw ApplicationFailure.nonRetryable(failure.message, 'REFUND_REJECTED');
        throw failure;
      }
      return { refundId: first };
    },

    /**
     * How the cancellation's refund stands at the processor: `succeeded` when every part created
     * succeeded (or nothing was due), `failed` when any part failed or was canceled, else
     * `pending`. Processor outages retry.
     */
    async cancellationRefundStatus(input: { cancellationId: number }): Promise<RefundState> {
      const c = await mustFind(input.cancellationId);
      const ids = c.refunds ? c.refunds.map((r) => r.refundId) : c.refundId ? [c.refundId] : [];
      if (ids.length === 0) return 'succeeded'; // nothing was due
      const p = (await sales.findById(c.purchaseId))!;
      const refunds = deps.payproc.client(p.mode).refunds;
      let state: RefundState = 'succeeded';
      for (const id of ids) {
        // A part not created yet (createCancellationRefund creates them all before this is asked).
        if (!id) {
          state = 'pending';
          continue;
        }
        let refund;
        try {
          refund = await refunds.retrieve(id);
        } catch (err) {
          return processorFailure(err, counter(p.mode));
        }
        if (refund.status === 'failed' || refund.status === 'canceled') return 'failed';
        if (refund.status !== 'succeeded') state = 'pending';
      }
      return state;
    },

    /**
     * Completes cancellation `cancellationId` (idempotent) and answers it with the purchase's
     * status after it (`purchaseStatus`: `partly_cancelled` or `cancelled` once its units say so;
     * the status it has otherwise, e.g. `refunded`).
     */
    async completeCancellation(input: { cancellationId: number }): Promise<CancellationAccepted & { purchaseStatus?: PurchaseStatus }> {
      // Certificates voided before the cancellation is marked completed, so a reader who sees it completed sees them voided (a retry voids nothing twice).
      const c = await mustFind(input.cancellationId);
      await certificates.voidForUnits(c.coveredUnitIds, c.effectiveAt);
      const done = await ledger.completeCancellation(input.cancellationId);
      // The status the completion gave the purchase (in its transaction): what `purchase.cancelled` shows.
      const settled = await sales.findById(done.purchaseId);
      const numbers = (await certificates.listForPurchase(done.purchaseId))
        .filter((x) => done.coveredUnitIds.includes(x.coveredUnitId))
        .map((x) => x.certificateNumber);
      await deps.events.cancelled(done, numbers);
      return { ...view(done), ...(settled ? { purchaseStatus: settled.status } : {}) };
    },

    async failCancellation(input: { cancellationId: number; reason: string }): Promise<void> {
      await ledger.failCancellation(input.cancellationId, input.reason);
      const failed = await ledger.findCancellation(input.cancellationId);
      if (failed?.status === 'refund_failed') await deps.events.cancellationRefundFailed(failed);
    },

    /** An operator's retry: refused cancellations back to `accepted`; the ids of every unfinished one. */
    async reopenUnfinishedCancellations(input: { purchaseId: number }): Promise<number[]> {
      return ledger.reopenUnfinishedCancellations(input.purchaseId);
    },
  };
}

export type PolicyActivities = ReturnType<typeof createPolicyActivities>;
