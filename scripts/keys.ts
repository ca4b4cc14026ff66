/**
 * `npm run keys -- <command>`: the developer portal's key operations (spec §3, §5).
 *
 *   create --account <rootAccountId> --name <name> [--description <text>] [--mode live|test]
 *          [--agent <id>] [--platform-fee-bps <n>] [--success-url <url>] [--cancel-url <url>]
 *   list --account <rootAccountId>
 *   rotate <keyId> [--grace-hours <n>]
 *   freeze <keyId> | unfreeze <keyId> | delete <keyId>
 *   set-return-urls <keyId> [--success-url <url>|none] [--cancel-url <url>|none]
 *   set-account-return-urls --account <rootAccountId> [--success-url <url>|none] [--cancel-url <url>|none]
 *
 * Return URLs are where the payment processor sends the buyer after paying (success) or
 * cancelling: the key's, else its account's, else the service's own pages (`/checkout/complete`,
 * `/checkout/cancelled`). `none` clears one. They must be absolute http(s) URLs (≤ 2048 chars).
 *
 * Every command takes `--json` and then prints one JSON object (`create`/`rotate`:
 * `{ "id", "key", ... }` with the value shown once). Errors exit 1 with one clear line.
 */
import { parseArgs } from 'node:util';
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createAccountsRepository } from '../src/accounts/repository';
import { createApiKeysRepository } from '../src/api-keys/repository';
import { createApiKeyService } from '../src/api-keys/service';
import { AppError } from '../src/shared/errors';
import { returnUrlProblem } from '../src/checkout-pages/return-urls';

const USAGE = `usage: npm run keys -- <command> [options] [--json]
  create --account <rootAccountId> --name <name> [--description <text>] [--mode live|test] [--agent <id>] [--platform-fee-bps <n>]
         [--success-url <url>] [--cancel-url <url>]
  list --account <rootAccountId>
  rotate <keyId> [--grace-hours <n>]
  freeze <keyId>
  unfreeze <keyId>
  delete <keyId>
  set-return-urls <keyId> [--success-url <url>|none] [--cancel-url <url>|none]
  set-account-return-urls --account <rootAccountId> [--success-url <url>|none] [--cancel-url <url>|none]
Return URLs: where the buyer lands after paying (success) or cancelling; the key's, else the
account's, else the service's pages /checkout/complete and /checkout/cancelled. "none" clears one.`;

class UsageError extends Error {}

function positiveInt(value: string | undefined, what: string): number {
  if (value === undefined) throw new UsageError(`${what} is required`);
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 2_147_483_647)
    throw new UsageError(`${what} must be a positive integer, got "${value}"`);
  return Number(value);
}

/** A `--success-url`/`--cancel-url` value: undefined when absent, null for `none`, else a valid URL. */
function returnUrl(value: string | undefined, option: string): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  const problem = returnUrlProblem(value);
  if (problem) throw new UsageError(`${option} ${problem}: "${value.length > 80 ? `${value.slice(0, 80)}…` : value}"`);
  return value;
}

