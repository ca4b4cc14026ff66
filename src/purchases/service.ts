/**
 * Purchases as a resource for the agency's server: list, one purchase in full (items, covered
 * units with their state and certificate, amounts paid, refunded and outstanding, a timeline) and
 * the cancellation quote (what cancelling some covered units would give back, by the refund rule
 * of src/purchases/refund-rule.ts and the terms each item was bought with).
 *
 * Tenancy: a key reads its root account's purchases in its own mode, and only its teammate's when
 * the key belongs to one; anything else is 404 NOT_FOUND, exactly like a purchase that does not
 * exist. Amounts are integer minor units.
 *
 * Errors (AppError): NOT_FOUND; VALIDATION_ERROR (an effective time in the past);
 * PURCHASE_NOT_CANCELLABLE (not paid: quoted, awaiting payment, expired or failed);
 * PURCHASE_ALREADY_CANCELLED (refunded in full); and the refund rule's UNKNOWN_COVERED_UNIT,
 * DUPLICATE_COVERED_UNIT (400), COVERED_UNIT_STARTED, COVERED_UNIT_ALREADY_CANCELLED,
 * NOTHING_TO_CANCEL (409).
 */
import { randomBytes } from 'node:crypto';
import type { Principal } from '../api-keys/service';
import { AppError, notFound } from '../http/errors';
import type { CertificatesRepository, StoredCertificate } from '../certificates/repository';
import { verificationUrl } from '../certificates/certificate-data';
import type { PurchaseItemDetail, PurchaseRecord, PurchaseScope, PurchasesRepository, StoredCancellationQuote } from './repository';
import { priceCancellation, RefundRuleError, type RuleItem } from './refund-rule';
import type { CancellationQuote, CancellationQuoteRequest, ListPurchasesQuery, PurchaseDetail, PurchaseSummary } from './schemas';

/** How long a cancellation quote holds at most (15 minutes), in ms; less when its first unit starts sooner. */
export const CANCELLATION_QUOTE_TTL_MS = 15 * 60_000;

/** Statuses in which the buyer has paid and the policy is in force. */
const PAID_STATUSES = new Set(['paid', 'awaiting_certificates', 'issued']);

export function purchaseScopeOf(p: Principal): PurchaseScope {
  return { rootAccountId: p.rootAccountId, mode: p.mode, agentId: p.agentId };
}

/** The list shape of a purchase (amounts in minor units). */
export function toPurchaseSummary(p: PurchaseRecord): PurchaseSummary {
  const paid = p.paidAt ? p.totalMinor : 0;
  return {
    object: 'purchase',
    id: p.id,
    status: p.status,
    livemode: p.mode === 'live',
    billing: p.billing,
    checkout_session_id: p.checkoutSessionId,
    payment_intent: p.paymentIntentId,
    currency: p.currency,
    amount_subtotal: p.subtotalMinor,
    platform_fee: p.platformFeeMinor,
    amount_total: p.totalMinor,
    amount_paid: paid,
    amount_refunded: p.refundedMinor,
    amount_outstanding: p.totalMinor - paid,
    buyer_email: p.buyerEmail,
    agent_id: p.agentId,
    failure_reason: p.failureReason,
    subscription_id: p.payprocSubscriptionId,
    renewal_of_purchase_id: p.renewalOfPurchaseId,
    paid_at: p.paidAt?.toISOString() ?? null,
    certificates_issued_at: p.certificatesIssuedAt?.toISOString() ?? null,
    created_at: p.createdAt.toISOString(),
  };
}

/** What happened to the purchase, oldest first, from its own record. */
function timeline(p: PurchaseRecord): PurchaseDetail['timeline'] {
  const entries: PurchaseDetail['timeline'] = [{ type: 'created', at: p.createdAt.toISOString(), by: 'agency' }];
  if (p.paidAt) entries.push({ type: 'paid', at: p.paidAt.toISOString(), by: 'buyer' });
  if (p.certificatesIssuedAt) entries.push({ type: 'certificates_issued', at: p.certificatesIssuedAt.toISOString(), by: 'service' });
  if (p.refundedAt) entries.push({ type: 'refunded', at: p.refundedAt.toISOString(), by: 'processor' });
  if (p.status === 'expired' && p.checkoutExpiresAt) entries.push({ type: 'expired', at: p.checkoutExpiresAt.toISOString(), by: 'processor' });
  if (p.status === 'failed' && p.failedAt) entries.push({ type: 'failed', at: p.failedAt.toISOString(), by: 'processor' });
  return entries.sort((a, b) => a.at.localeCompare(b.at));
}

