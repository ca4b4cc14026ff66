/**
 * Wire contracts of the events this service sends to an agency's webhook endpoints, one schema
 * per event type, and their entries in the OpenAPI document's `webhooks` section (so the typed
 * client can hand an agency a typed event: see `constructEvent` in clients/typescript).
 *
 * Every event is the envelope of `types.ts` (`{ id, object: 'event', type, created, livemode,
 * api_version, data: { object } }`) around one object, as `payloads.ts` builds it:
 *
 * - `purchase` (src/purchases/purchase-object.ts): purchase.checkout_created, purchase.paid,
 *   purchase.expired, purchase.failed, purchase.refunded, subscription.renewed;
 * - the `purchase` with a `cancellation`: purchase.cancelled;
 * - `certificate_set` (the getCertificates answer): certificates.issued;
 * - `certificate_voiding`: certificates.voided;
 * - `refund` (a cancellation's refund): refund.succeeded, refund.failed;
 * - `subscription` (src/purchases/subscription-object.ts): subscription.cancelled;
 * - `certificate_holder`: certificate_holder.added, certificate_holder.removed;
 * - `certificate_reissue`: certificates.reissued;
 * - `dispute`: dispute.opened, dispute.closed;
 * - `bordereau` (its files' sizes and checksums, no links): report.ready;
 * - `webhook_endpoint_test` (the endpoint tested): webhook_endpoint.test, sent to that endpoint alone;
 * - `claim` (claim-schemas.ts, with its examples): claim.submitted … claim.reopened.
 *
 * test/unit/event-schemas.test.ts checks that what the builders produce has exactly these
 * fields, and that every type of `DELIVERED_EVENT_TYPES` has its schema here.
 */
import { z } from 'zod';
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { CoveredUnitWindow, PurchaseSummary } from '../purchases/schemas';
import { CANCELLATION_REQUESTERS } from '../purchases/refund-rule';
import { Subscription } from '../subscriptions/schemas';
import { GetCertificatesResponse } from '../certificates/schemas';
import { BordereauFile, BordereauTotals } from '../reports/schemas';
import { DELIVERED_EVENT_TYPES, ENDPOINT_TEST_EVENT_TYPE, type DeliveredEventType } from './types';
import { SIGNATURE_HEADER } from './signing';
import { CLAIM_EVENTS, CLAIM_EXAMPLE_OBJECTS } from './claim-schemas';

const minor = (what: string) =>
  z
    .number()
    .int()
    .meta({ description: `${what}, integer minor units of \`currency\` (e.g. cents)` });
const instant = (what: string) => z.string().meta({ description: `${what}, ISO 8601 UTC` });

/** An item as the events carry it. */
const EventPurchaseItem = z.object({
  id: z.number().int(),
  product_id: z.number().int(),
  product_name: z.string().meta({ description: 'The product’s current customer-facing name' }),
  in_bundle: z.boolean().meta({ description: 'Whether the item is one of the purchase’s bundle’s products' }),
  unit_price: minor('Price of one covered unit before the answers’ factors'),
  price_factor: z.number().meta({ description: 'Product of the chosen answers’ price factors' }),
  amount: minor('The item’s premium'),
  covered_units: z.array(CoveredUnitWindow),
});

/**
 * The `purchase` of the events: the API's purchase summary without the buyer's contact data and
 * payment totals, with the buyer's reference and the items with their covered units.
 */
export const EventPurchase = PurchaseSummary.omit({ amount_paid: true, amount_outstanding: true, buyer_email: true })
  .extend({
    buyer: z.object({
      idp_accnt_uuid: z
        .string()
        .nullable()
        .meta({ description: 'The buyer’s account id, as newConnect answered it (no contact data: events leave the service)' }),
    }),
    items: z.array(EventPurchaseItem).meta({ description: 'What was bought, in quote order (a bundle’s products first)' }),
  })
  .meta({
    id: 'EventPurchase',
    description:
      'The purchase as the events carry it: amounts in minor units, the buyer by reference only, the items with their covered units. GET /api/v1/purchases/{id} adds the certificates, the buyer’s email and the timeline.',
  });

