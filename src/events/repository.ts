/**
 * The only writer of `agency_events`, `event_deliveries` and `event_delivery_attempts`: the
 * events recorded for an agency, each one's delivery to each endpoint, and every HTTP attempt.
 * Reads are scoped by root account and key mode.
 */
import type { Knex } from 'knex';
import { replaceJsonStrings } from '../db/json-redaction';
import type { Db } from '../db/knex';
import { NEWEST_FIRST, pageWithTotal } from '../db/paging';
import type { KeyMode } from '../api-keys/secrets';
import type { AgencyEvent } from './types';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface StoredEvent {
  event: AgencyEvent;
  rootAccountId: number;
  mode: KeyMode;
  purchaseId: number | null;
}

export interface DeliveryAttempt {
  attemptedAt: Date;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
}

export interface Delivery {
  id: number;
  eventId: string;
  endpointId: number;
  endpointUrl: string;
  status: DeliveryStatus;
  resends: number;
  createdAt: Date;
  finishedAt: Date | null;
  attempts: DeliveryAttempt[];
}

const toStored = (r: Record<string, unknown>): StoredEvent => ({
  event: r.data as AgencyEvent,
  rootAccountId: r.root_account_id as number,
  mode: r.mode as KeyMode,
  purchaseId: (r.purchase_id as number | null) ?? null,
});

