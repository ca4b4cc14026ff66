/**
 * `npm run ops -- audit [--limit <n>] [--purchase <id>] [--json]` (scripts/ops.ts dispatches
 * here): reads the operator audit log. Also the audited runner the CLI's changing commands share
 * (`auditedOp`: the entry written before the action, its outcome after; a refusal of the CLI's is
 * recorded as refused).
 */
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { OperationRefused } from '../src/purchases/operations';
import { createAuditRepository, type AuditEntry, type AuditRepository, type AuditStart } from '../src/audit/repository';
import { audited } from '../src/audit/audited';
import { positiveInt, UsageError } from './cli';

/** The shared audited runner with the operator CLI's refusals (OperationRefused, UsageError). */
export function auditedOp<T>(
  audit: AuditRepository,
  start: AuditStart,
  act: () => Promise<T>,
  details: (result: T) => Record<string, unknown>,
): Promise<{ result: T; auditId: number }> {
  return audited(audit, start, act, {
    details,
    isRefusal: (err) => err instanceof OperationRefused || err instanceof UsageError,
    onFinishError: (e, auditId) =>
      console.error(`ops: could not record the outcome in audit entry ${auditId}: ${e instanceof Error ? e.message : String(e)}`),
  });
}

/** One audit entry as `--json` prints it (snake_case, ISO times). */
function auditJson(e: AuditEntry) {
  return {
    id: e.id,
    started_at: e.startedAt.toISOString(),
    finished_at: e.finishedAt?.toISOString() ?? null,
    actor_kind: e.actorKind,
    actor: e.actor,
    actor_via: e.actorVia ?? null,
    action: e.action,
    target_kind: e.targetKind,
    target_id: e.targetId,
    root_account_id: e.rootAccountId,
    reason: e.reason,
    outcome: e.outcome,
    outcome_detail: e.outcomeDetail,
    details: e.details,
  };
}

/**
 * `audit`: the newest `--limit` (default 50, at most 1000) audit entries, newest first; with
 * `--purchase`, only that purchase's. One line each (time, operator, command, target, outcome
 * and why, reason), or `{ entries: [...] }` with `--json`. Exit 0. Read-only.
 */
export async function auditLog(limitArg: string | undefined, purchaseArg: string | undefined, json: boolean): Promise<number> {
  const limit = limitArg === undefined ? 50 : positiveInt(limitArg, '--limit');
  if (limit > 1000) throw new UsageError(`--limit must be at most 1000, got ${limit}`);
  const purchaseId = purchaseArg === undefined ? undefined : positiveInt(purchaseArg, '--purchase');
  const config = loadConfigOrExit();
  const db = createDb(config);
  try {
    const entries = await createAuditRepository(db).list({
      limit,
      ...(purchaseId === undefined ? {} : { target: { kind: 'purchase', id: String(purchaseId) } }),
    });
    if (json) console.log(JSON.stringify({ entries: entries.map(auditJson) }));
    else if (entries.length === 0) console.log(`no audit entries${purchaseId === undefined ? '' : ` for purchase ${purchaseId}`}`);
    else
      for (const e of entries) {
        const outcome =
          e.outcome === null
            ? 'no outcome (did not finish)'
            : `${e.outcome}${e.outcomeDetail ? `: ${e.outcomeDetail.split('\n')[0]!.slice(0, 160)}` : ''}`;
        const target = e.targetKind === null ? '' : ` ${e.targetKind} ${e.targetId ?? ''}`;
        console.log(
          `${e.id} ${e.startedAt.toISOString()} ${e.actor} (${e.actorKind}${e.actorVia ? ` via ${e.actorVia}` : ''}) ${e.action}${target}: ${outcome}; reason: ${JSON.stringify(e.reason)}`,
        );
      }
    return 0;
  } finally {
    await db.destroy();
  }
}
