/**
 * `npm run ops -- <command>`: guarded operator actions (the runbook, docs/operations.md, says
 * when to use each). One CLI for every operations command.
 *
 *   reissue --purchase <id>   run certificate issuance again for a paid, unrefunded purchase
 *   recover --purchase <id>   start a new run of a purchase whose workflow run closed without
 *                             certificates (failed, terminated): records a payment and issues
 *   stuck [--older-than-minutes 10] [--min-attempts 5] [--failed-within-hours 72] [--account <id>]
 *                             list, by agency, purchases awaiting payment past their deadline,
 *                             paid without certificates, and failed lately, plus activities
 *                             retrying; one root account's only with --account (read-only)
 *   find --email <address> [--mode test|live]
 *                             the purchase runs of a buyer, by the keyed BuyerEmailHash search
 *                             attribute (hashed here with BUYER_EMAIL_HASH_KEY; read-only)
 *   setup-namespace [--namespace <name>] [--retention-days 30]
 *                             create the namespace if missing and register the purchase search
 *                             attributes (workflows/search-attributes.json); idempotent
 *
 * Every command takes `--json` and then prints one JSON object. A refusal (the purchase's state
 * does not allow the action) exits 2 with one line saying why; a usage error or failure exits 1.
 */
import { parseArgs } from 'node:util';
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createPurchasesRepository } from '../src/purchases/repository';
import { createAccountsRepository } from '../src/accounts/repository';
import { createPurchaseWorkflows } from '../src/purchases/workflow-client';
import { OperationRefused, createPurchaseOperations } from '../src/purchases/operations';
import { createTemporalClient } from '../src/temporal/client';
import { findRetryingActivities } from '../src/temporal/retrying';
import { buyerEmailHash } from '../src/purchases/buyer-email-hash';
import { temporal as proto } from '@temporalio/proto';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTE_TYPES, AGENCY_ID, AMOUNT_TOTAL, MODE, PURCHASE_STATUS, STATUS_CHANGED_AT } from '../workflows/search-attributes';

const USAGE = `usage: npm run ops -- <command> [options] [--json]
  reissue --purchase <id>   run certificate issuance again (paid, not refunded purchases)
  recover --purchase <id>   resume a purchase whose workflow run closed without certificates
  stuck [--older-than-minutes 10] [--min-attempts 5] [--failed-within-hours 72] [--account <id>]
                            purchases past their deadline, paid without certificates, failed
                            lately, and activities retrying, by agency; --account: one root
                            account's only (read-only)
  find --email <address> [--mode test|live]
                            a buyer's purchase runs, by the hashed email (read-only)
  setup-namespace [--namespace <name>] [--retention-days 30]
                            create the namespace if missing, register the search attributes`;

class UsageError extends Error {}

function positiveInt(value: string | undefined, what: string): number {
  if (value === undefined) throw new UsageError(`${what} is required`);
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 2_147_483_647) throw new UsageError(`${what} must be a positive integer, got "${value}"`);
  return Number(value);
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      purchase: { type: 'string' },
      'older-than-minutes': { type: 'string' },
      'min-attempts': { type: 'string' },
      'failed-within-hours': { type: 'string' },
      account: { type: 'string' },
      email: { type: 'string' },
      mode: { type: 'string' },
      namespace: { type: 'string' },
      'retention-days': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [command] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return values.help ? 0 : 1;
  }
  if (command === 'stuck') return stuck(values['older-than-minutes'], values['min-attempts'], values['failed-within-hours'], values.account, values.json);
  if (command === 'find') return find(values.email, values.mode, values.json);
  if (command === 'setup-namespace') return setupNamespace(values.namespace, values['retention-days'], values.json);
  if (command !== 'reissue' && command !== 'recover') throw new UsageError(`unknown command "${command}"`);
  const purchaseId = positiveInt(values.purchase, '--purchase');
  const config = loadConfigOrExit();
  const db = createDb(config);
  const temporal = createTemporalClient(config);
  try {
    const operations = createPurchaseOperations({
      purchases: createPurchasesRepository(db),
      workflows: createPurchaseWorkflows({
        client: temporal.client,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        sessionTtlSeconds: config.CHECKOUT_SESSION_TTL_SECONDS,
        pollIntervalSeconds: config.CHECKOUT_POLL_INTERVAL_SECONDS,
        buyerEmailHashKey: config.BUYER_EMAIL_HASH_KEY,
        retryMaxIntervalSeconds: config.PURCHASE_RETRY_MAX_INTERVAL_SECONDS,
      }),
    });
    const result = await operations[command](purchaseId);
    const human =
      command === 'reissue'
        ? `purchase ${purchaseId}: certificate issuance ${result.action === 'started' ? 'started' : 'is already running'} (${result.workflowId})`
        : `purchase ${purchaseId}: resumed in a new run of ${result.workflowId}`;
    console.log(values.json ? JSON.stringify(result) : human);
    return 0;
  } finally {
    await temporal.close();
    await db.destroy();
  }
}

