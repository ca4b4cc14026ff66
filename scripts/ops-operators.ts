/**
 * Operators named (issue 55, item 8), for `npm run ops` (scripts/ops.ts dispatches here):
 *
 * - `operatorOf(db, action)`: who runs this command, for its audit entry. With `OPERATOR_TOKEN`
 *   set, the person its live token was issued to (`actorVia: 'operator_token'`); otherwise the
 *   OS user signed in (`os_user`), unless `OPS_OPERATOR_TOKEN_REQUIRED=true` (set it where the OS
 *   account is shared, such as a container). A token that names nobody (unknown, revoked) stops
 *   the command (exit 1, nothing done; the attempt is recorded as refused under the token's first
 *   characters); there is no fallback to the OS user and no `--operator` name.
 * - `issue-operator-token --name <person> --reason "<why>"`: a new token for that person, printed
 *   once (only its SHA-256 is stored); refused (exit 2) when the person has a live token.
 * - `revoke-operator-token --name <person> --reason "<why>"`: that person's token stops naming
 *   them at once (commands and codec decodes); refused (exit 2) when they have none.
 * - `operators`: every token (live first): id, name, prefix, issued when and by whom, last used,
 *   revoked when and by whom. Read-only.
 *
 * Issuing and revoking are recorded in `operator_audit_log` (target `operator` / the name) before
 * they act, like every ops command that changes something.
 */
import os from 'node:os';
import { loadConfigOrExit } from '../src/config';
import { createDb, type Db } from '../src/db/knex';
import { createAuditRepository } from '../src/audit/repository';
import { audited } from '../src/audit/audited';
import { createOperatorTokensRepository, type OperatorToken } from '../src/operators/repository';
import { OperatorTokenRefused, OperatorUnknown, createOperatorService, type OperatorVia } from '../src/operators/service';
import { operatorTokenPrefix } from '../src/operators/tokens';
import { UsageError } from './cli';

const env = process.env;

/** The OS user signed in, or undefined when it has no name. */
function osUser(): string | undefined {
  try {
    return os.userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Who runs `action`: `{ actor, actorVia }` for its audit entry (see the module's docstring).
 * Throws UsageError when nobody can be named (a token that names nobody is recorded as refused).
 */
export async function operatorOf(db: Db, action: string): Promise<{ actor: string; actorVia: OperatorVia }> {
  const token = env.OPERATOR_TOKEN?.trim() || undefined;
  try {
    const who = await createOperatorService({ repo: createOperatorTokensRepository(db) }).identify({
      token,
      osUser: osUser(),
      tokenRequired: env.OPS_OPERATOR_TOKEN_REQUIRED === 'true',
    });
    return { actor: who.name, actorVia: who.via };
  } catch (err) {
    if (!(err instanceof OperatorUnknown)) throw err;
    if (token) {
      const audit = createAuditRepository(db);
      const id = await audit.begin({
        actorKind: 'operator_cli',
        actor: `unrecognised token ${operatorTokenPrefix(token)}…`,
        actorVia: 'operator_token',
        action,
        targetKind: null,
        targetId: null,
        rootAccountId: null,
        reason: 'refused before acting: the operator token names nobody',
      });
      await audit.finish(id, { outcome: 'refused', detail: err.message });
    }
    throw new UsageError(err.message);
  }
}

/** `--reason`, required of a command that changes something (1 to 2000 characters). */
function reasonOf(command: string, reason: string | undefined): string {
  const why = reason?.trim();
  if (!why) throw new UsageError(`${command} changes the service: --reason "<why>" is required (recorded in the audit log with your name)`);
  if (why.length > 2000) throw new UsageError(`--reason is at most 2000 characters, got ${why.length}`);
  return why;
}

const tokenJson = (t: OperatorToken) => ({
  id: t.id,
  name: t.name,
  prefix: t.prefix,
  created_at: t.createdAt.toISOString(),
  created_by: t.createdBy,
  last_used_at: t.lastUsedAt?.toISOString() ?? null,
  revoked_at: t.revokedAt?.toISOString() ?? null,
  revoked_by: t.revokedBy,
});

/**
 * `issue-operator-token` and `revoke-operator-token`: audited (target `operator` / the name).
 * Exit 0 done; 2 refused (OperatorTokenRefused, rethrown for ops.ts to report); 1 usage.
 */
export async function operatorTokenCommand(
  command: 'issue-operator-token' | 'revoke-operator-token',
  opts: { name?: string | undefined; reason?: string | undefined },
  json: boolean,
): Promise<number> {
  if (!opts.name?.trim()) throw new UsageError(`${command} needs --name <person> (their email or handle)`);
  const name = opts.name.trim();
  const reason = reasonOf(command, opts.reason);
  const config = loadConfigOrExit();
  const db = createDb(config);
  try {
    const who = await operatorOf(db, command);
    const operators = createOperatorService({ repo: createOperatorTokensRepository(db) });
    const start = {
      actorKind: 'operator_cli' as const,
      ...who,
      action: command,
      targetKind: 'operator',
      targetId: name,
      rootAccountId: null,
      reason,
    };
    const options = {
      isRefusal: (err: unknown) => err instanceof OperatorTokenRefused,
      onFinishError: (e: unknown, id: number) =>
        console.error(`ops: could not record the outcome in audit entry ${id}: ${e instanceof Error ? e.message : String(e)}`),
    };
    if (command === 'issue-operator-token') {
      const { result, auditId } = await audited(createAuditRepository(db), start, () => operators.issue(name, who.actor), {
        ...options,
        details: (r) => ({ token_id: r.issued.id, prefix: r.issued.prefix }),
      });
      if (json) console.log(JSON.stringify({ ...tokenJson(result.issued), token: result.token, audit_id: auditId }));
      else {
        console.log(`operator token ${result.issued.id} for ${result.issued.name} (shown once; only its hash is kept):`);
        console.log(result.token);
        console.log(
          `give it to ${result.issued.name} alone: OPERATOR_TOKEN for npm run ops, and Bearer for the codec endpoint; audit entry ${auditId}`,
        );
      }
      return 0;
    }
    const { result, auditId } = await audited(createAuditRepository(db), start, () => operators.revoke(name, who.actor), {
      ...options,
      details: (r) => ({ token_id: r.id, prefix: r.prefix }),
    });
    if (json) console.log(JSON.stringify({ ...tokenJson(result), audit_id: auditId }));
    else console.log(`operator token ${result.id} of ${result.name} (${result.prefix}…) revoked; audit entry ${auditId}`);
    return 0;
  } finally {
    await db.destroy();
  }
}

/** `operators`: every operator token, live first (never a value). Exit 0. Read-only. */
export async function listOperators(json: boolean): Promise<number> {
  const config = loadConfigOrExit();
  const db = createDb(config);
  try {
    const tokens = await createOperatorService({ repo: createOperatorTokensRepository(db) }).list();
    if (json) console.log(JSON.stringify({ operators: tokens.map(tokenJson) }));
    else if (tokens.length === 0) console.log('no operator tokens: issue one with issue-operator-token --name <person> --reason "<why>"');
    else
      for (const t of tokens)
        console.log(
          `${t.id} ${t.name} ${t.prefix}… issued ${t.createdAt.toISOString()} by ${t.createdBy}; ${
            t.revokedAt ? `revoked ${t.revokedAt.toISOString()} by ${t.revokedBy}` : 'live'
          }; last used ${t.lastUsedAt?.toISOString() ?? 'never'}`,
        );
    return 0;
  } finally {
    await db.destroy();
  }
}
