/**
 * `npm run ops -- <command>`: guarded operator actions (the runbook, docs/operations.md, says
 * when to use each). One CLI for every operations command.
 *
 *   reissue --purchase <id>   run certificate issuance again for a paid, unrefunded purchase
 *   recover --purchase <id>   start a new run of a purchase whose workflow run closed without
 *                             certificates (failed, terminated): records a payment and issues
 *   stuck [--older-than-minutes 10] [--min-attempts 5]
 *                             list, by agency, purchases awaiting payment past their deadline,
 *                             paid without certificates, and failed, plus activities retrying
 *                             (read-only)
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

const USAGE = `usage: npm run ops -- <command> [options] [--json]
  reissue --purchase <id>   run certificate issuance again (paid, not refunded purchases)
  recover --purchase <id>   resume a purchase whose workflow run closed without certificates
  stuck [--older-than-minutes 10] [--min-attempts 5]
                            purchases past their deadline, paid without certificates, failed,
                            and activities retrying, by agency (read-only)`;

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
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [command] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return values.help ? 0 : 1;
  }
  if (command === 'stuck') return stuck(values['older-than-minutes'], values['min-attempts'], values.json);
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

/** `stuck`: what needs an operator, grouped by agency. Exit 0 when nothing is listed, 3 otherwise. */
async function stuck(olderThan: string | undefined, minAttempts: string | undefined, json: boolean): Promise<number> {
  const graceMinutes = olderThan === undefined ? 10 : nonNegativeInt(olderThan, '--older-than-minutes');
  const attempts = minAttempts === undefined ? 5 : positiveInt(minAttempts, '--min-attempts');
  const config = loadConfigOrExit();
  const db = createDb(config);
  const temporal = createTemporalClient(config);
  try {
    const purchases = createPurchasesRepository(db);
    const accounts = createAccountsRepository(db);
    const [rows, retrying] = await Promise.all([purchases.stuck(graceMinutes * 60), findRetryingActivities(temporal.client, { minAttempts: attempts, limit: 2000 })]);
    const agencyOf = new Map<number, { rootAccountId: number | null; agency: string }>(rows.map((r) => [r.id, { rootAccountId: r.rootAccountId, agency: r.agency }]));
    for (const a of retrying) {
      if (a.purchaseId === null || agencyOf.has(a.purchaseId)) continue;
      const p = await purchases.findById(a.purchaseId);
      const name = p ? (await accounts.findById(p.rootAccountId))?.name : undefined;
      agencyOf.set(a.purchaseId, { rootAccountId: p?.rootAccountId ?? null, agency: name ?? 'unknown' });
    }
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
    const result = { older_than_minutes: graceMinutes, min_attempts: attempts, agencies: [...agencies.values()] };
    if (json) console.log(JSON.stringify(result));
    else if (agencies.size === 0) console.log(`nothing stuck (older than ${graceMinutes} min, activities at ${attempts}+ attempts)`);
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