/** How a return URL reads in `list`: the URL, or what applies instead. */
const shownUrl = (url: string | null, fallback: string) => url ?? `(${fallback})`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      account: { type: 'string' },
      name: { type: 'string' },
      description: { type: 'string' },
      mode: { type: 'string' },
      agent: { type: 'string' },
      'platform-fee-bps': { type: 'string' },
      'grace-hours': { type: 'string' },
      'success-url': { type: 'string' },
      'cancel-url': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return values.help ? 0 : 1;
  }
  const config = loadConfigOrExit();
  const db = createDb(config);
  const service = createApiKeyService({
    keys: createApiKeysRepository(db),
    accounts: createAccountsRepository(db),
    defaultGraceHours: config.API_KEY_ROTATION_GRACE_HOURS,
  });
  const print = (obj: object, human: string) => console.log(values.json ? JSON.stringify(obj) : human);
  const keyId = () => positiveInt(rest[0], 'keyId');
  const urls = () => {
    const change = {
      successUrl: returnUrl(values['success-url'], '--success-url'),
      cancelUrl: returnUrl(values['cancel-url'], '--cancel-url'),
    };
    if (change.successUrl === undefined && change.cancelUrl === undefined)
      throw new UsageError('--success-url or --cancel-url is required');
    return change;
  };
  try {
    switch (command) {
      case 'create': {
        if (values.mode !== undefined && values.mode !== 'live' && values.mode !== 'test') {
          throw new UsageError(`--mode must be live or test, got "${values.mode}"`);
        }
        if (values.name === undefined) throw new UsageError('--name is required');
        const checkoutSuccessUrl = returnUrl(values['success-url'], '--success-url');
        const checkoutCancelUrl = returnUrl(values['cancel-url'], '--cancel-url');
        const k = await service.create({
          rootAccountId: positiveInt(values.account, '--account'),
          name: values.name,
          description: values.description,
          mode: values.mode as 'live' | 'test' | undefined,
          agentId: values.agent === undefined ? null : positiveInt(values.agent, '--agent'),
          platformFeeBps: values['platform-fee-bps'] === undefined ? null : Number(values['platform-fee-bps']),
          checkoutSuccessUrl,
          checkoutCancelUrl,
        });
        print(k, `created key ${k.id} (${k.mode}) for account ${k.rootAccountId}\n${k.key}\nThis value is shown once; store it now.`);
        return 0;
      }
      case 'list': {
        const accountId = positiveInt(values.account, '--account');
        const keys = await service.list(accountId);
        const account = await service.account(accountId);
        const accountUrls = account && {
          id: account.id,
          checkoutSuccessUrl: account.checkoutSuccessUrl,
          checkoutCancelUrl: account.checkoutCancelUrl,
        };
        const servicePage = 'service page';
        const header = account
          ? `account ${account.id} return URLs: success ${shownUrl(account.checkoutSuccessUrl, servicePage)}, cancel ${shownUrl(account.checkoutCancelUrl, servicePage)}\n`
          : '';
        print(
          { keys, account: accountUrls },
          header +
            (keys.length
              ? keys
                  .map((k) => {
                    const vals = k.values.map(
                      (v) => `${v.displayPrefix}… ${v.state}${v.expiresAt ? ` until ${v.expiresAt.toISOString()}` : ''}`,
                    );
                    const urlsOf = `success ${shownUrl(k.checkoutSuccessUrl, 'account default')}, cancel ${shownUrl(k.checkoutCancelUrl, 'account default')}`;
                    return `${k.id}\t${k.mode}\t${k.status}\t${k.name}\t${vals.join(', ')}\t${urlsOf}`;
                  })
                  .join('\n')
              : 'no keys'),
        );
        return 0;
      }
      case 'set-return-urls': {
        const id = keyId();
        const k = await service.setReturnUrls(id, urls());
        const shown = { id: k.id, checkoutSuccessUrl: k.checkoutSuccessUrl, checkoutCancelUrl: k.checkoutCancelUrl };
        print(
          shown,
          `key ${k.id} return URLs: success ${shownUrl(k.checkoutSuccessUrl, 'account default')}, cancel ${shownUrl(k.checkoutCancelUrl, 'account default')}`,
        );
        return 0;
      }
      case 'set-account-return-urls': {
        const accountId = positiveInt(values.account, '--account');
        const a = await service.setAccountReturnUrls(accountId, urls());
        const shown = { rootAccountId: a.id, checkoutSuccessUrl: a.checkoutSuccessUrl, checkoutCancelUrl: a.checkoutCancelUrl };
        print(
          shown,
          `account ${a.id} return URLs: success ${shownUrl(a.checkoutSuccessUrl, 'service page')}, cancel ${shownUrl(a.checkoutCancelUrl, 'service page')}`,
        );
        return 0;
      }
      case 'rotate': {
        const grace = values['grace-hours'] === undefined ? undefined : Number(values['grace-hours']);
        if (grace !== undefined && !(grace >= 0))
          throw new UsageError(`--grace-hours must be a number >= 0, got "${values['grace-hours']}"`);
        const k = await service.rotate(keyId(), grace);
        print(
          k,
          `rotated key ${k.id}; old value works until ${k.previousValueExpiresAt}\n${k.key}\nThis value is shown once; store it now.`,
        );
        return 0;
      }
      case 'freeze':
      case 'unfreeze':
      case 'delete': {
        const k = await service[command](keyId());
        print({ id: k.id, status: k.status }, `key ${k.id} is now ${k.status}`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    await db.destroy();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const msg =
      err instanceof UsageError || err instanceof AppError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
        ? (err as Error).message
        : `unexpected error: ${err instanceof Error ? err.message : String(err)}`;
    console.error(`keys: ${msg.split('\n')[0]}`);
    process.exit(1);
  },
);
