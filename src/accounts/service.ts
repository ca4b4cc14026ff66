/**
 * Account discovery (`GET /api/v1/account`): the calling key's root account with its public
 * ids, its teammates, the key itself (mode, teammate, platform fee in basis points) and whether
 * its payments reach the processor's live or test mode (the secret key its mode uses: `sk_live_…`
 * is live, anything else test). The first call of an integration: every id the quote, buyer and
 * certificate surfaces ask for is here.
 *
 * Errors: NOT_FOUND (404) only if the key's account or key row vanished between the gateway's
 * check and this read (a deleted key is refused at the gateway first).
 */
import type { Principal } from '../api-keys/service';
import type { ApiKeysRepository } from '../api-keys/repository';
import { notFound } from '../shared/errors';
import type { AccountsRepository } from './repository';
import type { AccountRead } from './schemas';

export function createAccountService(deps: {
  accounts: Pick<AccountsRepository, 'findProfile'>;
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
      };
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
