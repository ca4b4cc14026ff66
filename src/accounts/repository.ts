/**
 * Root accounts (agencies, MGAs, insurers) and their agents. Returns plain objects.
 * The portal that manages accounts is outside this service; the seed script and tests create them.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { EMPTY_PRODUCER_PROFILE, type ProducerProfile } from './types';
import type { AccountProfile, Agent, PartyAccount, PortalRole, RootAccount, RootAccountKind, Teammate } from './types';

export type { RootAccountKind, RootAccount, PortalRole, Agent, Teammate, AccountProfile, PartyAccount } from './types';

interface AgentRow {
  id: number;
  root_account_id: number;
  name: string;
  email: string;
  idp_teammate_uuid: string;
  portal_role: PortalRole;
}

const toTeammate = (r: AgentRow): Teammate => ({
  id: r.id,
  rootAccountId: r.root_account_id,
  name: r.name,
  email: r.email,
  idpTeammateUuid: String(r.idp_teammate_uuid),
  portalRole: r.portal_role,
});

interface RootAccountRow {
  id: number;
  slug: string;
  name: string;
  kind: RootAccountKind;
  checkout_success_url: string | null;
  checkout_cancel_url: string | null;
}

const toAccount = (r: RootAccountRow): RootAccount => ({
  id: r.id,
  slug: r.slug,
  name: r.name,
  kind: r.kind,
  checkoutSuccessUrl: r.checkout_success_url,
  checkoutCancelUrl: r.checkout_cancel_url,
});

export function createAccountsRepository(db: Db) {
  return {
    /**
     * Inserts the account, or updates name and kind of the one with the same slug. The return
     * URLs are written only when given (undefined leaves an existing account's as they are).
     */
    async upsertBySlug(
      input: Omit<RootAccount, 'id' | 'checkoutSuccessUrl' | 'checkoutCancelUrl'> &
        Partial<Pick<RootAccount, 'checkoutSuccessUrl' | 'checkoutCancelUrl'>>,
    ): Promise<RootAccount> {
      const urls = {
        ...(input.checkoutSuccessUrl !== undefined ? { checkout_success_url: input.checkoutSuccessUrl } : {}),
        ...(input.checkoutCancelUrl !== undefined ? { checkout_cancel_url: input.checkoutCancelUrl } : {}),
      };
      const [row] = await db<RootAccountRow>('root_accounts')
        .insert({ slug: input.slug, name: input.name, kind: input.kind, ...urls })
        .onConflict('slug')
        .merge(['name', 'kind', ...(Object.keys(urls) as (keyof RootAccountRow)[])])
        .returning('*');
      return toAccount(row as RootAccountRow);
    },

    /**
     * Sets the account's default checkout return URLs (used when the API key has none): a string
     * sets one, null clears it (the service's own pages then), undefined leaves it. Returns the
     * account, or null when there is none with this id. Callers validate the URLs.
     */
    async setCheckoutReturnUrls(id: number, urls: { successUrl?: string | null; cancelUrl?: string | null }): Promise<RootAccount | null> {
      const update = {
        ...(urls.successUrl !== undefined ? { checkout_success_url: urls.successUrl } : {}),
        ...(urls.cancelUrl !== undefined ? { checkout_cancel_url: urls.cancelUrl } : {}),
      };
      const q = db<RootAccountRow>('root_accounts').where({ id });
      const [row] = Object.keys(update).length
        ? await q.update({ ...update, updated_at: db.fn.now() } as Partial<RootAccountRow>).returning('*')
        : [await q.first()];
      return row ? toAccount(row as RootAccountRow) : null;
    },

    /**
     * Inserts the insurer or MGA with this slug, or updates the name and register number of the
     * one that exists. Null (nothing written) when the slug belongs to a root account of another
     * kind: an agency never becomes a party, nor an insurer an MGA.
     */
    async upsertParty(input: Omit<PartyAccount, 'id'>): Promise<PartyAccount | null> {
      const [row] = await db('root_accounts')
        .insert({ slug: input.slug, name: input.name, kind: input.kind, register_number: input.registerNumber })
        .onConflict('slug')
        .merge(['name', 'register_number'])
        .where('root_accounts.kind', input.kind)
        .returning(['id', 'slug', 'name', 'kind', 'register_number']);
      return row ? { id: row.id, slug: row.slug, name: row.name, kind: row.kind, registerNumber: row.register_number ?? null } : null;
    },

    /** Root account `id` (its slug, name, kind and checkout return URLs), or null when there is none. */
    async findById(id: number): Promise<RootAccount | null> {
      const row = await db<RootAccountRow>('root_accounts').where({ id }).first();
      return row ? toAccount(row) : null;
    },

    async findBySlug(slug: string): Promise<RootAccount | null> {
      const row = await db<RootAccountRow>('root_accounts').where({ slug }).first();
      return row ? toAccount(row) : null;
    },

    /**
     * Inserts the agent, or returns the existing one with the same account and email (its name
     * updated). `portalRole`, when given, is set too; a new agent is a `viewer` otherwise.
     */
    async upsertAgent(input: Omit<Agent, 'id'> & { portalRole?: PortalRole }): Promise<Agent> {
      const role = input.portalRole ? { portal_role: input.portalRole } : {};
      const [row] = await db('agents')
        .insert({ root_account_id: input.rootAccountId, name: input.name, email: input.email.toLowerCase(), ...role })
        .onConflict(['root_account_id', 'email'])
        .merge(['name', ...Object.keys(role)])
        .returning('*');
      return { id: row.id, rootAccountId: row.root_account_id, name: row.name, email: row.email };
    },

    /**
     * The account as its own API key may see it: id, slug, name, kind, its public
     * `idp_root_account_uuid`, and its teammates (agents: public `idp_teammate_uuid`, name, email),
     * oldest first. Null when there is no account with this id.
     */
    async findProfile(id: number): Promise<AccountProfile | null> {
      const row = await db('root_accounts').where({ id }).first();
      if (!row) return null;
      const agents = await db('agents').where({ root_account_id: id }).orderBy('id').select('id', 'idp_teammate_uuid', 'name', 'email');
      return {
        ...toAccount(row as RootAccountRow),
        idpRootAccountUuid: String(row.idp_root_account_uuid),
        sendBuyerEmailAfterPayment: row.send_buyer_email_after_payment !== false,
        claimsNotificationEmail: (row.claims_notification_email as string | null) ?? null,
        personalDataRetentionYears: Number(row.personal_data_retention_years),
        producer: { ...EMPTY_PRODUCER_PROFILE, ...((row.producer_profile as Partial<ProducerProfile> | null) ?? {}) },
        teammates: agents.map((a: { id: number; idp_teammate_uuid: string; name: string; email: string }) => ({
          id: a.id,
          idpTeammateUuid: String(a.idp_teammate_uuid),
          name: a.name,
          email: a.email,
        })),
      };
    },

    /**
     * Changes the account's settings: a value given is written, undefined leaves it. Returns
     * whether the account exists.
     */
    async updateSettings(
      id: number,
      settings: { sendBuyerEmailAfterPayment?: boolean; claimsNotificationEmail?: string | null; personalDataRetentionYears?: number },
    ): Promise<boolean> {
      const q = db('root_accounts').where({ id });
      const change: Record<string, unknown> = {};
      if (settings.sendBuyerEmailAfterPayment !== undefined) change.send_buyer_email_after_payment = settings.sendBuyerEmailAfterPayment;
      if (settings.personalDataRetentionYears !== undefined) change.personal_data_retention_years = settings.personalDataRetentionYears;
      if (settings.claimsNotificationEmail !== undefined) change.claims_notification_email = settings.claimsNotificationEmail;
      if (Object.keys(change).length === 0) return (await q.first('id')) !== undefined;
      return (await q.update(change)) > 0;
    },

    /**
     * The account's `personal_data_retention_years` setting (how long an erased buyer's names are
     * kept after its policies' coverage ends), read in `conn` (a caller's transaction, or the pool).
     */
    async personalDataRetentionYears(id: number, conn: Db | Knex.Transaction = db): Promise<number> {
      const row = await conn('root_accounts').where({ id }).first('personal_data_retention_years');
      return Number(row.personal_data_retention_years);
    },

    /** The claims notification addresses of the insurers and MGAs among `ids` that have one (id → email). */
    async claimsNotificationEmails(ids: number[]): Promise<Map<number, string>> {
      if (ids.length === 0) return new Map();
      const rows = await db('root_accounts')
        .whereIn('id', ids)
        .whereNotNull('claims_notification_email')
        .select('id', 'claims_notification_email');
      return new Map(rows.map((r: { id: number; claims_notification_email: string }) => [r.id, r.claims_notification_email]));
    },

    /**
     * Changes the account's producer block: a field given is written (null clears it), one left
     * out keeps its value. Returns whether the account exists.
     */
    async updateProducer(id: number, change: Partial<ProducerProfile>): Promise<boolean> {
      const q = db('root_accounts').where({ id });
      if (Object.keys(change).length === 0) return (await q.first('id')) !== undefined;
      const merged = db.raw("coalesce(producer_profile, '{}'::jsonb) || ?::jsonb", [JSON.stringify(change)]);
      return (await q.update({ producer_profile: merged })) > 0;
    },

    /** The teammate the identity provider knows as `idpTeammateUuid` (its `sub`), or null. */
    async findTeammateByIdpUuid(idpTeammateUuid: string): Promise<Teammate | null> {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idpTeammateUuid)) return null;
      const row = await db<AgentRow>('agents').where({ idp_teammate_uuid: idpTeammateUuid }).first();
      return row ? toTeammate(row) : null;
    },

    /**
     * Sets a teammate's portal role; returns the teammate, or null when the account has no such
     * teammate. Refuses (returns 'last_admin') to make the account's last admin anything else, in one
     * transaction with the account's admins locked, so two demotions at once cannot both pass.
     */
    async setPortalRole(rootAccountId: number, agentId: number, role: PortalRole): Promise<Teammate | null | 'last_admin'> {
      return db.transaction(async (trx) => {
        const admins = (await trx<AgentRow>('agents')
          .where({ root_account_id: rootAccountId, portal_role: 'admin' })
          .forUpdate()) as AgentRow[];
        const row = (await trx<AgentRow>('agents').where({ id: agentId, root_account_id: rootAccountId }).first()) as AgentRow | undefined;
        if (!row) return null;
        if (role !== 'admin' && row.portal_role === 'admin' && admins.length <= 1) return 'last_admin';
        const [updated] = (await trx<AgentRow>('agents').where({ id: agentId }).update({ portal_role: role }).returning('*')) as AgentRow[];
        return toTeammate(updated!);
      });
    },

    /** The account's teammates with their portal roles, oldest first. */
    async listTeammates(rootAccountId: number): Promise<Teammate[]> {
      return ((await db<AgentRow>('agents').where({ root_account_id: rootAccountId }).orderBy('id')) as AgentRow[]).map(toTeammate);
    },

    /**
     * The id of the agent known as `idpTeammateUuid` (as given: the caller lower-cases it) under
     * root account `rootAccountId`, or null when that account has no such teammate.
     */
    async findAgentIdByIdpUuid(rootAccountId: number, idpTeammateUuid: string): Promise<number | null> {
      const row = await db('agents').where({ idp_teammate_uuid: idpTeammateUuid, root_account_id: rootAccountId }).first('id');
      return row ? (row.id as number) : null;
    },

    /** Whether root account `id` is the one known as `idpRootAccountUuid` (as given: the caller lower-cases it). */
    async hasIdpRootAccountUuid(id: number, idpRootAccountUuid: string): Promise<boolean> {
      return (await db('root_accounts').where({ id, idp_root_account_uuid: idpRootAccountUuid }).first('id')) !== undefined;
    },

    async findAgent(id: number): Promise<Agent | null> {
      const row = await db('agents').where({ id }).first();
      return row ? { id: row.id, rootAccountId: row.root_account_id, name: row.name, email: row.email } : null;
    },
  };
}

export type AccountsRepository = ReturnType<typeof createAccountsRepository>;
