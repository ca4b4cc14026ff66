/**
 * `npm run ops -- setup-namespace [--namespace <name>] [--retention-days <n>] --reason "<why>"
 * [--json]` (scripts/ops.ts dispatches here): the Temporal namespace and the purchase search
 * attributes; see `setupNamespace` below.
 */
import { temporal as proto } from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createTemporalClient } from '../src/temporal/client';
import { createAuditRepository, type AuditStart } from '../src/audit/repository';
import { SEARCH_ATTRIBUTE_TYPES } from '../workflows/search-attributes';
import { positiveInt, UsageError } from './cli';
import { operatorOf } from './ops-operators';
import { auditedOp } from './ops-audit';

/** Temporal's indexed value type for each search attribute type of ../workflows/search-attributes. */
const INDEXED_TYPE = {
  Keyword: proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Datetime: proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
} as const;

/**
 * `setup-namespace`: creates the namespace (TEMPORAL_NAMESPACE unless `--namespace`) with the
 * given retention when it does not exist, then registers every purchase search attribute it
 * lacks. Idempotent. Exit 1 when an attribute exists with another type (fix by hand). A
 * leftover `BuyerEmail` attribute (runs from before the hashed email) is reported, not removed.
 * Recorded in the audit log (target: the namespace), so DATABASE_URL must be migrated first.
 */
export async function setupNamespace(
  name: string | undefined,
  retentionDays: string | undefined,
  reason: string,
  json: boolean,
): Promise<number> {
  const days = retentionDays === undefined ? 30 : positiveInt(retentionDays, '--retention-days');
  const config = loadConfigOrExit();
  const namespace = name ?? config.TEMPORAL_NAMESPACE;
  const db = createDb(config);
  const temporal = createTemporalClient({ ...config, TEMPORAL_NAMESPACE: namespace });
  const conn = temporal.client.connection;
  try {
    const start: AuditStart = {
      actorKind: 'operator_cli',
      ...(await operatorOf(db, 'setup-namespace')),
      action: 'setup-namespace',
      targetKind: 'namespace',
      targetId: namespace,
      rootAccountId: null,
      reason,
    };
    const { result, auditId } = await auditedOp(
      createAuditRepository(db),
      start,
      () => registerNamespace(conn, namespace, days),
      (r) => ({ created: r.created, registered: r.registered }),
    );
    if (json) console.log(JSON.stringify({ ...result, audit_id: auditId }));
    else {
      console.log(`namespace ${namespace}: ${result.created ? `created (retention ${days} days)` : 'exists'}`);
      console.log(result.registered.length ? `registered: ${result.registered.join(', ')}` : 'search attributes: all registered');
      if (result.legacy_buyer_email_attribute)
        console.log(
          'note: BuyerEmail (the email in clear) is still registered; remove it once no run started before the hashed email is open or retained: temporal operator search-attribute remove --name BuyerEmail',
        );
      console.log(`audit entry ${auditId}`);
    }
    return 0;
  } finally {
    await temporal.close();
    await db.destroy();
  }
}

/** The namespace's creation and search-attribute registration (setup-namespace's action). */
async function registerNamespace(conn: ReturnType<typeof createTemporalClient>['client']['connection'], namespace: string, days: number) {
  let created = false;
  try {
    await conn.workflowService.describeNamespace({ namespace });
  } catch (err) {
    if ((err as { code?: number }).code !== 5 /* NOT_FOUND */) throw err;
    await conn.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(`${days} days`) });
    created = true;
  }
  // A new namespace takes a moment to answer everywhere in the cluster.
  let existing: Record<string, number> = {};
  for (let tries = 0; ; tries++) {
    try {
      existing = (await conn.operatorService.listSearchAttributes({ namespace })).customAttributes as Record<string, number>;
      break;
    } catch (err) {
      if (tries >= 50) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const wrongType = Object.entries(SEARCH_ATTRIBUTE_TYPES).filter(([n, t]) => existing[n] !== undefined && existing[n] !== INDEXED_TYPE[t]);
  if (wrongType.length)
    throw new UsageError(
      `search attribute(s) ${wrongType.map(([n, t]) => `${n} (should be ${t})`).join(', ')} exist with another type in ${namespace}; remove them first`,
    );
  const missing = Object.entries(SEARCH_ATTRIBUTE_TYPES).filter(([n]) => existing[n] === undefined);
  if (missing.length) {
    await conn.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map(([n, t]) => [n, INDEXED_TYPE[t]])),
    });
  }
  const legacy = existing.BuyerEmail !== undefined;
  return {
    namespace,
    created,
    retention_days: created ? days : null,
    registered: missing.map(([n]) => n),
    already_registered: Object.keys(SEARCH_ATTRIBUTE_TYPES).filter((n) => existing[n] !== undefined),
    legacy_buyer_email_attribute: legacy,
  };
}
