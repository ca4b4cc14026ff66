/**
 * eventDeliveryWorkflow: delivers one agency event to one webhook endpoint (id
 * `event-delivery-<delivery>-<resends>`). The `deliverEvent` activity makes one signed POST per
 * attempt; failures retry with exponential backoff (from `initialRetrySeconds`, doubling, at most
 * an hour apart) until `retryWindowSeconds` (3 days by default) have passed, then the delivery
 * ends `failed` and its endpoint is marked `failing`. A refused live-mode destination gives up at
 * once. Nothing waits for this workflow: purchases go on whatever it does. The `status` query
 * answers `EventDeliveryStatusView`. Deterministic code only.
 */
import { defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import type { EventActivities } from '../activities/events';
import { STATUS_QUERY, type EventDeliveryInput } from './contracts';

/** What the delivery workflow's `status` query answers (attempts are in the activity's retry state and `GET /events/{id}`). */
export interface EventDeliveryStatusView {
  deliveryId: number;
  phase: 'delivering' | 'succeeded' | 'skipped' | 'failed';
}
export const eventDeliveryStatusQuery = defineQuery<EventDeliveryStatusView>(STATUS_QUERY);

const settle = proxyActivities<EventActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export async function eventDeliveryWorkflow(input: EventDeliveryInput): Promise<'succeeded' | 'skipped' | 'failed'> {
  const deliver = proxyActivities<EventActivities>({
    // The endpoint's deadline plus the time to record the attempt.
    startToCloseTimeout: `${Math.ceil(input.timeoutMs / 1000) + 20} seconds`,
    scheduleToCloseTimeout: `${input.retryWindowSeconds} seconds`,
    retry: {
      initialInterval: `${input.initialRetrySeconds} seconds`,
      backoffCoefficient: 2,
      maximumInterval: '1 hour',
      nonRetryableErrorTypes: ['DestinationRefused', 'DeliveryNotFound'],
    },
  });
  const view: EventDeliveryStatusView = { deliveryId: input.deliveryId, phase: 'delivering' };
  setHandler(eventDeliveryStatusQuery, () => ({ ...view }));
  try {
    view.phase = await deliver.deliverEvent({ deliveryId: input.deliveryId, timeoutMs: input.timeoutMs });
  } catch {
    await settle.giveUpEventDelivery({ deliveryId: input.deliveryId });
    view.phase = 'failed';
  }
  return view.phase;
}
