/**
 * `npm run ops -- stuck [--older-than-minutes <n>] [--min-attempts <n>] [--failed-within-hours <n>]
 * [--account <id>] [--mode test|live] [--json]` (scripts/ops.ts dispatches here): what needs an
 * operator, grouped by agency; see `stuck` below.
 */
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createSaleRepository } from '../src/purchases/sale-repository';
import { createAttentionRepository } from '../src/purchases/attention-repository';
import { createClaimsRepository } from '../src/claims/repository';
import { createAccountsRepository } from '../src/accounts/repository';
import { createTemporalClient } from '../src/temporal/client';
import { findRetryingActivities } from '../src/temporal/retrying';
import { createAuditRepository, type AuditStart } from '../src/audit/repository';
import { positiveInt, UsageError } from './cli';
import { operatorOf } from './ops-operators';
import { auditedOp } from './ops-audit';

/**
 * `stuck`: what needs an operator, grouped by agency (claims past their acknowledgement deadline
 * among its purchases, kind `claim_acknowledgement_overdue`); with `--account`, only that root account's
 * purchases and the retrying activities of its purchases. Exit 0 when nothing is listed, 3 otherwise.
 * The retrying activities' last failures are decrypted here (the payload codec), so the run is on
 * the audit log as a decode (actor kind `codec`, action `codec_decode`, via `ops stuck`) under the
 * operator `operatorOf` names, written before Temporal is read: no record, no decode.
 */
