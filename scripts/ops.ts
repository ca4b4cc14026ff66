/**
 * `npm run ops -- <command>`: guarded operator actions (the runbook, docs/operations.md, says
 * when to use each). One CLI for every operations command.
 *
 *   reissue --purchase <id> --reason "<why>"
 *                             run certificate issuance again for a paid, unrefunded purchase
 *   recover --purchase <id> --reason "<why>"
 *                             start a new run of a purchase whose workflow run closed without
 *                             certificates (failed, terminated): records a payment and issues
 *   retry-cancellation --purchase <id> --reason "<why>"
 *                             try the purchase's unfinished cancellations again (refund refused
 *                             or stalled; their units are still held; every step is idempotent)
 *   stuck [--older-than-minutes 10] [--min-attempts 5] [--failed-within-hours 72] [--account <id>] [--mode test|live]
 *                             list, by agency, purchases awaiting payment past their deadline,
 *                             paid without certificates, failed lately, and cancellations whose
 *                             refund was refused or is pending past the grace period, plus activities
 *                             retrying (an event delivery's under its endpoint's agency); one root
 *                             account's or one mode's only with --account / --mode (read-only)
 *   find --email <address> [--mode test|live]
 *                             the purchase runs of a buyer, by the keyed BuyerEmailHash search
 *                             attribute (hashed here with BUYER_EMAIL_HASH_KEY), each purchase's
 *                             status and units in force from its record (scripts/ops-find.ts; read-only)
 *   setup-namespace [--namespace <name>] [--retention-days 30] --reason "<why>"
 *                             create the namespace if missing and register the purchase search
 *                             attributes (workflows/search-attributes.json); idempotent
 *   coverage [--account <id>] [--from YYYY-MM-DD --to YYYY-MM-DD] [--mode test|live]
 *                             policies and covered units in force, cancelled and refunded, and
 *                             certificates voided, by agency, mode and day (scripts/ops-coverage.ts;
 *                             read-only)
 *   finance --month YYYY-MM [--account <id>] [--mode test|live]
 *                             premium, fees, cancellations, refunds and net per agency and mode,
 *                             premium per insurer/MGA where products name one; month to date for
 *                             the current month (scripts/ops-finance.ts; read-only)
 *   slo [--days 30] [--mode live|test]
 *                             each service level objective's compliance and error budget left
 *                             (fraction and minutes) over the days, from Prometheus' recording
 *                             rules (PROMETHEUS_URL); exit 3 when a budget is exhausted
 *                             (scripts/ops-slo.ts; read-only)
 *   audit [--limit 50] [--purchase <id>]
 *                             the audit log of the commands above that change something, newest
 *                             first (read-only)
 *   reconcile --month YYYY-MM [--mode live|test] [--include-test-helper]
 *                             compare every charge and refund the ledger recorded in that month
 *                             (UTC) with the processor, print each difference with its purchase,
 *                             keep the run (the worker's `reconciliation_differences` metric reads
 *                             the newest one) and exit 3 when there is a difference; in test mode
 *                             the test helper's made-up payments are skipped and counted
 *   sweep-documents [--account <id>] [--reason "<why>"]
 *                             check every current certificate PDF and zip against its recorded
 *                             size and sha256, issue missing or damaged ones again and check them;
 *                             exit 3 when one could not be repaired; recorded in the audit log,
 *                             a reason optional (scripts/ops-sweep.ts)
 *   create-party --kind insurer|mga --name "<name>" [--register-number <n>] [--slug <slug>] --reason "<why>"
 *   appoint --party <id> --agency <id> --reason "<why>"
 *                             an insurer or MGA root account (NAIC or register number), and its
 *                             appointment of an agency (scripts/ops-parties.ts; audited)
 *   issue-operator-token --name <person> --reason "<why>"
 *   revoke-operator-token --name <person> --reason "<why>"
 *   operators                 a per-person operator token (shown once), its revocation, and the
 *                             list of tokens (scripts/ops-operators.ts)
 *
 * The commands that change something (reissue, recover, retry-cancellation, setup-namespace,
 * sweep-documents, issue/revoke-operator-token) require `--reason` (optional for the sweep) and
 * record who ran them, when, on what, why and how it ended in `operator_audit_log`
 * (src/audit/repository.ts) before they act: no record, no action. Who ran them is the person
 * whose operator token is in OPERATOR_TOKEN, else the OS user signed in (unless
 * OPS_OPERATOR_TOKEN_REQUIRED=true), never a name given on the command line (scripts/ops-operators.ts).
 *
 * Every command takes `--json` and then prints one JSON object. A refusal (the purchase's state
 * does not allow the action) exits 2 with one line saying why on stderr (with `--json`, also
 * `{"outcome":"refused","reason":…,"audit_id":…}` on stdout); a usage error or failure exits 1.
 */
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createSaleRepository } from '../src/purchases/sale-repository';
import { createLedgerRepository } from '../src/purchases/ledger-repository';
import { createAttentionRepository } from '../src/purchases/attention-repository';
import { createReportsRepository } from '../src/reports/repository';
import { reconcileMonth } from '../src/reports/reconciliation';
import { formatMinor, monthRange } from '../src/reports/bordereau';
import { createPayproc } from '../src/payproc/client';
import { createClaimsRepository } from '../src/claims/repository';
import { createAccountsRepository } from '../src/accounts/repository';
import { createPurchaseWorkflowsFromConfig } from '../src/purchases/workflow-client';
import { OperationRefused, createPurchaseOperations } from '../src/purchases/operations';
import { createTemporalClient } from '../src/temporal/client';
import { findRetryingActivities } from '../src/temporal/retrying';
import { purchaseStanding } from '../src/purchases/purchase-standing';
import { createAuditRepository, type AuditEntry, type AuditRepository, type AuditStart } from '../src/audit/repository';
import { AuditUnavailable, audited } from '../src/audit/audited';
import { parseCommandLine, positiveInt, UsageError } from './cli';
import { find } from './ops-find';
import { coverage } from './ops-coverage';
import { finance } from './ops-finance';
import { slo } from './ops-slo';
import { taxRates } from './ops-tax-rates';
import { sweepDocuments } from './ops-sweep';
import { pseudonymiseErasures } from './ops-erasures';
import { partyCommand } from './ops-parties';
import { listOperators, operatorOf, operatorTokenCommand } from './ops-operators';
import { OperatorTokenRefused } from '../src/operators/service';
import { temporal as proto } from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTE_TYPES } from '../workflows/search-attributes';

