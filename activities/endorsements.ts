/**
 * Activities of the policy workflow for endorsements (workflows/policy.ts), run one at a time with
 * the purchase's other changes:
 *
 * - `applyEndorsement` checks a stored quote against the purchase as it is now (same digest of
 *   units, holders, named insureds and certificates; not expired) and, in one database
 *   transaction, makes its changes and replaces the certificates it touches by their next version
 *   (planned, rendered by the issuance rounds that follow). The same quote again answers the same
 *   endorsement. While the purchase's first certificates are being issued it answers `wait`.
 * - `endorsementReissued` publishes `certificates.reissued` (old → new numbers) once the new
 *   versions are stored, and `certificates.issued` (the purchase's certificates, sent again under
 *   this endorsement's own event id) when it added covered units.
 *
 * A priced endorsement (units added) is collected before it is applied:
 * - `beginEndorsementPayment` checks the quote as `applyEndorsement` does (not expired, not stale,
 *   still plannable) and marks it `awaiting_payment` with the method chosen;
 * - `chargeEndorsement` charges the buyer's saved card off-session for the total difference
 *   (minor units; idempotency key `endorsement-<quote>-charge`, the payment intent stored as soon as
 *   known); a decline comes back as data, an unknown outcome throws (retried with the same key);
 * - `createEndorsementCheckout` opens a checkout session for the difference instead (key
 *   `endorsement-<quote>-checkout`, open 24 hours), whose completion the API relays to the policy
 *   workflow (`endorsementPaid`), which records it with `recordEndorsementPaid`;
 * - `applyEndorsement` then applies a paid quote (a stale one refuses as for any quote), and
 *   `refundEndorsementPayment` gives a payment back in full (key `endorsement-<quote>-refund`) when
 *   the quote no longer holds once paid; `failEndorsementPayment` records a declined card.
 * A quote with a negative difference (a holder's paid endorsement removed) is applied with its
 * refund split over the purchase's payments (newest first, as a cancellation's) stored on its
 * ledger row in the same transaction; `refundEndorsementDifference` then creates each part at the
 * processor (keys `policy-transaction-<id>-refund`, `…-refund-<k>`), after the answer; a refusal
 * for good is kept on the ledger row (the change stays: the holder no longer has the endorsement).
 * The payments carry `endorsement_quote_id` and `endorsed_purchase_id` in their metadata, never
 * `purchase_id`, so the processor's events about them never reach the purchase's own workflow.
 *
 * Refusals are non-retryable failures whose type is the API's error code:
 * ENDORSEMENT_QUOTE_NOT_FOUND, ENDORSEMENT_QUOTE_EXPIRED, ENDORSEMENT_QUOTE_STALE,
 * PURCHASE_NOT_CHANGEABLE, and the planning codes (COVERED_UNIT_STARTED, …).
 */
import { ApplicationFailure } from '@temporalio/common';
import type Stripe from 'stripe';
import type { Knex } from 'knex';
import type { Db } from '../src/db/knex';
import type { EventEmitter } from '../src/events/emitter';
import type { Payproc } from '../src/payproc/client';
import { customerBuyerOf, ensureBuyerCustomer } from '../src/payproc/customers';
import { idOf } from '../src/payproc/ids';
import { createBuyersRepository } from '../src/buyers/repository';
import { createPaymentsRepository } from '../src/payments/repository';
import { checkoutReturnUrls } from '../src/purchases/return-urls';
import type { StoredEndorsement } from '../src/endorsements/repository';
import { processorFailure } from './purchase';
import { createRefundParts } from './refund-parts';
import { createSaleRepository } from '../src/purchases/sale-repository';
import { createLedgerRepository } from '../src/purchases/ledger-repository';
import { createCertificatesRepository } from '../src/certificates/repository';
import { createCertificateHoldersRepository } from '../src/certificate-holders/repository';
import { createEndorsementsRepository } from '../src/endorsements/repository';
import { EndorsementError, loadEndorsementState, planEndorsement, stateFingerprint } from '../src/endorsements/planning';
import { policyClock } from '../src/purchases/cancellation-pricing';
import { changeRefusal } from '../src/purchases/rules';
import { createProductsRepository } from '../src/products/repository';
import { allocateRefund, RefundNotCoveredError } from '../src/purchases/refund-allocation';
import { PROCESSOR_TAX_LINE } from '../src/taxes/premium-tax';

