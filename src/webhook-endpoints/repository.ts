/**
 * The only writer of `webhook_endpoints`: an agency's URLs that receive signed events, per root
 * account and key mode. Deleted endpoints are kept (`deleted_at`) for their delivery history and
 * are invisible to every read below except `findForDelivery`.
 */
import type { Db } from '../db/knex';
import { pageWithTotal } from '../db/paging';
import type { KeyMode } from '../api-keys/secrets';

export type EndpointStatus = 'enabled' | 'disabled' | 'failing';

export interface WebhookEndpoint {
  id: number;
  rootAccountId: number;
  mode: KeyMode;
  url: string;
  enabledEvents: string[];
  description: string;
  /** The signing secret (`whsec_…`): shown to the agency once, at creation. */
  secret: string;
  status: EndpointStatus;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

/** Whose endpoints: a key's account and mode. */
export interface EndpointScope {
  rootAccountId: number;
  mode: KeyMode;
}

const fromRow = (r: Record<string, unknown>): WebhookEndpoint => ({
  id: r.id as number,
  rootAccountId: r.root_account_id as number,
  mode: r.mode as KeyMode,
  url: r.url as string,
  enabledEvents: r.enabled_events as string[],
  description: r.description as string,
  secret: r.secret as string,
  status: r.status as EndpointStatus,
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
  deletedAt: (r.deleted_at as Date | null) ?? null,
});

export function createWebhookEndpointsRepository(db: Db) {
  const visible = (scope: EndpointScope) =>
    db('webhook_endpoints').where({ root_account_id: scope.rootAccountId, mode: scope.mode }).whereNull('deleted_at');
  return {
    async create(
      scope: EndpointScope,
      input: { url: string; enabledEvents: string[]; description: string; secret: string },
    ): Promise<WebhookEndpoint> {
      const [row] = await db('webhook_endpoints')
        .insert({
          root_account_id: scope.rootAccountId,
          mode: scope.mode,
          url: input.url,
          enabled_events: input.enabledEvents,
          description: input.description,
          secret: input.secret,
        })
        .returning('*');
      return fromRow(row);
    },

    async list(scope: EndpointScope, page: { limit: number; offset: number }): Promise<{ items: WebhookEndpoint[]; total: number }> {
      const found = await pageWithTotal<Record<string, unknown>>(visible(scope), { orderBy: [{ column: 'id', order: 'asc' }], ...page });
      return { items: found.rows.map(fromRow), total: found.total };
    },

    async find(scope: EndpointScope, id: number): Promise<WebhookEndpoint | undefined> {
      const row = await visible(scope).where({ id }).first();
      return row ? fromRow(row) : undefined;
    },

    /** Changes the sent fields of a visible endpoint; undefined when there is none. */
    async update(
      scope: EndpointScope,
      id: number,
      change: { url?: string; enabledEvents?: string[]; description?: string; status?: EndpointStatus },
    ): Promise<WebhookEndpoint | undefined> {
      const set: Record<string, unknown> = { updated_at: db.fn.now() };
      if (change.url !== undefined) set.url = change.url;
      if (change.enabledEvents !== undefined) set.enabled_events = change.enabledEvents;
      if (change.description !== undefined) set.description = change.description;
      if (change.status !== undefined) set.status = change.status;
      const [row] = await visible(scope).where({ id }).update(set).returning('*');
      return row ? fromRow(row) : undefined;
    },

    /** Deletes a visible endpoint (kept for history); false when there is none. */
    async delete(scope: EndpointScope, id: number): Promise<boolean> {
      return (await visible(scope).where({ id }).update({ deleted_at: db.fn.now(), updated_at: db.fn.now() })) > 0;
    },

    /** The endpoints of the account and mode that take `type`: not deleted, not disabled. */
    async subscribedTo(scope: EndpointScope, type: string): Promise<WebhookEndpoint[]> {
      const rows = await visible(scope)
        .whereNot({ status: 'disabled' })
        .where((q) => q.whereRaw('? = any(enabled_events)', [type]).orWhereRaw(`'*' = any(enabled_events)`))
        .orderBy('id');
      return rows.map(fromRow);
    },

    /** Any endpoint by id, deleted ones included (a delivery in flight reads where it goes). */
    async findForDelivery(id: number): Promise<WebhookEndpoint | undefined> {
      const row = await db('webhook_endpoints').where({ id }).first();
      return row ? fromRow(row) : undefined;
    },

    /** Marks an endpoint `failing` (a delivery gave up), unless the agency disabled it. */
    async markFailing(id: number): Promise<void> {
      await db('webhook_endpoints').where({ id }).whereNot({ status: 'disabled' }).update({ status: 'failing', updated_at: db.fn.now() });
    },
  };
}

export type WebhookEndpointsRepository = ReturnType<typeof createWebhookEndpointsRepository>;
