/**
 * `npm run ops -- <command>`: guarded operator actions (the runbook, docs/operations.md, says
 * when to use each). One CLI for every operations command.
 *
 *   reissue --purchase <id>   run certificate issuance again for a paid, unrefunded purchase
 *   recover --purchase <id>   start a new run of a purchase whose workflow run closed without
 *                             certificates (failed, terminated): records a payment and issues
 *
 * Every command takes `--json` and then prints one JSON object. A refusal (the purchase's state
 * does not allow the action) exits 2 with one line saying why; a usage error or failure exits 1.
 */
import { parseArgs } from 'node:util';
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createPurchasesRepository } from '../src/purchases/repository';
import { createPurchaseWorkflows } from '../src/purchases/workflow-client';
import { OperationRefused, createPurchaseOperations } from '../src/purchases/operations';
import { createTemporalClient } from '../src/temporal/client';

const USAGE = `usage: npm run ops -- <command> [options] [--json]
  reissue --purchase <id>   run certificate issuance again (paid, not refunded purchases)
  recover --purchase <id>   resume a purchase whose workflow run closed without certificates`;

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
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [command] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return values.help ? 0 : 1;
  }
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
