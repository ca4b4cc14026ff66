/**
 * The events sent to agencies' webhook endpoints, as the OpenAPI document's `webhooks` section
 * types them (src/events/schemas.ts): every event type has its webhook with its payload schema,
 * and what the payload builders (src/events/payloads.ts) really produce has exactly the fields of
 * those schemas, no more and no fewer, so the typed client's `WebhookEvent` says what arrives.
 * A field added to the purchase object (or any event object) without its schema fails here.
 */
import { z } from 'zod';
import { CLAIM_EVENT_TYPES, DELIVERED_EVENT_TYPES, type ClaimEventType, type DeliveredEventType } from '../../src/events/types';
import { claimChangeEvent } from '../../src/events/claim-payloads';
import type { ClaimEventRecord, ClaimRecord } from '../../src/claims/repository';
import type { ClaimStatus } from '../../workflows/claim-contracts';
import { AGENCY_EVENT_SCHEMAS, AgencyWebhookEvent, exampleEvent } from '../../src/events/schemas';
import {
  cancellationRefundEvent,
  cancelledEvent,
  certificatesIssuedEvent,
  certificatesVoidedEvent,
  purchaseStatusEvent,
  refundEvent,
  renewalEvent,
  subscriptionCancelledEvent,
  certificateHolderEvent,
  certificatesReissuedEvent,
  disputeEvent,
  reportReadyEvent,
  endpointTestEvent,
} from '../../src/events/payloads';
import type { StoredDispute } from '../../src/disputes/repository';
import type { StoredEndorsement } from '../../src/endorsements/repository';
import type { CertificateHolderRecord } from '../../src/certificate-holders/repository';
import { GetCertificatesResponse } from '../../src/certificates/schemas';
import { buildOpenApiDocument } from '../../src/http/openapi';
import { createOpenApiRegistry } from '../../src/app';
import type { StoredCancellation } from '../../src/purchases/ledger-record';
import { purchaseRecord as purchase } from '../helpers/purchase-record';
import { DEFAULT_CANCELLATION_TERMS } from '../../src/products/cancellation-terms';

function cancellation(overrides: Partial<StoredCancellation> = {}): StoredCancellation {
  const record: Partial<StoredCancellation> = {
    id: 7,
    purchaseId: 42,
    status: 'completed',
    quoteId: 'cq_4f1c2d3e4b5a6c7d8e9f0a1b',
    apiKeyId: 9,
    requestedBy: 'buyer',
    reason: 'Event postponed',
    coveredUnitIds: [813],
    effectiveAt: new Date('2026-11-30T15:00:00.000Z'),
    currency: 'usd',
    premiumMinor: 2500,
    taxMinor: 0,
    platformFeeMinor: 63,
    totalMinor: 2563,
    breakdown: [],
    refundId: 're_1',
    failureReason: null,
    createdAt: new Date('2026-11-30T15:00:00.000Z'),
    completedAt: new Date('2026-11-30T15:00:02.000Z'),
    rescindedAt: null,
    ...overrides,
  };
  return record as StoredCancellation;
}

function holder(overrides: Partial<CertificateHolderRecord> = {}): CertificateHolderRecord {
  return {
    id: 12,
    purchaseId: 42,
    purchaseItemId: null,
    source: 'api',
    name: 'City of Springfield',
    address: { line1: '800 E Monroe St', city: 'Springfield', region: 'IL', postal_code: '62701', country: 'US' },
    email: null,
    additionalInsured: true,
    waiverOfSubrogation: false,
    descriptionOfOperations: null,
    notifyOnCancellation: false,
    requestKey: 'req_1',
    createdAt: new Date('2026-11-23T09:00:00.000Z'),
    removedAt: null,
    ...overrides,
  };
}

function dispute(overrides: Partial<StoredDispute> = {}): StoredDispute {
  return {
    id: 4,
    purchaseId: 42,
    payprocDisputeId: 'dp_1Q2w3E4r5T6y7U8i',
    chargeId: 'ch_3Q2w3E4r5T6y7U8i',
    amountMinor: 7688,
    currency: 'usd',
    reason: 'fraudulent',
    status: 'needs_response',
    openedAt: new Date('2026-12-01T10:00:00.000Z'),
    closedAt: null,
    ...overrides,
  };
}

