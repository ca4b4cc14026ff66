/**
 * Activities of `eventDeliveryWorkflow`: one HTTP attempt of a delivery, and giving up on it.
 *
 * `deliverEvent` signs the stored event with the endpoint's secret (`Signature: t=…,v1=…`) and
 * POSTs it; a 2xx answer within the timeout settles the delivery `succeeded`. Any other answer,
 * a timeout or a network error is recorded as an attempt and thrown (retryable: the workflow's
 * retry policy backs off exponentially for the retry window). A live-mode destination that is,
 * or resolves to, a private address is recorded and thrown non-retryable (`DestinationRefused`).
 * A delivery whose endpoint was deleted or disabled meanwhile ends `failed` without a request.
 * Metrics: every attempt counts in `event_delivery_attempts_total{outcome,mode,root_account_id,endpoint}`; a
 * delivery counts once in `event_deliveries_total{outcome,mode,root_account_id,endpoint}` when it ends
 * (succeeded, skipped, or failed when it gives up), so a retried delivery is not a failure until it
 * is one. `root_account_id` is the endpoint's agency and `endpoint` its id (both `unknown` when the
 * endpoint is gone; bounded by the endpoints that exist), so one agency's failing endpoint is a
 * signal about that endpoint (a ticket), not a page, even beside a healthy endpoint of the same
 * agency (issue 55 item 2).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { EventsRepository } from '../src/events/repository';
import type { WebhookEndpoint, WebhookEndpointsRepository } from '../src/webhook-endpoints/repository';
import { DestinationRefusedError, postEvent } from '../src/events/destination';
import { SIGNATURE_HEADER, signatureHeader } from '../src/events/signing';
import type { WorkerMetrics } from '../src/metrics/registry';

export function createEventActivities(deps: {
  events: EventsRepository;
  endpoints: WebhookEndpointsRepository;
  metrics?: Pick<WorkerMetrics, 'eventDeliveries' | 'eventDeliveryAttempts'>;
}) {
  type Owner = Pick<WebhookEndpoint, 'id' | 'mode' | 'rootAccountId'> | undefined;
  const labels = (endpoint: Owner) => ({
    mode: endpoint?.mode ?? 'unknown',
    root_account_id: endpoint ? String(endpoint.rootAccountId) : 'unknown',
    endpoint: endpoint ? String(endpoint.id) : 'unknown',
  });
  const attempt = (outcome: 'succeeded' | 'rejected' | 'failed' | 'refused', endpoint: Owner) =>
    deps.metrics?.eventDeliveryAttempts.inc({ outcome, ...labels(endpoint) });
  const ended = (outcome: 'succeeded' | 'failed' | 'skipped', endpoint: Owner) =>
    deps.metrics?.eventDeliveries.inc({ outcome, ...labels(endpoint) });
  return {
    async deliverEvent(input: { deliveryId: number; timeoutMs: number }): Promise<'succeeded' | 'skipped'> {
      const delivery = await deps.events.delivery(input.deliveryId);
      if (!delivery) throw ApplicationFailure.nonRetryable(`delivery ${input.deliveryId} does not exist`, 'DeliveryNotFound');
      if (delivery.status === 'succeeded') return 'succeeded';
      const [stored, endpoint] = await Promise.all([
        deps.events.find(delivery.eventId),
        deps.endpoints.findForDelivery(delivery.endpointId),
      ]);
      if (!stored || !endpoint || endpoint.deletedAt || endpoint.status === 'disabled') {
        await deps.events.finish(delivery.id, 'failed');
        ended('skipped', endpoint);
        return 'skipped';
      }
      const payload = JSON.stringify(stored.event);
      const started = Date.now();
      try {
        const res = await postEvent(
          endpoint.url,
          payload,
          { [SIGNATURE_HEADER]: signatureHeader(endpoint.secret, payload, Math.floor(Date.now() / 1000)) },
          {
            allowPrivate: endpoint.mode === 'test',
            timeoutMs: input.timeoutMs,
          },
        );
        await deps.events.recordAttempt(delivery.id, { responseStatus: res.status, error: null, durationMs: Date.now() - started });
        if (res.status >= 200 && res.status < 300) {
          await deps.events.finish(delivery.id, 'succeeded');
          attempt('succeeded', endpoint);
          ended('succeeded', endpoint);
          return 'succeeded';
        }
        attempt('rejected', endpoint);
        throw ApplicationFailure.retryable(`the endpoint answered ${res.status}`, 'DeliveryRejected');
      } catch (err) {
        if (err instanceof ApplicationFailure) throw err;
        const message = err instanceof Error ? err.message : String(err);
        await deps.events.recordAttempt(delivery.id, { responseStatus: null, error: message, durationMs: Date.now() - started });
        attempt(err instanceof DestinationRefusedError ? 'refused' : 'failed', endpoint);
        if (err instanceof DestinationRefusedError)
          throw ApplicationFailure.nonRetryable(`destination refused: ${message}`, 'DestinationRefused');
        throw ApplicationFailure.retryable(message, 'DeliveryFailed');
      }
    },

    /** The delivery gave up (retry window over, or refused): it ends `failed` and its endpoint is marked failing. */
    async giveUpEventDelivery(input: { deliveryId: number }): Promise<void> {
      const delivery = await deps.events.delivery(input.deliveryId);
      if (!delivery || delivery.status !== 'pending') return;
      await deps.events.finish(delivery.id, 'failed');
      await deps.endpoints.markFailing(delivery.endpointId);
      ended('failed', await deps.endpoints.findForDelivery(delivery.endpointId));
    },
  };
}

export type EventActivities = ReturnType<typeof createEventActivities>;
