/**
 * Personal-data erasure of a buyer on the agency's request (issue 52, item 3): what each piece of
 * data becomes is decided in ./erasure-rules.ts and applied here, in one transaction (done whole
 * or not at all), each table through its own domain's repository (the one writer of that table):
 * the buyer row locked first (two concurrent erasures of one buyer meet there; the second finds
 * the first's record and answers it), then the contact data erased, the names on the policies
 * replaced by ERASED_NAME and set aside in the erasure's `retained`, and the erasure recorded
 * (./erasure-repository.ts). The repositories are given as the small interfaces below, so this
 * module imports none of those domains.
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
import type { Knex } from 'knex';
import type { KeyMode } from '../api-keys/secrets';
import type { BuyersRepository } from './repository';
import type { BuyerErasureRepository, ErasableBuyer, BuyerErasure as StoredErasure } from './erasure-repository';
import { ERASED_NAME, ERASED_NOW, KEPT_WITH_POLICY, RETAINED_UNTIL_RETENTION_ENDS, erasedEmail } from './erasure-rules';
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

type Trx = Knex.Transaction;

/**
 * The writes of an erasure in other domains, each its table's own repository's method (all in
 * the caller's transaction `trx`, on the purchases `purchaseIds` of the buyer in the account and
 * mode; the `erase…` methods answering names answer those they replaced, row id → name).
 */
export interface ErasureWriters {
  /** The buyers' repository: `buyers`, `buyer_access_tokens`. */
  buyers: Pick<BuyersRepository, 'lockForErasure' | 'eraseContact'>;
  /** The sale's repository: `purchases`, `purchase_items` (and a read of `covered_units`). */
  sales: {
    buyerPurchases(
      trx: Trx,
      buyerId: number,
      rootAccountId: number,
      mode: KeyMode,
    ): Promise<{ ids: number[]; buyerEmails: string[]; lastCoverageEnd: Date | null }>;
    eraseBuyer(trx: Trx, purchaseIds: number[], placeholder: string): Promise<Record<string, string>>;
  };
  /** The certificates' repository: `certificates.printed`. */
  certificates: { eraseNamedInsured(trx: Trx, purchaseIds: number[], placeholder: string): Promise<Record<string, string>> };
  /** The email logs' repositories: `proof_of_coverage_emails`, `checkout_link_emails`. */
  emailLogs: Array<{ eraseRecipient(trx: Trx, purchaseIds: number[], emails: string[], placeholder: string): Promise<void> }>;
  /** The events' and endorsements' repositories: `agency_events.data`, `endorsements.changes`. */
  storedDocuments: Array<{ eraseBuyerValues(trx: Trx, purchaseIds: number[], replacements: Array<[string, string]>): Promise<void> }>;
  /** The accounts' repository (a read of `root_accounts`). */
  accounts: { personalDataRetentionYears(id: number, conn: Trx): Promise<number> };
}

export function createBuyerErasureService(
  deps: { erasures: BuyerErasureRepository; audit: Pick<AuditService, 'record'> } & ErasureWriters,
) {
  /**
   * Erases the buyer in the account and mode (./erasure-rules.ts), or answers the erasure already
   * made (`created: false`). The retention period ends the account's
   * `personal_data_retention_years` after the last coverage end of its purchases there (or after
   * now, when later or there is none).
   */
  function eraseInTransaction(
    buyer: ErasableBuyer,
    rootAccountId: number,
    mode: KeyMode,
    apiKeyId: number | null,
  ): Promise<{ erasure: StoredErasure; created: boolean }> {
    return deps.erasures.transaction(async (trx) => {
      const person = await deps.buyers.lockForErasure(trx, buyer.id);
      const before = await deps.erasures.findIn(trx, buyer.id, rootAccountId, mode);
      if (before) return { erasure: before, created: false };

      const purchases = await deps.sales.buyerPurchases(trx, buyer.id, rootAccountId, mode);
      const ids = purchases.ids;
      const emails = [...new Set([person.email, ...purchases.buyerEmails])];
      const retained = {
        named_insured: await deps.sales.eraseBuyer(trx, ids, ERASED_NAME),
        printed: await deps.certificates.eraseNamedInsured(trx, ids, ERASED_NAME),
      };
      const names = [
        ...new Set(
          [
            ...Object.values(retained.named_insured),
            ...Object.values(retained.printed),
            `${person.firstName} ${person.lastName}`.trim(),
          ].filter(Boolean),
        ),
      ];
      const placeholder = erasedEmail(buyer.idpAccntUuid);
      for (const log of deps.emailLogs) await log.eraseRecipient(trx, ids, emails, placeholder);
      // Stored events and endorsements name the buyer only as whole JSON string values: replaced as such.
      const replacements: Array<[string, string]> = [
        ...emails.map((e): [string, string] => [e, placeholder]),
        ...names.map((n): [string, string] => [n, ERASED_NAME]),
      ];
      for (const documents of deps.storedDocuments) await documents.eraseBuyerValues(trx, ids, replacements);
      await deps.buyers.eraseContact(trx, buyer.id, placeholder);

      const erasure = await deps.erasures.insert(trx, {
        buyer,
        rootAccountId,
        mode,
        apiKeyId,
        purchases: ids.length,
        retained,
        lastCoverageEnd: purchases.lastCoverageEnd,
        retentionYears: await deps.accounts.personalDataRetentionYears(rootAccountId, trx),
      });
      return { erasure, created: true };
    });
  }

  return {
    /**
     * Erases buyer `buyerId` (its idp_accnt_uuid) in the principal's account and mode, or answers
     * the erasure already made there (`created: false`). Throws NOT_FOUND, AuditUnavailable.
     */
    async erase(principal: Principal, buyerId: string): Promise<{ erasure: BuyerErasure; created: boolean }> {
      const uuid = buyerId.toLowerCase();
      // An id that is not a UUID names no buyer: answered before the audit log (its target is a
      // buyer's id; a NUL byte or a 90-digit number cannot be written there).
      if (!UUID.test(uuid)) throw new AppError('NOT_FOUND', 'buyer not found: the id is the buyer’s idp_accnt_uuid');
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
          const buyer = await deps.erasures.findInScope(uuid, principal.rootAccountId, principal.mode);
          if (!buyer) throw new AppError('NOT_FOUND', `buyer ${buyerId} not found`);
          const done = await eraseInTransaction(buyer, principal.rootAccountId, principal.mode, principal.apiKeyId);
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
