/**
 * The audit domain's service: runs a change on the record and reads the log back. Callers that
 * are not command lines of their own (the agency portal) reach the audit log only through it;
 * `operator_audit_log` is written by the repository alone (./repository.ts).
 */
import { audited } from './audited';
import type { AuditRepository } from './repository';
import type { AuditEntry, AuditListOptions, AuditStart } from './types';

export function createAuditService(deps: { repo: AuditRepository }) {
  return {
    /**
     * Runs `act` on the record (./audited.ts): the entry `start` is written first (AuditUnavailable
     * and nothing done when it cannot be), then finished as `succeeded` with `details(result)`,
     * `refused` (an error `isRefusal` accepts) or `failed`. Answers `act`'s result and the entry's
     * id; rethrows `act`'s error with `auditId` on it.
     */
    record<T>(
      start: AuditStart,
      act: () => Promise<T>,
      options: { details: (result: T) => Record<string, unknown>; isRefusal: (err: unknown) => boolean },
    ): Promise<{ result: T; auditId: number }> {
      return audited(deps.repo, start, act, options);
    },

    /**
     * The newest `limit` entries (clamped to 1..1000, or 10 000 for an export), newest first; with
     * `target` only that target's (e.g. `{ kind: 'purchase', id: '42' }`), with `rootAccountId`
     * only that account's; `actor`, `action`, `from`, `to` and `offset` as AuditListOptions says.
     */
    list(options: AuditListOptions): Promise<AuditEntry[]> {
      return deps.repo.list(options);
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