const USAGE = `usage: npm run ops -- <command> [options] [--json]
  reissue --purchase <id> --reason "<why>"
                            run certificate issuance again (paid, not refunded purchases)
  recover --purchase <id> --reason "<why>"
                            resume a purchase whose workflow run closed without certificates
  retry-cancellation --purchase <id> --reason "<why>"
                            try its unfinished cancellations again (refund refused or stalled)
  stuck [--older-than-minutes 10] [--min-attempts 5] [--failed-within-hours 72] [--account <id>] [--mode test|live]
                            purchases past their deadline, paid without certificates, failed
                            lately, cancellations refused or pending, and activities retrying,
                            by agency; --account: one root
                            account's only; --mode: one mode's only (read-only)
  find --email <address> [--mode test|live]
                            a buyer's purchases (status and units in force from the purchase's
                            record) and their runs, by the hashed email (read-only)
  coverage [--account <id>] [--from YYYY-MM-DD --to YYYY-MM-DD] [--mode test|live]
                            policies and units in force, cancelled, refunded, certificates voided,
                            by agency and day (default: today and 30 days on; read-only)
  setup-namespace [--namespace <name>] [--retention-days 30] --reason "<why>"
                            create the namespace if missing, register the search attributes
  tax-rates sync --reason "<why>" | tax-rates list
                            make the premium tax rates table hold src/taxes/premium-tax-rates.json
                            (insert or update by key; rows no longer in the file kept), or print it
  finance --month YYYY-MM [--account <id>] [--mode test|live]
                            premium, fees, cancellations, refunds and net per agency, and premium
                            per insurer/MGA; month to date for the current month (read-only)
  slo [--days 30] [--mode live|test]
                            each objective's compliance and error budget left over the days, from
                            Prometheus at PROMETHEUS_URL; exits 3 when a budget is exhausted
  audit [--limit 50] [--purchase <id>]
                            who ran the commands that change something, newest first (read-only)
  reconcile --month YYYY-MM [--mode live|test] [--include-test-helper]
                            the month's charges and refunds against the processor; exits 3 on a
                            difference (default mode live; test mode skips the test helper's
                            payments and says how many)
  sweep-documents [--account <id>] [--reason "<why>"]
                            check stored certificates and zips against their recorded sha256 and
                            size, repair missing or damaged ones; exits 3 when one is not repaired
                            (recorded in the audit log; a reason is optional)
  pseudonymise-erasures [--reason "<why>"]
                            drop the names erased buyers' policies kept past their retention
                            period (run daily; recorded in the audit log; a reason is optional)
  create-party --kind insurer|mga --name "<name>" [--register-number <n>] [--slug <slug>] --reason "<why>"
                            an insurer (NAIC code) or MGA (register number), or its new name/number
  appoint --party <id> --agency <id> --reason "<why>"
                            the party appoints the agency: its products may name the party
  issue-operator-token --name <person> --reason "<why>"
                            a token naming that person (printed once): OPERATOR_TOKEN for this
                            CLI, Bearer for the codec endpoint
  revoke-operator-token --name <person> --reason "<why>"
                            that person's token stops naming them at once
  operators                 the operator tokens, live first (read-only)

reissue, recover, retry-cancellation, setup-namespace, tax-rates sync and the token commands are recorded in the
audit log with the operator and the reason; without --reason they do nothing. The operator is
the person whose token is in OPERATOR_TOKEN, else the OS user (refused when
OPS_OPERATOR_TOKEN_REQUIRED=true); a token that names nobody stops the command.`;

