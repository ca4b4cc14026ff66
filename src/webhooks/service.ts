/**
 * Processor webhooks (inbound payment events): verify the signature on the raw body (each
 * configured secret in turn, default tolerance 300 s), store the event once (its id is the key),
 * hand it to the purchases domain, return. No business writes and no routing here: which purchase
 * an event names and which of its workflows it goes to is the purchases domain's
 * (src/purchases/processor-events.ts), and every receiver ignores a repeat, so duplicates and
 * out-of-order deliveries change nothing.
 * Errors: AppError WEBHOOK_SIGNATURE_INVALID (400); VALIDATION_ERROR (400) for a signed body
 * that is not an event (no string id and type, boolean livemode, object data.object) or that holds NUL or an unpaired surrogate.
 */
import type Stripe from 'stripe';
import { z } from 'zod';
import type { PayprocEventsRepository } from './repository';
import { AppError } from '../shared/errors';
import { findUnsafeText } from '../http/validation';
import type { ProcessorEventRouter } from '../purchases/processor-events';
import type { Logger } from '../logger';

export interface WebhookResult {
  received: true;
  duplicate: boolean;
  purchase_id: number | null;
  relayed: boolean;
}

/**
 * The least a signed body must be to be handled as a processor event: the fields this service
 * and `payproc_events` read. The signature proves who sent it, not that it is an event; a signed
 * body of another shape is refused (400) instead of failing inside the handler (500, retried).
 */
const EventEnvelope = z.looseObject({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  livemode: z.boolean(),
  data: z.looseObject({ object: z.record(z.string(), z.unknown()) }),
});

/** What a delivery's verified event said, as far as it got: its type and whether it is live. */
export interface VerifiedEvent {
  type?: string;
  livemode?: boolean;
}

export function createWebhookService(deps: {
  /** Stores each accepted event once (the one writer of `payproc_events`). */
  events: Pick<PayprocEventsRepository, 'recordOnce'>;
  /** Finds the purchase an event names and hands the event to its workflow (the purchases domain's routing). */
  router: Pick<ProcessorEventRouter, 'route'>;
  stripe: Stripe;
  secrets: string[];
  log: Logger;
  /** Counts each delivery by event type and outcome (relayed, duplicate, not_relayed, forged). */
  countOutcome?: (type: string, outcome: 'relayed' | 'duplicate' | 'not_relayed' | 'forged') => void;
}) {
  /** Handles one delivery; `seen.type` and `seen.livemode` are set once the event verified (for the counts). */
  const handle = async (rawBody: string | undefined, signature: string | undefined, seen: VerifiedEvent): Promise<WebhookResult> => {
    if (!rawBody || !signature) {
      deps.log.warn('payment webhook without body or signature refused');
      throw new AppError('WEBHOOK_SIGNATURE_INVALID', 'Missing body or payproc signature header');
    }
    let event: Stripe.Event | null = null;
    for (const secret of deps.secrets) {
      try {
        event = deps.stripe.webhooks.constructEvent(rawBody, signature, secret);
        break;
      } catch {
        // try the next secret
      }
    }
    if (!event) {
      deps.log.warn({ bytes: rawBody.length }, 'payment webhook with a forged or stale signature refused');
      throw new AppError('WEBHOOK_SIGNATURE_INVALID', 'Signature does not match, or the event is too old');
    }
    seen.type = typeof event.type === 'string' ? event.type.slice(0, 64) : 'unknown';
    if (typeof event.livemode === 'boolean') seen.livemode = event.livemode;
    if (!EventEnvelope.safeParse(event).success) {
      throw new AppError(
        'VALIDATION_ERROR',
        'The signed body is not a processor event: id, type (strings), livemode (boolean) and data.object (an object) are required',
      );
    }
    // payproc_events.payload is jsonb, which cannot hold NUL (a 500 the processor would retry forever).
    const unsafe = findUnsafeText(event);
    if (unsafe !== null)
      throw new AppError('VALIDATION_ERROR', `The signed event holds a NUL character or an unpaired surrogate at ${unsafe || 'its root'}`);

    const routed = await deps.router.route(event);
    const duplicate = !(await deps.events.recordOnce({
      id: event.id,
      type: event.type,
      livemode: event.livemode,
      purchaseId: routed.purchaseId,
      rawBody,
    }));
    const { purchaseId, relayed } = await routed.handOver();
    return { received: true, duplicate, purchase_id: purchaseId, relayed };
  };
  return {
    /**
     * Handles one delivery. `seen` (the caller's, optional) learns the event's type and livemode
     * once its signature verified, also when handling then fails (the HTTP metrics count a
     * test-mode event's answer as test traffic).
     */
    async handle(rawBody: string | undefined, signature: string | undefined, seen: VerifiedEvent = {}): Promise<WebhookResult> {
      let answer: WebhookResult;
      try {
        answer = await handle(rawBody, signature, seen);
      } catch (err) {
        if (err instanceof AppError && err.code === 'WEBHOOK_SIGNATURE_INVALID') deps.countOutcome?.('unknown', 'forged');
        throw err;
      }
      deps.countOutcome?.(seen.type ?? 'unknown', answer.duplicate ? 'duplicate' : answer.relayed ? 'relayed' : 'not_relayed');
      return answer;
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