/**
 * `stuck`: what needs an operator, grouped by agency; with `--account`, only that root account's
 * purchases and the retrying activities of its purchases. Exit 0 when nothing is listed, 3 otherwise.
 */
async function stuck(olderThan: string | undefined, minAttempts: string | undefined, failedWithin: string | undefined, account: string | undefined, json: boolean): Promise<number> {
  const graceMinutes = olderThan === undefined ? 10 : nonNegativeInt(olderThan, '--older-than-minutes');
  const attempts = minAttempts === undefined ? 5 : positiveInt(minAttempts, '--min-attempts');
  const failedWithinHours = failedWithin === undefined ? 72 : positiveInt(failedWithin, '--failed-within-hours');
  const rootAccountId = account === undefined ? undefined : positiveInt(account, '--account');
  const config = loadConfigOrExit();
  const db = createDb(config);
  const temporal = createTemporalClient(config);
  try {
    const purchases = createPurchasesRepository(db);
    const accounts = createAccountsRepository(db);
    const [rows, allRetrying] = await Promise.all([purchases.stuck(graceMinutes * 60, 500, failedWithinHours * 3600, rootAccountId), findRetryingActivities(temporal.client, { minAttempts: attempts, limit: 2000 })]);
    const agencyOf = new Map<number, { rootAccountId: number | null; agency: string }>(rows.map((r) => [r.id, { rootAccountId: r.rootAccountId, agency: r.agency }]));
    for (const a of allRetrying) {
      if (a.purchaseId === null || agencyOf.has(a.purchaseId)) continue;
      const p = await purchases.findById(a.purchaseId);
      if (rootAccountId !== undefined && p?.rootAccountId !== rootAccountId) continue;
      const name = p ? (await accounts.findById(p.rootAccountId))?.name : undefined;
      agencyOf.set(a.purchaseId, { rootAccountId: p?.rootAccountId ?? null, agency: name ?? 'unknown' });
    }
    const retrying = rootAccountId === undefined ? allRetrying : allRetrying.filter((a) => a.purchaseId !== null && agencyOf.get(a.purchaseId)?.rootAccountId === rootAccountId);
    const agencies = new Map<string, { root_account_id: number | null; agency: string; purchases: typeof rows; retrying_activities: typeof retrying }>();
    const bucket = (rootAccountId: number | null, agency: string) => {
      const key = String(rootAccountId);
      if (!agencies.has(key)) agencies.set(key, { root_account_id: rootAccountId, agency, purchases: [], retrying_activities: [] });
      return agencies.get(key)!;
    };
    for (const r of rows) bucket(r.rootAccountId, r.agency).purchases.push(r);
    for (const a of retrying) {
      const owner = a.purchaseId === null ? undefined : agencyOf.get(a.purchaseId);
      bucket(owner?.rootAccountId ?? null, owner?.agency ?? 'no purchase').retrying_activities.push(a);
    }
    const result = { older_than_minutes: graceMinutes, min_attempts: attempts, failed_within_hours: failedWithinHours, root_account_id: rootAccountId ?? null, agencies: [...agencies.values()] };
    if (json) console.log(JSON.stringify(result));
    else if (agencies.size === 0) console.log(`nothing stuck${rootAccountId === undefined ? '' : ` for root account ${rootAccountId}`} (older than ${graceMinutes} min, failed within ${failedWithinHours} h, activities at ${attempts}+ attempts)`);
    else
      for (const a of agencies.values()) {
        console.log(`${a.agency} (root account ${a.root_account_id ?? '-'})`);
        for (const p of a.purchases) console.log(`  purchase ${p.id} ${p.mode} ${p.kind} since ${p.since?.toISOString() ?? '?'}${p.reason ? `: ${p.reason.slice(0, 120)}` : ''}`);
        for (const r of a.retrying_activities) console.log(`  ${r.workflowId} ${r.activityType} attempt ${r.attempt}${r.lastFailure ? `: ${r.lastFailure.slice(0, 120)}` : ''}`);
      }
    return agencies.size === 0 ? 0 : 3;
  } finally {
    await temporal.close();
    await db.destroy();
  }
}