export interface EndorsementActivityDeps {
  db: Db;
  payproc: Payproc;
  publicBaseUrl: string;
  events: Pick<EventEmitter, 'certificatesReissued' | 'certificatesIssuedByEndorsement'>;
  maxCoveredUnits: number;
  now?: () => Date;
}

/** How long the checkout link for an endorsement's difference stays open (s): the processor's longest. */
export const ENDORSEMENT_CHECKOUT_TTL_SECONDS = 86_400;

/** What `chargeEndorsement` answers: charged, or a definitive decline (nothing taken). */
export type EndorsementChargeResult = { ok: true; paymentIntentId: string } | { ok: false; code: string; message: string };

const refuse = (code: string, message: string): never => {
  throw ApplicationFailure.nonRetryable(message, code);
};

/** The metadata of an endorsement's payment: never `purchase_id` (see the module comment). */
const paymentMetadata = (e: StoredEndorsement) => ({ endorsement_quote_id: e.quoteId, endorsed_purchase_id: String(e.purchaseId) });

/**
 * The endorsement of quote `quoteId`, locked for the caller's transaction (`endorsements` made on
 * it); refused (non-retryable ENDORSEMENT_QUOTE_NOT_FOUND) unless it is one of `purchaseId`.
 */
async function lockedOfPurchase(
  endorsements: ReturnType<typeof createEndorsementsRepository>,
  input: { purchaseId: number; quoteId: string },
): Promise<StoredEndorsement> {
  const e = await endorsements.findByQuote(input.quoteId, { forUpdate: true });
  if (!e || e.purchaseId !== input.purchaseId)
    return refuse('ENDORSEMENT_QUOTE_NOT_FOUND', `quote ${input.quoteId} is not an endorsement quote of purchase ${input.purchaseId}`);
  return e;
}

