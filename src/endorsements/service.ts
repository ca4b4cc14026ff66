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
import type { Principal } from '../api-keys/service';
import { AppError, notFound } from '../shared/errors';
import type { CertificatesRepository } from '../certificates/repository';
import type { CertificateHoldersRepository } from '../certificate-holders/repository';
import type { PurchaseRecord, PurchasesRepository } from '../purchases/repository';
import type { PurchaseWorkflows } from '../purchases/workflow-client';
import { isInForce, policyClock } from '../purchases/cancellation-pricing';
import { purchaseScopeOf } from '../purchases/service';
import { ENDORSEMENT_QUOTE_TTL_MS, EndorsementError, loadEndorsementState, planEndorsement, stateFingerprint } from './planning';
import type { EndorsementsRepository, StoredEndorsement } from './repository';
import type { Endorsement, EndorsementQuoteRequest } from './schemas';

export function toEndorsement(e: StoredEndorsement, p: Pick<PurchaseRecord, 'totalMinor'>): Endorsement {
  return {
    object: e.status === 'applied' ? 'endorsement' : 'endorsement_quote',
    id: e.quoteId,
    purchase_id: e.purchaseId,
    status: e.status,
    changes: e.changes,
    currency: e.currency,
    premium_difference: e.premiumDifferenceMinor,
    platform_fee_difference: e.platformFeeDifferenceMinor,
    total_difference: e.totalDifferenceMinor,
    new_amount_total: e.status === 'applied' ? p.totalMinor : p.totalMinor + e.totalDifferenceMinor,
    reissues: e.reissues.map((r) => ({
      certificate_number: r.certificateNumber,
      covered_unit_id: r.coveredUnitId,
      certificate_holder_id: r.certificateHolderId,
    })),
    reissued: e.reissued,
    expires_at: e.expiresAt.toISOString(),
    created_at: e.createdAt.toISOString(),
    applied_at: e.appliedAt?.toISOString() ?? null,
  };
}

export function createEndorsementService(deps: {
  purchases: PurchasesRepository;
  holders: CertificateHoldersRepository;
  certificates: CertificatesRepository;
  endorsements: EndorsementsRepository;
  workflows: Pick<PurchaseWorkflows, 'endorse'>;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  async function owned(principal: Principal, id: number): Promise<PurchaseRecord> {
    const p = await deps.purchases.findInScope(id, purchaseScopeOf(principal));
    if (!p) throw notFound('purchase', id);
    return p;
  }

  return {
    /** Refuses (404 NOT_FOUND) a purchase outside the key's scope: routes check it before the body, so another account's id reads 404 whatever is sent. */
    async assertOwned(principal: Principal, purchaseId: number): Promise<void> {
      await owned(principal, purchaseId);
    },

    /** Previews `body.changes` on purchase `purchaseId` and stores the quote (201). */
    async quote(principal: Principal, purchaseId: number, body: EndorsementQuoteRequest): Promise<Endorsement> {
      const p = await owned(principal, purchaseId);
      if (p.status === 'refunded' || !isInForce(p.status))
        throw new AppError('PURCHASE_NOT_CHANGEABLE', `Purchase ${p.id} is ${p.status}: only a paid purchase in force can be endorsed`);
      if (!p.certificatesIssuedAt)
        throw new AppError('PURCHASE_NOT_CHANGEABLE', `Purchase ${p.id}'s certificates are still being issued: ask again in a few seconds`);
      const state = await loadEndorsementState(
        { purchases: deps.purchases, holders: deps.holders, certificates: deps.certificates, endorsements: deps.endorsements },
        p,
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
        totalDifferenceMinor: plan.totalDifferenceMinor,
        reissues: plan.reissues,
        fingerprint: stateFingerprint(state),
        expiresAt: new Date(realNow.getTime() + ENDORSEMENT_QUOTE_TTL_MS),
      });
      return toEndorsement(stored, p);
    },

    /** Carries out quote `quoteId` of purchase `purchaseId` (200): the endorsement, `applied`. */
    async endorse(principal: Principal, purchaseId: number, quoteId: string): Promise<Endorsement> {
      const p = await owned(principal, purchaseId);
      const known = await deps.endorsements.findByQuote(quoteId);
      if (!known || known.purchaseId !== p.id)
        throw new AppError('ENDORSEMENT_QUOTE_NOT_FOUND', `quote ${quoteId} is not an endorsement quote of purchase ${p.id}`);
      await deps.workflows.endorse(p, quoteId);
      const [e, after] = await Promise.all([deps.endorsements.findByQuote(quoteId), deps.purchases.findById(p.id)]);
      return toEndorsement(e!, after ?? p);
    },
  };
}

export type EndorsementService = ReturnType<typeof createEndorsementService>;