/** The buyer's reference and one item of three days, as the emitter reads them for a purchase's events. */
const buyerIdpAccntUuid = '0b7e2a4c-8f4d-4a57-9a55-1c3d2e4f5a6b';
const items = [
  {
    id: 61,
    position: 0,
    productLineId: 12,
    productName: 'Special Event Liability',
    inBundle: true,
    isTripExcess: false,
    unitPriceMinor: 2500,
    priceFactor: 1,
    amountMinor: 7500,
    namedInsured: { name: 'Jordan Lee' },
    certificateHolder: null,
    cancellationTerms: DEFAULT_CANCELLATION_TERMS,
    units: [0, 1, 2].map((index) => ({
      id: 301 + index,
      index,
      kind: 'day' as const,
      startsAt: new Date(Date.UTC(2026, 11, 24 + index, 6)),
      endsAt: new Date(Date.UTC(2026, 11, 25 + index, 6)),
      timeZone: 'America/Chicago',
      localLabel: `Dec ${24 + index}, 2026`,
      cancellationId: null,
      cancelledAt: null,
    })),
  },
];

const certificateSet = z.globalRegistry.get(GetCertificatesResponse)!.example as z.infer<typeof GetCertificatesResponse>;

/** A claim as stored after its change `status` (the fields a claim in that status has set). */
function claim(status: ClaimStatus): ClaimRecord {
  const at = new Date('2026-12-28T09:00:00.000Z');
  const decided = ['approved', 'denied', 'paid', 'closed', 'reopened'].includes(status);
  return {
    id: 7,
    rootAccountId: 1,
    mode: 'test',
    agentId: null,
    apiKeyId: 9,
    purchaseId: 42,
    coveredUnitId: 301,
    productLineId: 12,
    certificateNumber: status === 'submitted' ? null : 'COI-42-1-1-3FA9C2B71D',
    incidentAt: new Date('2026-12-25T01:30:00.000Z'),
    incidentDay: '2026-12-24',
    claimType: 'property_damage',
    description: 'A storm flooded the marquee.',
    claimant: { name: 'Kim Park', email: 'kim@example.com', phone: null },
    amountClaimedMinor: 125000,
    currency: 'usd',
    status,
    approvedAmountMinor: decided && status !== 'denied' ? 100000 : null,
    decisionReason: decided ? 'Receipts' : null,
    denialCode: status === 'denied' ? 'excluded_peril' : null,
    paymentReference: status === 'paid' ? 'tr_1' : null,
    payoutAccount: 'acct_1',
    paidAmountMinor: status === 'paid' ? 100000 : 0,
    payoutFailure: null,
    acknowledgementDueAt: at,
    acknowledgementOverdueAt: null,
    acknowledgedAt: status === 'submitted' ? null : at,
    decidedAt: decided ? at : null,
    paidAt: status === 'paid' ? at : null,
    closedAt: status === 'closed' ? at : null,
    seq: 1,
    createdAt: at,
    updatedAt: at,
  };
}

/** One claim event of each type, each from the change reaching its status. */
function claimEvents() {
  return Object.fromEntries(
    CLAIM_EVENT_TYPES.map((type, i) => {
      const status = type.slice('claim.'.length) as ClaimStatus;
      const change: ClaimEventRecord = {
        seq: i,
        kind: status,
        fromStatus: i === 0 ? null : 'submitted',
        toStatus: status,
        actor: { type: i % 2 ? 'adjuster' : 'api_key', id: '9' },
        note: i % 2 ? 'why' : null,
        data: {},
        createdAt: new Date('2026-12-28T09:00:00.000Z'),
      };
      return [type, claimChangeEvent(claim(status), change)!.event];
    }),
  ) as Record<ClaimEventType, unknown>;
}

