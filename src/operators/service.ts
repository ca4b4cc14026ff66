/**
 * Operators named (issue 55, item 8): who is acting, from a token issued per person or from the
 * signed-in OS user, never from a name typed on the command line; and the issuing, revoking and
 * listing of those tokens (`npm run ops -- issue-operator-token | revoke-operator-token |
 * operators`, scripts/ops-operators.ts).
 *
 * `identify` answers `{ name, via, tokenId }`: with a token, the live token's person
 * (`via: 'operator_token'`); without one, the OS user (`via: 'os_user'`) unless a token is
 * required. Errors: OperatorUnknown for a token that is malformed, unknown or revoked (no fallback
 * to the OS user: a revoked person must not keep acting under another name), for a missing token
 * when one is required, and for no usable OS user name; OperatorTokenRefused when issuing to a
 * name that has a live token, or revoking a name that has none.
 */
import { generateOperatorToken, hashOperatorToken, isOperatorTokenShaped, operatorTokenPrefix } from './tokens';
import type { OperatorToken, OperatorTokensRepository } from './repository';

/** How an operator was named: their token, or the OS account they are signed in as. */
export type OperatorVia = 'operator_token' | 'os_user';

export interface Operator {
  /** The person: the token's name, or the OS user name. */
  name: string;
  via: OperatorVia;
  /** The token's id (via `operator_token`), else null. */
  tokenId: number | null;
}

/** Nobody can be named: the command does nothing. */
export class OperatorUnknown extends Error {}

/** The token cannot be issued or revoked as asked (the state of the tokens does not allow it). */
export class OperatorTokenRefused extends Error {}

/** A person's name as tokens carry it: trimmed, 1 to 200 characters, no control characters. */
export function operatorName(raw: string | undefined): string {
  const name = raw?.trim() ?? '';
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (!name || name.length > 200 || /[\u0000-\u001f\u007f]/.test(name))
    throw new OperatorTokenRefused('the operator name must be 1 to 200 characters without control characters');
  return name;
}

export function createOperatorService(deps: { repo: OperatorTokensRepository }) {
  /** The live token `token` names, its use recorded; undefined for anything else (never throws on a bad value). */
  async function tokenOf(token: string | undefined): Promise<OperatorToken | undefined> {
    return isOperatorTokenShaped(token) ? deps.repo.useLive(hashOperatorToken(token)) : undefined;
  }
  return {
    tokenOf,

    /**
     * Who is acting: `token` (OPERATOR_TOKEN) when given, else `osUser` unless `tokenRequired`
     * (OPS_OPERATOR_TOKEN_REQUIRED). Throws OperatorUnknown as the module says.
     */
    async identify(input: { token?: string | undefined; osUser?: string | undefined; tokenRequired: boolean }): Promise<Operator> {
      if (input.token !== undefined && input.token !== '') {
        const found = await tokenOf(input.token.trim());
        if (!found) throw new OperatorUnknown('OPERATOR_TOKEN names nobody (unknown or revoked): ask for a new token, nothing was done');
        return { name: found.name, via: 'operator_token', tokenId: found.id };
      }
      if (input.tokenRequired)
        throw new OperatorUnknown('an operator token is required here (OPS_OPERATOR_TOKEN_REQUIRED): set OPERATOR_TOKEN to yours');
      const osUser = input.osUser?.trim();
      if (!osUser)
        throw new OperatorUnknown('cannot tell who you are (this OS user has no name): set OPERATOR_TOKEN to your operator token');
      return { name: osUser, via: 'os_user', tokenId: null };
    },

    /** Issues a token to `name` (shown once: only its hash is kept), by `issuedBy`. OperatorTokenRefused when `name` has a live one. */
    async issue(name: string, issuedBy: string): Promise<{ token: string; issued: OperatorToken }> {
      const token = generateOperatorToken();
      const issued = await deps.repo.issue({
        name: operatorName(name),
        tokenHash: hashOperatorToken(token),
        prefix: operatorTokenPrefix(token),
        createdBy: issuedBy,
      });
      if (!issued) throw new OperatorTokenRefused(`${name} already has a live operator token: revoke it first (revoke-operator-token)`);
      return { token, issued };
    },

    /** Revokes `name`'s live token, by `revokedBy`. OperatorTokenRefused when it has none. */
    async revoke(name: string, revokedBy: string): Promise<OperatorToken> {
      const revoked = await deps.repo.revoke(operatorName(name), revokedBy);
      if (!revoked) throw new OperatorTokenRefused(`${name} has no live operator token`);
      return revoked;
    },

    /** Every token (live first), without any value. */
    list(): Promise<OperatorToken[]> {
      return deps.repo.list();
    },
  };
}

export type OperatorService = ReturnType<typeof createOperatorService>;