export function createEndorsementActivities(deps: EndorsementActivityDeps) {
  const now = deps.now ?? (() => new Date());
  const endorsementsRepo = createEndorsementsRepository(deps.db);
  const customers = createPaymentsRepository(deps.db);
  const buyers = createBuyersRepository(deps.db);
  async function mustFind(quoteId: string): Promise<StoredEndorsement> {
    const e = await endorsementsRepo.findByQuote(quoteId);
    if (!e) return refuse('ENDORSEMENT_QUOTE_NOT_FOUND', `quote ${quoteId} does not exist`);
    return e;
  }
  /** The purchase, its processor client and the buyer's processor customer. */
  async function payer(e: StoredEndorsement) {
    const p = (await createSaleRepository(deps.db).findById(e.purchaseId))!;
    const stripe = deps.payproc.client(p.mode);
    const buyer = (await buyers.findById(p.buyerId))!;
    try {
      const customerId = await ensureBuyerCustomer(customers, stripe, customerBuyerOf(buyer), p.mode);
      return { p, stripe, customerId };
    } catch (err) {
      return processorFailure(err, () => undefined);
    }
  }
  /**
   * Re-plans stored quote `e` on purchase `purchaseId` as it is now, inside transaction `trx`:
   * `wait` while its first certificates are being issued; refuses (non-retryable, the API's code)
   * a purchase no longer in force, a quote whose purchase changed since (its digest), or a change
   * the plan no longer allows.
   */
  async function replan(trx: Knex.Transaction, e: StoredEndorsement, purchaseId: number, at: Date) {
    const sales = createSaleRepository(trx);
    const p = (await sales.findById(purchaseId))!;
    const refusal = changeRefusal(p, 'endorsement');
    if (refusal?.reason === 'not_in_force') refuse(refusal.code, refusal.message);
    if (refusal?.reason === 'certificates_issuing') return { kind: 'wait' as const };
    const state = await loadEndorsementState(
      {
        sales,
        ledger: createLedgerRepository(trx),
        holders: createCertificateHoldersRepository(trx),
        certificates: createCertificatesRepository(trx),
        endorsements: createEndorsementsRepository(trx),
        products: createProductsRepository(trx),
      },
      p,
      { maxCoveredUnits: deps.maxCoveredUnits },
    );
    if (stateFingerprint(state) !== e.fingerprint)
      refuse('ENDORSEMENT_QUOTE_STALE', `purchase ${p.id} changed since quote ${e.quoteId} was made: ask for a new one`);
    try {
      return { kind: 'planned' as const, p, plan: planEndorsement(state, e.changes, policyClock(p, at)) };
    } catch (err) {
      if (err instanceof EndorsementError) return refuse(err.code, err.message);
      throw err;
    }
  }

  return {
    /** Carries out endorsement quote `quoteId` of purchase `purchaseId`; answers the numbers reissued (old → new), or `wait`. */
    async applyEndorsement(input: {
      purchaseId: number;
      quoteId: string;
    }): Promise<{ kind: 'applied'; reissued: Array<{ from: string; to: string }>; refundDue?: boolean } | { kind: 'wait' }> {
      return deps.db.transaction(async (trx) => {
        const endorsements = createEndorsementsRepository(trx);
        const sales = createSaleRepository(trx);
        const ledger = createLedgerRepository(trx);
        const certificates = createCertificatesRepository(trx);
        const holders = createCertificateHoldersRepository(trx);
        const e = await lockedOfPurchase(endorsements, input);
        if (e.status === 'applied')
          return { kind: 'applied' as const, reissued: e.reissued ?? [], ...(e.totalDifferenceMinor < 0 ? { refundDue: true } : {}) };
        const at = now();
        const priced = e.totalDifferenceMinor > 0;
        if (priced && !e.paidAt)
          refuse('PAYMENT_REQUIRED', `quote ${e.quoteId} adds ${e.totalDifferenceMinor} minor units: its difference is collected first`);
        if (e.status !== 'quoted' && e.status !== 'awaiting_payment')
          refuse('ENDORSEMENT_QUOTE_EXPIRED', `quote ${e.quoteId} is ${e.status}: ask for a new one`);
        // A paid quote is applied whenever its payment arrives; the quote's own lifetime bounds only the choice to pay.
        if (!priced && e.expiresAt.getTime() <= at.getTime())
          refuse('ENDORSEMENT_QUOTE_EXPIRED', `quote ${e.quoteId} expired at ${e.expiresAt.toISOString()}: ask for a new one`);
        const planned = await replan(trx, e, input.purchaseId, at);
        if (planned.kind === 'wait') return planned;
        const { p, plan } = planned;
        if (plan.namedInsured) await sales.updateNamedInsured(p.id, plan.namedInsured);
        for (const d of plan.descriptions) await holders.updateDescription(d.certificateHolderId, d.description);
        for (const m of plan.moves) await sales.moveCoveredUnit(m.coveredUnitId, m);
        for (const h of plan.holderMarks) await holders.updateEndorsementMarks(h.certificateHolderId, h);
        let transactionId: number | null = null;
        if (e.additions.length > 0 || e.holderPremiums.length > 0) {
          // The units and premiums as quoted (and paid for): the plan above re-checked that they still hold.
          transactionId = (
            await ledger.recordEndorsementTransaction({
              purchaseId: p.id,
              apiKeyId: e.apiKeyId ?? p.apiKeyId,
              currency: p.currency,
              premiumMinor: e.premiumDifferenceMinor,
              platformFeeMinor: e.platformFeeDifferenceMinor,
              taxMinor: e.taxDifferenceMinor,
              paymentIntentId: e.paymentIntentId,
              effectiveAt: at,
              additions: e.additions,
              holderPremiums: e.holderPremiums.map(({ localLabel: _label, ...h }) => h),
            })
          ).transactionId;
          if (e.totalDifferenceMinor < 0) {
            // Split before anything is created, as a cancellation's refund is: newest payment first.
            let split;
            try {
              split = allocateRefund(
                0 - e.totalDifferenceMinor,
                await ledger.paymentsOf(p.id),
                await ledger.refundedByPaymentIntent(p.id, transactionId),
              );
            } catch (err) {
              if (err instanceof RefundNotCoveredError)
                return refuse('PURCHASE_NOT_CHANGEABLE', `purchase ${p.id} cannot give back ${0 - e.totalDifferenceMinor}: ${err.message}`);
              throw err;
            }
            await ledger.planEndorsementRefunds(transactionId, split);
          }
        }
        const reissued = await certificates.supersede(
          p.id,
          plan.supersede.all ? { all: true } : { holderIds: plan.supersede.holderIds, coveredUnitIds: plan.supersede.coveredUnitIds },
          at,
        );
        await endorsements.markApplied(e.quoteId, reissued, at, transactionId);
        return { kind: 'applied' as const, reissued, ...(e.totalDifferenceMinor < 0 ? { refundDue: true } : {}) };
      });
    },

    /**
     * Creates at the processor each part of applied quote `quoteId`'s refund (a negative
     * difference) not created yet, in order, recording each (see the module comment). Answers
     * `submitted`, or `failed` when the processor refused a part for good (kept on the ledger row);
     * outages throw and are retried with the same keys.
     */
    async refundEndorsementDifference(input: { quoteId: string }): Promise<'submitted' | 'failed' | 'nothing'> {
      const e = await mustFind(input.quoteId);
      if (e.status !== 'applied' || e.totalDifferenceMinor >= 0 || !e.policyTransactionId) return 'nothing';
      if (e.refundFailure) return 'failed';
      const sales = createSaleRepository(deps.db);
      const ledger = createLedgerRepository(deps.db);
      const p = (await sales.findById(e.purchaseId))!;
      const tx = e.policyTransactionId;
      try {
        await createRefundParts(
          deps.payproc.client(p.mode).refunds,
          tx,
          e.refunds ?? [],
          paymentMetadata(e),
          (index, refundId) => ledger.recordEndorsementRefundCreated(tx, index, refundId),
          () => undefined,
        );
      } catch (failure) {
        if (!(failure instanceof ApplicationFailure)) throw failure;
        await ledger.failEndorsementRefund(tx, failure.message);
        return 'failed';
      }
      return 'submitted';
    },

    /**
     * Starts collecting quote `quoteId`'s positive difference by `payment` (checked like
     * `applyEndorsement`, then `awaiting_payment`); answers `pay`, `applied` (already done), or `wait`.
     */
    async beginEndorsementPayment(input: {
      purchaseId: number;
      quoteId: string;
      payment: { method: 'saved_card'; paymentMethodId: string } | { method: 'checkout_link' };
    }): Promise<{ kind: 'pay' } | { kind: 'applied'; reissued: Array<{ from: string; to: string }> } | { kind: 'wait' }> {
      return deps.db.transaction(async (trx) => {
        const endorsements = createEndorsementsRepository(trx);
        const e = await lockedOfPurchase(endorsements, input);
        if (e.status === 'applied') return { kind: 'applied' as const, reissued: e.reissued ?? [] };
        if (e.totalDifferenceMinor <= 0)
          refuse('VALIDATION_ERROR', `quote ${e.quoteId} has nothing to collect: endorse it without payment`);
        if (e.status === 'awaiting_payment') {
          if (e.paymentMethod !== input.payment.method)
            refuse('ENDORSEMENT_PAYMENT_IN_PROGRESS', `quote ${e.quoteId} is already being paid by ${e.paymentMethod}`);
          return { kind: 'pay' as const };
        }
        if (e.status !== 'quoted')
          refuse(
            'ENDORSEMENT_QUOTE_EXPIRED',
            `quote ${e.quoteId} is ${e.status}${e.failureMessage ? ` (${e.failureMessage})` : ''}: ask for a new one`,
          );
        const at = now();
        if (e.expiresAt.getTime() <= at.getTime())
          refuse('ENDORSEMENT_QUOTE_EXPIRED', `quote ${e.quoteId} expired at ${e.expiresAt.toISOString()}: ask for a new one`);
        if ((await replan(trx, e, input.purchaseId, at)).kind === 'wait') return { kind: 'wait' as const };
        await endorsements.startPayment(e.quoteId, {
          method: input.payment.method,
          paymentMethodId: input.payment.method === 'saved_card' ? input.payment.paymentMethodId : null,
        });
        return { kind: 'pay' as const };
      });
    },

    /** Charges quote `quoteId`'s difference to the saved card it names, at most once (see the module comment). */
    async chargeEndorsement(input: { quoteId: string }): Promise<EndorsementChargeResult> {
      const e = await mustFind(input.quoteId);
      if (e.paidAt && e.paymentIntentId) return { ok: true, paymentIntentId: e.paymentIntentId };
      const { p, stripe, customerId } = await payer(e);
      let pi: Stripe.PaymentIntent;
      try {
        pi = e.paymentIntentId
          ? await stripe.paymentIntents.retrieve(e.paymentIntentId)
          : await stripe.paymentIntents.create(
              {
                amount: e.totalDifferenceMinor,
                currency: e.currency,
                customer: customerId,
                payment_method: e.paymentMethodId!,
                off_session: true,
                confirm: true,
                description: `Endorsement ${e.quoteId} of purchase ${p.id}`,
                metadata: paymentMetadata(e),
              },
              { idempotencyKey: `endorsement-${e.quoteId}-charge`, maxNetworkRetries: 0 },
            );
      } catch (err) {
        const type = (err as { type?: string }).type;
        if (type === 'StripeCardError' || type === 'StripeInvalidRequestError') {
          const code = (err as { decline_code?: string; code?: string }).decline_code ?? (err as { code?: string }).code ?? 'card_error';
          return { ok: false, code, message: `Payment processor: ${(err as Error).message}` };
        }
        return processorFailure(err, () => undefined);
      }
      await endorsementsRepo.recordPaymentIntent(e.quoteId, pi.id);
      if (pi.status === 'succeeded' || pi.status === 'processing') {
        await endorsementsRepo.markPaid(e.quoteId, pi.id, now());
        return { ok: true, paymentIntentId: pi.id };
      }
      const code = pi.last_payment_error?.decline_code ?? pi.last_payment_error?.code ?? pi.status;
      return {
        ok: false,
        code,
        message:
          pi.status === 'requires_action'
            ? 'Payment processor: the card needs the buyer to authenticate; endorse with a checkout link instead'
            : `Payment processor: the payment was not completed (${code})`,
      };
    },

    /** Records a declined card: the endorsement ends `payment_failed`, nothing changed. */
    async failEndorsementPayment(input: { quoteId: string; code: string; message: string }): Promise<void> {
      await endorsementsRepo.markEnded(input.quoteId, 'payment_failed', { code: input.code, message: input.message });
    },

    /** Opens (once) the checkout session for quote `quoteId`'s difference; answers its link and expiry. */
    async createEndorsementCheckout(input: { quoteId: string }): Promise<{ url: string; expiresAt: string }> {
      const e = await mustFind(input.quoteId);
      if (e.checkoutUrl && e.checkoutExpiresAt) return { url: e.checkoutUrl, expiresAt: e.checkoutExpiresAt.toISOString() };
      const { p, stripe, customerId } = await payer(e);
      const expiresAt = Math.floor(now().getTime() / 1000) + ENDORSEMENT_CHECKOUT_TTL_SECONDS;
      const returnUrls = checkoutReturnUrls({
        publicBaseUrl: deps.publicBaseUrl,
        purchaseId: p.id,
        returnToken: p.returnToken ?? '',
        configured: { successUrl: null, cancelUrl: null },
      });
      const units = e.additions.reduce((n, a) => n + a.units.length, 0);
      const lineItems: Stripe.Checkout.SessionCreateParams.LineItem[] = [
        {
          quantity: 1,
          price_data: {
            currency: e.currency,
            unit_amount: e.premiumDifferenceMinor,
            product_data: { name: `${units} covered ${units === 1 ? 'unit' : 'units'} added to purchase ${p.id}` },
          },
        },
      ];
      if (e.platformFeeDifferenceMinor > 0)
        lineItems.push({
          quantity: 1,
          price_data: { currency: e.currency, unit_amount: e.platformFeeDifferenceMinor, product_data: { name: 'Platform fee' } },
        });
      if (e.taxDifferenceMinor > 0)
        lineItems.push({
          quantity: 1,
          price_data: {
            currency: e.currency,
            unit_amount: e.taxDifferenceMinor,
            product_data: { name: 'Premium tax', metadata: { line: PROCESSOR_TAX_LINE } },
          },
        });
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.create(
          {
            mode: 'payment',
            line_items: lineItems,
            customer: customerId,
            client_reference_id: `endorsement-${e.quoteId}`,
            metadata: paymentMetadata(e),
            payment_intent_data: { metadata: paymentMetadata(e) },
            expires_at: expiresAt,
            success_url: returnUrls.successUrl,
            cancel_url: returnUrls.cancelUrl,
          },
          { idempotencyKey: `endorsement-${e.quoteId}-checkout` },
        );
      } catch (err) {
        return processorFailure(err, () => undefined);
      }
      const at = new Date(expiresAt * 1000);
      await endorsementsRepo.recordCheckout(e.quoteId, { sessionId: session.id, url: session.url ?? '', expiresAt: at });
      return { url: session.url ?? '', expiresAt: at.toISOString() };
    },

    /**
     * The checkout link of quote `quoteId` was paid: checks the session at the processor (complete
     * and paid) and records the payment. Answers false when the session is not paid (nothing recorded).
     */
    async recordEndorsementPaid(input: { quoteId: string }): Promise<boolean> {
      const e = await mustFind(input.quoteId);
      if (e.paidAt) return true;
      if (!e.checkoutSessionId) return false;
      const p = (await createSaleRepository(deps.db).findById(e.purchaseId))!;
      let s: Stripe.Checkout.Session;
      try {
        s = await deps.payproc.client(p.mode).checkout.sessions.retrieve(e.checkoutSessionId);
      } catch (err) {
        return processorFailure(err, () => undefined);
      }
      if (s.status !== 'complete' || (s.payment_status !== 'paid' && s.payment_status !== 'no_payment_required')) return false;
      await endorsementsRepo.markPaid(e.quoteId, idOf(s.payment_intent), now());
      return true;
    },

    /** Gives quote `quoteId`'s payment back in full (it could not be applied) and ends it `refunded`. */
    async refundEndorsementPayment(input: { quoteId: string; reason: string }): Promise<void> {
      const e = await mustFind(input.quoteId);
      if (e.status !== 'awaiting_payment') return;
      if (e.paymentIntentId) {
        const p = (await createSaleRepository(deps.db).findById(e.purchaseId))!;
        try {
          await deps.payproc
            .client(p.mode)
            .refunds.create(
              { payment_intent: e.paymentIntentId, reason: 'requested_by_customer', metadata: paymentMetadata(e) },
              { idempotencyKey: `endorsement-${e.quoteId}-refund` },
            );
        } catch (err) {
          return processorFailure(err, () => undefined);
        }
      }
      await endorsementsRepo.markEnded(e.quoteId, 'refunded', { code: 'ENDORSEMENT_NOT_APPLIED', message: input.reason });
    },

    /** Publishes `certificates.reissued` (new versions) and `certificates.issued` (units added) for endorsement quote `quoteId`, once its certificates are stored. */
    async endorsementReissued(input: { purchaseId: number; quoteId: string }): Promise<void> {
      const e = await endorsementsRepo.findByQuote(input.quoteId);
      if (!e || e.status !== 'applied') return;
      if ((e.reissued?.length ?? 0) > 0) await deps.events.certificatesReissued(e);
      if (e.additions.length > 0) await deps.events.certificatesIssuedByEndorsement(e);
    },
  };
}

export type EndorsementActivities = ReturnType<typeof createEndorsementActivities>;