/** One event of each type, as the builders make it. */
function builtEvents(): Record<DeliveredEventType, unknown> {
  const subscriptionFirst = purchase({
    billing: 'subscription',
    payprocSubscriptionId: 'sub_1',
    status: 'issued',
    subscriptionCancelAtPeriodEnd: true,
    subscriptionCancelledBy: 'agency',
  });
  const renewal = purchase({ id: 57, billing: 'subscription', payprocSubscriptionId: 'sub_1', renewalOfPurchaseId: 42, status: 'paid' });
  return {
    'purchase.checkout_created': purchaseStatusEvent(
      purchase({ status: 'awaiting_payment', paidAt: null, paymentIntentId: null }),
      buyerIdpAccntUuid,
      items,
    )!.event,
    'purchase.paid': purchaseStatusEvent(purchase({ bundle: { id: 3, name: 'Wedding day bundle' } }), buyerIdpAccntUuid, items)!.event,
    'purchase.expired': purchaseStatusEvent(purchase({ status: 'expired', paidAt: null }), buyerIdpAccntUuid, items)!.event,
    'purchase.failed': purchaseStatusEvent(
      purchase({ status: 'failed', paidAt: null, failureReason: 'card_declined', failedAt: new Date() }),
      buyerIdpAccntUuid,
      items,
    )!.event,
    'purchase.refunded': refundEvent(
      purchase({ status: 'refunded', refundedMinor: 7688, refundedAt: new Date() }),
      buyerIdpAccntUuid,
      items,
    ).event,
    'purchase.cancelled': cancelledEvent(purchase({ status: 'issued', refundedMinor: 2563 }), buyerIdpAccntUuid, items, cancellation(), [
      'COI-42-1-3-9BC1D2E3F4',
    ]).event,
    'certificates.issued': certificatesIssuedEvent(purchase({ status: 'issued', certificatesIssuedAt: new Date() }), certificateSet).event,
    'certificates.voided': certificatesVoidedEvent(purchase(), cancellation(), ['COI-42-1-3-9BC1D2E3F4']).event,
    'refund.succeeded': cancellationRefundEvent(purchase(), cancellation(), 'succeeded').event,
    'refund.failed': cancellationRefundEvent(
      purchase(),
      cancellation({ status: 'refund_failed', refundId: null, failureReason: 'charge_already_refunded' }),
      'failed',
    ).event,
    'subscription.renewed': renewalEvent(renewal, buyerIdpAccntUuid, items).event,
    'subscription.cancelled': subscriptionCancelledEvent(subscriptionFirst, [subscriptionFirst, renewal]).event,
    'certificate_holder.added': certificateHolderEvent(purchase(), holder(), 'added', ['COI-42-1-3-H12-4D5E6F7A8B']).event,
    'certificates.reissued': certificatesReissuedEvent(purchase(), {
      id: 3,
      quoteId: 'eq_5a6b7c8d9e0f1a2b3c4d5e6f',
      purchaseId: 42,
      apiKeyId: 9,
      status: 'applied',
      changes: [{ type: 'named_insured', name: 'Jordan Lee Events LLC' }],
      currency: 'usd',
      premiumDifferenceMinor: 0,
      platformFeeDifferenceMinor: 0,
      taxDifferenceMinor: 0,
      totalDifferenceMinor: 0,
      reissues: [],
      fingerprint: 'f'.repeat(64),
      reissued: [{ from: 'COI-42-1-1-3FA9C2B71D', to: 'COI-42-1-1-3FA9C2B71D-R2' }],
      additions: [],
      holderPremiums: [],
      refunds: null,
      refundFailure: null,
      paymentMethod: null,
      paymentMethodId: null,
      paymentIntentId: null,
      checkoutSessionId: null,
      checkoutUrl: null,
      checkoutExpiresAt: null,
      paidAt: null,
      failureCode: null,
      failureMessage: null,
      policyTransactionId: null,
      createdAt: new Date(),
      expiresAt: new Date(),
      appliedAt: new Date(),
    } satisfies StoredEndorsement).event,
    'certificate_holder.removed': certificateHolderEvent(purchase(), holder({ removedAt: new Date() }), 'removed', [
      'COI-42-1-3-H12-4D5E6F7A8B',
    ]).event,
    ...claimEvents(),
    'dispute.opened': disputeEvent(purchase({ status: 'issued' }), dispute(), 'opened').event,
    'dispute.closed': disputeEvent(purchase({ status: 'issued' }), dispute({ status: 'lost', closedAt: new Date() }), 'closed').event,
    'report.ready': reportReadyEvent({
      id: 5,
      rootAccountId: 1,
      partyRootAccountId: 3,
      month: '2026-10',
      mode: 'test',
      status: 'ready',
      provisional: false,
      coversUntil: null,
      files: {
        csv: { storageKey: 'reports/bordereaux/1/3/test/2026-10.csv', sizeBytes: 900, sha256: 'a'.repeat(64) },
        xlsx: { storageKey: 'reports/bordereaux/1/3/test/2026-10.xlsx', sizeBytes: 7000, sha256: 'b'.repeat(64) },
      },
      rowCount: 3,
      totals: { USD: { rows: 3, gross_premium: 12000, platform_fee: 300, tax: 0, net_premium: 12000 } },
      loss: null,
      createdAt: new Date('2026-11-01T02:00:00.000Z'),
      generatedAt: new Date('2026-11-01T02:00:41.000Z'),
    }).event,
    'webhook_endpoint.test': endpointTestEvent({ id: 4, url: 'https://agency.example/hooks/coi', rootAccountId: 1, mode: 'test' }, 'portal')
      .event,
  };
}