export async function stuck(
  olderThan: string | undefined,
  minAttempts: string | undefined,
  failedWithin: string | undefined,
  account: string | undefined,
  modeArg: string | undefined,
  json: boolean,
): Promise<number> {
  if (modeArg !== undefined && modeArg !== 'test' && modeArg !== 'live')
    throw new UsageError(`--mode must be test or live, got "${modeArg}"`);
  const mode = modeArg as 'test' | 'live' | undefined;
  const graceMinutes = olderThan === undefined ? 10 : nonNegativeInt(olderThan, '--older-than-minutes');
  const attempts = minAttempts === undefined ? 5 : positiveInt(minAttempts, '--min-attempts');
  const failedWithinHours = failedWithin === undefined ? 72 : positiveInt(failedWithin, '--failed-within-hours');
  const rootAccountId = account === undefined ? undefined : positiveInt(account, '--account');
  const config = loadConfigOrExit();
  const db = createDb(config);
  const temporal = createTemporalClient(config);
  try {
    const attention = createAttentionRepository(db);
    const sales = createSaleRepository(db);
    const accounts = createAccountsRepository(db);
    const decodeStart: AuditStart = {
      actorKind: 'codec',
      ...(await operatorOf(db, 'stuck')),
      action: 'codec_decode',
      targetKind: 'namespace',
      targetId: config.TEMPORAL_NAMESPACE,
      rootAccountId: null,
      reason: null,
    };
    const [purchaseRows, cancellationRows, claimRows, { result: allRetrying }] = await Promise.all([
      attention.stuck(graceMinutes * 60, 500, failedWithinHours * 3600, rootAccountId),
      attention.stuckCancellations(graceMinutes * 60, 500, rootAccountId),
      createClaimsRepository(db).overdueAcknowledgements(500, rootAccountId),
      auditedOp(
        createAuditRepository(db),
        decodeStart,
        () => findRetryingActivities(temporal.client, { minAttempts: attempts, limit: 2000 }),
        (r) => ({ via: 'ops stuck', failures_decoded: r.filter((a) => a.lastFailure !== null).length }),
      ),
    ]);
    const allRows = [...purchaseRows, ...cancellationRows, ...claimRows];
    const rows = mode === undefined ? allRows : allRows.filter((r) => r.mode === mode);
    const agencyOf = new Map<number, { rootAccountId: number | null; agency: string; mode: string | null }>(
      rows.map((r) => [r.id, { rootAccountId: r.rootAccountId, agency: r.agency, mode: r.mode }]),
    );
    const names = new Map<number, string>();
    const nameOf = async (id: number) => {
      if (!names.has(id)) names.set(id, (await accounts.findById(id))?.name ?? 'unknown');
      return names.get(id)!;
    };
    // Each retrying activity's owner: its purchase's agency, else (an event delivery) the run's own AgencyId and Mode.
    const owners = new Map<(typeof allRetrying)[number], { rootAccountId: number | null; agency: string; mode: string | null }>();
    for (const a of allRetrying) {
      if (a.purchaseId !== null) {
        if (!agencyOf.has(a.purchaseId)) {
          const p = await sales.findById(a.purchaseId);
          agencyOf.set(a.purchaseId, {
            rootAccountId: p?.rootAccountId ?? null,
            agency: p ? await nameOf(p.rootAccountId) : 'unknown',
            mode: p?.mode ?? null,
          });
        }
        owners.set(a, agencyOf.get(a.purchaseId)!);
      } else if (a.rootAccountId !== null) {
        owners.set(a, { rootAccountId: a.rootAccountId, agency: await nameOf(a.rootAccountId), mode: a.mode });
      } else {
        owners.set(a, { rootAccountId: null, agency: 'no purchase or agency', mode: a.mode });
      }
    }
    const retrying = allRetrying.filter(
      (a) =>
        (rootAccountId === undefined || owners.get(a)!.rootAccountId === rootAccountId) &&
        (mode === undefined || owners.get(a)!.mode === mode),
    );
    const agencies = new Map<
      string,
      { root_account_id: number | null; agency: string; purchases: typeof rows; retrying_activities: typeof retrying }
    >();
    const bucket = (rootAccountId: number | null, agency: string) => {
      const key = String(rootAccountId);
      if (!agencies.has(key)) agencies.set(key, { root_account_id: rootAccountId, agency, purchases: [], retrying_activities: [] });
      return agencies.get(key)!;
    };
    for (const r of rows) bucket(r.rootAccountId, r.agency).purchases.push(r);
    for (const a of retrying) {
      const owner = owners.get(a)!;
      bucket(owner.rootAccountId, owner.agency).retrying_activities.push(a);
    }
    const result = {
      older_than_minutes: graceMinutes,
      min_attempts: attempts,
      failed_within_hours: failedWithinHours,
      root_account_id: rootAccountId ?? null,
      mode: mode ?? null,
      agencies: [...agencies.values()],
    };
    if (json) console.log(JSON.stringify(result));
    else if (agencies.size === 0)
      console.log(
        `nothing stuck${rootAccountId === undefined ? '' : ` for root account ${rootAccountId}`}${mode === undefined ? '' : ` in ${mode} mode`} (older than ${graceMinutes} min, failed within ${failedWithinHours} h, activities at ${attempts}+ attempts)`,
      );
    else
      for (const a of agencies.values()) {
        console.log(`${a.agency} (root account ${a.root_account_id ?? '-'})`);
        for (const p of a.purchases)
          console.log(
            `  purchase ${p.id} ${p.mode} ${p.kind} since ${p.since?.toISOString() ?? '?'}${p.reason ? `: ${p.reason.slice(0, 120)}` : ''}`,
          );
        for (const r of a.retrying_activities)
          console.log(
            `  ${r.workflowId} ${owners.get(r)!.mode ?? '?'} ${r.activityType} attempt ${r.attempt}${r.lastFailure ? `: ${r.lastFailure.slice(0, 120)}` : ''}`,
          );
      }
    return agencies.size === 0 ? 0 : 3;
  } finally {
    await temporal.close();
    await db.destroy();
  }
}

/** A whole number of minutes, 0 to a year (525600); a usage error otherwise. */
function nonNegativeInt(value: string, what: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 525_600)
    throw new UsageError(`${what} must be a whole number of minutes (0 to 525600), got "${value}"`);
  return Number(value);
}
