/**
 * Endorsements of a purchase (mid-term changes): `quote` previews a change (stored as `eq_…` for
 * 15 minutes: the premium difference, the certificates it would reissue) and `endorse` carries a
 * quote out through the purchase's policy workflow (one change of a purchase at a time with its
 * cancellations and holder changes; the new certificate versions are issued after the answer).
 * The rules are ./planning.ts's, shared with the workflow's activity.
 *
 * Errors (AppError): NOT_FOUND (another account's, mode's or teammate's purchase; an unknown or
 * removed certificate holder); VALIDATION_ERROR (a move that is in the past, overlaps, or does
 * not fit the unit's kind); UNKNOWN_COVERED_UNIT (400); COVERED_UNIT_STARTED,
 * COVERED_UNIT_ALREADY_CANCELLED, NOTHING_TO_ENDORSE, PURCHASE_NOT_CHANGEABLE (409, also while the
 * purchase's certificates are still being issued); ENDORSEMENT_QUOTE_NOT_FOUND (404),
 * ENDORSEMENT_QUOTE_EXPIRED and ENDORSEMENT_QUOTE_STALE (409, from the workflow);
 * CONNECTION_ERROR (503) when the workflow does not answer in time.
 */
import { randomBytes } from 'node:crypto';
import { DateTime } from 'luxon';
import type { Principal } from '../api-keys/service';
import { AppError } from '../shared/errors';
import type { CertificatesRepository } from '../certificates/repository';
import type { CertificateHoldersRepository } from '../certificate-holders/repository';
import type { PurchaseRecord } from '../purchases/purchase-record';
import type { SaleRepository } from '../purchases/sale-repository';
import type { LedgerRepository } from '../purchases/ledger-repository';
import type { PurchaseWorkflows } from '../purchases/workflow-client';
import type { ProductsRepository } from '../products/repository';
import { policyClock } from '../purchases/cancellation-pricing';
import { changeRefusal } from '../purchases/rules';
import { ownedPurchase } from '../purchases/service';
import {
  ENDORSEMENT_QUOTE_TTL_MS,
  EndorsementError,
  loadEndorsementState,
  planEndorsement,
  stateFingerprint,
  type ReissueWindow,
} from './planning';
import type { EndorsementsRepository, StoredEndorsement } from './repository';
import type { Endorsement, EndorsementPayment, EndorsementQuoteRequest } from './schemas';

/**
 * A reissued certificate's window on the wire: instants ISO 8601 with the unit's own UTC offset
 * (e.g. `2027-05-09T00:00:00.000-05:00`), its IANA zone and local label.
 */
function windowObject(w: ReissueWindow) {
  const local = (iso: string) => DateTime.fromISO(iso, { zone: 'utc' }).setZone(w.timeZone).toISO()!;
  return { starts_at: local(w.startsAt), ends_at: local(w.endsAt), time_zone: w.timeZone, local_label: w.localLabel };
}

/**
 * The wire form of stored endorsement `e` of purchase `p` at `at`. An open checkout link whose
 * time ran out unpaid reads `payment_failed` (code `checkout_expired`): it can no longer be paid.
 */
