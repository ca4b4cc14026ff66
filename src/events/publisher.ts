/**
 * Publishing an agency event: record it once, make one delivery per endpoint of the account and
 * mode that takes its type, and start each pending delivery's workflow (`eventDeliveryWorkflow`,
 * id `event-delivery-<delivery>-<resends>`, so a repeated publish or resend never runs twice).
 * Called from the activities that change a purchase (a retried activity publishes the same
 * event id again, which changes nothing) and by the resend route. A purchase never waits for a
 * delivery: starting a workflow is all that happens here.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { eventDeliveryWorkflowId, type EventDeliveryInput } from '../../workflows/contracts';
import { eventDeliveryWorkflow } from '../../workflows/event-delivery';
import { AGENCY_ID, MODE } from '../../workflows/search-attributes';
import type { WebhookEndpointsRepository } from '../webhook-endpoints/repository';
import type { Config } from '../config';
import type { EventsRepository, StoredEvent } from './repository';

/** Delivery settings (config WEBHOOK_*). */
export interface DeliverySettings {
  initialRetrySeconds: number;
  retryWindowSeconds: number;
  timeoutMs: number;
}

/** The delivery settings the config holds (`WEBHOOK_RETRY_INITIAL_SECONDS`, `…_WINDOW_HOURS`, `WEBHOOK_DELIVERY_TIMEOUT_MS`). */
export function deliverySettingsFromConfig(
  config: Pick<Config, 'WEBHOOK_RETRY_INITIAL_SECONDS' | 'WEBHOOK_RETRY_WINDOW_HOURS' | 'WEBHOOK_DELIVERY_TIMEOUT_MS'>,
): DeliverySettings {
  return {
    initialRetrySeconds: config.WEBHOOK_RETRY_INITIAL_SECONDS,
    retryWindowSeconds: config.WEBHOOK_RETRY_WINDOW_HOURS * 3600,
    timeoutMs: config.WEBHOOK_DELIVERY_TIMEOUT_MS,
  };
}

/**
 * Starts a delivery's workflow once per (delivery, resend count). `owner` is the endpoint's root
 * account and mode: the run carries them as its AgencyId and Mode search attributes, so an
 * operator finds an agency's deliveries beside its purchases (`ops stuck`, the Temporal UI).
 */
export type DeliveryStarter = (
  deliveryId: number,
  resends: number,
  owner: { rootAccountId: number; mode: 'live' | 'test' },
) => Promise<void>;

export function createDeliveryStarter(client: Pick<Client, 'workflow'>, taskQueue: string, settings: DeliverySettings): DeliveryStarter {
  return async (deliveryId, resends, owner) => {
    const input: EventDeliveryInput = { deliveryId, ...settings };
    try {
      await client.workflow.start(eventDeliveryWorkflow, {
        workflowId: eventDeliveryWorkflowId(deliveryId, resends),
        taskQueue,
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        typedSearchAttributes: [
          { key: AGENCY_ID, value: String(owner.rootAccountId) },
          { key: MODE, value: owner.mode },
        ],
        staticSummary: `Event delivery ${deliveryId} · agency ${owner.rootAccountId} · ${owner.mode}`,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  };
}

export function createEventPublisher(deps: {
  events: EventsRepository;
  endpoints: Pick<WebhookEndpointsRepository, 'subscribedTo'>;
  startDelivery: DeliveryStarter;
}) {
  return {
    /**
     * Records the event and starts its pending deliveries. Returns whether this call recorded it
     * (false: an earlier call did) and how many deliveries it has.
     */
    async publish(stored: StoredEvent): Promise<{ recorded: boolean; deliveries: number }> {
      const recorded = await deps.events.record(stored);
      const endpoints = await deps.endpoints.subscribedTo({ rootAccountId: stored.rootAccountId, mode: stored.mode }, stored.event.type);
      const deliveries = await deps.events.ensureDeliveries(
        stored.event.id,
        endpoints.map((e) => e.id),
      );
      const owner = { rootAccountId: stored.rootAccountId, mode: stored.mode };
      for (const d of deliveries) if (d.status === 'pending') await deps.startDelivery(d.id, d.resends, owner);
      return { recorded, deliveries: deliveries.length };
    },
  };
}

export type EventPublisher = ReturnType<typeof createEventPublisher>;
