/**
 * `npm run ops -- sweep-documents [--account N] [--json]` (scripts/ops.ts dispatches here): the
 * stored-documents sweep (issue 52, item 2; src/certificates/document-sweep.ts) run now from the
 * operator's machine, the same code the daily `stored-documents-sweep` schedule runs in the worker:
 * every current certificate PDF and zip (one root account's with `--account`) read back, hashed
 * and compared with its recorded size and sha256; a missing or damaged one is issued again through
 * the purchase's certificate issuance (a damaged object is first moved to `quarantine/…`), and
 * checked again. Prints what it checked, found and repaired (`SweepReport` with `--json`).
 * Exit 0 when nothing was wrong or everything found was repaired, 3 when something could not be
 * repaired (each says why), 1 on a usage error or when storage or the database cannot be read.
 *
 * Each run is recorded in `operator_audit_log` (action `sweep-documents`, target the root account
 * or none, the operator named by their token or OS user (scripts/ops-operators.ts), `--reason` or "routine check …") before it reads
 * anything, and finished with the counts and the purchases issued again: a sweep changes storage
 * and reissues, so it is on the record like `reissue`, but a routine check needs no reason.
 */
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createObjectStore } from '../src/storage/object-store';
import { createTemporalClient } from '../src/temporal/client';
import { createPurchaseWorkflowsFromConfig } from '../src/purchases/workflow-client';
import { createServiceDocumentSweep, type SweepFinding } from '../src/certificates/document-sweep';
import { createAuditRepository } from '../src/audit/repository';
import { audited } from '../src/audit/audited';
import { positiveInt, UsageError } from './cli';
import { operatorOf } from './ops-operators';

function describe(f: SweepFinding): string {
  const what = f.kind === 'certificate' ? `certificate ${f.certificate_number} (revision ${f.revision})` : `${f.archive_kind} zip`;
  const problem =
    f.problem === 'missing'
      ? 'missing'
      : `damaged (${f.found!.size_bytes} bytes, sha256 ${f.found!.sha256.slice(0, 12)}…; recorded ${f.size_bytes} bytes, ${f.sha256.slice(0, 12)}…; moved to ${f.quarantine_key ?? '?'})`;
  const outcome =
    f.outcome === 'repaired'
      ? `repaired: ${f.repaired!.storage_key} (${f.repaired!.size_bytes} bytes, sha256 ${f.repaired!.sha256.slice(0, 12)}…)`
      : `NOT repaired: ${f.reason}`;
  return `  purchase ${f.purchase_id} (account ${f.root_account_id}) ${what} ${f.storage_key}: ${problem}; ${outcome}`;
}

/** Runs the sweep with the parsed options; see the module's docstring for output and exit codes. */
export async function sweepDocuments(opts: { account?: string | undefined; reason?: string | undefined }, json: boolean): Promise<number> {
  const rootAccountId = opts.account === undefined ? undefined : positiveInt(opts.account, '--account');
  // The log wants a reason from every operator entry; a routine run says so.
  const reason = opts.reason?.trim() || 'routine check of stored documents (no --reason given)';
  if (reason.length > 2000) throw new UsageError(`--reason is at most 2000 characters, got ${reason.length}`);
  const config = loadConfigOrExit();
  const db = createDb(config);
  const temporal = createTemporalClient(config);
  try {
    const sweep = createServiceDocumentSweep({
      db,
      store: createObjectStore(config),
      client: temporal.client,
      workflows: createPurchaseWorkflowsFromConfig(temporal.client, config),
    });
    const { result: report, auditId } = await audited(
      createAuditRepository(db),
      {
        actorKind: 'operator_cli',
        ...(await operatorOf(db, 'sweep-documents')),
        action: 'sweep-documents',
        targetKind: rootAccountId === undefined ? null : 'root_account',
        targetId: rootAccountId === undefined ? null : String(rootAccountId),
        rootAccountId: rootAccountId ?? null,
        reason,
      },
      () => sweep.sweepAll(rootAccountId === undefined ? {} : { rootAccountId }),
      {
        details: (r) => ({
          checked: r.checked,
          found: r.found,
          repaired: r.repaired,
          not_repaired: r.not_repaired,
          purchases: [...new Set(r.findings.map((f) => f.purchase_id))],
        }),
        isRefusal: () => false,
        onFinishError: (e, id) =>
          console.error(`ops: could not record the outcome in audit entry ${id}: ${e instanceof Error ? e.message : String(e)}`),
      },
    );
    if (json) console.log(JSON.stringify({ root_account_id: rootAccountId ?? null, ...report, audit_id: auditId }));
    else {
      console.log(
        `checked ${report.checked.certificates} certificate(s) and ${report.checked.archives} zip(s)${rootAccountId === undefined ? '' : ` of root account ${rootAccountId}`}: ${report.found} found missing or damaged, ${report.repaired} repaired, ${report.not_repaired} not repaired`,
      );
      for (const f of report.findings) console.log(describe(f));
      console.log(`audit entry ${auditId}`);
    }
    return report.not_repaired > 0 ? 3 : 0;
  } finally {
    await temporal.close();
    await db.destroy();
  }
}