export function toEndorsement(e: StoredEndorsement, p: Pick<PurchaseRecord, 'totalMinor'>, at: Date = new Date()): Endorsement {
  const linkExpired =
    e.status === 'awaiting_payment' && !e.paidAt && e.checkoutExpiresAt !== null && e.checkoutExpiresAt.getTime() <= at.getTime();
  const failure = linkExpired
    ? { code: 'checkout_expired', message: 'The checkout link expired unpaid: nothing changed; ask for a new quote' }
    : e.failureCode
      ? { code: e.failureCode, message: e.failureMessage ?? '' }
      : null;
  return {
    object: e.status === 'applied' ? 'endorsement' : 'endorsement_quote',
    id: e.quoteId,
    purchase_id: e.purchaseId,
    status: linkExpired ? 'payment_failed' : e.status,
    changes: e.changes,
    currency: e.currency,
    premium_difference: e.premiumDifferenceMinor,
    platform_fee_difference: e.platformFeeDifferenceMinor,
    tax_difference: e.taxDifferenceMinor,
    total_difference: e.totalDifferenceMinor,
    new_amount_total: e.status === 'applied' ? p.totalMinor : p.totalMinor + e.totalDifferenceMinor,
    reissues: e.reissues.map((r) => ({
      certificate_number: r.certificateNumber,
      covered_unit_id: r.coveredUnitId,
      certificate_holder_id: r.certificateHolderId,
      current_window: windowObject(r.currentWindow),
      new_window: windowObject(r.newWindow),
    })),
    reissued: e.reissued,
    added_covered_units: e.additions.flatMap((a) =>
      a.units.map((u) => ({
        purchase_item_id: a.itemId,
        local_label: u.localLabel,
        starts_at: u.startsAt.toISOString(),
        ends_at: u.endsAt.toISOString(),
        premium: u.premiumMinor,
      })),
    ),
    holder_endorsement_premiums: [
      ...e.holderPremiums.map((h) => ({
        certificate_holder_id: h.certificateHolderId,
        endorsement: h.endorsement,
        covered_unit_id: h.unitId,
        local_label: h.localLabel,
        premium: h.premiumMinor,
      })),
      ...e.additions.flatMap((a) =>
        a.units.flatMap((u) =>
          (u.holderPremiums ?? []).map((h) => ({
            certificate_holder_id: h.certificateHolderId,
            endorsement: h.endorsement,
            covered_unit_id: null,
            local_label: u.localLabel,
            premium: h.premiumMinor,
          })),
        ),
      ),
    ],
    refund:
      e.totalDifferenceMinor < 0 && e.status === 'applied'
        ? {
            amount: 0 - e.totalDifferenceMinor,
            status: e.refundFailure ? 'failed' : e.refunds && e.refunds.every((r) => r.refundId) ? 'submitted' : 'pending',
            refunds: (e.refunds ?? []).map((r) => ({ refund_id: r.refundId, payment_intent: r.paymentIntentId, amount: r.amountMinor })),
            failure_reason: e.refundFailure,
          }
        : null,
    payment: e.paymentMethod
      ? {
          method: e.paymentMethod,
          payment_intent: e.paymentIntentId,
          checkout_url: e.checkoutUrl,
          checkout_expires_at: e.checkoutExpiresAt?.toISOString() ?? null,
          paid_at: e.paidAt?.toISOString() ?? null,
          failure,
        }
      : null,
    expires_at: e.expiresAt.toISOString(),
    created_at: e.createdAt.toISOString(),
    applied_at: e.appliedAt?.toISOString() ?? null,
  };
}

