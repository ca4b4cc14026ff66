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
 * `cancel` carries a quote out (or prices and carries out at once) through the purchase's policy
 * workflow (./workflow-client.ts `cancel`).
 *
 * The purchase's "now" is its test clock when a test purchase has one (policyClock): whether a unit
 * has started, the default effective time, and whether a cancellation is scheduled.
 *
 * Errors (AppError): NOT_FOUND; VALIDATION_ERROR (an effective time in the past; quote_id sent
 * with units); CANCELLATION_NOT_FOUND, CANCELLATION_NOT_RESCINDABLE (rescind); CANCELLATION_QUOTE_NOT_FOUND (404),
 * CANCELLATION_QUOTE_EXPIRED and CANCELLATION_QUOTE_STALE (409, from the workflow);
 * PURCHASE_NOT_CANCELLABLE (not paid: quoted, awaiting payment, expired or failed);
 * PURCHASE_ALREADY_CANCELLED (refunded in full); and the refund rule's UNKNOWN_COVERED_UNIT,
 * DUPLICATE_COVERED_UNIT (400), COVERED_UNIT_STARTED, COVERED_UNIT_ALREADY_CANCELLED,
 * NOTHING_TO_CANCEL (409).
 */
import type { AccountView, Principal } from '../api-keys/service';
import { AppError, notFound } from '../shared/errors';
import type { CertificatesRepository, StoredCertificate } from '../certificates/repository';
import { verificationUrl } from '../certificates/certificate-data';
import { COMPLETE_PAGE_PATH, returnPageUrl } from './return-urls';
import type { PurchaseItemDetail, PurchaseRecord, PurchaseScope } from './purchase-record';
import type { StoredCancellation, StoredCancellationQuote } from './ledger-record';
import type { SaleRepository } from './sale-repository';
import type { LedgerRepository } from './ledger-repository';
import type { PurchaseWorkflows } from './workflow-client';
import { RefundRuleError } from './refund-rule';
import { CANCELLATION_QUOTE_TTL_MS, policyClock, storeCancellationQuote } from './cancellation-pricing';
import { hasStarted, isInForce } from './rules';
import { disputeFacts, itemObject, purchaseObject } from './purchase-object';
import { commissionOf } from './commission';
import { taxLineObject } from '../taxes/premium-tax';
import type {
  Cancellation,
  CancellationQuote,
  CancellationQuoteRequest,
  CancelRequest,
  ListPurchasesQuery,
  PurchaseDetail,
  PurchaseSummary,
} from './schemas';
import type { DisputesRepository, StoredDispute } from '../disputes/repository';

export { CANCELLATION_QUOTE_TTL_MS, policyClock };

/** The refund rule's refusal as the API's error (other errors unchanged). */
export function asAppError(err: unknown): unknown {
  if (!(err instanceof RefundRuleError)) return err;
  return new AppError(err.code, err.message, {
    details: err.unitIds.length ? [{ path: 'covered_unit_ids', message: `covered units ${err.unitIds.join(', ')}` }] : undefined,
  });
}

export function purchaseScopeOf(p: AccountView): PurchaseScope {
  return { rootAccountId: p.rootAccountId, mode: p.mode, agentId: p.agentId };
}

/**
 * Purchase `id` when it is in the caller's scope (its account and mode and, for a teammate's key,
 * that teammate's), read through `sales`.
 * @throws {AppError} 404 NOT_FOUND otherwise: another account's purchase reads as one that does not exist.
 */
export async function ownedPurchase(sales: Pick<SaleRepository, 'findInScope'>, caller: AccountView, id: number): Promise<PurchaseRecord> {
  const p = await sales.findInScope(id, purchaseScopeOf(caller));
  if (!p) throw notFound('purchase', id);
  return p;
}

/**
 * The list shape of a purchase: the events' `purchase` object plus what was paid, what is owed and
 * the buyer's email (minor units). Paid: the sale's total once paid, plus `endorsementsPaidMinor`,
 * what its priced endorsements collected (the ledger's `endorsementPaymentsOf`), so that every
 * refund on the purchase is within it. Owed: the sale's total until it is paid (an endorsement is
 * applied only once paid, so it is never owed).
 */
