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
 *   versions are stored.
 *
 * Refusals are non-retryable failures whose type is the API's error code:
 * ENDORSEMENT_QUOTE_NOT_FOUND, ENDORSEMENT_QUOTE_EXPIRED, ENDORSEMENT_QUOTE_STALE,
 * PURCHASE_NOT_CHANGEABLE, and the planning codes (COVERED_UNIT_STARTED, …).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Db } from '../src/db/knex';
import type { EventEmitter } from '../src/events/emitter';
import { createPurchasesRepository } from '../src/purchases/repository';
import { createCertificatesRepository } from '../src/certificates/repository';
import { createCertificateHoldersRepository } from '../src/certificate-holders/repository';
import { createEndorsementsRepository } from '../src/endorsements/repository';
import { EndorsementError, loadEndorsementState, planEndorsement, stateFingerprint } from '../src/endorsements/planning';
import { isInForce, policyClock } from '../src/purchases/cancellation-pricing';

export interface EndorsementActivityDeps {
  db: Db;
  events: Pick<EventEmitter, 'certificatesReissued'>;
  now?: () => Date;
}

const refuse = (code: string, message: string): never => {
  throw ApplicationFailure.nonRetryable(message, code);
};

export function createEndorsementActivities(deps: EndorsementActivityDeps) {
  const now = deps.now ?? (() => new Date());
  return {
    /** Carries out endorsement quote `quoteId` of purchase `purchaseId`; answers the numbers reissued (old → new), or `wait`. */
    async applyEndorsement(input: {
      purchaseId: number;
      quoteId: string;
    }): Promise<{ kind: 'applied'; reissued: Array<{ from: string; to: string }> } | { kind: 'wait' }> {
      return deps.db.transaction(async (trx) => {
        const endorsements = createEndorsementsRepository(trx);
        const purchases = createPurchasesRepository(trx);
        const certificates = createCertificatesRepository(trx);
        const holders = createCertificateHoldersRepository(trx);
        const e = await endorsements.findByQuote(input.quoteId, { forUpdate: true });
        if (!e || e.purchaseId !== input.purchaseId)
          return refuse(
            'ENDORSEMENT_QUOTE_NOT_FOUND',
            `quote ${input.quoteId} is not an endorsement quote of purchase ${input.purchaseId}`,
          );
        if (e.status === 'applied') return { kind: 'applied' as const, reissued: e.reissued ?? [] };
        const at = now();
        if (e.expiresAt.getTime() <= at.getTime())
          refuse('ENDORSEMENT_QUOTE_EXPIRED', `quote ${e.quoteId} expired at ${e.expiresAt.toISOString()}: ask for a new one`);
        const p = (await purchases.findById(input.purchaseId))!;
        if (p.status === 'refunded' || !isInForce(p.status))
          refuse('PURCHASE_NOT_CHANGEABLE', `Purchase ${p.id} is ${p.status}: only a paid purchase in force can be endorsed`);
        if (!p.certificatesIssuedAt) return { kind: 'wait' as const };
        const state = await loadEndorsementState({ purchases, holders, certificates, endorsements }, p);
        if (stateFingerprint(state) !== e.fingerprint)
          refuse('ENDORSEMENT_QUOTE_STALE', `purchase ${p.id} changed since quote ${e.quoteId} was made: ask for a new one`);
        let plan;
        try {
          plan = planEndorsement(state, e.changes, policyClock(p, at));
        } catch (err) {
          if (err instanceof EndorsementError) return refuse(err.code, err.message);
          throw err;
        }
        if (plan.namedInsured) await purchases.updateNamedInsured(p.id, plan.namedInsured);
        for (const d of plan.descriptions) await holders.updateDescription(d.certificateHolderId, d.description);
        for (const m of plan.moves) await purchases.moveCoveredUnit(m.coveredUnitId, m);
        const reissued = await certificates.supersede(
          p.id,
          plan.supersede.all ? { all: true } : { holderIds: plan.supersede.holderIds, coveredUnitIds: plan.supersede.coveredUnitIds },
          at,
        );
        await endorsements.markApplied(e.quoteId, reissued, at);
        return { kind: 'applied' as const, reissued };
      });
    },

    /** Publishes `certificates.reissued` for endorsement quote `quoteId` (its new versions are stored). */
    async endorsementReissued(input: { purchaseId: number; quoteId: string }): Promise<void> {
      const e = await createEndorsementsRepository(deps.db).findByQuote(input.quoteId);
      if (e && e.status === 'applied' && (e.reissued?.length ?? 0) > 0) await deps.events.certificatesReissued(e);
    },
  };
}

export type EndorsementActivities = ReturnType<typeof createEndorsementActivities>;
