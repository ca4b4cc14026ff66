/**
 * Whose purchases a certificate-surface call may see (spec §4.5; ARCHITECTURE §4 tenancy).
 *
 * `/platform-agency-certs` bodies carry the calling teammate's `idp_teammate_uuid` (a teammate
 * is an agent under the key's root account): the scope is that teammate's purchases.
 * `/platform-agency-root-certs` bodies carry `idp_root_account_uuid` in its place: the scope is
 * every purchase of the root account, whichever teammate made it.
 *
 * Errors (bare body, spec §7.2): 404 TEAMMATE_NOT_FOUND when the teammate id is not a teammate
 * of the key's root account; 404 SELLER_NOT_FOUND when the root account id is not the key's.
 * Neither says whether the id exists elsewhere.
 */
import { z } from 'zod';
import type { Principal } from '../api-keys/service';
import type { Db } from '../db/knex';
import { AppError } from '../shared/errors';
import { createAccountsRepository } from './repository';

/** The purchases a call may see: the root account's, narrowed to one teammate unless `agentId` is null. */
export interface AccountScope {
  rootAccountId: number;
  /** The teammate (agent) whose purchases these are; null on the root surface (all teammates). */
  agentId: number | null;
}

const uuid = z.guid({ message: 'must be a UUID' });

/** Body fields naming the caller on `/platform-agency-certs`. */
export const teammateScopeFields = {
  idp_teammate_uuid: uuid.meta({ description: 'The calling teammate (an agent of the API key’s root account)' }),
};
/** Body fields naming the caller on `/platform-agency-root-certs`. */
export const rootScopeFields = {
  idp_root_account_uuid: uuid.meta({ description: 'The API key’s root account; sees the purchases of all its teammates' }),
};

/** The scopes, read through the accounts repository made on `db`. */
export function createAccountScopes(db: Db) {
  const accounts = createAccountsRepository(db);
  return {
    /** The teammate's scope; throws TEAMMATE_NOT_FOUND unless it belongs to the key's root account. */
    async teammate(principal: Principal, idpTeammateUuid: string): Promise<AccountScope> {
      const agentId = await accounts.findAgentIdByIdpUuid(principal.rootAccountId, idpTeammateUuid.toLowerCase());
      if (agentId === null)
        throw new AppError('TEAMMATE_NOT_FOUND', 'No teammate with that idp_teammate_uuid under this API key’s account');
      return { rootAccountId: principal.rootAccountId, agentId };
    },
    /**
     * The root account's scope; throws SELLER_NOT_FOUND unless the id is the key's root account.
     * A principal from an API key carries that id already (no query).
     */
    async root(principal: Principal, idpRootAccountUuid: string): Promise<AccountScope> {
      const wanted = idpRootAccountUuid.toLowerCase();
      const found =
        principal.idpRootAccountUuid !== undefined
          ? principal.idpRootAccountUuid === wanted
          : await accounts.hasIdpRootAccountUuid(principal.rootAccountId, wanted);
      if (!found) throw new AppError('SELLER_NOT_FOUND', 'No root account with that idp_root_account_uuid for this API key');
      return { rootAccountId: principal.rootAccountId, agentId: null };
    },
  };
}

export type AccountScopes = ReturnType<typeof createAccountScopes>;