/** The `cancellation` inside purchase.cancelled. */
export const EventCancellation = z
  .object({
    object: z.literal('cancellation'),
    id: z.number().int(),
    quote_id: z.string().nullable().meta({ description: 'The cancellation quote it carried out (null: priced when it was made)' }),
    requested_by: z.enum(CANCELLATION_REQUESTERS),
    reason: z.string().nullable(),
    effective_at: instant('When it took effect'),
    covered_unit_ids: z.array(z.number().int()).meta({ description: 'The covered units it cancelled' }),
    refund: z.object({
      id: z.string().nullable().meta({ description: 'The processor’s refund id (null when nothing was due)' }),
      premium: minor('Premium given back'),
      tax: minor('Tax given back'),
      platform_fee: minor('Platform fee given back'),
      total: minor('Everything given back'),
    }),
    voided_certificates: z.array(z.string()).meta({ description: 'The certificate numbers it voided' }),
  })
  .meta({ id: 'EventCancellation' });

export const EventCancelledPurchase = EventPurchase.extend({ cancellation: EventCancellation }).meta({
  id: 'EventCancelledPurchase',
  description: 'The purchase, and the cancellation that completed',
});

export const EventRefund = z
  .object({
    object: z.literal('refund'),
    id: z.string().nullable().meta({ description: 'The processor’s refund id (null when the processor refused it before making one)' }),
    purchase_id: z.number().int(),
    cancellation_id: z.number().int(),
    status: z.enum(['succeeded', 'failed']),
    currency: z.string(),
    amount: minor('Everything refunded'),
    premium: minor('Premium refunded'),
    tax: minor('Tax refunded'),
    platform_fee: minor('Platform fee refunded'),
    failure_reason: z.string().nullable().meta({ description: 'Why the processor refused it (refund.failed)' }),
    effective_at: instant('When the cancellation took effect'),
  })
  .meta({ id: 'EventRefund', description: 'A cancellation’s refund' });

export const EventCertificateVoiding = z
  .object({
    object: z.literal('certificate_voiding'),
    purchase_id: z.number().int(),
    cancellation_id: z.number().int(),
    covered_unit_ids: z.array(z.number().int()),
    certificate_numbers: z.array(z.string()).meta({ description: 'The certificates the cancellation voided' }),
    effective_at: instant('When the cancellation took effect'),
  })
  .meta({ id: 'EventCertificateVoiding', description: 'The certificates one cancellation voided' });

export const EventCertificateSet = z.object({ object: z.literal('certificate_set'), ...GetCertificatesResponse.shape }).meta({
  id: 'EventCertificateSet',
  description:
    'The getCertificates answer of the purchase when its certificates were issued. The signed URLs expire at urls_expire_at (an hour after the event); fetch fresh ones with getCertificates after that.',
});

export const EventCertificateHolder = z
  .object({
    object: z.literal('certificate_holder'),
    id: z.number().int().meta({ description: 'The holder’s id (`id` in GET /api/v1/purchases/{id}/certificate_holders)' }),
    purchase_id: z.number().int(),
    name: z.string(),
    additional_insured: z.boolean(),
    waiver_of_subrogation: z.boolean(),
    certificate_numbers: z
      .array(z.string())
      .meta({ description: 'added: the certificates issued to the holder; removed: its certificates, now voided' }),
    created_at: instant('When the holder was added'),
    removed_at: instant('When the holder was removed').nullable(),
  })
  .meta({
    id: 'EventCertificateHolder',
    description: 'A certificate holder of a purchase (its name and endorsement marks; the address stays in the API)',
  });

