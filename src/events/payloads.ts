/**
 * The events an agency receives, built from what this service knows at that moment.
 *
 * Event ids are derived from what happened (`evt_` + 32 hex of SHA-256 over type, purchase and a
 * discriminator such as the refunded amount or the renewal invoice), so the retried activity that
 * publishes one publishes the same event, once.
 *
 * Objects: `purchase` (status, checkout session, payment intent, amounts in minor units,
 * failure reason, refunded amount, subscription, renewal link, bundle, the agency's metadata, the
 * buyer's reference and the items with their covered units; no buyer contact data) and
 * `certificate_set` (the getCertificates answer of a purchase: certificate numbers, signed PDF and
 * zip links valid for the certificate URL lifetime from the event's creation, verification and
 * proof-of-coverage links; fetch fresh links with getCertificates after that).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { PurchaseItemDetail, PurchaseRecord } from '../purchases/purchase-record';
import type { StoredCancellation } from '../purchases/ledger-record';
import { disputeFacts, itemObject, purchaseObject } from '../purchases/purchase-object';
import { subscriptionObject } from '../purchases/subscription-object';
import type { GetCertificatesResponse } from '../certificates/schemas';
import type { StoredEvent } from './repository';
import type { CertificateHolderRecord } from '../certificate-holders/repository';
import type { StoredEndorsement } from '../endorsements/repository';
import type { StoredDispute } from '../disputes/repository';
import type { BordereauRecord } from '../reports/repository';
import { bordereauFacts } from '../reports/bordereau-object';
import { ENDPOINT_TEST_EVENT_TYPE, type AgencyEvent, type AgencyEventType, type DeliveredEventType } from './types';

/** `subjectId`: the purchase the event is about (for report.ready, the bordereau). */
export function agencyEventId(type: AgencyEventType, subjectId: number, discriminator = ''): string {
  return `evt_${createHash('sha256').update(`${type}|${subjectId}|${discriminator}`).digest('hex').slice(0, 32)}`;
}

/** What an event is about: its account and mode, and its purchase (null for an event of no purchase, such as report.ready). */
interface EventOwner {
  rootAccountId: number;
  mode: 'live' | 'test';
  purchaseId: number | null;
}

function ownedEnvelope(type: DeliveredEventType, id: string, owner: EventOwner, object: Record<string, unknown>): StoredEvent {
  const event: AgencyEvent = {
    id,
    object: 'event',
    type,
    created: Math.floor(Date.now() / 1000),
    livemode: owner.mode === 'live',
    api_version: 'v1',
    data: { object },
  };
  return { event, ...owner };
}

/** The envelope of an event about purchase `p`. */
function envelope(type: AgencyEventType, id: string, p: PurchaseRecord, object: Record<string, unknown>): StoredEvent {
  return ownedEnvelope(type, id, { rootAccountId: p.rootAccountId, mode: p.mode, purchaseId: p.id }, object);
}

/**
 * The `purchase` of the events, from the purchases domain's reads: the API's purchase object of
 * `p` (the purchase read model), the buyer's `idp_accnt_uuid` (`buyerIdpAccntUuid`, null when the
 * buyer is gone; no contact data) and each of `items` with its product, premium (minor units) and
 * covered units (id, dates as ISO 8601 UTC instants, time zone, label).
 */
export function eventPurchaseObject(p: PurchaseRecord, buyerIdpAccntUuid: string | null, items: PurchaseItemDetail[]) {
  return {
    ...purchaseObject(p),
    buyer: { idp_accnt_uuid: buyerIdpAccntUuid },
    items: items.map(itemObject),
  };
}

/**
 * `report.ready`, once per bordereau: its files are stored. The object is the bordereau without
 * download links (they expire): read it with getBordereau for fresh ones. No purchase.
 */
export function reportReadyEvent(b: BordereauRecord): StoredEvent {
  const owner = { rootAccountId: b.rootAccountId, mode: b.mode, purchaseId: null };
  return ownedEnvelope('report.ready', agencyEventId('report.ready', b.id), owner, {
    ...bordereauFacts(b),
    rows: b.rowCount ?? 0,
    totals: b.totals ?? {},
    files: {
      csv: { size_bytes: b.files?.csv?.sizeBytes ?? 0, sha256: b.files?.csv?.sha256 ?? '' },
      xlsx: { size_bytes: b.files?.xlsx?.sizeBytes ?? 0, sha256: b.files?.xlsx?.sha256 ?? '' },
    },
    generated_at: (b.generatedAt ?? new Date()).toISOString(),
  });
}

/** The agency event type a purchase status announces; statuses not listed have no event of their own. */
const STATUS_EVENT_TYPES: Partial<Record<PurchaseRecord['status'], AgencyEventType>> = {
  awaiting_payment: 'purchase.checkout_created',
  paid: 'purchase.paid',
  expired: 'purchase.expired',
  failed: 'purchase.failed',
};