export function toPurchaseSummary(p: PurchaseRecord, endorsementsPaidMinor = 0): PurchaseSummary {
  const salePaid = p.paidAt ? p.totalMinor : 0;
  return {
    ...purchaseObject(p),
    amount_paid: salePaid + endorsementsPaidMinor,
    amount_outstanding: p.totalMinor - salePaid,
    buyer_email: p.buyerEmail,
  };
}

/** A cancellation in its wire shape (amounts in minor units). */
export function toCancellation(c: StoredCancellation): Cancellation {
  return {
    object: 'cancellation',
    id: c.id,
    purchase_id: c.purchaseId,
    quote_id: c.quoteId,
    status: c.status,
    requested_by: c.requestedBy,
    reason: c.reason,
    effective_at: c.effectiveAt.toISOString(),
    currency: c.currency,
    refund: { id: c.refundId, premium: c.premiumMinor, tax: c.taxMinor, platform_fee: c.platformFeeMinor, total: c.totalMinor },
    covered_units: c.breakdown.map((u) => ({
      covered_unit_id: u.unitId,
      item_id: u.itemId,
      premium: u.premiumMinor,
      earned: u.earnedMinor,
      refundable: u.refundableMinor,
    })),
    failure_reason: c.failureReason,
    created_at: c.createdAt.toISOString(),
    completed_at: c.completedAt?.toISOString() ?? null,
    rescinded_at: c.rescindedAt?.toISOString() ?? null,
  };
}

/** What happened to the purchase, oldest first, from its own record and its cancellations. */
function timeline(p: PurchaseRecord, cancellations: StoredCancellation[]): PurchaseDetail['timeline'] {
  const entries: PurchaseDetail['timeline'] = [{ type: 'created', at: p.createdAt.toISOString(), by: 'agency' }];
  for (const c of cancellations) {
    entries.push({
      type: c.status === 'scheduled' || c.rescindedAt ? 'cancellation_scheduled' : 'cancellation_accepted',
      at: c.createdAt.toISOString(),
      by: c.requestedBy,
      cancellation_id: c.id,
    });
    if (c.rescindedAt)
      entries.push({ type: 'cancellation_rescinded', at: c.rescindedAt.toISOString(), by: 'agency', cancellation_id: c.id });
    if (c.status === 'completed' && c.completedAt)
      entries.push({ type: 'cancelled', at: c.completedAt.toISOString(), by: 'service', cancellation_id: c.id });
    if (c.status === 'refund_failed')
      entries.push({ type: 'cancellation_failed', at: c.createdAt.toISOString(), by: 'processor', cancellation_id: c.id });
  }
  if (p.paidAt) entries.push({ type: 'paid', at: p.paidAt.toISOString(), by: 'buyer' });
  if (p.certificatesIssuedAt) entries.push({ type: 'certificates_issued', at: p.certificatesIssuedAt.toISOString(), by: 'service' });
  if (p.refundedAt) entries.push({ type: 'refunded', at: p.refundedAt.toISOString(), by: 'processor' });
  if (p.status === 'expired' && p.checkoutExpiresAt)
    entries.push({ type: 'expired', at: p.checkoutExpiresAt.toISOString(), by: 'processor' });
  if (p.status === 'failed' && p.failedAt) entries.push({ type: 'failed', at: p.failedAt.toISOString(), by: 'processor' });
  return entries.sort((a, b) => a.at.localeCompare(b.at));
}

type UnitState = 'unpaid' | 'active' | 'cancellation_scheduled' | 'cancellation_pending' | 'cancelled';
/**
 * A unit's state: cancelled by its cancellation or by a full refund, scheduled while its
 * cancellation waits for its effective time, pending while that cancellation's refund is on the way.
 */
/**
 * An item's commission as `GET /api/v1/purchases/{id}` shows it: what the sale earned and what
 * completed cancellations gave back, each on the premium it returned for this item (./commission.ts);
 * null without a rate.
 */
function commissionView(i: PurchaseItemDetail, cancellations: StoredCancellation[]) {
  const c = i.commission;
  if (!c) return null;
  const returned = cancellations
    .filter((x) => x.status === 'completed')
    .reduce(
      (sum, x) =>
        sum +
        commissionOf(
          x.breakdown.filter((u) => u.itemId === i.id).reduce((n, u) => n + u.refundableMinor, 0),
          c.rateBps,
        ),
      0,
    );
  return { party_id: c.partyRootAccountId, rate_bps: c.rateBps, amount: c.amountMinor, returned: Math.min(returned, c.amountMinor) };
}