export const EventCertificateReissue = z
  .object({
    object: z.literal('certificate_reissue'),
    purchase_id: z.number().int(),
    endorsement_id: z.string().meta({ description: 'The endorsement (its quote id, `eq_…`) that reissued them' }),
    change_types: z.array(z.enum(['named_insured', 'description_of_operations', 'move_covered_unit'])),
    certificates: z
      .array(z.object({ from: z.string(), to: z.string() }))
      .meta({ description: 'Each superseded certificate number and its new version’s (a higher revision)' }),
    effective_at: instant('When the endorsement was carried out'),
  })
  .meta({ id: 'EventCertificateReissue', description: 'The certificates an endorsement replaced by new versions' });

/** The `bordereau` of report.ready: as getBordereau answers it, without the (expiring) download links. */
export const EventBordereau = z
  .object({
    object: z.literal('bordereau'),
    id: z.number().int(),
    party_id: z.number().int().meta({ description: 'The insurer or MGA root account it reports to' }),
    month: z.string().meta({ description: 'YYYY-MM' }),
    mode: z.enum(['live', 'test']),
    provisional: z
      .boolean()
      .meta({ description: 'A test-mode bordereau of the month to date (see getBordereau), not the month’s final one' }),
    rows: z.number().int(),
    totals: BordereauTotals,
    files: z.object({ csv: BordereauFile.omit({ download_url: true }), xlsx: BordereauFile.omit({ download_url: true }) }),
    generated_at: instant('When its files were stored'),
  })
  .meta({
    id: 'EventBordereau',
    description: 'A premium bordereau whose files are stored; getBordereau answers it with download links',
  });

export const EventDispute = z
  .object({
    object: z.literal('dispute'),
    id: z.string().meta({ description: 'The processor’s dispute id (dp_…)' }),
    purchase_id: z.number().int(),
    charge: z.string().nullable().meta({ description: 'The processor’s charge the buyer disputed (ch_…)' }),
    amount: minor('Amount disputed'),
    currency: z.string().meta({ description: 'ISO 4217, lowercase' }),
    reason: z.string().meta({ description: 'The processor’s reason: fraudulent, product_not_received, duplicate, general…' }),
    status: z.string().meta({
      description:
        'The processor’s status: needs_response / under_review (open: the amount is held back until decided), won (it returns), lost (the buyer keeps it), warning_needs_response / warning_under_review / warning_closed (an inquiry, no money held)',
    }),
    opened_at: instant('When the buyer opened it'),
    closed_at: instant('When it was decided (or the inquiry closed)').nullable(),
  })
  .meta({
    id: 'EventDispute',
    description:
      'A buyer’s dispute (chargeback) of a purchase’s payment, as the processor reports it. The policy stays in force: cancel it yourself if you want to',
  });

export const EventWebhookEndpointTest = z
  .object({
    object: z.literal('webhook_endpoint_test'),
    endpoint_id: z.number().int().meta({ description: 'The webhook endpoint tested (the one receiving this event)' }),
    url: z.string().meta({ description: 'Its URL when the test was asked for' }),
    requested_via: z.enum(['api', 'portal']).meta({ description: 'Where the agency asked for it' }),
  })
  .meta({ id: 'EventWebhookEndpointTest', description: 'The endpoint a test event was sent to; nothing happened to a purchase' });

