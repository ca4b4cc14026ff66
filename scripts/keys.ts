/**
 * `npm run keys -- <command>`: the developer portal's key operations (spec §3, §5).
 *
 *   create --account <rootAccountId> --name <name> [--description <text>] [--mode live|test]
 *          [--agent <id>] [--platform-fee-bps <n>]
 *   list --account <rootAccountId>
 *   rotate <keyId> [--grace-hours <n>]
 *   freeze <keyId> | unfreeze <keyId> | delete <keyId>
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
import { AppError } from '../src/http/errors';

const USAGE = `usage: npm run keys -- <command> [options] [--json]
  create --account <rootAccountId> --name <name> [--description <text>] [--mode live|test] [--agent <id>] [--platform-fee-bps <n>]
  list --account <rootAccountId>
  rotate <keyId> [--grace-hours <n>]
  freeze <keyId>
  unfreeze <keyId>
  delete <keyId>`;

class UsageError extends Error {}

function positiveInt(value: string | undefined, what: string): number {
  if (value === undefined) throw new UsageError(`${what} is required`);
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`${what} must be a positive integer, got "${value}"`);
  return Number(value);
}

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
  try {
    switch (command) {
      case 'create': {
        if (values.mode !== undefined && values.mode !== 'live' && values.mode !== 'test') {
          throw new UsageError(`--mode must be live or test, got "${values.mode}"`);
        }
        if (values.name === undefined) throw new UsageError('--name is required');
        const k = await service.create({
          rootAccountId: positiveInt(values.account, '--account'),
          name: values.name,
          description: values.description,
          mode: values.mode as 'live' | 'test' | undefined,
          agentId: values.agent === undefined ? null : positiveInt(values.agent, '--agent'),
          platformFeeBps: values['platform-fee-bps'] === undefined ? null : Number(values['platform-fee-bps']),
        });
        print(k, `created key ${k.id} (${k.mode}) for account ${k.rootAccountId}\n${k.key}\nThis value is shown once; store it now.`);
        return 0;
      }
      case 'list': {
        const keys = await service.list(positiveInt(values.account, '--account'));
        print(
          { keys },
          keys.length
            ? keys
                .map((k) => {
                  const vals = k.values.map((v) => `${v.displayPrefix}… ${v.state}${v.expiresAt ? ` until ${v.expiresAt.toISOString()}` : ''}`);
                  return `${k.id}\t${k.mode}\t${k.status}\t${k.name}\t${vals.join(', ')}`;
                })
                .join('\n')
            : 'no keys',
        );
        return 0;
      }
      case 'rotate': {
        const grace = values['grace-hours'] === undefined ? undefined : Number(values['grace-hours']);
        if (grace !== undefined && !(grace >= 0)) throw new UsageError(`--grace-hours must be a number >= 0, got "${values['grace-hours']}"`);
        const k = await service.rotate(keyId(), grace);
        print(k, `rotated key ${k.id}; old value works until ${k.previousValueExpiresAt}\n${k.key}\nThis value is shown once; store it now.`);
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
    const msg = err instanceof UsageError || err instanceof AppError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
      ? (err as Error).message
      : `unexpected error: ${err instanceof Error ? err.message : String(err)}`;
    console.error(`keys: ${msg.split('\n')[0]}`);
    process.exit(1);
  },
);
