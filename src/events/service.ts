/**
 * The events an agency can read and resend: list (newest first, optionally of one type or one
 * purchase: only within the key's account and mode, so another account's purchase lists none;
 * never a test event), one event with every delivery and attempt, resend (a new run of each
 * finished delivery, and a first delivery to endpoints that take the type but were added since),
 * and a test event sent to one endpoint (`webhook_endpoint.test`, see `sendTest`).
 * Errors (AppError): NOT_FOUND (404) for an event or endpoint that is not the key's account's and
 * mode's; INVALID_REQUEST (400) for a test event to a disabled endpoint.
 */
import { AppError, notFound } from '../shared/errors';
import type { AccountView } from '../api-keys/service';
import type { WebhookEndpointsRepository } from '../webhook-endpoints/repository';
import type { DeliveryStarter } from './publisher';
import type { Delivery, EventsRepository, StoredEvent } from './repository';
import { ENDPOINT_TEST_EVENT_TYPE, type AgencyEvent } from './types';
import { endpointTestEvent } from './payloads';

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
  endpoints: Pick<WebhookEndpointsRepository, 'subscribedTo' | 'find'>;
  startDelivery: DeliveryStarter;
}) {
  async function owned(principal: AccountView, id: string) {
    const stored = /^evt_[0-9a-f]{32}$/.test(id) ? await deps.events.find(id) : undefined;
    if (!stored || stored.rootAccountId !== principal.rootAccountId || stored.mode !== principal.mode) throw notFound('Event', id);
    return stored;
  }
  /**
   * The endpoints an event goes to now: those that take its type, not disabled; for a test event,
   * the endpoint it was sent to, if it still exists and is not disabled.
   */
  async function targetsOf(stored: StoredEvent) {
    const scope = { rootAccountId: stored.rootAccountId, mode: stored.mode };
    if (stored.event.type !== ENDPOINT_TEST_EVENT_TYPE) return deps.endpoints.subscribedTo(scope, stored.event.type);
    const tested = await deps.endpoints.find(scope, Number(stored.event.data.object.endpoint_id));
    return tested && tested.status !== 'disabled' ? [tested] : [];
  }
  /** Starts the deliveries of an event that exists to `endpointIds` (a new run of each finished one). */
  async function deliver(stored: StoredEvent, endpointIds: number[]) {
    const deliveries = await deps.events.ensureDeliveries(stored.event.id, endpointIds);
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
    return out;
  }
  return {
    async list(
      principal: AccountView,
      q: { type?: string; purchase_id?: number; pageSize: number; pageIndex: number },
    ): Promise<{ items: AgencyEvent[]; total: number }> {
      return deps.events.list(
        { rootAccountId: principal.rootAccountId, mode: principal.mode },
        {
          type: q.type,
          purchaseId: q.purchase_id,
          excludeTypes: [ENDPOINT_TEST_EVENT_TYPE],
          limit: q.pageSize,
          offset: q.pageSize * q.pageIndex,
        },
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
     * the account and mode that takes the event's type. A test event goes again to the endpoint it
     * was sent to (if not disabled), never to another.
     */
    async resend(
      principal: AccountView,
      id: string,
      only?: { endpointId: number },
    ): Promise<{ event_id: string; deliveries: Array<{ delivery_id: number; endpoint_id: number; action: 'resent' | 'in_progress' }> }> {
      const stored = await owned(principal, id);
      const subscribed = await targetsOf(stored);
      const endpoints = only ? subscribed.filter((e) => e.id === only.endpointId) : subscribed;
      if (only && endpoints.length === 0) throw notFound('Webhook endpoint taking this event', only.endpointId);
      return {
        event_id: id,
        deliveries: await deliver(
          stored,
          endpoints.map((e) => e.id),
        ),
      };
    },
    /**
     * Sends a new `webhook_endpoint.test` event (its object names the endpoint; `requestedVia`:
     * `api` or `portal`) to one of the account's endpoints of the principal's mode, and to it
     * alone, whatever events it takes; it is delivered, signed and retried like every event.
     * Returns the event with its one delivery (pending). NOT_FOUND when the endpoint is not the
     * account's and mode's; INVALID_REQUEST when it is disabled (a disabled endpoint gets nothing).
     */
    async sendTest(
      principal: AccountView,
      endpointId: number,
      requestedVia: 'api' | 'portal',
    ): Promise<AgencyEvent & { deliveries: DeliveryView[] }> {
      const endpoint = await deps.endpoints.find({ rootAccountId: principal.rootAccountId, mode: principal.mode }, endpointId);
      if (!endpoint) throw notFound('Webhook endpoint', endpointId);
      if (endpoint.status === 'disabled')
        throw new AppError('INVALID_REQUEST', `Webhook endpoint ${endpointId} is disabled: enable it before sending it a test event`);
      const stored = endpointTestEvent(endpoint, requestedVia);
      await deps.events.record(stored);
      await deliver(stored, [endpoint.id]);
      return { ...stored.event, deliveries: (await deps.events.deliveriesOf(stored.event.id)).map(toDeliveryView) };
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;
