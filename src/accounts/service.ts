/**
 * The accounts domain's services: account discovery for the API (`createAccountService`) and
 * teammates, roles and sessions for the agency portal (`createTeammateService`, below).
 *
 * Account discovery (`GET /api/v1/account`): the calling key's root account with its public
 * ids, its teammates, the key itself (mode, teammate, platform fee in basis points) and whether
 * its payments reach the processor's live or test mode (the secret key its mode uses: `sk_live_…`
 * is live, anything else test). The first call of an integration: every id the quote, buyer and
 * certificate surfaces ask for is here. Its settings (`settings`, account-wide) are changed with
 * `PATCH /api/v1/account`: `send_buyer_email_after_payment` (on by default) emails each buyer the
 * proof of coverage once their purchase is issued (src/proof-of-coverage/after-payment.ts). Its
 * `producer` block (address, phone, email, licence number; issue 50 item 1) is printed in the
 * producer box of certificates issued after it is set, and changed the same way.
 *
 * Errors: NOT_FOUND (404) only if the key's account or key row vanished between the gateway's
 * check and this read (a deleted key is refused at the gateway first).
 */
import type { Principal } from '../api-keys/service';
import type { ApiKeysRepository } from '../api-keys/repository';
import { AppError, notFound } from '../shared/errors';
import type { AccountsRepository } from './repository';
import type { PortalSessionRepository } from './portal-session-repository';
import type { AccountRead, AccountUpdate } from './schemas';
import type { AccountProfile, PortalRole, RootAccount, Teammate } from './types';

export function createAccountService(deps: {
  accounts: Pick<AccountsRepository, 'findProfile' | 'updateSettings' | 'updateProducer'>;
  apiKeys: Pick<ApiKeysRepository, 'findKey'>;
  /** The processor secret key of each key mode (PAYPROC_LIVE_SECRET_KEY, PAYPROC_TEST_SECRET_KEY). */
  processorSecrets: { live: string; test: string };
}) {
  return {
    async describe(principal: Principal): Promise<AccountRead> {
      const [account, key] = await Promise.all([
        deps.accounts.findProfile(principal.rootAccountId),
        deps.apiKeys.findKey(principal.apiKeyId),
      ]);
      if (!account || !key) throw notFound('account of API key', principal.apiKeyId);
      const teammate = (id: number | null) => {
        const t = id === null ? undefined : account.teammates.find((a) => a.id === id);
        return t ? { idp_teammate_uuid: t.idpTeammateUuid, name: t.name, email: t.email } : null;
      };
      return {
        root_account: {
          id: account.id,
          name: account.name,
          slug: account.slug,
          kind: account.kind,
          idp_root_account_uuid: account.idpRootAccountUuid,
        },
        teammates: account.teammates.map((t) => teammate(t.id)!),
        api_key: { id: key.id, name: key.name, mode: key.mode, teammate: teammate(key.agentId), platform_fee_bps: key.platformFeeBps },
        processor: { mode: deps.processorSecrets[principal.mode].startsWith('sk_live_') ? 'live' : 'test' },
        settings: {
          send_buyer_email_after_payment: account.sendBuyerEmailAfterPayment,
          claims_notification_email: account.claimsNotificationEmail,
          personal_data_retention_years: account.personalDataRetentionYears,
        },
        producer: account.producer,
      };
    },

    /**
     * Changes the key's account's settings and producer fields (`PATCH /api/v1/account`; one left
     * out keeps its value, a producer field set to null is cleared) and answers the account as
     * `describe` does. Errors: NOT_FOUND (404) as `describe`.
     */
    async update(principal: Principal, body: AccountUpdate): Promise<AccountRead> {
      const found =
        (await deps.accounts.updateSettings(principal.rootAccountId, {
          sendBuyerEmailAfterPayment: body.settings?.send_buyer_email_after_payment,
          claimsNotificationEmail: body.settings?.claims_notification_email,
          personalDataRetentionYears: body.settings?.personal_data_retention_years,
        })) && (await deps.accounts.updateProducer(principal.rootAccountId, body.producer ?? {}));
      if (!found) throw notFound('account of API key', principal.apiKeyId);
      return this.describe(principal);
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;

/**
 * What the agency portal asks of the accounts domain: who a sign-in is (the teammate whose
 * `idp_teammate_uuid` is the identity provider's `sub`, with their account), the account page
 * (profile and teammates), teammates' portal roles (the last admin stays one), and the portal's
 * server-side sessions: `sessionStore` is the external store koa-session calls, so the portal
 * holds no repository or database of its own.
 */
export function createTeammateService(deps: {
  accounts: Pick<AccountsRepository, 'findTeammateByIdpUuid' | 'findById' | 'findProfile' | 'listTeammates' | 'setPortalRole'>;
  sessions: PortalSessionRepository;
}) {
  return {
    /** The teammate the identity provider knows as `idpTeammateUuid` (its `sub`), or null (also for a non-UUID). */
    findTeammate(idpTeammateUuid: string): Promise<Teammate | null> {
      return deps.accounts.findTeammateByIdpUuid(idpTeammateUuid);
    },

    /**
     * The signed-in teammate and their root account, re-read (a role change or removal applies at
     * once); null when there is no such teammate or their account is gone.
     */
    async findSignedIn(idpTeammateUuid: string): Promise<{ teammate: Teammate; account: RootAccount } | null> {
      const teammate = await deps.accounts.findTeammateByIdpUuid(idpTeammateUuid);
      const account = teammate ? await deps.accounts.findById(teammate.rootAccountId) : null;
      return teammate && account ? { teammate, account } : null;
    },

    /** Root account `rootAccountId` with its public ids and teammates (oldest first), or null when there is none. */
    profile(rootAccountId: number): Promise<AccountProfile | null> {
      return deps.accounts.findProfile(rootAccountId);
    },

    /** The account's teammates with their portal roles, oldest first. */
    listTeammates(rootAccountId: number): Promise<Teammate[]> {
      return deps.accounts.listTeammates(rootAccountId);
    },

    /**
     * Sets teammate `agentId`'s portal role in account `rootAccountId`; answers the teammate, or
     * null when the account has no such teammate. Throws VALIDATION_ERROR (400) rather than make
     * the account's last admin a viewer (checked in one transaction with the admins locked).
     */
    async setPortalRole(rootAccountId: number, agentId: number, role: PortalRole): Promise<Teammate | null> {
      const r = await deps.accounts.setPortalRole(rootAccountId, agentId, role);
      if (r === 'last_admin') throw new AppError('VALIDATION_ERROR', 'the account must keep at least one admin');
      return r;
    },

    /**
     * koa-session's external store (`get`, `set`, `destroy` by the cookie's session id; `maxAge` in
     * ms is the idle timeout): the portal's sessions, kept by the portal sessions repository.
     */
    sessionStore: {
      get: (key: string) => deps.sessions.get(key),
      set: (key: string, session: Record<string, unknown>, maxAgeMs: number | 'session') => deps.sessions.set(key, session, maxAgeMs),
      destroy: (key: string) => deps.sessions.destroy(key),
    },

    /** Removes the portal sessions whose idle timeout has passed; answers how many. */
    deleteExpiredSessions(): Promise<number> {
      return deps.sessions.deleteExpired();
    },
  };
}

export type TeammateService = ReturnType<typeof createTeammateService>;