/** What `data.object` is for each event type, and what the event says. */
const EVENTS: Record<DeliveredEventType, { name: string; object: z.ZodType; summary: string }> = {
  ...CLAIM_EVENTS,
  'purchase.checkout_created': {
    name: 'PurchaseCheckoutCreated',
    object: EventPurchase,
    summary: 'A purchase was quoted and its checkout session created (status awaiting_payment)',
  },
  'purchase.paid': {
    name: 'PurchasePaid',
    object: EventPurchase,
    summary: 'A purchase was paid; its certificates follow in certificates.issued',
  },
  'purchase.expired': { name: 'PurchaseExpired', object: EventPurchase, summary: 'A purchase’s checkout expired unpaid' },
  'purchase.failed': {
    name: 'PurchaseFailed',
    object: EventPurchase,
    summary: 'A purchase’s payment failed for good (failure_reason says why)',
  },
  'purchase.refunded': {
    name: 'PurchaseRefunded',
    object: EventPurchase,
    summary: 'Money went back to the buyer (amount_refunded); once per refunded amount',
  },
  'purchase.cancelled': {
    name: 'PurchaseCancelled',
    object: EventCancelledPurchase,
    summary: 'A cancellation of some or all covered units completed',
  },
  'certificates.issued': {
    name: 'CertificatesIssued',
    object: EventCertificateSet,
    summary: 'Every certificate of a paid purchase was issued and stored',
  },
  'certificates.voided': { name: 'CertificatesVoided', object: EventCertificateVoiding, summary: 'A cancellation voided certificates' },
  'refund.succeeded': { name: 'RefundSucceeded', object: EventRefund, summary: 'A cancellation’s refund succeeded' },
  'refund.failed': { name: 'RefundFailed', object: EventRefund, summary: 'The processor refused a cancellation’s refund for good' },
  'subscription.renewed': {
    name: 'SubscriptionRenewed',
    object: EventPurchase,
    summary: 'A subscription’s next period was paid: the renewal purchase (its certificates follow in certificates.issued)',
  },
  'certificate_holder.added': {
    name: 'CertificateHolderAdded',
    object: EventCertificateHolder,
    summary: 'A certificate holder was added to a purchase and its certificates issued',
  },
  'certificate_holder.removed': {
    name: 'CertificateHolderRemoved',
    object: EventCertificateHolder,
    summary: 'A certificate holder was removed from a purchase and its certificates voided',
  },
  'certificates.reissued': {
    name: 'CertificatesReissued',
    object: EventCertificateReissue,
    summary: 'An endorsement replaced certificates by new versions, now stored',
  },
  'dispute.opened': {
    name: 'DisputeOpened',
    object: EventDispute,
    summary:
      'The buyer disputed a purchase’s payment with their bank (a chargeback, or an inquiry); answer it in the processor’s dashboard',
  },
  'dispute.closed': {
    name: 'DisputeClosed',
    object: EventDispute,
    summary: 'A dispute was decided: won (the amount returns) or lost (the buyer keeps it), or an inquiry closed',
  },
  'report.ready': {
    name: 'ReportReady',
    object: EventBordereau,
    summary: 'A premium bordereau’s files are stored: read it with getBordereau for its download links',
  },
  'subscription.cancelled': {
    name: 'SubscriptionCancelled',
    object: Subscription,
    summary: 'A subscription was set to end at its period’s end, or ended, by the agency or the processor',
  },
  'webhook_endpoint.test': {
    name: 'WebhookEndpointTest',
    object: EventWebhookEndpointTest,
    summary: 'A test event the agency asked for, sent to that one endpoint: answer 2xx to show it works',
  },
};