/**
 * `find --email`: the runs whose BuyerEmailHash is the address's keyed hash (the address never
 * reaches Temporal), newest first, with the query to paste into the Temporal UI. Exit 0.
 */
async function find(email: string | undefined, mode: string | undefined, json: boolean): Promise<number> {
  if (!email || !/^[^\s@]+@[^\s@]+$/.test(email.trim())) throw new UsageError('--email <address> is required');
  if (mode !== undefined && mode !== 'test' && mode !== 'live') throw new UsageError(`--mode must be test or live, got "${mode}"`);
  const config = loadConfigOrExit();
  const temporal = createTemporalClient(config);
  try {
    const hash = buyerEmailHash(config.BUYER_EMAIL_HASH_KEY, email);
    // MODE is a keyword of Temporal's query language, hence the backticks.
    const query = `BuyerEmailHash='${hash}'${mode ? ` AND \`Mode\`='${mode}'` : ''}`;
    const runs: Array<{ workflowId: string; runId: string; type: string; status: string; purchaseStatus: string | null; agencyId: string | null; mode: string | null; amountTotal: number | null; startTime: string; statusChangedAt: string | null }> = [];
    for await (const w of temporal.client.workflow.list({ query })) {
      const a = w.typedSearchAttributes;
      runs.push({
        workflowId: w.workflowId,
        runId: w.runId,
        type: w.type,
        status: w.status.name,
        purchaseStatus: a.get(PURCHASE_STATUS) ?? null,
        agencyId: a.get(AGENCY_ID) ?? null,
        mode: a.get(MODE) ?? null,
        amountTotal: a.get(AMOUNT_TOTAL) ?? null,
        startTime: w.startTime.toISOString(),
        statusChangedAt: a.get(STATUS_CHANGED_AT)?.toISOString() ?? null,
      });
    }
    if (json) console.log(JSON.stringify({ query, runs }));
    else {
      console.log(`query: ${query}`);
      if (runs.length === 0) console.log('no purchase runs for this address');
      for (const r of runs) console.log(`${r.workflowId} ${r.status} purchase ${r.purchaseStatus ?? '?'} agency ${r.agencyId ?? '?'} ${r.mode ?? '?'} amount ${r.amountTotal ?? '?'} (minor units) started ${r.startTime}`);
    }
    return 0;
  } finally {
    await temporal.close();
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
 */
async function setupNamespace(name: string | undefined, retentionDays: string | undefined, json: boolean): Promise<number> {
  const config = loadConfigOrExit();
  const namespace = name ?? config.TEMPORAL_NAMESPACE;
  const days = retentionDays === undefined ? 30 : positiveInt(retentionDays, '--retention-days');
  const temporal = createTemporalClient({ ...config, TEMPORAL_NAMESPACE: namespace });
  const conn = temporal.client.connection;
  try {
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
    if (wrongType.length) throw new UsageError(`search attribute(s) ${wrongType.map(([n, t]) => `${n} (should be ${t})`).join(', ')} exist with another type in ${namespace}; remove them first`);
    const missing = Object.entries(SEARCH_ATTRIBUTE_TYPES).filter(([n]) => existing[n] === undefined);
    if (missing.length) {
      await conn.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map(([n, t]) => [n, INDEXED_TYPE[t]])) });
    }
    const legacy = existing.BuyerEmail !== undefined;
    const result = { namespace, created, retention_days: created ? days : null, registered: missing.map(([n]) => n), already_registered: Object.keys(SEARCH_ATTRIBUTE_TYPES).filter((n) => existing[n] !== undefined), legacy_buyer_email_attribute: legacy };
    if (json) console.log(JSON.stringify(result));
    else {
      console.log(`namespace ${namespace}: ${created ? `created (retention ${days} days)` : 'exists'}`);
      console.log(missing.length ? `registered: ${result.registered.join(', ')}` : 'search attributes: all registered');
      if (legacy) console.log('note: BuyerEmail (the email in clear) is still registered; remove it once no run started before the hashed email is open or retained: temporal operator search-attribute remove --name BuyerEmail');
    }
    return 0;
  } finally {
    await temporal.close();
  }
}

function nonNegativeInt(value: string, what: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 525_600) throw new UsageError(`${what} must be a whole number of minutes (0 to 525600), got "${value}"`);
  return Number(value);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const refused = err instanceof OperationRefused;
    const msg =
      refused || err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
        ? (err as Error).message
        : `unexpected error: ${err instanceof Error ? err.message : String(err)}`;
    console.error(`ops: ${refused ? 'refused: ' : ''}${msg.split('\n')[0]}`);
    process.exit(refused ? 2 : 1);
  },
);