function unitState(
  p: PurchaseRecord,
  u: PurchaseItemDetail['units'][number],
  statusOf: Map<number, StoredCancellation['status']>,
): UnitState {
  if (u.cancelledAt || p.status === 'refunded') return 'cancelled';
  if (u.cancellationId !== null) return statusOf.get(u.cancellationId) === 'scheduled' ? 'cancellation_scheduled' : 'cancellation_pending';
  return p.paidAt ? 'active' : 'unpaid';
}

export function createPurchaseService(deps: {
  sales: SaleRepository;
  ledger: LedgerRepository;
  certificates: CertificatesRepository;
  disputes: Pick<DisputesRepository, 'listForPurchase'>;
  publicBaseUrl: string;
  /** Hands a cancellation to the purchase's policy workflow. */
  workflows: Pick<PurchaseWorkflows, 'cancel' | 'rescind'>;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());

  const owned = (principal: AccountView, id: number) => ownedPurchase(deps.sales, principal, id);

  function detail(
    p: PurchaseRecord,
    items: PurchaseItemDetail[],
    certificates: StoredCertificate[],
    cancellations: StoredCancellation[],
    disputes: StoredDispute[],
    at: Date,
    certificatesComplete: boolean,
    endorsementsPaidMinor: number,
  ): PurchaseDetail {
    // The unit's `certificate`: its first holder's current version (the list is in holder then version order).
    const byUnit = new Map<number, StoredCertificate>();
    for (const c of certificates)
      if (c.supersededAt === null && c.storageKey !== null && !byUnit.has(c.coveredUnitId)) byUnit.set(c.coveredUnitId, c);
    const refundedAt = p.status === 'refunded' ? p.refundedAt : null;
    const statusOf = new Map(cancellations.map((c) => [c.id, c.status]));
    const summary = toPurchaseSummary(p, endorsementsPaidMinor);
    return {
      ...summary,
      // An issued purchase whose certificates are being issued again (an added holder's, an
      // endorsement's new versions) reads awaiting_certificates until every one is stored.
      status: p.certificatesIssuedAt && isInForce(p.status) && !certificatesComplete ? 'awaiting_certificates' : summary.status,
      items: items.map((i) => {
        const item = itemObject(i);
        return {
          ...item,
          commission: commissionView(i, cancellations),
          tax: { amount: i.taxMinor ?? 0, lines: (i.taxLines ?? []).map(taxLineObject) },
          is_trip_excess: i.isTripExcess,
          named_insured: i.namedInsured ?? null,
          certificate_holder: i.certificateHolder ?? null,
          covered_units: i.units.map((u, k) => {
            const c = byUnit.get(u.id);
            return {
              ...item.covered_units[k]!,
              state: unitState(p, u, statusOf),
              coverage_started: hasStarted(u.startsAt, at),
              certificate: c
                ? {
                    number: c.certificateNumber,
                    verification_url: verificationUrl(deps.publicBaseUrl, c.certificateNumber, c.proof),
                    voided_at: (c.voidedAt ?? refundedAt)?.toISOString() ?? null,
                  }
                : null,
              certificates: certificates
                .filter((x) => x.coveredUnitId === u.id)
                .map((x) => ({
                  number: x.certificateNumber,
                  certificate_holder_id: x.certificateHolderId,
                  revision: x.revision,
                  status: x.supersededAt
                    ? ('superseded' as const)
                    : x.voidedAt || refundedAt
                      ? ('voided' as const)
                      : x.storageKey
                        ? ('issued' as const)
                        : ('issuing' as const),
                  verification_url: verificationUrl(deps.publicBaseUrl, x.certificateNumber, x.proof),
                  voided_at: (x.voidedAt ?? refundedAt)?.toISOString() ?? null,
                  superseded_at: x.supersededAt?.toISOString() ?? null,
                  superseded_by: x.supersededByNumber,
                })),
            };
          }),
        };
      }),
      cancellations: cancellations.map(toCancellation),
      disputes: disputes.map((d) => ({ id: d.payprocDisputeId, ...disputeFacts(d) })),
      timeline: timeline(p, cancellations),
      test_clock: p.testClockAt?.toISOString() ?? null,
      // The buyer's checkout-complete page with its token: only in this answer, which only the owning account reads.
      buyer_page_url: p.returnToken ? returnPageUrl(deps.publicBaseUrl, COMPLETE_PAGE_PATH, p.id, p.returnToken) : null,
    };
  }

  return {
    /** One page of the key's purchases, newest first, and how many match the filters. */
    async list(principal: Principal, q: ListPurchasesQuery): Promise<{ items: PurchaseSummary[]; total: number }> {
      const page = await deps.sales.list(purchaseScopeOf(principal), {
        status: q.status,
        createdFrom: q.created_gte ? new Date(q.created_gte) : undefined,
        createdTo: q.created_lt ? new Date(q.created_lt) : undefined,
        buyerEmail: q.buyer_email,
        limit: q.pageSize,
        offset: q.pageIndex * q.pageSize,
      });
      const paid = await deps.ledger.endorsementPaymentsOf(page.items.map((p) => p.id));
      return { items: page.items.map((p) => toPurchaseSummary(p, paid.get(p.id))), total: page.total };
    },

    /**
     * The principal of the API key that sold purchase `id`, seen from `view` (404 NOT_FOUND
     * outside it): the agency portal changes a purchase as its selling key (a cancellation quote
     * records a key, as the buyer's withdrawal page does) while its audit log names the teammate.
     */
    async sellingKeyOf(view: AccountView, id: number): Promise<Principal> {
      const p = await owned(view, id);
      return { apiKeyId: p.apiKeyId, rootAccountId: p.rootAccountId, mode: p.mode, agentId: null, platformFeeBps: null };
    },

    /** One purchase in full; 404 outside the key's scope. */
    async get(principal: AccountView, id: number): Promise<PurchaseDetail> {
      await owned(principal, id);
      // Cancellations first: a cancellation read as completed has its units, certificates and the
      // purchase's refunded amount written already (one transaction), so the purchase row and the
      // rest, read after it, never show it completed with its units pending or nothing refunded.
      const cancellations = await deps.ledger.cancellations(id);
      const [p, items, set, disputes, paid] = await Promise.all([
        owned(principal, id),
        deps.sales.itemDetails(id),
        deps.certificates.currentSet(id, { includeSuperseded: true }),
        deps.disputes.listForPurchase(id),
        deps.ledger.endorsementPaymentsOf([id]),
      ]);
      return detail(p, items, set.certificates, cancellations, disputes, policyClock(p, now()), set.complete, paid.get(id) ?? 0);
    },

    /**
     * Who bought it and what they answered for each item (question id → answer, e.g.
     * `venue_name`, `event_type`), in item order: the portal's purchase page shows them (not an
     * API field). `buyerName` is the buyer record's "first last" now. NOT_FOUND for a purchase
     * that is not the principal's.
     */
    async answers(
      principal: AccountView,
      id: number,
    ): Promise<{ buyerName: string | null; items: Array<{ itemId: number; productName: string; answers: Record<string, unknown> }> }> {
      await owned(principal, id);
      const [buyerName, items] = await Promise.all([deps.sales.buyerName(id), deps.sales.itemAnswers(id)]);
      return { buyerName, items };
    },

    /**
     * Prices a cancellation without changing anything but the stored quote: the units named (or
     * every unit not started at the effective time), who asks and when it takes effect, by the
     * terms each item was bought with; never more than was paid less what was already refunded.
     * `options.withdrawal`: the buyer's own withdrawal (src/withdrawals/), priced by the withdrawal
     * rule within its period (src/purchases/refund-rule.ts); not offered to the API's callers.
     */
    async quoteCancellation(
      principal: Principal,
      id: number,
      body: CancellationQuoteRequest,
      options: { withdrawal?: boolean } = {},
    ): Promise<CancellationQuote> {
      const p = await owned(principal, id);
      const realNow = now();
      const at = policyClock(p, realNow);
      const effectiveAt = body.effective_at ? new Date(body.effective_at) : at;
      if (effectiveAt.getTime() < at.getTime() - 60_000) {
        throw new AppError('VALIDATION_ERROR', 'effective_at: a cancellation cannot take effect in the past', {
          details: [{ path: 'effective_at', message: 'must be now or later' }],
        });
      }
      if (p.status === 'refunded')
        throw new AppError('PURCHASE_ALREADY_CANCELLED', `Purchase ${id} was refunded in full: nothing is left to cancel`);
      if (p.status === 'cancelled')
        throw new AppError('NOTHING_TO_CANCEL', `Purchase ${id} is cancelled: every covered unit was cancelled already`);
      if (!isInForce(p.status))
        throw new AppError('PURCHASE_NOT_CANCELLABLE', `Purchase ${id} is ${p.status}: only a paid purchase can be cancelled`);
      let stored: StoredCancellationQuote;
      try {
        stored = await storeCancellationQuote(
          { sales: deps.sales, ledger: deps.ledger },
          p,
          {
            unitIds: body.covered_unit_ids,
            requestedBy: body.requested_by ?? 'agency',
            effectiveAt,
            withdrawal: options.withdrawal === true,
            apiKeyId: principal.apiKeyId,
            reason: body.reason ?? null,
          },
          at,
          realNow,
        );
      } catch (err) {
        throw asAppError(err);
      }
      const certificates = await deps.certificates.listForPurchase(id);
      const certificateOf = new Map<number, string>();
      for (const c of certificates) if (!certificateOf.has(c.coveredUnitId)) certificateOf.set(c.coveredUnitId, c.certificateNumber);
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

    /**
     * Carries out a cancellation: the quote named by `quote_id` at its price, or (without one) the
     * units priced afresh now. The purchase's policy workflow accepts it (one change at a time)
     * and answers at once; the refund, then the voiding of the units' certificates, follow there.
     * The same quote again answers the same cancellation. A quote dated after the purchase's now
     * is accepted `scheduled`: the workflow carries it out at its effective time, and until then
     * `rescind` withdraws it.
     */
    async cancel(principal: Principal, id: number, body: CancelRequest): Promise<Cancellation> {
      const p = await owned(principal, id);
      let quoteId = body.quote_id;
      if (quoteId) {
        if (body.covered_unit_ids || body.reason) {
          throw new AppError('VALIDATION_ERROR', 'Send either quote_id or the units to price, not both', {
            details: [{ path: 'quote_id', message: 'cannot be sent with covered_unit_ids or reason' }],
          });
        }
        const quote = await deps.ledger.findCancellationQuote(quoteId);
        if (!quote || quote.purchaseId !== id)
          throw new AppError('CANCELLATION_QUOTE_NOT_FOUND', `No cancellation quote ${quoteId} of purchase ${id}`);
      } else {
        quoteId = (
          await this.quoteCancellation(principal, id, {
            covered_unit_ids: body.covered_unit_ids,
            requested_by: body.requested_by,
            reason: body.reason,
          })
        ).id;
      }
      const accepted = await deps.workflows.cancel(p, quoteId);
      const stored = await deps.ledger.findCancellation(accepted.cancellationId);
      return toCancellation(stored!);
    },

    /**
     * Rescinds a cancellation still `scheduled` (dated in the future): its units are active again
     * and nothing is refunded. A repeat answers the same. Errors: NOT_FOUND (purchase),
     * CANCELLATION_NOT_FOUND (404), CANCELLATION_NOT_RESCINDABLE (409: its effective time came).
     */
    async rescind(principal: Principal, id: number, cancellationId: number): Promise<Cancellation> {
      const p = await owned(principal, id);
      const c = await deps.ledger.findCancellation(cancellationId);
      if (!c || c.purchaseId !== id) throw new AppError('CANCELLATION_NOT_FOUND', `Purchase ${id} has no cancellation ${cancellationId}`);
      if (c.status !== 'scheduled' && c.status !== 'rescinded')
        throw new AppError(
          'CANCELLATION_NOT_RESCINDABLE',
          `Cancellation ${cancellationId} is ${c.status}: only a cancellation still scheduled can be rescinded`,
        );
      await deps.workflows.rescind(p, cancellationId);
      return toCancellation((await deps.ledger.findCancellation(cancellationId))!);
    },
  };
}

export type PurchaseService = ReturnType<typeof createPurchaseService>;