export function createEventsRepository(db: Db) {
  return {
    /** Records `event` once (its id is derived from what happened); false when it already was. */
    async record(input: StoredEvent): Promise<boolean> {
      const inserted = await db('agency_events')
        .insert({
          id: input.event.id,
          root_account_id: input.rootAccountId,
          mode: input.mode,
          type: input.event.type,
          purchase_id: input.purchaseId,
          data: JSON.stringify(input.event),
          created_at: new Date(input.event.created * 1000),
        })
        .onConflict('id')
        .ignore()
        .returning('id');
      return inserted.length > 0;
    },

    async find(id: string): Promise<StoredEvent | undefined> {
      const row = await db('agency_events').where({ id }).first();
      return row ? toStored(row) : undefined;
    },

    /** Ensures one delivery of `eventId` per endpoint; returns every delivery of the event to those endpoints (`created`: made by this call). */
    async ensureDeliveries(
      eventId: string,
      endpointIds: number[],
    ): Promise<Array<{ id: number; endpointId: number; status: DeliveryStatus; resends: number; created: boolean }>> {
      if (endpointIds.length === 0) return [];
      const created: Array<{ id: number }> = await db('event_deliveries')
        .insert(endpointIds.map((endpointId) => ({ event_id: eventId, endpoint_id: endpointId })))
        .onConflict(['event_id', 'endpoint_id'])
        .ignore()
        .returning('id');
      const fresh = new Set(created.map((r) => r.id));
      const rows = await db('event_deliveries').where({ event_id: eventId }).whereIn('endpoint_id', endpointIds).orderBy('id');
      return rows.map((r) => ({ id: r.id, endpointId: r.endpoint_id, status: r.status, resends: r.resends, created: fresh.has(r.id) }));
    },

    /** A delivery with its event and endpoint ids. */
    async delivery(id: number): Promise<{ id: number; eventId: string; endpointId: number; status: DeliveryStatus } | undefined> {
      const r = await db('event_deliveries').where({ id }).first();
      return r ? { id: r.id, eventId: r.event_id, endpointId: r.endpoint_id, status: r.status } : undefined;
    },

    async recordAttempt(deliveryId: number, attempt: Omit<DeliveryAttempt, 'attemptedAt'>): Promise<void> {
      await db('event_delivery_attempts').insert({
        delivery_id: deliveryId,
        response_status: attempt.responseStatus,
        error: attempt.error?.slice(0, 500) ?? null,
        duration_ms: attempt.durationMs,
      });
    },

    /** Settles a delivery: `succeeded` or `failed` (gave up), with its finish time. */
    async finish(deliveryId: number, status: 'succeeded' | 'failed'): Promise<void> {
      await db('event_deliveries').where({ id: deliveryId }).update({ status, finished_at: db.fn.now() });
    },

    /** Puts a delivery back to `pending` for a resend; returns the new resend count. */
    async reopenForResend(deliveryId: number): Promise<number> {
      const [row] = await db('event_deliveries')
        .where({ id: deliveryId })
        .update({ status: 'pending', finished_at: null, resends: db.raw('resends + 1') })
        .returning('resends');
      return row.resends as number;
    },

    /**
     * A page of the account's events of `mode`, newest first, optionally of one type and of one
     * purchase (within the scope), without those of the types in `excludeTypes`.
     */
    async list(
      scope: { rootAccountId: number; mode: KeyMode },
      q: { type?: string; purchaseId?: number; excludeTypes?: string[]; limit: number; offset: number },
    ): Promise<{ items: AgencyEvent[]; total: number }> {
      const filtered = db('agency_events').where({ root_account_id: scope.rootAccountId, mode: scope.mode });
      if (q.type) filtered.where({ type: q.type });
      if (q.excludeTypes?.length) filtered.whereNotIn('type', q.excludeTypes);
      if (q.purchaseId !== undefined) filtered.where({ purchase_id: q.purchaseId });
      const { rows, total } = await pageWithTotal<{ data: AgencyEvent }>(filtered, {
        orderBy: NEWEST_FIRST,
        limit: q.limit,
        offset: q.offset,
      });
      return { items: rows.map((r) => r.data), total };
    },

    /** Every delivery of an event with its attempts (oldest first). */
    async deliveriesOf(eventId: string): Promise<Delivery[]> {
      const rows = await db('event_deliveries as d')
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .where('d.event_id', eventId)
        .orderBy('d.id')
        .select('d.*', 'e.url');
      return withAttempts(rows);
    },

    /**
     * The newest `limit` deliveries to one endpoint of events of the scope (newest first), each
     * with its attempts (oldest first) and its event's type; none for another account's or mode's
     * endpoint.
     */
    async deliveriesToEndpoint(
      scope: { rootAccountId: number; mode: KeyMode },
      endpointId: number,
      limit: number,
    ): Promise<Array<Delivery & { eventType: string }>> {
      const rows = await db('event_deliveries as d')
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .join('agency_events as a', 'a.id', 'd.event_id')
        .where({ 'd.endpoint_id': endpointId, 'a.root_account_id': scope.rootAccountId, 'a.mode': scope.mode })
        .orderBy('d.id', 'desc')
        .limit(limit)
        .select('d.*', 'e.url', 'a.type as event_type');
      const deliveries = await withAttempts(rows);
      return deliveries.map((d, i) => ({ ...d, eventType: rows[i].event_type as string }));
    },

    /**
     * A buyer's erasure on purchases `purchaseIds`, in `trx`: in their stored events' `data`, every
     * whole JSON string value equal to a pair's first element becomes its second (the buyer's
     * emails and names replaced by their placeholders).
     */
    eraseBuyerValues(trx: Knex.Transaction, purchaseIds: number[], replacements: Array<[string, string]>): Promise<void> {
      return replaceJsonStrings(trx, { table: 'agency_events', column: 'data' }, purchaseIds, replacements);
    },
  };

  /** Delivery rows (with the endpoint's `url`) as deliveries with their attempts, in the rows' order. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- knex's rows
  async function withAttempts(rows: any[]): Promise<Delivery[]> {
    const attempts = rows.length
      ? await db('event_delivery_attempts')
          .whereIn(
            'delivery_id',
            rows.map((r) => r.id),
          )
          .orderBy('id')
      : [];
    return rows.map((r) => ({
      id: r.id,
      eventId: r.event_id,
      endpointId: r.endpoint_id,
      endpointUrl: r.url,
      status: r.status,
      resends: r.resends,
      createdAt: r.created_at,
      finishedAt: r.finished_at,
      attempts: attempts
        .filter((a) => a.delivery_id === r.id)
        .map((a) => ({ attemptedAt: a.attempted_at, responseStatus: a.response_status, error: a.error, durationMs: a.duration_ms })),
    }));
  }
}

export type EventsRepository = ReturnType<typeof createEventsRepository>;
