/**
 * The events this service sends to an agency's webhook endpoints, and the envelope they travel
 * in (Stripe's shape: `{ id, object: 'event', type, created, livemode, api_version, data: { object } }`).
 * `created` is Unix seconds. Amounts inside objects are integer minor units of `currency`.
 */
/**
 * A claim's events (issue 51): one per status the claim reaches, published by its workflow's
 * activities once per change (the claim's change number is in the event's id).
 */
export const CLAIM_EVENT_TYPES = [
  'claim.submitted',
  'claim.acknowledged',
  'claim.under_review',
  'claim.approved',
  'claim.denied',
  'claim.paid',
  'claim.closed',
  'claim.reopened',
] as const;
export type ClaimEventType = (typeof CLAIM_EVENT_TYPES)[number];

export const AGENCY_EVENT_TYPES = [
  'purchase.checkout_created',
  'purchase.paid',
  'certificates.issued',
  'purchase.expired',
  'purchase.refunded',
  'purchase.cancelled',
  'certificates.voided',
  'refund.succeeded',
  'refund.failed',
  'purchase.failed',
  'subscription.renewed',
  'subscription.cancelled',
  'certificate_holder.added',
  'certificate_holder.removed',
  'certificates.reissued',
  'dispute.opened',
  'dispute.closed',
  'report.ready',
  ...CLAIM_EVENT_TYPES,
] as const;
export type AgencyEventType = (typeof AGENCY_EVENT_TYPES)[number];

/** What an endpoint subscribes to: event types, or `*` for all of them. */
export const ENABLED_EVENT_VALUES = [...AGENCY_EVENT_TYPES, '*'] as const;

/**
 * The event an agency sends to one of its endpoints to try it ("send a test event", as payment
 * processors offer): not one of `AGENCY_EVENT_TYPES`, because nothing happened to the business.
 * No endpoint subscribes to it (not even `*`): it goes to the endpoint tested alone, signed like
 * every delivery, and the events list leaves it out (it is read by its id, and on the endpoint's
 * deliveries).
 */
export const ENDPOINT_TEST_EVENT_TYPE = 'webhook_endpoint.test';

/** Every type an endpoint may receive: the business events and the test event. */
export const DELIVERED_EVENT_TYPES = [...AGENCY_EVENT_TYPES, ENDPOINT_TEST_EVENT_TYPE] as const;
export type DeliveredEventType = (typeof DELIVERED_EVENT_TYPES)[number];

export interface AgencyEvent {
  id: string;
  object: 'event';
  type: DeliveredEventType;
  /** Unix seconds. */
  created: number;
  livemode: boolean;
  api_version: 'v1';
  data: { object: Record<string, unknown> };
}