/** Whether moving a purchase to `status` announces an event (so the event's facts are worth reading). */
export function statusHasEvent(status: PurchaseRecord['status']): boolean {
  return STATUS_EVENT_TYPES[status] !== undefined;
}

/**
 * The event a purchase status announces, or null for statuses with no event of their own; its
 * object is `eventPurchaseObject(p, buyerIdpAccntUuid, items)`.
 */
export function purchaseStatusEvent(p: PurchaseRecord, buyerIdpAccntUuid: string | null, items: PurchaseItemDetail[]): StoredEvent | null {
  const type = STATUS_EVENT_TYPES[p.status];
  return type ? envelope(type, agencyEventId(type, p.id), p, eventPurchaseObject(p, buyerIdpAccntUuid, items)) : null;
}

/** `purchase.refunded`, once per refunded amount (a partial refund, then the rest, are two events). */
export function refundEvent(p: PurchaseRecord, buyerIdpAccntUuid: string | null, items: PurchaseItemDetail[]): StoredEvent {
  return envelope(
    'purchase.refunded',
    agencyEventId('purchase.refunded', p.id, String(p.refundedMinor)),
    p,
    eventPurchaseObject(p, buyerIdpAccntUuid, items),
  );
}

/** `subscription.renewed`: the renewal purchase (its certificates follow in `certificates.issued`). */
export function renewalEvent(renewal: PurchaseRecord, buyerIdpAccntUuid: string | null, items: PurchaseItemDetail[]): StoredEvent {
  return envelope(
    'subscription.renewed',
    agencyEventId('subscription.renewed', renewal.id),
    renewal,
    eventPurchaseObject(renewal, buyerIdpAccntUuid, items),
  );
}

/**
 * `subscription.cancelled`, once per change of the subscription's end: set to end at the period's
 * end, or ended (`ended_at`), by the agency or the processor (`cancelled_by`). Named by its first purchase.
 */
export function subscriptionCancelledEvent(first: PurchaseRecord, periods: PurchaseRecord[]): StoredEvent {
  const state = `${first.subscriptionCancelAtPeriodEnd}|${first.subscriptionEndedAt?.toISOString() ?? ''}`;
  return envelope(
    'subscription.cancelled',
    agencyEventId('subscription.cancelled', first.id, state),
    first,
    subscriptionObject(first, periods),
  );
}

/**
 * `certificates.issued`, with the purchase's certificates as getCertificates lists them: once at
 * issuance, and once more for each endorsement that added covered units (`endorsementQuoteId`, its
 * own event id), when their certificates are stored.
 */
export function certificatesIssuedEvent(
  p: PurchaseRecord,
  certificates: GetCertificatesResponse,
  endorsementQuoteId?: string,
): StoredEvent {
  return envelope('certificates.issued', agencyEventId('certificates.issued', p.id, endorsementQuoteId ?? ''), p, {
    object: 'certificate_set',
    ...certificates,
  });
}

/** The `refund` object of refund.succeeded / refund.failed: a cancellation's refund (amounts in minor units). */
function refundObject(p: PurchaseRecord, c: StoredCancellation): Record<string, unknown> {
  return {
    object: 'refund',
    id: c.refundId,
    purchase_id: p.id,
    cancellation_id: c.id,
    status: c.status === 'refund_failed' ? 'failed' : 'succeeded',
    currency: c.currency,
    amount: c.totalMinor,
    premium: c.premiumMinor,
    tax: c.taxMinor,
    platform_fee: c.platformFeeMinor,
    failure_reason: c.failureReason,
    effective_at: c.effectiveAt.toISOString(),
  };
}

/** `refund.succeeded` or `refund.failed` for a cancellation's refund, once per cancellation and outcome. */
export function cancellationRefundEvent(p: PurchaseRecord, c: StoredCancellation, outcome: 'succeeded' | 'failed'): StoredEvent {
  const type = outcome === 'succeeded' ? 'refund.succeeded' : 'refund.failed';
  return envelope(type, agencyEventId(type, p.id, `${c.id}|${outcome}|${c.failureReason ?? ''}`), p, refundObject(p, c));
}

/**
 * `certificates.voided`, once per cancellation: the certificate numbers it voided, the covered units
 * and when the cancellation took effect (`effective_at`), beside the event's own `created`.
 */
export function certificatesVoidedEvent(p: PurchaseRecord, c: StoredCancellation, voidedCertificates: string[]): StoredEvent {
  return envelope('certificates.voided', agencyEventId('certificates.voided', p.id, String(c.id)), p, {
    object: 'certificate_voiding',
    purchase_id: p.id,
    cancellation_id: c.id,
    covered_unit_ids: c.coveredUnitIds,
    certificate_numbers: voidedCertificates,
    effective_at: c.effectiveAt.toISOString(),
  });
}

