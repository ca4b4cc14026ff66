/**
 * Personal-data erasure of a buyer on the agency's request (issue 52, item 3): what each piece of
 * data becomes is decided in ./erasure-rules.ts and applied by ./erasure-repository.ts.
 *
 * Scope: the buyer (`idp_accnt_uuid`) must belong to the key's account and mode (connected to the
 * account, and a purchase there in the key's mode or connected by a key of that mode), else 404
 * NOT_FOUND (the same for unknown, foreign and other-mode buyers). The buyer row is one per email
 * across accounts, so its email and names are erased for every account; the purchases, emails
 * and events reached are those of the key's account and mode. Idempotent: a second call answers
 * the erasure already made. Each call is written to the audit log first (actor `api_key:<id>`,
 * action `buyer.erase`; nothing is done when the log cannot be written) and finished with its
 * outcome. Errors thrown: AppError NOT_FOUND; AuditUnavailable.
 */
import { AppError } from '../shared/errors';
import type { Principal } from '../api-keys/service';
import type { AuditService } from '../audit/service';
import type { BuyerErasureRepository, BuyerErasure as StoredErasure } from './erasure-repository';
import { ERASED_NOW, KEPT_WITH_POLICY, RETAINED_UNTIL_RETENTION_ENDS } from './erasure-rules';
import type { BuyerErasure } from './erasure-schemas';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The wire shape of a stored erasure. */
export function toWire(e: StoredErasure): BuyerErasure {
  return {
    id: e.id,
    buyer_id: e.idpAccntUuid,
    erased_at: e.erasedAt.toISOString(),
    purchases: e.purchases,
    erased: [...ERASED_NOW],
    retained: [...RETAINED_UNTIL_RETENTION_ENDS],
    kept: [...KEPT_WITH_POLICY],
    retention_ends_at: e.retentionEndsAt.toISOString(),
    pseudonymised_at: e.pseudonymisedAt ? e.pseudonymisedAt.toISOString() : null,
  };
}

export function createBuyerErasureService(deps: { erasures: BuyerErasureRepository; audit: Pick<AuditService, 'record'> }) {
  return {
    /**
     * Erases buyer `buyerId` (its idp_accnt_uuid) in the principal's account and mode, or answers
     * the erasure already made there (`created: false`). Throws NOT_FOUND, AuditUnavailable.
     */
    async erase(principal: Principal, buyerId: string): Promise<{ erasure: BuyerErasure; created: boolean }> {
      const uuid = buyerId.toLowerCase();
      const { result } = await deps.audit.record(
        {
          actorKind: 'api_key',
          actor: `api_key:${principal.apiKeyId}`,
          action: 'buyer.erase',
          targetKind: 'buyer',
          targetId: uuid,
          rootAccountId: principal.rootAccountId,
          reason: 'erasure requested by the buyer',
        },
        async () => {
          const buyer = UUID.test(uuid) ? await deps.erasures.findInScope(uuid, principal.rootAccountId, principal.mode) : null;
          if (!buyer) throw new AppError('NOT_FOUND', `buyer ${buyerId} not found`);
          const done = await deps.erasures.erase({
            buyer,
            rootAccountId: principal.rootAccountId,
            mode: principal.mode,
            apiKeyId: principal.apiKeyId,
          });
          return { erasure: toWire(done.erasure), created: done.created };
        },
        {
          details: (r) => ({ erasure_id: r.erasure.id, created: r.created, purchases: r.erasure.purchases, mode: principal.mode }),
          isRefusal: (err) => err instanceof AppError,
        },
      );
      return result;
    },
  };
}

export type BuyerErasureService = ReturnType<typeof createBuyerErasureService>;
