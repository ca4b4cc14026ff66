/**
 * The events an agency can read and resend: list (newest first, optionally of one type or one
 * purchase: only within the key's account and mode, so another account's purchase lists none), one
 * event with every delivery and attempt, and resend (a new run of each finished delivery, and a
 * first delivery to endpoints that take the type but were added since).
 * Errors (AppError): NOT_FOUND (404) for an event that is not the key's account's and mode's.
 */
import { notFound } from '../shared/errors';
import type { AccountView } from '../api-keys/service';
import type { WebhookEndpointsRepository } from '../webhook-endpoints/repository';
import type { DeliveryStarter } from './publisher';
import type { Delivery, EventsRepository } from './repository';
import type { AgencyEvent } from './types';

export interface DeliveryView {
  id: number;
  endpoint_id: number;
  url: string;
  status: Delivery['status'];
  resends: number;
  created_at: string;
  finished_at: string | null;
  attempts: Array<{ attempted_at: string; response_status: number | null; error: string | null; duration_ms: number }>;
}

const toDeliveryView = (d: Delivery): DeliveryView => ({
  id: d.id,
  endpoint_id: d.endpointId,
  url: d.endpointUrl,
  status: d.status,
  resends: d.resends,
  created_at: d.createdAt.toISOString(),
  finished_at: d.finishedAt?.toISOString() ?? null,
  attempts: d.attempts.map((a) => ({
    attempted_at: a.attemptedAt.toISOString(),
    response_status: a.responseStatus,
    error: a.error,
    duration_ms: a.durationMs,
  })),
});

export function createEventService(deps: {
  events: EventsRepository;
  endpoints: Pick<WebhookEndpointsRepository, 'subscribedTo'>;
  startDelivery: DeliveryStarter;
}) {
  async function owned(principal: AccountView, id: string) {
    const stored = /^evt_[0-9a-f]{32}$/.test(id) ? await deps.events.find(id) : undefined;
    if (!stored || stored.rootAccountId !== principal.rootAccountId || stored.mode !== principal.mode) throw notFound('Event', id);
    return stored;
  }
  return {
    async list(
      principal: AccountView,
      q: { type?: string; purchase_id?: number; pageSize: number; pageIndex: number },
    ): Promise<{ items: AgencyEvent[]; total: number }> {
      return deps.events.list(
        { rootAccountId: principal.rootAccountId, mode: principal.mode },
        { type: q.type, purchaseId: q.purchase_id, limit: q.pageSize, offset: q.pageSize * q.pageIndex },
      );
    },
    async get(principal: AccountView, id: string): Promise<AgencyEvent & { deliveries: DeliveryView[] }> {
      const stored = await owned(principal, id);
      return { ...stored.event, deliveries: (await deps.events.deliveriesOf(id)).map(toDeliveryView) };
    },
    /**
     * The newest `limit` deliveries to one of the account's endpoints in the principal's mode
     * (newest first), each with its attempts and its event's id and type; none for an endpoint
     * that is not the account's and mode's.
     */
    async deliveriesToEndpoint(
      principal: AccountView,
      endpointId: number,
      limit: number,
    ): Promise<Array<DeliveryView & { event_id: string; event_type: string }>> {
      const rows = await deps.events.deliveriesToEndpoint(
        { rootAccountId: principal.rootAccountId, mode: principal.mode },
        endpointId,
        limit,
      );
      return rows.map((d) => ({ ...toDeliveryView(d), event_id: d.eventId, event_type: d.eventType }));
    },
    /**
     * Sends the event again to every endpoint that takes its type now: finished deliveries run
     * again (a new workflow run), endpoints added since get their first; a delivery still being
     * attempted is left to finish (`in_progress`). With `only.endpointId`, to that endpoint alone
     * (the portal's "send again to this endpoint"): NOT_FOUND when it is not an enabled endpoint of
     * the account and mode that takes the event's type.
     */
    async resend(
      principal: AccountView,
      id: string,
      only?: { endpointId: number },
    ): Promise<{ event_id: string; deliveries: Array<{ delivery_id: number; endpoint_id: number; action: 'resent' | 'in_progress' }> }> {
      const stored = await owned(principal, id);
      const subscribed = await deps.endpoints.subscribedTo({ rootAccountId: stored.rootAccountId, mode: stored.mode }, stored.event.type);
      const endpoints = only ? subscribed.filter((e) => e.id === only.endpointId) : subscribed;
      if (only && endpoints.length === 0) throw notFound('Webhook endpoint taking this event', only.endpointId);
      const deliveries = await deps.events.ensureDeliveries(
        id,
        endpoints.map((e) => e.id),
      );
      const out: Array<{ delivery_id: number; endpoint_id: number; action: 'resent' | 'in_progress' }> = [];
      const owner = { rootAccountId: stored.rootAccountId, mode: stored.mode };
      for (const d of deliveries) {
        if (d.created || d.status === 'pending') {
          // A first delivery (an endpoint added since), or one still being attempted: (re)starting
          // its run is a no-op while that run is open.
          await deps.startDelivery(d.id, d.resends, owner);
          out.push({ delivery_id: d.id, endpoint_id: d.endpointId, action: d.created ? 'resent' : 'in_progress' });
        } else {
          await deps.startDelivery(d.id, await deps.events.reopenForResend(d.id), owner);
          out.push({ delivery_id: d.id, endpoint_id: d.endpointId, action: 'resent' });
        }
      }
      return { event_id: id, deliveries: out };
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;
