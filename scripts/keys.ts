/**
 * `npm run keys -- <command>`: the developer portal's key operations (spec §3, §5).
 *
 *   create --account <rootAccountId> --name <name> [--description <text>] [--mode live|test]
 *          [--agent <id>] [--platform-fee-bps <n>] [--success-url <url>] [--cancel-url <url>]
 *   list --account <rootAccountId>       the agency (name, slug, kind), its return URLs and its keys
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
 * Every change (all but `list`) is recorded in the audit log first (actor kind `key_cli`; the
 * agency portal lists it): a change that cannot be recorded is not made. Who acts is named as
 * `npm run ops` names its operator (scripts/ops-operators.ts `operatorOf`): the person whose
 * operator token is in OPERATOR_TOKEN, else the OS user signed in (refused when
 * OPS_OPERATOR_TOKEN_REQUIRED=true); a token that names nobody stops the command (exit 1).
 */
import { loadConfigOrExit } from '../src/config';
import { createDb } from '../src/db/knex';
import { createAccountsRepository } from '../src/accounts/repository';
import { createApiKeysRepository } from '../src/api-keys/repository';
import { createApiKeyService } from '../src/api-keys/service';
import { AppError } from '../src/shared/errors';
import { returnUrlProblem } from '../src/shared/return-url';
import { createAuditRepository } from '../src/audit/repository';
import { AuditUnavailable, audited } from '../src/audit/audited';
import { parseCommandLine, positiveInt, UsageError } from './cli';
import { operatorOf } from './ops-operators';

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
  const text = { type: 'string' } as const;
  const parsed = parseCommandLine(
    argv,
    {
      ...{ account: text, name: text, description: text, mode: text, agent: text, 'platform-fee-bps': text },
      ...{ 'grace-hours': text, 'success-url': text, 'cancel-url': text },
    },
    USAGE,
  );
  if ('exit' in parsed) return parsed.exit;
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  const config = loadConfigOrExit();
  const db = createDb(config);
  const service = createApiKeyService({
    keys: createApiKeysRepository(db),
    accounts: createAccountsRepository(db),
    defaultGraceHours: config.API_KEY_ROTATION_GRACE_HOURS,
  });
  const print = (obj: object, human: string) => console.log(values.json ? JSON.stringify(obj) : human);
  const keyId = () => positiveInt(rest[0], 'keyId');
  const audit = createAuditRepository(db);
  /** Runs a change on the audit log as the operator `operatorOf` names; the key's account is looked up for a key's change. */
  const recorded = async <T extends object>(
    action: string,
    target: { kind: 'api_key' | 'root_account'; id: number },
    act: () => Promise<T>,
    details: (r: T) => Record<string, unknown>,
  ): Promise<T> => {
    const { actor, actorVia } = await operatorOf(db, action);
    const rootAccountId = target.kind === 'root_account' ? target.id : ((await service.get(target.id))?.rootAccountId ?? null);
    const { result } = await audited(
      audit,
      {
        actorKind: 'key_cli',
        actor,
        actorVia,
        action,
        targetKind: target.kind,
        targetId: String(target.id),
        rootAccountId,
        reason: null,
      },
      act,
      { details, isRefusal: (err) => err instanceof AppError },
    );
    return result;
  };
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
        const name = values.name;
        if (name === undefined) throw new UsageError('--name is required');
        const checkoutSuccessUrl = returnUrl(values['success-url'], '--success-url');
        const checkoutCancelUrl = returnUrl(values['cancel-url'], '--cancel-url');
        const rootAccountId = positiveInt(values.account, '--account');
        const k = await recorded(
          'create_key',
          { kind: 'root_account', id: rootAccountId },
          () =>
            service.create({
              rootAccountId,
              name,
              description: values.description,
              mode: values.mode as 'live' | 'test' | undefined,
              agentId: values.agent === undefined ? null : positiveInt(values.agent, '--agent'),
              platformFeeBps: values['platform-fee-bps'] === undefined ? null : Number(values['platform-fee-bps']),
              checkoutSuccessUrl,
              checkoutCancelUrl,
            }),
          (r) => ({ api_key_id: r.id, name: r.name, mode: r.mode, agent_id: r.agentId, platform_fee_bps: r.platformFeeBps }),
        );
        print(k, `created key ${k.id} (${k.mode}) for account ${k.rootAccountId}\n${k.key}\nThis value is shown once; store it now.`);
        return 0;
      }
      case 'list': {
        const accountId = positiveInt(values.account, '--account');
        const keys = await service.list(accountId);
        const account = await service.account(accountId);
        // The agency is named (issue 55 item 9): an operator checks whose keys these are before acting.
        const accountUrls = account && {
          id: account.id,
          name: account.name,
          slug: account.slug,
          kind: account.kind,
          checkoutSuccessUrl: account.checkoutSuccessUrl,
          checkoutCancelUrl: account.checkoutCancelUrl,
        };
        const servicePage = 'service page';
        const header = account
          ? `${account.name} (root account ${account.id}, slug ${account.slug}, ${account.kind})\n` +
            `account ${account.id} return URLs: success ${shownUrl(account.checkoutSuccessUrl, servicePage)}, cancel ${shownUrl(account.checkoutCancelUrl, servicePage)}\n`
          : `no root account ${accountId}\n`;
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
      case 'set-return-urls':
      case 'set-account-return-urls': {
        // A key's return URLs (unset: its account's), or an account's (unset: the service's pages).
        const onKey = command === 'set-return-urls';
        const id = onKey ? keyId() : positiveInt(values.account, '--account');
        const change = urls();
        const set = (): Promise<{ id: number; checkoutSuccessUrl: string | null; checkoutCancelUrl: string | null }> =>
          onKey ? service.setReturnUrls(id, change) : service.setAccountReturnUrls(id, change);
        const r = await recorded(
          onKey ? 'set_key_return_urls' : 'set_account_return_urls',
          { kind: onKey ? 'api_key' : 'root_account', id },
          set,
          (x) => ({ checkout_success_url: x.checkoutSuccessUrl, checkout_cancel_url: x.checkoutCancelUrl }),
        );
        const unset = onKey ? 'account default' : 'service page';
        print(
          { [onKey ? 'id' : 'rootAccountId']: r.id, checkoutSuccessUrl: r.checkoutSuccessUrl, checkoutCancelUrl: r.checkoutCancelUrl },
          `${onKey ? 'key' : 'account'} ${r.id} return URLs: success ${shownUrl(r.checkoutSuccessUrl, unset)}, cancel ${shownUrl(r.checkoutCancelUrl, unset)}`,
        );
        return 0;
      }
      case 'rotate': {
        const grace = values['grace-hours'] === undefined ? undefined : Number(values['grace-hours']);
        if (grace !== undefined && !(grace >= 0))
          throw new UsageError(`--grace-hours must be a number >= 0, got "${values['grace-hours']}"`);
        const id = keyId();
        const k = await recorded(
          'rotate_key',
          { kind: 'api_key', id },
          () => service.rotate(id, grace),
          (r) => ({
            previous_value_expires_at: r.previousValueExpiresAt,
            grace_hours: grace ?? config.API_KEY_ROTATION_GRACE_HOURS,
          }),
        );
        print(
          k,
          `rotated key ${k.id}; old value works until ${k.previousValueExpiresAt}\n${k.key}\nThis value is shown once; store it now.`,
        );
        return 0;
      }
      case 'freeze':
      case 'unfreeze':
      case 'delete': {
        const id = keyId();
        const k = await recorded(
          `${command}_key`,
          { kind: 'api_key', id },
          () => service[command](id),
          (r) => ({ status: r.status }),
        );
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
      err instanceof UsageError ||
      err instanceof AppError ||
      err instanceof AuditUnavailable ||
      (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
        ? (err as Error).message
        : `unexpected error: ${err instanceof Error ? err.message : String(err)}`;
    console.error(`keys: ${msg.split('\n')[0]}`);
    process.exit(1);
  },
);