/** Paths where `value` has a field its schema does not list, or lacks one it does (objects compared key for key, all the way down). */
function fieldDifferences(schema: z.ZodType, value: unknown, at = ''): string[] {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodNullable || s instanceof z.ZodOptional || s instanceof z.ZodDefault)
    s = (s as z.ZodNullable<z.ZodType>).unwrap() as z.ZodType;
  if (value === null || value === undefined) return [];
  if (s instanceof z.ZodArray)
    return Array.isArray(value) ? value.flatMap((v, i) => fieldDifferences(s.element as z.ZodType, v, `${at}[${i}]`)) : [];
  if (!(s instanceof z.ZodObject) || typeof value !== 'object') return [];
  const shape = s.shape as Record<string, z.ZodType>;
  const got = Object.keys(value);
  return [
    ...got.filter((k) => !(k in shape)).map((k) => `${at}.${k}: sent, not in the schema`),
    ...Object.keys(shape)
      .filter((k) => !got.includes(k))
      .map((k) => `${at}.${k}: in the schema, not sent`),
    ...got.filter((k) => k in shape).flatMap((k) => fieldDifferences(shape[k]!, (value as Record<string, unknown>)[k], `${at}.${k}`)),
  ];
}

describe('the events agencies receive', () => {
  const built = builtEvents();

  test.each(DELIVERED_EVENT_TYPES.map((t) => [t]))('when a %s event is built, then it matches its schema field for field', (type) => {
    const event = built[type];
    expect((event as { type: string }).type).toBe(type);
    const parsed = AGENCY_EVENT_SCHEMAS[type].safeParse(event);
    expect(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([]);
    expect(fieldDifferences(AGENCY_EVENT_SCHEMAS[type], event)).toEqual([]);
    // The union the client's WebhookEvent mirrors picks the same schema by `type`.
    expect(AgencyWebhookEvent.safeParse(event).success).toBe(true);
  });

  test.each(DELIVERED_EVENT_TYPES.map((t) => [t]))(
    'when the %s example of the document is read, then it matches its schema field for field',
    (type) => {
      const example = exampleEvent(type);
      expect(AGENCY_EVENT_SCHEMAS[type].safeParse(example).success).toBe(true);
      expect(fieldDifferences(AGENCY_EVENT_SCHEMAS[type], example)).toEqual([]);
    },
  );

  test('when another type is claimed by an event, then the union refuses it', () => {
    const paid = built['purchase.paid'] as Record<string, unknown>;
    expect(AgencyWebhookEvent.safeParse({ ...paid, type: 'certificates.issued' }).success).toBe(false);
    expect(AgencyWebhookEvent.safeParse({ ...paid, type: 'purchase.teleported' }).success).toBe(false);
  });

  test('when the OpenAPI document is built, then its webhooks section has every event type with its payload schema, signature header and answers', () => {
    const doc = buildOpenApiDocument(createOpenApiRegistry(), 'http://127.0.0.1:3000') as any;
    expect(Object.keys(doc.webhooks).sort()).toEqual([...DELIVERED_EVENT_TYPES].sort());
    const ids = new Set<string>();
    for (const type of DELIVERED_EVENT_TYPES) {
      const op = doc.webhooks[type].post;
      ids.add(op.operationId);
      expect(op.tags).toEqual(['Webhook events']);
      expect(op.security).toEqual([]);
      expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'Signature', in: 'header', required: true }));
      expect(op.requestBody.required).toBe(true);
      const media = op.requestBody.content['application/json'];
      const ref = media.schema.$ref as string;
      expect(ref).toMatch(/^#\/components\/schemas\/\w+Event$/);
      const schema = doc.components.schemas[ref.split('/').pop()!];
      expect(schema.properties.type).toEqual({ type: 'string', enum: [type] });
      expect(Object.keys(schema.properties)).toEqual(['id', 'object', 'type', 'created', 'livemode', 'api_version', 'data']);
      expect(schema.properties.data.properties.object.$ref).toMatch(/^#\/components\/schemas\/(Event\w+|Subscription)$/);
      expect(media.example.type).toBe(type);
      expect(Object.keys(op.responses).sort()).toEqual(['200', '4XX']);
    }
    expect(ids.size).toBe(DELIVERED_EVENT_TYPES.length);
    expect(doc.tags.map((t: { name: string }) => t.name)).toContain('Webhook events');
  });
});