const PURCHASE_EXAMPLE = {
  object: 'purchase',
  id: 42,
  status: 'paid',
  livemode: false,
  billing: 'one_time',
  checkout_session_id: 'cs_test_a1B2c3D4e5F6g7H8',
  payment_intent: 'pi_3Q2w3E4r5T6y7U8i',
  currency: 'usd',
  amount_subtotal: 7500,
  platform_fee: 188,
  amount_tax: 0,
  amount_total: 7688,
  amount_refunded: 0,
  failure_reason: null,
  subscription_id: null,
  renewal_of_purchase_id: null,
  agent_id: 5,
  bundle: null,
  metadata: { order_id: 'ORD-20261122-0042' },
  buyer: { idp_accnt_uuid: '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b' },
  items: [
    {
      id: 61,
      product_id: 12,
      product_name: 'Special Event Liability',
      in_bundle: false,
      unit_price: 2500,
      price_factor: 1,
      amount: 7500,
      covered_units: [0, 1, 2].map((index) => ({
        id: 301 + index,
        index,
        kind: 'day',
        starts_at: `2026-12-${24 + index}T06:00:00.000Z`,
        ends_at: `2026-12-${25 + index}T06:00:00.000Z`,
        time_zone: 'America/Chicago',
        local_label: `Dec ${24 + index}, 2026`,
      })),
    },
  ],
  paid_at: '2026-11-22T12:00:05.000Z',
  certificates_issued_at: null,
  created_at: '2026-11-22T11:58:40.000Z',
};
const CANCELLATION_EXAMPLE = {
  object: 'cancellation',
  id: 7,
  quote_id: 'cq_4f1c2d3e4b5a6c7d8e9f0a1b',
  requested_by: 'buyer',
  reason: 'Event postponed',
  effective_at: '2026-11-30T15:00:00.000Z',
  covered_unit_ids: [813],
  refund: { id: 're_3Q2w3E4r5T6y7U8i', premium: 2500, tax: 0, platform_fee: 63, total: 2563 },
  voided_certificates: ['COI-42-1-3-9BC1D2E3F4'],
};
const REFUND_EXAMPLE = {
  object: 'refund',
  id: 're_3Q2w3E4r5T6y7U8i',
  purchase_id: 42,
  cancellation_id: 7,
  status: 'succeeded',
  currency: 'usd',
  amount: 2563,
  premium: 2500,
  tax: 0,
  platform_fee: 63,
  failure_reason: null,
  effective_at: '2026-11-30T15:00:00.000Z',
};
const HOLDER_EXAMPLE = {
  object: 'certificate_holder',
  id: 12,
  purchase_id: 42,
  name: 'City of Springfield',
  additional_insured: true,
  waiver_of_subrogation: false,
  certificate_numbers: ['COI-42-1-3-H12-4D5E6F7A8B'],
  created_at: '2026-11-23T09:00:00.000Z',
  removed_at: null,
};
const DISPUTE_EXAMPLE = {
  object: 'dispute',
  id: 'dp_1Q2w3E4r5T6y7U8i',
  purchase_id: 42,
  charge: 'ch_3Q2w3E4r5T6y7U8i',
  amount: 7688,
  currency: 'usd',
  reason: 'fraudulent',
  status: 'needs_response',
  opened_at: '2026-12-01T10:00:00.000Z',
  closed_at: null,
};
const EXAMPLE_OBJECTS: Record<DeliveredEventType, Record<string, unknown>> = {
  ...CLAIM_EXAMPLE_OBJECTS,
  'purchase.checkout_created': { ...PURCHASE_EXAMPLE, status: 'awaiting_payment', payment_intent: null, paid_at: null },
  'purchase.paid': PURCHASE_EXAMPLE,
  'purchase.expired': { ...PURCHASE_EXAMPLE, status: 'expired', payment_intent: null, paid_at: null },
  'purchase.failed': { ...PURCHASE_EXAMPLE, status: 'failed', paid_at: null, failure_reason: 'Your card was declined.' },
  'purchase.refunded': {
    ...PURCHASE_EXAMPLE,
    status: 'refunded',
    amount_refunded: 7688,
    certificates_issued_at: '2026-11-22T12:00:09.000Z',
  },
  'purchase.cancelled': {
    ...PURCHASE_EXAMPLE,
    status: 'issued',
    amount_refunded: 2563,
    certificates_issued_at: '2026-11-22T12:00:09.000Z',
    cancellation: CANCELLATION_EXAMPLE,
  },
  'certificates.issued': {
    object: 'certificate_set',
    ...(z.globalRegistry.get(GetCertificatesResponse)?.example as Record<string, unknown>),
  },
  'certificates.voided': {
    object: 'certificate_voiding',
    purchase_id: 42,
    cancellation_id: 7,
    covered_unit_ids: [813],
    certificate_numbers: ['COI-42-1-3-9BC1D2E3F4'],
    effective_at: '2026-11-30T15:00:00.000Z',
  },
  'refund.succeeded': REFUND_EXAMPLE,
  'refund.failed': { ...REFUND_EXAMPLE, id: null, status: 'failed', failure_reason: 'charge_already_refunded' },
  'subscription.renewed': {
    ...PURCHASE_EXAMPLE,
    id: 57,
    billing: 'subscription',
    subscription_id: 'sub_1Q2w3E4r5T6y7U8i',
    renewal_of_purchase_id: 42,
    paid_at: '2026-12-22T12:00:03.000Z',
    created_at: '2026-12-22T12:00:01.000Z',
  },
  'certificate_holder.added': HOLDER_EXAMPLE,
  'certificate_holder.removed': { ...HOLDER_EXAMPLE, removed_at: '2026-11-24T10:30:00.000Z' },
  'certificates.reissued': {
    object: 'certificate_reissue',
    purchase_id: 42,
    endorsement_id: 'eq_5a6b7c8d9e0f1a2b3c4d5e6f',
    change_types: ['named_insured'],
    certificates: [{ from: 'COI-42-1-1-3FA9C2B71D', to: 'COI-42-1-1-3FA9C2B71D-R2' }],
    effective_at: '2026-11-24T10:30:00.000Z',
  },
  'dispute.opened': DISPUTE_EXAMPLE,
  'dispute.closed': { ...DISPUTE_EXAMPLE, status: 'lost', closed_at: '2026-12-20T08:00:00.000Z' },
  'report.ready': {
    object: 'bordereau',
    id: 5,
    party_id: 3,
    month: '2026-10',
    mode: 'live',
    provisional: false,
    rows: 1284,
    totals: { USD: { rows: 1284, gross_premium: 6420050, platform_fee: 160501, tax: 0, net_premium: 6420050 } },
    files: {
      csv: { size_bytes: 402113, sha256: '9f2c4b1a7d3e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8' },
      xlsx: { size_bytes: 118230, sha256: '0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9' },
    },
    generated_at: '2026-11-01T02:00:41.000Z',
  },
  'webhook_endpoint.test': {
    object: 'webhook_endpoint_test',
    endpoint_id: 4,
    url: 'https://agency.example/hooks/coi',
    requested_via: 'api',
  },
  'subscription.cancelled': {
    object: 'subscription',
    id: 42,
    status: 'active',
    livemode: false,
    processor_subscription_id: 'sub_1Q2w3E4r5T6y7U8i',
    currency: 'usd',
    amount_per_period: 7688,
    cancel_at_period_end: true,
    ended_at: null,
    cancelled_by: 'agency',
    current_period_purchase_id: 57,
    periods: [
      { period: 1, purchase_id: 42, status: 'issued', paid_at: '2026-11-22T12:00:05.000Z' },
      { period: 2, purchase_id: 57, status: 'issued', paid_at: '2026-12-22T12:00:03.000Z' },
    ],
    agent_id: 5,
    created_at: '2026-11-22T11:58:40.000Z',
  },
};