/**
 * `purchase.cancelled`, once per cancellation: the purchase, and a `cancellation` with its covered
 * units, the refund split (minor units), the certificates it voided, who asked, and when it took
 * effect (`effective_at`) beside the event's own `created`.
 */
export function cancelledEvent(
  p: PurchaseRecord,
  buyerIdpAccntUuid: string | null,
  items: PurchaseItemDetail[],
  c: StoredCancellation,
  voidedCertificates: string[],
): StoredEvent {
  return envelope('purchase.cancelled', agencyEventId('purchase.cancelled', p.id, String(c.id)), p, {
    ...eventPurchaseObject(p, buyerIdpAccntUuid, items),
    cancellation: {
      object: 'cancellation',
      id: c.id,
      quote_id: c.quoteId,
      requested_by: c.requestedBy,
      reason: c.reason,
      effective_at: c.effectiveAt.toISOString(),
      covered_unit_ids: c.coveredUnitIds,
      refund: { id: c.refundId, premium: c.premiumMinor, tax: c.taxMinor, platform_fee: c.platformFeeMinor, total: c.totalMinor },
      voided_certificates: voidedCertificates,
    },
  });
}

/**
 * `certificate_holder.added` (once its certificates are stored: `certificate_numbers` issued to it)
 * or `certificate_holder.removed` (`certificate_numbers` voided), once per holder and change. The
 * holder's name and marks only: its address and email stay in the API.
 */
export function certificateHolderEvent(
  p: PurchaseRecord,
  h: CertificateHolderRecord,
  change: 'added' | 'removed',
  certificateNumbers: string[],
): StoredEvent {
  const type = change === 'added' ? 'certificate_holder.added' : 'certificate_holder.removed';
  return envelope(type, agencyEventId(type, p.id, String(h.id)), p, {
    object: 'certificate_holder',
    id: h.id,
    purchase_id: p.id,
    name: h.name,
    additional_insured: h.additionalInsured,
    waiver_of_subrogation: h.waiverOfSubrogation,
    certificate_numbers: certificateNumbers,
    created_at: h.createdAt.toISOString(),
    removed_at: h.removedAt?.toISOString() ?? null,
  });
}

/**
 * `certificates.reissued`, once per endorsement carried out, when its new certificate versions are
 * stored: each old number and its new version's, with the endorsement (its quote id) and its changes.
 */
export function certificatesReissuedEvent(p: PurchaseRecord, e: StoredEndorsement): StoredEvent {
  return envelope('certificates.reissued', agencyEventId('certificates.reissued', p.id, e.quoteId), p, {
    object: 'certificate_reissue',
    purchase_id: p.id,
    endorsement_id: e.quoteId,
    change_types: [...new Set(e.changes.map((c) => c.type))],
    certificates: (e.reissued ?? []).map((r) => ({ from: r.from, to: r.to })),
    effective_at: (e.appliedAt ?? e.createdAt).toISOString(),
  });
}

/**
 * `dispute.opened` (the buyer disputed the payment: the processor took the amount back until it
 * decides) and `dispute.closed` (decided: `won`, the money returns; `lost`, the buyer keeps it; or
 * an inquiry closed), each once per processor dispute. Amounts in minor units.
 */
export function disputeEvent(p: PurchaseRecord, d: StoredDispute, change: 'opened' | 'closed'): StoredEvent {
  const type = change === 'opened' ? 'dispute.opened' : 'dispute.closed';
  return envelope(type, agencyEventId(type, p.id, d.payprocDisputeId), p, {
    object: 'dispute',
    id: d.payprocDisputeId,
    purchase_id: p.id,
    ...disputeFacts(d),
  });
}

/**
 * `webhook_endpoint.test`: a test event for one endpoint, asked for by its agency (from the API or
 * the portal, `requestedVia`). Each request is its own event (a random `evt_` id, no purchase).
 * The object names the endpoint it goes to (`webhook_endpoint_test`: its id and URL).
 */
export function endpointTestEvent(
  endpoint: { id: number; url: string; rootAccountId: number; mode: 'live' | 'test' },
  requestedVia: 'api' | 'portal',
): StoredEvent {
  const owner = { rootAccountId: endpoint.rootAccountId, mode: endpoint.mode, purchaseId: null };
  return ownedEnvelope(ENDPOINT_TEST_EVENT_TYPE, `evt_${randomBytes(16).toString('hex')}`, owner, {
    object: 'webhook_endpoint_test',
    endpoint_id: endpoint.id,
    url: endpoint.url,
    requested_via: requestedVia,
  });
}