/**
 * Why, for a command that changes something: a usage error before anything is done. Who is
 * acting is not asked here: `operatorOf` (scripts/ops-operators.ts) names them once the database
 * is open.
 */
function reasonFor(command: string, values: { reason?: string | undefined }): string {
  const reason = values.reason?.trim();
  if (!reason)
    throw new UsageError(`${command} changes the service: --reason "<why>" is required (recorded in the audit log with your name)`);
  if (reason.length > 2000) throw new UsageError(`--reason is at most 2000 characters, got ${reason.length}`);
  return reason;
}

/** The shared audited runner with the operator CLI's refusals (OperationRefused, UsageError). */
function auditedOp<T>(
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

async function main(argv: string[]): Promise<number> {
  const text = { type: 'string' } as const;
  const parsed = parseCommandLine(
    argv,
    {
      ...{ purchase: text, 'older-than-minutes': text, 'min-attempts': text, 'failed-within-hours': text, account: text },
      ...{
        email: text,
        mode: text,
        namespace: text,
        'retention-days': text,
        reason: text,
        operator: text,
        name: text,
        ...{ kind: text, 'register-number': text, slug: text, party: text, agency: text },
        limit: text,
        month: text,
        days: text,
        from: text,
        to: text,
        'include-test-helper': { type: 'boolean' } as const,
      },
    },
    USAGE,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  const [command = ''] = positionals;
  if (values.operator !== undefined)
    throw new UsageError(
      '--operator is not taken: you are named by your operator token (OPERATOR_TOKEN) or, without one, your OS user; nothing was done',
    );
  if (command === 'operators') return listOperators(values.json);
  if (command === 'create-party' || command === 'appoint') return partyCommand(command, values, values.json, operatorOf);
  if (command === 'issue-operator-token' || command === 'revoke-operator-token')
    return operatorTokenCommand(command, { name: values.name, reason: values.reason }, values.json);
  if (command === 'stuck')
    return stuck(
      values['older-than-minutes'],
      values['min-attempts'],
      values['failed-within-hours'],
      values.account,
      values.mode,
      values.json,
    );
  if (command === 'find') return find(values.email, values.mode, values.json);
  if (command === 'tax-rates')
    return taxRates(
      positionals[1],
      values.json,
      positionals[1] === 'sync' ? { reason: reasonFor('tax-rates sync', values), identify: operatorOf } : undefined,
    );
  if (command === 'finance') return finance({ month: values.month, account: values.account, mode: values.mode }, values.json);
  if (command === 'slo') return slo({ days: values.days, mode: values.mode }, values.json);
  if (command === 'coverage')
    return coverage({ account: values.account, from: values.from, to: values.to, mode: values.mode }, values.json);
  if (command === 'sweep-documents') return sweepDocuments({ account: values.account, reason: values.reason }, values.json);
  if (command === 'pseudonymise-erasures') return pseudonymiseErasures({ reason: values.reason }, values.json);
  if (command === 'audit') return auditLog(values.limit, values.purchase, values.json);
  if (command === 'reconcile') return reconcile(values.month, values.mode, values['include-test-helper'] === true, values.json);
  if (command === 'setup-namespace')
    return setupNamespace(values.namespace, values['retention-days'], reasonFor(command, values), values.json);
  if (command !== 'reissue' && command !== 'recover' && command !== 'retry-cancellation')
    throw new UsageError(`unknown command "${command}"`);
  const purchaseId = positiveInt(values.purchase, '--purchase');
  const reason = reasonFor(command, values);
  const config = loadConfigOrExit();
  const db = createDb(config);
  const temporal = createTemporalClient(config);
  try {
    const sales = createSaleRepository(db);
    const purchase = await sales.findById(purchaseId);
    const start: AuditStart = {
      actorKind: 'operator_cli',
      ...(await operatorOf(db, command)),
      action: command,
      targetKind: 'purchase',
      targetId: String(purchaseId),
      rootAccountId: purchase?.rootAccountId ?? null,
      reason,
    };
    const operations = createPurchaseOperations({
      sales,
      ledger: createLedgerRepository(db),
      workflows: createPurchaseWorkflowsFromConfig(temporal.client, config),
    });
    const act = command === 'retry-cancellation' ? () => operations.retryCancellation(purchaseId) : () => operations[command](purchaseId);
    const { result, auditId } = await auditedOp(createAuditRepository(db), start, act, (r) => ({
      workflowId: r.workflowId,
      action: r.action,
      ...('cancellationIds' in r ? { cancellationIds: r.cancellationIds } : {}),
    }));
    // What the purchase's own record says of its coverage now (never the sale run's result).
    const standing = await purchaseStanding(sales, purchaseId);
    const human =
      command === 'reissue'
        ? `purchase ${purchaseId} (${standing?.summary ?? 'not found'}): certificate issuance ${result.action === 'started' ? 'started' : 'is already running'} (${result.workflowId}); audit entry ${auditId}`
        : command === 'retry-cancellation'
          ? `purchase ${purchaseId}: refunds of cancellations ${'cancellationIds' in result ? (result.cancellationIds as number[]).join(', ') : ''} queued again in ${result.workflowId}; audit entry ${auditId}`
          : `purchase ${purchaseId}: resumed in a new run of ${result.workflowId}; audit entry ${auditId}`;
    console.log(
      values.json
        ? JSON.stringify({ ...result, audit_id: auditId, purchase_status: standing?.status ?? null, standing: standing ?? null })
        : human,
    );
    return 0;
  } finally {
    await temporal.close();
    await db.destroy();
  }
}

/**
 * `stuck`: what needs an operator, grouped by agency (claims past their acknowledgement deadline
 * among its purchases, kind `claim_acknowledgement_overdue`); with `--account`, only that root account's
 * purchases and the retrying activities of its purchases. Exit 0 when nothing is listed, 3 otherwise.
 * The retrying activities' last failures are decrypted here (the payload codec), so the run is on
 * the audit log as a decode (actor kind `codec`, action `codec_decode`, via `ops stuck`) under the
 * operator `operatorOf` names, written before Temporal is read: no record, no decode.
 */
async function stuck(
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

/**
 * `reconcile`: the month's ledger against the processor (src/reports/reconciliation.ts). Exit 0
 * when every charge and refund agrees, 3 when there is a difference, 1 on a usage error or when
 * the processor cannot be read (nothing is stored then).
 */
async function reconcile(month: string | undefined, mode: string | undefined, includeTestHelper: boolean, json: boolean): Promise<number> {
  if (!month) throw new UsageError('--month YYYY-MM is required');
  const range = monthRange(month);
  if (!range) throw new UsageError(`--month must be YYYY-MM, got "${month}"`);
  if (range.from.getTime() > Date.now()) throw new UsageError(`--month ${month} has not started yet`);
  if (mode !== undefined && mode !== 'test' && mode !== 'live') throw new UsageError(`--mode must be test or live, got "${mode}"`);
  const config = loadConfigOrExit();
  const db = createDb(config);
  try {
    const report = await reconcileMonth(
      { reports: createReportsRepository(db), payproc: createPayproc(config) },
      { month, mode: (mode as 'live' | 'test' | undefined) ?? 'live', includeTestHelper },
    );
    if (json) console.log(JSON.stringify(report));
    else {
      console.log(
        `reconciliation ${report.id}: ${report.month} ${report.mode}: ${report.charges_checked} charge(s) and ${report.refunds_checked} refund(s) checked`,
      );
      for (const [currency, t] of Object.entries(report.totals))
        console.log(`  ${currency.toUpperCase()}: ledger ${formatMinor(t.ledger)}, processor ${formatMinor(t.processor)}`);
      for (const [currency, t] of Object.entries(report.tax_collected))
        console.log(
          `  premium tax ${currency.toUpperCase()} (${report.tax_checked} payment(s) read back from their checkout lines): ledger ${formatMinor(t.ledger)}, processor ${formatMinor(t.processor)}`,
        );
      const skipped = report.test_helper_skipped;
      if (skipped.charges + skipped.refunds > 0)
        console.log(
          `  skipped ${skipped.charges} charge(s) and ${skipped.refunds} refund(s) of ${skipped.purchases} purchase(s) paid by the test helper (pi_testhelper_…: no money moved; --include-test-helper checks them)`,
        );
      if (report.differences.length === 0) console.log('no differences');
      for (const d of report.differences)
        console.log(
          `  purchase ${d.purchase_id} (account ${d.root_account_id}) ${d.kind} ${d.processor_id} [${d.source}]: ledger ${formatMinor(d.ledger_amount)} ${d.currency.toUpperCase()}, processor ${formatMinor(d.processor_amount)} (${d.reason}${d.processor_status ? `, status ${d.processor_status}` : ''})`,
        );
    }
    return report.differences.length > 0 ? 3 : 0;
  } finally {
    await db.destroy();
  }
}

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
async function setupNamespace(name: string | undefined, retentionDays: string | undefined, reason: string, json: boolean): Promise<number> {
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
async function auditLog(limitArg: string | undefined, purchaseArg: string | undefined, json: boolean): Promise<number> {
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

function nonNegativeInt(value: string, what: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 525_600)
    throw new UsageError(`${what} must be a whole number of minutes (0 to 525600), got "${value}"`);
  return Number(value);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const refused = err instanceof OperationRefused || err instanceof OperatorTokenRefused;
    const msg =
      refused ||
      err instanceof UsageError ||
      err instanceof AuditUnavailable ||
      String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')
        ? (err as Error).message
        : `unexpected error: ${err instanceof Error ? err.message : String(err)}`;
    console.error(`ops: ${refused ? 'refused: ' : ''}${msg.split('\n')[0]}`);
    // With --json a refusal is an answer, not a crash: the caller's script reads it on stdout.
    const auditId = (err as { auditId?: number }).auditId;
    if (refused && process.argv.includes('--json'))
      console.log(JSON.stringify({ outcome: 'refused', reason: msg, ...(auditId === undefined ? {} : { audit_id: auditId }) }));
    process.exit(refused ? 2 : 1);
  },
);