export function createEndorsementService(deps: {
  sales: SaleRepository;
  ledger: LedgerRepository;
  holders: CertificateHoldersRepository;
  certificates: CertificatesRepository;
  endorsements: EndorsementsRepository;
  products: Pick<ProductsRepository, 'endorsementTerms'>;
  workflows: Pick<PurchaseWorkflows, 'endorse'>;
  /** Most covered units one item may hold (MAX_COVERED_UNITS, as for a quote). */
  maxCoveredUnits: number;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  const owned = (principal: Principal, id: number) => ownedPurchase(deps.sales, principal, id);

  return {
    /** Refuses (404 NOT_FOUND) a purchase outside the key's scope: routes check it before the body, so another account's id reads 404 whatever is sent. */
    async assertOwned(principal: Principal, purchaseId: number): Promise<void> {
      await owned(principal, purchaseId);
    },

    /** Endorsement (or quote) `quoteId` of purchase `purchaseId` as it stands now. Errors: NOT_FOUND, ENDORSEMENT_QUOTE_NOT_FOUND. */
    async get(principal: Principal, purchaseId: number, quoteId: string): Promise<Endorsement> {
      const p = await owned(principal, purchaseId);
      const e = await deps.endorsements.findByQuote(quoteId);
      if (!e || e.purchaseId !== p.id)
        throw new AppError('ENDORSEMENT_QUOTE_NOT_FOUND', `quote ${quoteId} is not an endorsement quote of purchase ${p.id}`);
      return toEndorsement(e, p, now());
    },

    /** Previews `body.changes` on purchase `purchaseId` and stores the quote (201). */
    async quote(principal: Principal, purchaseId: number, body: EndorsementQuoteRequest): Promise<Endorsement> {
      const p = await owned(principal, purchaseId);
      const refusal = changeRefusal(p, 'endorsement');
      if (refusal) throw new AppError(refusal.code, refusal.message);
      const state = await loadEndorsementState(
        {
          sales: deps.sales,
          ledger: deps.ledger,
          holders: deps.holders,
          certificates: deps.certificates,
          endorsements: deps.endorsements,
          products: deps.products,
        },
        p,
        { maxCoveredUnits: deps.maxCoveredUnits },
      );
      const realNow = now();
      let plan;
      try {
        plan = planEndorsement(state, body.changes, policyClock(p, realNow));
      } catch (err) {
        if (err instanceof EndorsementError) throw new AppError(err.code, err.message);
        throw err;
      }
      const stored = await deps.endorsements.saveQuote({
        quoteId: `eq_${randomBytes(12).toString('hex')}`,
        purchaseId: p.id,
        apiKeyId: principal.apiKeyId,
        changes: body.changes,
        currency: p.currency,
        premiumDifferenceMinor: plan.premiumDifferenceMinor,
        platformFeeDifferenceMinor: plan.platformFeeDifferenceMinor,
        taxDifferenceMinor: plan.taxDifferenceMinor,
        totalDifferenceMinor: plan.totalDifferenceMinor,
        reissues: plan.reissues,
        additions: plan.additions,
        holderPremiums: plan.holderPremiums,
        fingerprint: stateFingerprint(state),
        expiresAt: new Date(realNow.getTime() + ENDORSEMENT_QUOTE_TTL_MS),
      });
      return toEndorsement(stored, p, realNow);
    },

    /**
     * Carries out quote `quoteId` of purchase `purchaseId` (200): `applied`, or `awaiting_payment`
     * with the checkout link for its difference. A positive difference needs `payment`
     * (402 PAYMENT_REQUIRED without it; a saved card declined: 400 CARD_ERROR, nothing changed);
     * a quote with nothing to collect refuses one (400 VALIDATION_ERROR).
     */
    async endorse(principal: Principal, purchaseId: number, quoteId: string, payment?: EndorsementPayment): Promise<Endorsement> {
      const p = await owned(principal, purchaseId);
      const known = await deps.endorsements.findByQuote(quoteId);
      if (!known || known.purchaseId !== p.id)
        throw new AppError('ENDORSEMENT_QUOTE_NOT_FOUND', `quote ${quoteId} is not an endorsement quote of purchase ${p.id}`);
      if (known.totalDifferenceMinor > 0 && !payment && known.status !== 'applied')
        throw new AppError(
          'PAYMENT_REQUIRED',
          `quote ${quoteId} adds ${known.totalDifferenceMinor} minor units (${known.currency}): send payment { method: "saved_card", payment_method_id } or { method: "checkout_link" }`,
        );
      if (known.totalDifferenceMinor <= 0 && payment)
        throw new AppError('VALIDATION_ERROR', `quote ${quoteId} has nothing to collect: send it without payment`, {
          details: [{ path: 'payment', message: 'only for a quote with a positive total_difference' }],
        });
      await deps.workflows.endorse(
        p,
        quoteId,
        payment
          ? payment.method === 'saved_card'
            ? { method: 'saved_card', paymentMethodId: payment.payment_method_id }
            : { method: 'checkout_link' }
          : undefined,
      );
      const [e, after] = await Promise.all([deps.endorsements.findByQuote(quoteId), deps.sales.findById(p.id)]);
      return toEndorsement(e!, after ?? p, now());
    },
  };
}

export type EndorsementService = ReturnType<typeof createEndorsementService>;
