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
import { createReportsRepository } from '../src/reports/repository';
import { reconcileMonth } from '../src/reports/reconciliation';
import { formatMinor, monthRange } from '../src/reports/bordereau';
import { createPayproc } from '../src/payproc/client';
import { createPurchaseWorkflowsFromConfig } from '../src/purchases/workflow-client';
import { OperationRefused, createPurchaseOperations } from '../src/purchases/operations';
import { createTemporalClient } from '../src/temporal/client';
import { purchaseStanding } from '../src/purchases/purchase-standing';
import { createAuditRepository, type AuditStart } from '../src/audit/repository';
import { AuditUnavailable } from '../src/audit/audited';
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
import { auditedOp, auditLog } from './ops-audit';
import { stuck } from './ops-stuck';
import { setupNamespace } from './ops-namespace';
import { OperatorTokenRefused } from '../src/operators/service';

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