/** The envelope of one event type around its object, as a named schema (`PurchasePaidEvent`, …). */
function eventSchema(type: DeliveredEventType) {
  const { name, object, summary } = EVENTS[type];
  return z
    .object({
      id: z.string().meta({
        description: 'The event’s id (`evt_…`): the same event delivered twice has the same id, so key your handling on it',
        example: 'evt_1f3e0c9a7b2d4e6f8a0b1c2d3e4f5a6b',
      }),
      object: z.literal('event'),
      type: z.literal(type),
      created: z.number().int().meta({ description: 'When the event happened, Unix seconds' }),
      livemode: z.boolean().meta({ description: 'false for events of test-mode keys' }),
      api_version: z.literal('v1'),
      data: z.object({ object }),
    })
    .meta({ id: `${name}Event`, description: `${type}: ${summary}.` });
}

/** Every event's schema by type. */
export const AGENCY_EVENT_SCHEMAS = Object.fromEntries(DELIVERED_EVENT_TYPES.map((t) => [t, eventSchema(t)])) as {
  [T in DeliveredEventType]: ReturnType<typeof eventSchema>;
};

/** Any event an endpoint receives, told apart by `type`. */
export const AgencyWebhookEvent = z.discriminatedUnion(
  'type',
  DELIVERED_EVENT_TYPES.map((t) => AGENCY_EVENT_SCHEMAS[t]) as unknown as [
    ReturnType<typeof eventSchema>,
    ...ReturnType<typeof eventSchema>[],
  ],
);

