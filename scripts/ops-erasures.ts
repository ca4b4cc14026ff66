/**
 * `npm run ops -- pseudonymise-erasures [--reason "<why>"] [--json]` (scripts/ops.ts dispatches
 * here): ends the retention of erased buyers' names (issue 52, item 3). Every buyer erasure whose
 * retention period has ended (`retention_ends_at`, the account's `personal_data_retention_years`
 * after the last coverage of the buyer's purchases) has the names it kept apart dropped for good;
 * only the marker `(name erased)` remains anywhere (src/buyers/erasure-repository.ts,
 * `pseudonymiseDue`). Run it daily (cron) or at will: it is idempotent and does nothing when
 * nothing is due. Prints how many erasures it finished (`{ pseudonymised, audit_id }` with
 * `--json`). Exit 0, or 1 when the database cannot be reached or the audit log written.
 *
 * Each run is recorded in `operator_audit_log` (action `pseudonymise-erasures`) before it acts; a
 * routine run needs no reason.
 */
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createBuyerErasureRepository } from '../src/buyers/erasure-repository';
import { createAuditRepository } from '../src/audit/repository';
import { audited } from '../src/audit/audited';
import { UsageError } from './cli';
import { operatorOf } from './ops-operators';

/** Drops the retained names of every erasure past its retention period; see the module's docstring. */
export async function pseudonymiseErasures(opts: { reason?: string | undefined }, json: boolean): Promise<number> {
  const reason = opts.reason?.trim() || 'routine end of retention (no --reason given)';
  if (reason.length > 2000) throw new UsageError(`--reason is at most 2000 characters, got ${reason.length}`);
  const db = createDb(loadConfigOrExit());
  try {
    const { result: count, auditId } = await audited(
      createAuditRepository(db),
      {
        actorKind: 'operator_cli',
        ...(await operatorOf(db, 'pseudonymise-erasures')),
        action: 'pseudonymise-erasures',
        targetKind: null,
        targetId: null,
        rootAccountId: null,
        reason,
      },
      () => createBuyerErasureRepository(db).pseudonymiseDue(new Date()),
      {
        details: (n) => ({ pseudonymised: n }),
        isRefusal: () => false,
        onFinishError: (e, id) =>
          console.error(`ops: could not record the outcome in audit entry ${id}: ${e instanceof Error ? e.message : String(e)}`),
      },
    );
    if (json) console.log(JSON.stringify({ pseudonymised: count, audit_id: auditId }));
    else console.log(`${count} erasure(s) past their retention period pseudonymised; audit entry ${auditId}`);
    return 0;
  } finally {
    await db.destroy();
  }
}