/** Whether a unit is cancelled: today only by a full refund, which voids every certificate. */
const unitState = (p: PurchaseRecord): 'unpaid' | 'active' | 'cancelled' => (p.status === 'refunded' ? 'cancelled' : p.paidAt ? 'active' : 'unpaid');

export function createPurchaseService(deps: { purchases: PurchasesRepository; certificates: CertificatesRepository; publicBaseUrl: string; now?: () => Date }) {
  const now = deps.now ?? (() => new Date());

  async function owned(principal: Principal, id: number): Promise<PurchaseRecord> {
    const p = await deps.purchases.findInScope(id, purchaseScopeOf(principal));
    if (!p) throw notFound('purchase', id);
    return p;
  }

  function detail(p: PurchaseRecord, items: PurchaseItemDetail[], certificates: StoredCertificate[], at: Date): PurchaseDetail {
    const byUnit = new Map(certificates.map((c) => [c.coveredUnitId, c]));
    const state = unitState(p);
    return {
      ...toPurchaseSummary(p),
      items: items.map((i) => ({
        id: i.id,
        product_id: i.productLineId,
        product_name: i.productName,
        is_trip_excess: i.isTripExcess,
        unit_price: i.unitPriceMinor,
        price_factor: i.priceFactor,
        amount: i.amountMinor,
        named_insured: i.namedInsured ?? null,
        certificate_holder: i.certificateHolder ?? null,
        covered_units: i.units.map((u) => {
          const c = byUnit.get(u.id);
          return {
            id: u.id,
            index: u.index,
            kind: u.kind,
            starts_at: u.startsAt.toISOString(),
            ends_at: u.endsAt.toISOString(),
            time_zone: u.timeZone,
            local_label: u.localLabel,
            state,
            coverage_started: u.startsAt.getTime() <= at.getTime(),
            certificate: c ? { number: c.certificateNumber, verification_url: verificationUrl(deps.publicBaseUrl, c.certificateNumber) } : null,
          };
        }),
      })),
      timeline: timeline(p),
    };
  }

  return {
    /** One page of the key's purchases, newest first, and how many match the filters. */
    async list(principal: Principal, q: ListPurchasesQuery): Promise<{ items: PurchaseSummary[]; total: number }> {
      const page = await deps.purchases.list(purchaseScopeOf(principal), {
        status: q.status,
        createdFrom: q.created_gte ? new Date(q.created_gte) : undefined,
        createdTo: q.created_lt ? new Date(q.created_lt) : undefined,
        buyerEmail: q.buyer_email,
        limit: q.pageSize,
        offset: q.pageIndex * q.pageSize,
      });
      return { items: page.items.map(toPurchaseSummary), total: page.total };
    },

    /** One purchase in full; 404 outside the key's scope. */
    async get(principal: Principal, id: number): Promise<PurchaseDetail> {
      const p = await owned(principal, id);
      const [items, certificates] = await Promise.all([deps.purchases.itemDetails(id), deps.certificates.listForPurchase(id)]);
      return detail(p, items, certificates, now());
    },

    /**
     * Prices a cancellation without changing anything but the stored quote: the units named (or
     * every unit not started at the effective time), who asks and when it takes effect, by the
     * terms each item was bought with; never more than was paid less what was already refunded.
     */
    async quoteCancellation(principal: Principal, id: number, body: CancellationQuoteRequest): Promise<CancellationQuote> {
      const p = await owned(principal, id);
      const at = now();
      const effectiveAt = body.effective_at ? new Date(body.effective_at) : at;
      if (effectiveAt.getTime() < at.getTime() - 60_000) {
        throw new AppError('VALIDATION_ERROR', 'effective_at: a cancellation cannot take effect in the past', { details: [{ path: 'effective_at', message: 'must be now or later' }] });
      }
      if (p.status === 'refunded') throw new AppError('PURCHASE_ALREADY_CANCELLED', `Purchase ${id} was refunded in full: nothing is left to cancel`);
      if (!PAID_STATUSES.has(p.status)) throw new AppError('PURCHASE_NOT_CANCELLABLE', `Purchase ${id} is ${p.status}: only a paid purchase can be cancelled`);
      const [items, certificates] = await Promise.all([deps.purchases.itemDetails(id), deps.certificates.listForPurchase(id)]);
      const ruleItems: RuleItem[] = items.map((i) => ({
        id: i.id,
        premiumMinor: i.amountMinor,
        taxMinor: 0, // no tax is charged on purchases yet
        refundedPremiumMinor: 0,
        units: i.units.map((u) => ({ id: u.id, startsAt: u.startsAt, cancelled: false })),
        terms: i.cancellationTerms,
      }));
      const open = ruleItems.flatMap((i) => i.units).filter((u) => !u.cancelled && u.startsAt.getTime() > effectiveAt.getTime());
      const unitIds = body.covered_unit_ids ?? open.map((u) => u.id);
      let priced;
      try {
        priced = priceCancellation({
          items: ruleItems,
          platformFeeMinor: p.platformFeeMinor,
          paidAt: p.paidAt ?? p.createdAt,
          effectiveAt,
          cancelUnitIds: unitIds,
          requestedBy: body.requested_by,
          refundableMinor: p.totalMinor - p.refundedMinor,
        });
      } catch (err) {
        if (err instanceof RefundRuleError) {
          throw new AppError(err.code, err.message, { details: err.unitIds.length ? [{ path: 'covered_unit_ids', message: `covered units ${err.unitIds.join(', ')}` }] : undefined });
        }
        throw err;
      }
      const firstStart = Math.min(...priced.units.map((u) => ruleItems.flatMap((i) => i.units).find((x) => x.id === u.unitId)!.startsAt.getTime()));
      const stored: StoredCancellationQuote = await deps.purchases.saveCancellationQuote({
        id: `cq_${randomBytes(12).toString('hex')}`,
        purchaseId: id,
        apiKeyId: principal.apiKeyId,
        requestedBy: body.requested_by,
        reason: body.reason ?? null,
        coveredUnitIds: priced.units.map((u) => u.unitId),
        effectiveAt,
        method: priced.method,
        freeLook: priced.freeLook,
        endsPolicy: priced.endsPolicy,
        currency: p.currency,
        premiumMinor: priced.premiumMinor,
        taxMinor: priced.taxMinor,
        platformFeeMinor: priced.platformFeeMinor,
        totalMinor: priced.totalMinor,
        breakdown: priced.units,
        expiresAt: new Date(Math.min(at.getTime() + CANCELLATION_QUOTE_TTL_MS, firstStart)),
      });
      const certificateOf = new Map(certificates.map((c) => [c.coveredUnitId, c.certificateNumber]));
      return {
        object: 'cancellation_quote',
        id: stored.id,
        purchase_id: id,
        requested_by: stored.requestedBy,
        reason: stored.reason,
        effective_at: stored.effectiveAt.toISOString(),
        method: stored.method,
        ends_policy: stored.endsPolicy,
        currency: stored.currency,
        refund: { premium: stored.premiumMinor, tax: stored.taxMinor, platform_fee: stored.platformFeeMinor, total: stored.totalMinor },
        covered_units: stored.breakdown.map((u) => ({
          covered_unit_id: u.unitId,
          item_id: u.itemId,
          premium: u.premiumMinor,
          earned: u.earnedMinor,
          refundable: u.refundableMinor,
          certificate_number: certificateOf.get(u.unitId) ?? null,
        })),
        expires_at: stored.expiresAt.toISOString(),
        created_at: stored.createdAt.toISOString(),
      };
    },
  };
}

export type PurchaseService = ReturnType<typeof createPurchaseService>;