/** An example of each event, as delivered (also the media type example of its webhook). */
export function exampleEvent(type: DeliveredEventType) {
  return {
    id: 'evt_1f3e0c9a7b2d4e6f8a0b1c2d3e4f5a6b',
    object: 'event',
    type,
    created: 1795348805,
    livemode: false,
    api_version: 'v1',
    data: { object: EXAMPLE_OBJECTS[type] },
  };
}

const SIGNATURE_DESCRIPTION =
  '`t=<unix seconds>,v1=<hex>`: v1 is the HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint’s whole signing secret (`whsec_…` included), Stripe’s scheme. Verify it over the raw bytes of the body before parsing them, and refuse a `t` older than 5 minutes: the typed client’s `constructEvent(rawBody, header, secret)` does both and returns the typed event.';

const DELIVERY_DESCRIPTION =
  'Sent to every enabled webhook endpoint of the account and key mode that takes this type (`enabled_events`), as a POST with a JSON body and the `Signature` header. Answer 2xx within 10 s; any other answer, a timeout or a network error is retried with exponential backoff (1 minute doubling, at most an hour apart) for 3 days, then the delivery fails and the endpoint shows `status: failing`. An event may arrive more than once or out of order: key your handling on its `id`. `GET /api/v1/events/{id}` shows each delivery and its attempts; `POST /api/v1/events/{id}/resend` sends it again.';

const TEST_DELIVERY_DESCRIPTION =
  'Sent when the agency asks for it (`POST /api/v1/webhook_endpoints/{id}/test`, or "Send a test event" on the endpoint’s page in the portal), to that endpoint alone, whatever its `enabled_events`, signed and retried like every event. Not a business event: `GET /api/v1/events` leaves it out; `GET /api/v1/events/{id}` shows its delivery.';

/** Adds every event type to the document's `webhooks` section: the request this service sends, and what it expects back. */
export function registerAgencyEventWebhooks(registry: OpenAPIRegistry): void {
  for (const type of DELIVERED_EVENT_TYPES) {
    const { name, summary } = EVENTS[type];
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `${name[0]!.toLowerCase()}${name.slice(1)}Webhook`,
      tags: ['Webhook events'],
      summary,
      description: type === ENDPOINT_TEST_EVENT_TYPE ? TEST_DELIVERY_DESCRIPTION : DELIVERY_DESCRIPTION,
      security: [],
      request: {
        headers: z.object({
          [SIGNATURE_HEADER]: z
            .string()
            .regex(/^t=\d+,v1=[0-9a-f]{64}$/)
            .meta({
              description: SIGNATURE_DESCRIPTION,
              example: 't=1795348805,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
            }),
        }),
        body: { required: true, content: { 'application/json': { schema: AGENCY_EVENT_SCHEMAS[type], example: exampleEvent(type) } } },
      },
      responses: {
        200: { description: 'Any 2xx answer within 10 s acknowledges the delivery (the body is not read)' },
        '4XX': { description: 'Any other answer (e.g. 400 for a signature that does not verify) is retried with backoff for 3 days' },
      },
    });
  }
}
