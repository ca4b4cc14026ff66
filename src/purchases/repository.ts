/**
 * The only writer of `purchases`, `purchase_items`, `covered_units` and `cancellation_quotes`:
 * the quote path creates a purchase (and renewals reuse it), each item keeping the cancellation
 * terms its product had then, the purchase workflow's activities record what happened to it, and
 * every status change goes through `transition`, which holds the status rules once. Other domains
 * read purchases (their own queries or the readers here), never write them.
 *
 * Status rules (`PURCHASE_TRANSITIONS`): a purchase moves forward only; `refunded` is final;
 * `failed` (the processor refused the purchase for good) and `expired` still move to `paid`,
 * because a payment the processor reports after them was taken and must be honoured. A move the
 * rules do not allow changes nothing and is reported (`changed: false`), never thrown: late
 * steps (a retried activity, an out-of-order event) are normal.
 *
 * Amounts are integer minor units; instants are `Date`s (UTC).
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { insertHoldersFromAnswers } from '../certificate-holders/repository';
import type { Address } from '../certificates/repository';
import { cancellationTermsFromRow, DEFAULT_CANCELLATION_TERMS, type CancellationTerms } from '../products/cancellation-terms';
import { spreadByWeight, type CancellationRequester, type RefundQuote, type UnitRefund } from './refund-rule';
import type { PaymentShare } from './refund-allocation';
import type { PurchaseStatus } from '../../workflows/contracts';

/** Which status each status may move to (a move to the same status is a no-op). */
export const PURCHASE_TRANSITIONS: Readonly<Record<PurchaseStatus, readonly PurchaseStatus[]>> = {
  quoted: ['awaiting_payment', 'paid', 'expired', 'failed'],
  awaiting_payment: ['paid', 'expired', 'failed'],
  failed: ['awaiting_payment', 'paid', 'expired'],
  expired: ['paid'],
  paid: ['awaiting_certificates', 'issued', 'refunded'],
  awaiting_certificates: ['issued', 'refunded'],
  issued: ['refunded'],
  refunded: [],
};

/** True when a purchase in `from` may be moved to `to` (or already is in it). */
export function canTransition(from: PurchaseStatus, to: PurchaseStatus): boolean {
  return from === to || PURCHASE_TRANSITIONS[from].includes(to);
}

/** The statuses from which `to` may be reached (itself included). */
export function predecessorsOf(to: PurchaseStatus): PurchaseStatus[] {
  return (Object.keys(PURCHASE_TRANSITIONS) as PurchaseStatus[]).filter((from) => canTransition(from, to));
}

/** One covered day or trip of a new purchase item. */
/** A holder endorsement a certificate holder may pay premium for on a covered unit. */
export type HolderEndorsementKind = 'additional_insured' | 'waiver_of_subrogation';

/**
 * One entry of a priced endorsement's `breakdown` (minor units): a unit's own premium, or with
 * `certificateHolderId` and `endorsement` a holder's additional-insured or waiver premium on it
 * (negative: given back).
 */
export interface LedgerUnitPremium {
  unitId: number;
  itemId: number;
  premiumMinor: number;
  certificateHolderId?: number;
  endorsement?: HolderEndorsementKind;
}

/** A holder's endorsement premium on a unit that is being added (its id not known yet). */
export type HolderPremiumOnNewUnit = Required<Pick<LedgerUnitPremium, 'certificateHolderId' | 'endorsement' | 'premiumMinor'>>;

export interface NewCoveredUnit {
  index: number;
  kind: 'day' | 'trip';
  startsAt: Date;
  endsAt: Date;
  timeZone: string;
  localLabel: string;
}

/** A priced purchase as the quote path (or a renewal) creates it. */
export interface NewPurchase {
  rootAccountId: number;
  apiKeyId: number;
  agentId: number | null;
  buyerId: number;
  buyerEmail: string;
  savePaymentMethod: boolean;
  /** `subscription` when the selected products are recurring (billed monthly); default `one_time`. */
  billing?: 'one_time' | 'subscription';
  mode: 'live' | 'test';
  currency: string;
  subtotalMinor: number;
  platformFeeBps: number | null;
  platformFeeMinor: number;
  totalMinor: number;
  /** The bundle the quote sold, with its customer-facing name at the sale (null or absent: no bundle). */
  bundle?: PurchaseBundle | null;
  /** The agency's own key-value pairs from the quote (absent: none). */
  metadata?: Record<string, string>;
  items: {
    productLineId: number;
    /** Whether the item is one of the bundle's products (false or absent: bought on its own). */
    inBundle?: boolean;
    isTripExcess: boolean;
    unitPriceMinor: number;
    units: NewCoveredUnit[];
    priceFactor: number;
    amountMinor: number;
    answers: Record<string, unknown>;
    namedInsured: unknown;
    certificateHolder: unknown;
  }[];
}

/** The bundle a purchase was quoted from: its id (null once the bundle is deleted) and its customer-facing name at the sale. */
export interface PurchaseBundle {
  id: number | null;
  name: string;
}

/** What a renewal purchase adds to a new purchase: it is paid by one invoice of a subscription. */
export interface RenewalFields {
  renewalOfPurchaseId: number;
  period: number;
  invoiceId: string;
  subscriptionId: string | null;
  paymentIntentId: string | null;
}

/** A purchase row as its owner reads it. */
export interface PurchaseRecord {
  id: number;
  rootAccountId: number;
  apiKeyId: number;
  agentId: number | null;
  buyerId: number;
  buyerEmail: string | null;
  mode: 'live' | 'test';
  billing: 'one_time' | 'subscription';
  status: PurchaseStatus;
  currency: string;
  subtotalMinor: number;
  /** The key's platform fee rate at the sale (basis points; null: none). */
  platformFeeBps: number | null;
  platformFeeMinor: number;
  totalMinor: number;
  savePaymentMethod: boolean;
  checkoutSessionId: string | null;
  checkoutUrl: string | null;
  checkoutExpiresAt: Date | null;
  paymentIntentId: string | null;
  paidAt: Date | null;
  certificatesIssuedAt: Date | null;
  refundedAt: Date | null;
  refundedMinor: number;
  failureReason: string | null;
  /** When the purchase failed for good (null otherwise). */
  failedAt: Date | null;
  payprocSubscriptionId: string | null;
  renewalOfPurchaseId: number | null;
  returnToken: string | null;
  /** A test-mode purchase's test clock: its frozen "now" for the policy's life (null: the real clock; always null in live mode). */
  testClockAt: Date | null;
  /** A subscription's first purchase: renewals stop at the end of the paid period. */
  subscriptionCancelAtPeriodEnd: boolean;
  /** A subscription's first purchase: when the subscription ended (null while it runs). */
  subscriptionEndedAt: Date | null;
  /** Who ended it or set it to end: the agency through the API, or the processor (its dashboard, an unpaid invoice). */
  subscriptionCancelledBy: 'agency' | 'processor' | null;
  /** The bundle it was sold as (null: product lines bought on their own). */
  bundle: PurchaseBundle | null;
  /** The agency's own key-value pairs given with the quote ({} when none). */
  metadata: Record<string, string>;
  createdAt: Date;
}

export const toPurchaseRecord = (r: Record<string, unknown>): PurchaseRecord => ({
  id: r.id as number,
  rootAccountId: r.root_account_id as number,
  apiKeyId: r.api_key_id as number,
  agentId: (r.agent_id as number | null) ?? null,
  buyerId: r.buyer_id as number,
  buyerEmail: (r.buyer_email as string | null) ?? null,
  mode: r.mode as 'live' | 'test',
  billing: (r.billing as 'one_time' | 'subscription') ?? 'one_time',
  status: r.status as PurchaseStatus,
  currency: r.currency as string,
  subtotalMinor: Number(r.subtotal_minor),
  platformFeeBps: r.platform_fee_bps === null || r.platform_fee_bps === undefined ? null : Number(r.platform_fee_bps),
  platformFeeMinor: Number(r.platform_fee_minor),
  totalMinor: Number(r.total_minor),
  savePaymentMethod: Boolean(r.save_payment_method),
  checkoutSessionId: (r.checkout_session_id as string | null) ?? null,
  checkoutUrl: (r.checkout_url as string | null) ?? null,
  checkoutExpiresAt: (r.checkout_expires_at as Date | null) ?? null,
  paymentIntentId: (r.payment_intent_id as string | null) ?? null,
  paidAt: (r.paid_at as Date | null) ?? null,
  certificatesIssuedAt: (r.certificates_issued_at as Date | null) ?? null,
  refundedAt: (r.refunded_at as Date | null) ?? null,
  refundedMinor: Number(r.refunded_minor ?? 0),
  failureReason: (r.failure_reason as string | null) ?? null,
  failedAt: (r.failed_at as Date | null) ?? null,
  payprocSubscriptionId: (r.payproc_subscription_id as string | null) ?? null,
  renewalOfPurchaseId: (r.renewal_of_purchase_id as number | null) ?? null,
  returnToken: (r.return_token as string | null) ?? null,
  testClockAt: (r.test_clock_at as Date | null) ?? null,
  subscriptionCancelAtPeriodEnd: Boolean(r.subscription_cancel_at_period_end),
  subscriptionEndedAt: (r.subscription_ended_at as Date | null) ?? null,
  subscriptionCancelledBy: (r.subscription_cancelled_by as 'agency' | 'processor' | null) ?? null,
  bundle: r.bundle_name ? { id: (r.bundle_id as number | null) ?? null, name: r.bundle_name as string } : null,
  metadata: (r.metadata as Record<string, string> | null) ?? {},
  createdAt: r.created_at as Date,
});

/** An item of a purchase with its covered units (what a renewal copies). */
interface StoredItem {
  id: number;
  productLineId: number;
  inBundle: boolean;
  isTripExcess: boolean;
  unitPriceMinor: number;
  priceFactor: number;
  amountMinor: number;
  answers: Record<string, unknown>;
  namedInsured: unknown;
  certificateHolder: unknown;
  units: NewCoveredUnit[];
}

/** Which purchases an API key may read: its root account's, in its mode, and its teammate's only when the key belongs to one. */
export interface PurchaseScope {
  rootAccountId: number;
  mode: 'live' | 'test';
  agentId: number | null;
}

/** Filters of the purchase list (all optional); `createdFrom` inclusive, `createdTo` exclusive. */
export interface PurchaseListFilter {
  status?: PurchaseStatus;
  createdFrom?: Date;
  createdTo?: Date;
  /** Compared without regard to case. */
  buyerEmail?: string;
  limit: number;
  offset: number;
}

/** An item of a purchase as its read model shows it: product, price, parties, terms and covered units with their ids. */
export interface PurchaseItemDetail {
  id: number;
  position: number;
  productLineId: number;
  productName: string;
  /** Whether the item is one of the purchase's bundle's products. */
  inBundle: boolean;
  isTripExcess: boolean;
  unitPriceMinor: number;
  priceFactor: number;
  amountMinor: number;
  namedInsured: unknown;
  certificateHolder: unknown;
  /** The terms in force when it was bought (the defaults for items bought before terms were kept). */
  cancellationTerms: CancellationTerms;
  units: Array<
    NewCoveredUnit & {
      id: number;
      /** The cancellation that took it (pending or done); null while it is active. */
      cancellationId: number | null;
      /** When it was cancelled (its refund succeeded); null before. */
      cancelledAt: Date | null;
    }
  >;
}

/**
 * Progress of a change to a policy: scheduled (units taken, waiting for its effective time),
 * accepted (units taken, due now), refund pending at the processor, completed, refund failed for
 * good, or rescinded (withdrawn while scheduled: units given back, nothing refunded).
 */
export type PolicyTransactionStatus = 'scheduled' | 'accepted' | 'refund_pending' | 'completed' | 'refund_failed' | 'rescinded';

/** A cancellation as kept in `policy_transactions` (amounts: the refund, minor units). */
export interface StoredCancellation {
  id: number;
  purchaseId: number;
  status: PolicyTransactionStatus;
  quoteId: string | null;
  apiKeyId: number;
  requestedBy: CancellationRequester;
  reason: string | null;
  coveredUnitIds: number[];
  effectiveAt: Date;
  currency: string;
  premiumMinor: number;
  taxMinor: number;
  platformFeeMinor: number;
  totalMinor: number;
  breakdown: UnitRefund[];
  /** The processor's refund (the first one when the refund was split over several payments). */
  refundId: string | null;
  /**
   * How the refund is split over the purchase's payment intents, newest payment first (planned
   * once, then created one by one: `refundId` null until created); null before it is planned,
   * and on cancellations refunded before refunds could be split (`refundId` alone).
   */
  refunds: CancellationRefund[] | null;
  failureReason: string | null;
  createdAt: Date;
  completedAt: Date | null;
  /** When it was rescinded (null unless `rescinded`). */
  rescindedAt: Date | null;
}

/** One part of a cancellation's refund: taken from one payment intent (minor units), and the processor's refund once created. */
export interface CancellationRefund {
  paymentIntentId: string;
  amountMinor: number;
  refundId: string | null;
}

/** What a quote and the cancellation carrying it out share: who asked, which units, when, and the refund (minor units). */
type PricedCancellation = Pick<
  StoredCancellation,
  | 'purchaseId'
  | 'apiKeyId'
  | 'requestedBy'
  | 'reason'
  | 'coveredUnitIds'
  | 'effectiveAt'
  | 'currency'
  | 'premiumMinor'
  | 'taxMinor'
  | 'platformFeeMinor'
  | 'totalMinor'
  | 'breakdown'
>;

const pricedFromRow = (r: Record<string, unknown>): PricedCancellation => ({
  purchaseId: r.purchase_id as number,
  apiKeyId: r.api_key_id as number,
  requestedBy: r.requested_by as CancellationRequester,
  reason: (r.reason as string | null) ?? null,
  coveredUnitIds: (r.covered_unit_ids as number[]).map(Number),
  effectiveAt: r.effective_at as Date,
  currency: r.currency as string,
  premiumMinor: Number(r.premium_minor),
  taxMinor: Number(r.tax_minor),
  platformFeeMinor: Number(r.platform_fee_minor),
  totalMinor: Number(r.total_minor),
  breakdown: r.breakdown as UnitRefund[],
});

const pricedColumns = (c: PricedCancellation) => ({
  purchase_id: c.purchaseId,
  api_key_id: c.apiKeyId,
  requested_by: c.requestedBy,
  reason: c.reason,
  covered_unit_ids: c.coveredUnitIds,
  effective_at: c.effectiveAt,
  currency: c.currency,
  premium_minor: c.premiumMinor,
  tax_minor: c.taxMinor,
  platform_fee_minor: c.platformFeeMinor,
  total_minor: c.totalMinor,
  breakdown: JSON.stringify(c.breakdown),
});

const toStoredCancellation = (r: Record<string, unknown>): StoredCancellation => ({
  ...pricedFromRow(r),
  id: r.id as number,
  status: r.status as PolicyTransactionStatus,
  quoteId: (r.quote_id as string | null) ?? null,
  refundId: (r.refund_id as string | null) ?? null,
  refunds: (r.refunds as CancellationRefund[] | null) ?? null,
  failureReason: (r.failure_reason as string | null) ?? null,
  createdAt: r.created_at as Date,
  completedAt: (r.completed_at as Date | null) ?? null,
  rescindedAt: (r.rescinded_at as Date | null) ?? null,
});

const toStoredQuote = (r: Record<string, unknown>): StoredCancellationQuote => ({
  ...pricedFromRow(r),
  id: r.id as string,
  method: r.method as StoredCancellationQuote['method'],
  freeLook: Boolean(r.free_look),
  endsPolicy: Boolean(r.ends_policy),
  expiresAt: r.expires_at as Date,
  createdAt: r.created_at as Date,
});

/** Thrown by `acceptCancellation` when a unit of the quote was taken by another change meanwhile. */
export class CoveredUnitTakenError extends Error {
  constructor(readonly unitIds: number[]) {
    super(`covered units ${unitIds.join(', ')} were taken by another change`);
    this.name = 'CoveredUnitTakenError';
  }
}

/** A priced cancellation as kept for the cancel that may follow (amounts in minor units). */
export interface StoredCancellationQuote {
  id: string;
  purchaseId: number;
  apiKeyId: number;
  requestedBy: CancellationRequester;
  reason: string | null;
  coveredUnitIds: number[];
  effectiveAt: Date;
  method: RefundQuote['method'];
  freeLook: boolean;
  endsPolicy: boolean;
  currency: string;
  premiumMinor: number;
  taxMinor: number;
  platformFeeMinor: number;
  totalMinor: number;
  breakdown: UnitRefund[];
  expiresAt: Date;
  createdAt: Date;
}

/** A new page token: 32 random bytes, base64url (43 characters). */
export const newReturnToken = (): string => randomBytes(32).toString('base64url');

/** The cancellation terms each product line has now (read from the products domain's table; defaults without a row). */
async function cancellationTermsOf(trx: Knex.Transaction, productLineIds: number[]): Promise<Map<number, CancellationTerms>> {
  const rows = productLineIds.length ? await trx('product_cancellation_terms').whereIn('product_line_id', productLineIds) : [];
  return new Map(rows.map((r) => [Number(r.product_line_id), cancellationTermsFromRow(r)]));
}

async function insertPurchase(
  trx: Knex.Transaction,
  p: NewPurchase,
  status: PurchaseStatus,
  renewal: RenewalFields | null,
): Promise<number> {
  const [purchase] = await trx('purchases')
    .insert({
      root_account_id: p.rootAccountId,
      api_key_id: p.apiKeyId,
      agent_id: p.agentId,
      buyer_id: p.buyerId,
      buyer_email: p.buyerEmail,
      save_payment_method: p.savePaymentMethod,
      billing: p.billing ?? 'one_time',
      mode: p.mode,
      status,
      currency: p.currency,
      subtotal_minor: p.subtotalMinor,
      platform_fee_bps: p.platformFeeBps,
      platform_fee_minor: p.platformFeeMinor,
      total_minor: p.totalMinor,
      bundle_id: p.bundle?.id ?? null,
      bundle_name: p.bundle?.name ?? null,
      metadata: JSON.stringify(p.metadata ?? {}),
      return_token: newReturnToken(),
      ...(renewal
        ? {
            paid_at: trx.fn.now(),
            payment_intent_id: renewal.paymentIntentId,
            payproc_invoice_id: renewal.invoiceId,
            payproc_subscription_id: renewal.subscriptionId,
            renewal_of_purchase_id: renewal.renewalOfPurchaseId,
            renewal_period: renewal.period,
          }
        : {}),
    })
    .returning('id');
  // The cancellation terms in force now stay with each item (a later change never reprices it). A
  // bundle's products all take its primary product's terms (the first item of the bundle): one
  // policy sold together is cancelled on one set of terms.
  const terms = await cancellationTermsOf(trx, [...new Set(p.items.map((i) => i.productLineId))]);
  const bundlePrimary = p.items.find((i) => i.inBundle)?.productLineId;
  const termsOf = (item: NewPurchase['items'][number]) =>
    terms.get(item.inBundle && bundlePrimary !== undefined ? bundlePrimary : item.productLineId) ?? DEFAULT_CANCELLATION_TERMS;
  for (const [position, item] of p.items.entries()) {
    const [row] = await trx('purchase_items')
      .insert({
        purchase_id: purchase.id,
        product_line_id: item.productLineId,
        in_bundle: item.inBundle ?? false,
        position,
        is_trip_excess: item.isTripExcess,
        unit_price_minor: item.unitPriceMinor,
        units: item.units.length,
        price_factor: item.priceFactor,
        amount_minor: item.amountMinor,
        answers: JSON.stringify(item.answers),
        named_insured: item.namedInsured === null ? null : JSON.stringify(item.namedInsured),
        certificate_holder: item.certificateHolder === null ? null : JSON.stringify(item.certificateHolder),
        cancellation_terms: JSON.stringify(termsOf(item)),
      })
      .returning('id');
    await insertHoldersFromAnswers(trx, purchase.id, [
      { purchaseItemId: row.id, holder: (item.certificateHolder ?? null) as { name: string; address: Address } | null },
    ]);
    if (item.units.length > 0) {
      await trx('covered_units').insert(
        item.units.map((u) => ({
          purchase_id: purchase.id,
          purchase_item_id: row.id,
          unit_index: u.index,
          kind: u.kind,
          starts_at: u.startsAt,
          ends_at: u.endsAt,
          time_zone: u.timeZone,
          local_label: u.localLabel,
        })),
      );
    }
  }
  return purchase.id as number;
}

/**
 * Refunds made in the processor's dashboard (`refund` ledger rows; other rows are skipped) added
 * up per payment intent they were made on, minor units. A row of before they named their payment
 * intent was the sale's (`salePaymentIntentId`; null: such rows count nowhere). The one rule every
 * reader of those rows shares: pricing, the refund split and what a charge's refunded amount explains.
 */
export function dashboardRefundsByPaymentIntent(
  rows: ReadonlyArray<{ kind: string; payment_intent_id?: string | null; total_minor: unknown }>,
  salePaymentIntentId: string | null,
): Map<string, number> {
  const byIntent = new Map<string, number>();
  for (const r of rows) {
    const pi = r.kind === 'refund' ? (r.payment_intent_id ?? salePaymentIntentId) : null;
    if (pi) byIntent.set(pi, (byIntent.get(pi) ?? 0) + Number(r.total_minor));
  }
  return byIntent;
}

/** A completed priced endorsement of a purchase, as `endorsementCharges` returns it (amounts in minor units). */
export interface EndorsementCharge {
  id: number;
  premiumMinor: number;
  platformFeeMinor: number;
  totalMinor: number;
  paymentIntentId: string | null;
  completedAt: Date;
  breakdown: LedgerUnitPremium[];
  dashboardRefundedMinor: number;
}

/** A completed `endorsement` or `refund` row of the ledger (`policy_transactions`), as read: amounts in minor units (bigint as text). */
interface ChargeRow {
  id: number;
  kind: 'endorsement' | 'refund';
  premium_minor: string;
  platform_fee_minor: string;
  total_minor: string;
  payment_intent_id: string | null;
  completed_at: Date;
  breakdown: LedgerUnitPremium[];
}

/** The endorsements of `rows` (completed endorsement and refund rows) as charges, each with its dashboard refunds. */
function endorsementChargesOf(rows: ChargeRow[]): EndorsementCharge[] {
  // Rows that name no payment intent were the sale's, which no endorsement's is.
  const dashboard = dashboardRefundsByPaymentIntent(rows, null);
  return rows
    .filter((r) => r.kind === 'endorsement')
    .map((r) => ({
      id: r.id,
      premiumMinor: Number(r.premium_minor),
      platformFeeMinor: Number(r.platform_fee_minor),
      totalMinor: Number(r.total_minor),
      paymentIntentId: r.payment_intent_id ?? null,
      completedAt: r.completed_at,
      breakdown: r.breakdown,
      dashboardRefundedMinor: (r.payment_intent_id && dashboard.get(r.payment_intent_id)) || 0,
    }));
}

/** What the `refund` rows among `rows` took from the sale's payment intent (rows naming none were the sale's), minor units. */
function saleDashboardRefundOf(
  rows: ReadonlyArray<{ kind: string; payment_intent_id?: string | null; total_minor: unknown }>,
  salePaymentIntentId: string,
): number {
  return dashboardRefundsByPaymentIntent(rows, salePaymentIntentId).get(salePaymentIntentId) ?? 0;
}

export function createPurchasesRepository(db: Db | Knex.Transaction) {
  /** The purchase's completed endorsement and refund ledger rows, oldest first. */
  async function completedChargeRows(purchaseId: number): Promise<ChargeRow[]> {
    return db('policy_transactions')
      .where({ purchase_id: purchaseId, status: 'completed' })
      .whereIn('kind', ['endorsement', 'refund'])
      .orderBy('id');
  }

  async function items(trx: Knex.Transaction | Db, purchaseId: number): Promise<StoredItem[]> {
    const rows = await trx('purchase_items').where({ purchase_id: purchaseId }).orderBy('position');
    const units = await trx('covered_units').where({ purchase_id: purchaseId }).orderBy(['purchase_item_id', 'unit_index']);
    return rows.map((i) => ({
      id: i.id,
      productLineId: i.product_line_id,
      inBundle: i.in_bundle,
      isTripExcess: i.is_trip_excess,
      unitPriceMinor: Number(i.unit_price_minor),
      priceFactor: Number(i.price_factor),
      amountMinor: Number(i.amount_minor),
      answers: i.answers,
      namedInsured: i.named_insured,
      certificateHolder: i.certificate_holder,
      units: units
        .filter((u) => u.purchase_item_id === i.id)
        .map((u) => ({
          index: u.unit_index,
          kind: u.kind,
          startsAt: u.starts_at,
          endsAt: u.ends_at,
          timeZone: u.time_zone,
          localLabel: u.local_label,
        })),
    }));
  }

  return {
    /** Writes a quoted purchase, its items and covered units atomically; returns its id. */
    async create(p: NewPurchase): Promise<number> {
      return db.transaction((trx) => insertPurchase(trx, p, 'quoted', null));
    },

    /**
     * Creates (or finds) the renewal purchase paid by `renewal.invoiceId`: the original's buyer,
     * teammate, items and amounts through the same insert as a quote, status `paid`, its period
     * the next after the latest renewal, and covered units from `shift(unit, period)`. Keyed by
     * the invoice (`purchases.payproc_invoice_id` is unique), so a retry returns the same row.
     * Returns null when the original does not exist or is not a subscription.
     */
    async createRenewal(
      originalId: number,
      renewal: Omit<RenewalFields, 'renewalOfPurchaseId' | 'period'>,
      shift: (unit: NewCoveredUnit, period: number) => NewCoveredUnit,
    ): Promise<{ purchaseId: number; period: number } | { refused: 'not_found' | 'not_a_subscription' }> {
      return db.transaction(async (trx) => {
        const existing = await trx('purchases').where({ payproc_invoice_id: renewal.invoiceId }).first('id', 'renewal_period');
        if (existing) return { purchaseId: existing.id as number, period: existing.renewal_period as number };
        const row = await trx('purchases').where({ id: originalId }).forUpdate().first();
        if (!row) return { refused: 'not_found' as const };
        const original = toPurchaseRecord(row);
        if (original.billing !== 'subscription') return { refused: 'not_a_subscription' as const };
        const latest = await trx('purchases').where({ renewal_of_purchase_id: original.id }).max({ last: 'renewal_period' }).first();
        const period = Number(latest?.last ?? 0) + 1;
        const copied = await items(trx, original.id);
        const purchaseId = await insertPurchase(
          trx,
          {
            rootAccountId: original.rootAccountId,
            apiKeyId: original.apiKeyId,
            agentId: original.agentId,
            buyerId: original.buyerId,
            buyerEmail: original.buyerEmail ?? '',
            savePaymentMethod: false,
            billing: 'subscription',
            mode: original.mode,
            currency: original.currency,
            subtotalMinor: original.subtotalMinor,
            platformFeeBps: row.platform_fee_bps,
            platformFeeMinor: original.platformFeeMinor,
            totalMinor: original.totalMinor,
            bundle: original.bundle,
            metadata: original.metadata,
            items: copied.map((i) => ({ ...i, units: i.units.map((u) => shift(u, period)) })),
          },
          'paid',
          {
            ...renewal,
            subscriptionId: original.payprocSubscriptionId ?? renewal.subscriptionId,
            renewalOfPurchaseId: original.id,
            period,
          },
        );
        return { purchaseId, period };
      });
    },

    /**
     * Purchases an operator should look at (`npm run ops -- stuck`): awaiting payment more than
     * `graceSeconds` past their checkout deadline (the workflow should have ended them), paid more
     * than `graceSeconds` ago without certificates (refunded aside), and failed within the last
     * `failedWithinSeconds` (a failure is final, so an older one has had its look); oldest first,
     * at most `limit` of each kind, with their agency; only `rootAccountId`'s when given.
     */
    async stuck(
      graceSeconds: number,
      limit = 500,
      failedWithinSeconds = 72 * 3600,
      rootAccountId?: number,
    ): Promise<
      Array<{
        kind: 'awaiting_payment_past_deadline' | 'paid_without_certificates' | 'failed';
        id: number;
        rootAccountId: number;
        agency: string;
        mode: string;
        status: string;
        since: Date | null;
        reason: string | null;
      }>
    > {
      const base = () => {
        const q = db('purchases as p')
          .join('root_accounts as a', 'a.id', 'p.root_account_id')
          .select(
            'p.id',
            'p.root_account_id',
            'a.name as agency',
            'p.mode',
            'p.status',
            'p.failure_reason',
            'p.checkout_expires_at',
            'p.paid_at',
            'p.failed_at',
          );
        return rootAccountId === undefined ? q : q.where('p.root_account_id', rootAccountId);
      };
      const ago = db.raw(`now() - (? * interval '1 second')`, [graceSeconds]);
      const [late, unissued, failed] = await Promise.all([
        base().where('p.status', 'awaiting_payment').where('p.checkout_expires_at', '<', ago).orderBy('p.checkout_expires_at').limit(limit),
        base()
          .whereNotNull('p.paid_at')
          .whereNull('p.certificates_issued_at')
          .whereNot('p.status', 'refunded')
          .where('p.paid_at', '<', ago)
          .orderBy('p.paid_at')
          .limit(limit),
        base()
          .where('p.status', 'failed')
          .where('p.failed_at', '>=', db.raw(`now() - (? * interval '1 second')`, [failedWithinSeconds]))
          .orderBy('p.failed_at')
          .limit(limit),
      ]);
      const row =
        (kind: 'awaiting_payment_past_deadline' | 'paid_without_certificates' | 'failed', since: string) =>
        (r: Record<string, unknown>) => ({
          kind,
          id: r.id as number,
          rootAccountId: r.root_account_id as number,
          agency: r.agency as string,
          mode: r.mode as string,
          status: r.status as string,
          since: (r[since] as Date | null) ?? null,
          reason: (r.failure_reason as string | null) ?? null,
        });
      return [
        ...late.map(row('awaiting_payment_past_deadline', 'checkout_expires_at')),
        ...unissued.map(row('paid_without_certificates', 'paid_at')),
        ...failed.map(row('failed', 'failed_at')),
      ];
    },

    /** Cancellations needing an operator, by mode: refused refunds, and those accepted more than `pendingSeconds` ago and not completed. */
    async countCancellationsNeedingAttention(
      pendingSeconds: number,
    ): Promise<Record<'live' | 'test', { refundFailed: number; pending: number }>> {
      const rows: Array<{ mode: 'live' | 'test'; refund_failed: string; pending: string }> = await db('policy_transactions as t')
        .join('purchases as p', 'p.id', 't.purchase_id')
        .where('t.kind', 'cancellation')
        .groupBy('p.mode')
        .select(
          'p.mode',
          db.raw(`count(*) filter (where t.status = 'refund_failed') as refund_failed`),
          db.raw(
            `count(*) filter (where t.status in ('accepted', 'refund_pending') and t.created_at < now() - (? * interval '1 second')) as pending`,
            [pendingSeconds],
          ),
        );
      const out = { live: { refundFailed: 0, pending: 0 }, test: { refundFailed: 0, pending: 0 } };
      for (const r of rows) out[r.mode] = { refundFailed: Number(r.refund_failed), pending: Number(r.pending) };
      return out;
    },

    /** Cancellations an operator must look at (refused refunds; pending past `graceSeconds`), oldest first, with their agency. */
    async stuckCancellations(
      graceSeconds: number,
      limit = 500,
      rootAccountId?: number,
    ): Promise<
      Array<{
        kind: 'cancellation_refund_failed' | 'cancellation_pending';
        id: number;
        cancellationId: number;
        rootAccountId: number;
        agency: string;
        mode: string;
        status: string;
        since: Date | null;
        reason: string | null;
      }>
    > {
      const q = db('policy_transactions as t')
        .join('purchases as p', 'p.id', 't.purchase_id')
        .join('root_accounts as a', 'a.id', 'p.root_account_id')
        .where('t.kind', 'cancellation')
        .andWhere((w) =>
          w
            .where('t.status', 'refund_failed')
            .orWhere((x) =>
              x
                .whereIn('t.status', ['accepted', 'refund_pending'])
                .where('t.created_at', '<', db.raw(`now() - (? * interval '1 second')`, [graceSeconds])),
            ),
        )
        .orderBy('t.created_at')
        .limit(limit)
        .select(
          't.id as cancellation_id',
          't.status as cancellation_status',
          't.failure_reason',
          't.created_at',
          'p.id',
          'p.root_account_id',
          'a.name as agency',
          'p.mode',
          'p.status',
        );
      if (rootAccountId !== undefined) q.where('p.root_account_id', rootAccountId);
      return (await q).map((r) => ({
        kind: r.cancellation_status === 'refund_failed' ? ('cancellation_refund_failed' as const) : ('cancellation_pending' as const),
        id: r.id,
        cancellationId: r.cancellation_id,
        rootAccountId: r.root_account_id,
        agency: r.agency,
        mode: r.mode,
        status: r.status,
        since: r.created_at ?? null,
        reason: `cancellation ${r.cancellation_id} ${r.cancellation_status}${r.failure_reason ? `: ${r.failure_reason}` : ''}`,
      }));
    },

    /**
     * For another try: the purchase's refused cancellations back to `accepted` (their units still
     * held); returns the ids of every cancellation not completed (refused ones and stalled ones).
     */
    async reopenUnfinishedCancellations(purchaseId: number): Promise<number[]> {
      await db('policy_transactions')
        .where({ purchase_id: purchaseId, kind: 'cancellation', status: 'refund_failed' })
        .update({ status: 'accepted', failure_reason: null });
      const rows = await db('policy_transactions')
        .where({ purchase_id: purchaseId, kind: 'cancellation' })
        .whereIn('status', ['accepted', 'refund_pending'])
        .orderBy('id')
        .select('id');
      return rows.map((r: { id: number }) => r.id);
    },

    /** How many purchases, by mode, were paid more than `olderThanSeconds` ago and still have no certificates (refunded ones aside). */
    async countPaidWithoutCertificates(olderThanSeconds: number): Promise<Record<'live' | 'test', number>> {
      const rows: Array<{ mode: 'live' | 'test'; n: string }> = await db('purchases')
        .whereNotNull('paid_at')
        .whereNull('certificates_issued_at')
        .whereNot({ status: 'refunded' })
        .where('paid_at', '<', db.raw(`now() - (? * interval '1 second')`, [olderThanSeconds]))
        .groupBy('mode')
        .select('mode', db.raw('count(*) as n'));
      const out = { live: 0, test: 0 };
      for (const r of rows) out[r.mode] = Number(r.n);
      return out;
    },

    /** One page of the subscriptions `scope` may read (their first purchases), newest first, and how many there are. */
    async listSubscriptions(
      scope: PurchaseScope,
      f: { status?: 'incomplete' | 'active' | 'cancelled'; limit: number; offset: number },
    ): Promise<{ items: PurchaseRecord[]; total: number }> {
      const base = db('purchases')
        .where({ root_account_id: scope.rootAccountId, mode: scope.mode, billing: 'subscription' })
        .whereNull('renewal_of_purchase_id');
      if (scope.agentId !== null) base.where('agent_id', scope.agentId);
      if (f.status === 'cancelled') base.whereNotNull('subscription_ended_at');
      if (f.status === 'active') base.whereNull('subscription_ended_at').whereNotNull('paid_at');
      if (f.status === 'incomplete') base.whereNull('subscription_ended_at').whereNull('paid_at');
      const [rows, counted] = await Promise.all([
        base.clone().select('*').orderBy('id', 'desc').limit(f.limit).offset(f.offset),
        base.clone().count<{ count: string }[]>({ count: '*' }),
      ]);
      return { items: rows.map(toPurchaseRecord), total: Number(counted[0]?.count ?? 0) };
    },

    /** A subscription's periods: its first purchase, then each renewal, in period order. */
    async subscriptionPeriods(firstPurchaseId: number): Promise<PurchaseRecord[]> {
      const rows = await db('purchases')
        .where({ id: firstPurchaseId })
        .orWhere({ renewal_of_purchase_id: firstPurchaseId })
        .orderByRaw('coalesce(renewal_period, 1), id');
      return rows.map(toPurchaseRecord);
    },

    /**
     * Records a subscription's end on its first purchase: `atPeriodEnd` (renewals stop) or
     * `endedAt` (it ended), by whom. Never undone: an end recorded stays (the first wins), a
     * period-end flag stays once set. Returns whether anything changed (the caller announces it once).
     */
    async recordSubscriptionEnd(
      firstPurchaseId: number,
      change: { atPeriodEnd?: boolean; endedAt?: Date; by: 'agency' | 'processor' },
    ): Promise<boolean> {
      const q = db('purchases')
        .where({ id: firstPurchaseId, billing: 'subscription' })
        .whereNull('renewal_of_purchase_id')
        .whereNull('subscription_ended_at');
      if (change.endedAt) {
        const n = await q.update({
          subscription_ended_at: change.endedAt,
          subscription_cancelled_by: db.raw('coalesce(subscription_cancelled_by, ?)', [change.by]),
          updated_at: db.fn.now(),
        });
        return n > 0;
      }
      if (!change.atPeriodEnd) return false;
      const n = await q
        .where({ subscription_cancel_at_period_end: false })
        .update({ subscription_cancel_at_period_end: true, subscription_cancelled_by: change.by, updated_at: db.fn.now() });
      return n > 0;
    },

    /** The purchase if `scope` may read it (another account's, mode's or teammate's reads as absent). */
    async findInScope(purchaseId: number, scope: PurchaseScope): Promise<PurchaseRecord | undefined> {
      const q = db('purchases').where({ id: purchaseId, root_account_id: scope.rootAccountId, mode: scope.mode });
      if (scope.agentId !== null) q.where('agent_id', scope.agentId);
      const row = await q.first();
      return row ? toPurchaseRecord(row) : undefined;
    },

    /** One page of the purchases `scope` may read, newest first, and how many match. */
    async list(scope: PurchaseScope, f: PurchaseListFilter): Promise<{ items: PurchaseRecord[]; total: number }> {
      const base = db('purchases').where({ root_account_id: scope.rootAccountId, mode: scope.mode });
      if (scope.agentId !== null) base.where('agent_id', scope.agentId);
      if (f.status) base.where('status', f.status);
      if (f.createdFrom) base.where('created_at', '>=', f.createdFrom);
      if (f.createdTo) base.where('created_at', '<', f.createdTo);
      if (f.buyerEmail) base.whereRaw('lower(buyer_email) = lower(?)', [f.buyerEmail]);
      const [rows, counted] = await Promise.all([
        base
          .clone()
          .select('*')
          .orderBy([
            { column: 'created_at', order: 'desc' },
            { column: 'id', order: 'desc' },
          ])
          .limit(f.limit)
          .offset(f.offset),
        base.clone().count<{ count: string }[]>({ count: '*' }),
      ]);
      return { items: rows.map(toPurchaseRecord), total: Number(counted[0]?.count ?? 0) };
    },

    /**
     * An endorsement's corrected named insured, on every item of the purchase: `name`, and the
     * address when given (kept otherwise).
     */
    async updateNamedInsured(purchaseId: number, value: { name: string; address?: Record<string, unknown> }): Promise<void> {
      const items = await db('purchase_items').where({ purchase_id: purchaseId }).select('id', 'named_insured');
      for (const i of items) {
        const before = (i.named_insured ?? {}) as { address?: unknown };
        const next = {
          name: value.name,
          ...(value.address ? { address: value.address } : before.address ? { address: before.address } : {}),
        };
        await db('purchase_items')
          .where({ id: i.id })
          .update({ named_insured: JSON.stringify(next) });
      }
    },

    /** An endorsement's move of a covered unit to another window (its label as the certificate prints it). */
    async moveCoveredUnit(coveredUnitId: number, to: { startsAt: Date; endsAt: Date; localLabel: string }): Promise<void> {
      await db('covered_units')
        .where({ id: coveredUnitId })
        .update({ starts_at: to.startsAt, ends_at: to.endsAt, local_label: to.localLabel });
    },

    /**
     * Records a priced endorsement in the caller's transaction: a `policy_transactions` row
     * (`kind` endorsement, `completed`, the premium and platform fee in minor units, the payment
     * intent that collected them) with `breakdown` one entry per unit and premium
     * ({ unitId, itemId, premiumMinor } for a unit's own premium; with `certificateHolderId` and
     * `endorsement` for a holder's additional-insured or waiver premium on it), and the units added
     * (`added_by_transaction_id`), numbered after the item's last unit. A negative premium is given
     * back (a holder's endorsement removed): its total is negative, it collects no platform fee and
     * no payment intent, and `refunds` is its refund split (planned by the caller). Returns the
     * transaction's id and the new units' ids.
     */
    async recordEndorsementTransaction(e: {
      purchaseId: number;
      apiKeyId: number;
      currency: string;
      premiumMinor: number;
      platformFeeMinor: number;
      paymentIntentId: string | null;
      effectiveAt: Date;
      additions: Array<{
        itemId: number;
        units: Array<Omit<NewCoveredUnit, 'index'> & { premiumMinor: number; holderPremiums?: HolderPremiumOnNewUnit[] }>;
      }>;
      holderPremiums?: LedgerUnitPremium[];
    }): Promise<{ transactionId: number; unitIds: number[] }> {
      const [row] = await db('policy_transactions')
        .insert({
          purchase_id: e.purchaseId,
          kind: 'endorsement',
          status: 'completed',
          api_key_id: e.apiKeyId,
          requested_by: 'agency',
          covered_unit_ids: [],
          effective_at: e.effectiveAt,
          currency: e.currency,
          premium_minor: e.premiumMinor,
          tax_minor: 0,
          platform_fee_minor: e.platformFeeMinor,
          total_minor: e.premiumMinor + e.platformFeeMinor,
          breakdown: JSON.stringify([]),
          payment_intent_id: e.paymentIntentId,
          completed_at: e.effectiveAt,
        })
        .returning('id');
      const transactionId = row.id as number;
      const unitIds: number[] = [];
      const breakdown: LedgerUnitPremium[] = [...(e.holderPremiums ?? [])];
      for (const a of e.additions) {
        const last = await db('covered_units').where({ purchase_item_id: a.itemId }).max('unit_index as max').first();
        let index = Number(last?.max ?? -1) + 1;
        for (const u of a.units) {
          const [inserted] = await db('covered_units')
            .insert({
              purchase_id: e.purchaseId,
              purchase_item_id: a.itemId,
              unit_index: index++,
              kind: u.kind,
              starts_at: u.startsAt,
              ends_at: u.endsAt,
              time_zone: u.timeZone,
              local_label: u.localLabel,
              added_by_transaction_id: transactionId,
            })
            .returning('id');
          unitIds.push(inserted.id);
          breakdown.push({ unitId: inserted.id, itemId: a.itemId, premiumMinor: u.premiumMinor });
          for (const h of u.holderPremiums ?? []) breakdown.push({ unitId: inserted.id, itemId: a.itemId, ...h });
        }
      }
      const touched = [...new Set([...unitIds, ...breakdown.map((b) => b.unitId)])];
      await db('policy_transactions')
        .where({ id: transactionId })
        .update({ covered_unit_ids: touched, breakdown: JSON.stringify(breakdown) });
      return { transactionId, unitIds };
    },

    /**
     * Stores the refund split of endorsement transaction `transactionId` (a negative one), in the
     * caller's transaction, before any refund of it is created: `plan` newest payment first.
     */
    async planEndorsementRefunds(transactionId: number, plan: PaymentShare[]): Promise<void> {
      await db('policy_transactions')
        .where({ id: transactionId, kind: 'endorsement' })
        .whereNull('refunds')
        .update({
          refunds: JSON.stringify(plan.map((x) => ({ paymentIntentId: x.paymentIntentId, amountMinor: x.amountMinor, refundId: null }))),
        });
    },

    /** The refund split of endorsement transaction `transactionId` as stored (null: nothing to give back). */
    async endorsementRefunds(transactionId: number): Promise<CancellationRefund[] | null> {
      const row = await db('policy_transactions').where({ id: transactionId, kind: 'endorsement' }).first('refunds');
      return (row?.refunds as CancellationRefund[] | null | undefined) ?? null;
    },

    /** The `index`th refund of endorsement transaction `transactionId` exists at the processor (`refundId`). */
    async recordEndorsementRefundCreated(transactionId: number, index: number, refundId: string): Promise<void> {
      await db('policy_transactions')
        .where({ id: transactionId, kind: 'endorsement' })
        .whereRaw('jsonb_array_length(refunds) > ?', [index])
        .update({
          refunds: db.raw(`jsonb_set(refunds, ?::text[], to_jsonb(?::text))`, [`{${index},refundId}`, refundId]),
          ...(index === 0 ? { refund_id: refundId } : {}),
        });
    },

    /** Endorsement transaction `transactionId`'s refund was refused for good (`reason`): kept for the operator. */
    async failEndorsementRefund(transactionId: number, reason: string): Promise<void> {
      await db('policy_transactions')
        .where({ id: transactionId, kind: 'endorsement' })
        .update({ failure_reason: reason.slice(0, 1000) });
    },

    /**
     * The purchase's completed priced endorsements, oldest first: premium and platform fee (minor
     * units; negative premium: given back), the payment intent, the premium per unit and item
     * (a holder's endorsement premium naming its holder and endorsement), and what was refunded
     * of that payment in the processor's dashboard (`refund` rows of its payment intent).
     */
    async endorsementCharges(purchaseId: number): Promise<EndorsementCharge[]> {
      return endorsementChargesOf(await completedChargeRows(purchaseId));
    },

    /**
     * `endorsementCharges` of purchase `p`, and what was refunded of its sale payment in the
     * processor's dashboard (`saleDashboardRefundedMinor`, minor units: its `refund` rows of the
     * sale's payment intent; rows of before they named their payment intent were the sale's), from
     * one read of its ledger: pricing a cancellation needs both. The caller has the purchase already.
     */
    async chargesAndSaleDashboardRefund(
      p: Pick<PurchaseRecord, 'id' | 'paymentIntentId'>,
    ): Promise<{ charges: EndorsementCharge[]; saleDashboardRefundedMinor: number }> {
      const rows = await completedChargeRows(p.id);
      return {
        charges: endorsementChargesOf(rows),
        saleDashboardRefundedMinor: p.paymentIntentId ? saleDashboardRefundOf(rows, p.paymentIntentId) : 0,
      };
    },

    /** The buyer's `idp_accnt_uuid` (the reference an agency knows the buyer by), or null when the buyer is gone. */
    async buyerIdpAccntUuid(buyerId: number): Promise<string | null> {
      const row = await db('buyers').where({ id: buyerId }).first('idp_accnt_uuid');
      return (row?.idp_accnt_uuid as string | undefined) ?? null;
    },

    /**
     * The purchase's items in order, each with its product's name, its terms and its covered units
     * (ids included, in unit order). One query (items joined with their units): every event of a
     * purchase reads these, three times per paid purchase.
     */
    async itemDetails(purchaseId: number): Promise<PurchaseItemDetail[]> {
      const rows = await db('purchase_items as i')
        .join('product_lines as pl', 'pl.id', 'i.product_line_id')
        .leftJoin('covered_units as cu', 'cu.purchase_item_id', 'i.id')
        .where('i.purchase_id', purchaseId)
        .orderBy([{ column: 'i.position' }, { column: 'cu.unit_index' }])
        .select(
          'i.*',
          'pl.customer_name',
          'cu.id as unit_id',
          'cu.unit_index',
          'cu.kind as unit_kind',
          'cu.starts_at as unit_starts_at',
          'cu.ends_at as unit_ends_at',
          'cu.time_zone as unit_time_zone',
          'cu.local_label as unit_local_label',
          'cu.cancellation_id as unit_cancellation_id',
          'cu.cancelled_at as unit_cancelled_at',
        );
      const items: PurchaseItemDetail[] = [];
      for (const i of rows) {
        let item: PurchaseItemDetail | undefined = items[items.length - 1];
        if (!item || item.id !== i.id) {
          item = {
            id: i.id,
            position: i.position,
            productLineId: i.product_line_id,
            productName: i.customer_name,
            inBundle: i.in_bundle,
            isTripExcess: i.is_trip_excess,
            unitPriceMinor: Number(i.unit_price_minor),
            priceFactor: Number(i.price_factor),
            amountMinor: Number(i.amount_minor),
            namedInsured: i.named_insured,
            certificateHolder: i.certificate_holder,
            cancellationTerms: { ...DEFAULT_CANCELLATION_TERMS, ...(i.cancellation_terms ?? {}) },
            units: [],
          };
          items.push(item);
        }
        if (i.unit_id === null) continue; // an item without units (left join)
        item.units.push({
          id: i.unit_id,
          index: i.unit_index,
          kind: i.unit_kind,
          startsAt: i.unit_starts_at,
          endsAt: i.unit_ends_at,
          timeZone: i.unit_time_zone,
          localLabel: i.unit_local_label,
          cancellationId: i.unit_cancellation_id ?? null,
          cancelledAt: i.unit_cancelled_at ?? null,
        });
      }
      return items;
    },

    /** A cancellation quote by id (any purchase; callers check it is the one they mean). */
    async findCancellationQuote(quoteId: string): Promise<StoredCancellationQuote | undefined> {
      const row = await db('cancellation_quotes').where({ id: quoteId }).first();
      return row ? toStoredQuote(row) : undefined;
    },

    /** The purchase's cancellations, oldest first. */
    async cancellations(purchaseId: number): Promise<StoredCancellation[]> {
      return (await db('policy_transactions').where({ purchase_id: purchaseId, kind: 'cancellation' }).orderBy('id')).map(
        toStoredCancellation,
      );
    },

    async findCancellation(cancellationId: number): Promise<StoredCancellation | undefined> {
      const row = await db('policy_transactions').where({ id: cancellationId, kind: 'cancellation' }).first();
      return row ? toStoredCancellation(row) : undefined;
    },

    /** The cancellation that carries out `quoteId`, if one was accepted. */
    async findCancellationByQuote(quoteId: string): Promise<StoredCancellation | undefined> {
      const row = await db('policy_transactions').where({ quote_id: quoteId }).first();
      return row ? toStoredCancellation(row) : undefined;
    },

    /**
     * Records an accepted cancellation and takes its covered units (their `cancellation_id`), in
     * one transaction with the purchase row locked: a unit another change holds already makes
     * the whole write roll back. `scheduled`: it takes effect later (status `scheduled`).
     * @throws {CoveredUnitTakenError} naming the units already taken.
     */
    async acceptCancellation(
      c: Omit<
        StoredCancellation,
        'id' | 'status' | 'refundId' | 'refunds' | 'failureReason' | 'createdAt' | 'completedAt' | 'rescindedAt'
      > & {
        scheduled?: boolean;
      },
    ): Promise<StoredCancellation> {
      const { scheduled, ...priced } = c;
      return db.transaction(async (trx) => {
        await trx('purchases').where({ id: c.purchaseId }).forUpdate().first('id');
        const [row] = await trx('policy_transactions')
          .insert({ ...pricedColumns(priced), kind: 'cancellation', status: scheduled ? 'scheduled' : 'accepted', quote_id: c.quoteId })
          .returning('*');
        const taken = await trx('covered_units')
          .where({ purchase_id: c.purchaseId })
          .whereIn('id', c.coveredUnitIds)
          .whereNull('cancellation_id')
          .update({ cancellation_id: row.id })
          .returning('id');
        if (taken.length !== c.coveredUnitIds.length) {
          const got = new Set(taken.map((t: { id: number }) => t.id));
          throw new CoveredUnitTakenError(c.coveredUnitIds.filter((id) => !got.has(id)));
        }
        return toStoredCancellation(row);
      });
    },

    /** A scheduled cancellation's effective time came: `scheduled` → `accepted`. False when it is no longer scheduled and was never due (rescinded). */
    async startScheduledCancellation(cancellationId: number): Promise<boolean> {
      await db('policy_transactions').where({ id: cancellationId, status: 'scheduled' }).update({ status: 'accepted' });
      const row = await db('policy_transactions').where({ id: cancellationId }).first('status');
      return row !== undefined && row.status !== 'rescinded';
    },

    /**
     * Withdraws a scheduled cancellation before its effective time: `rescinded`, its units given
     * back (free for another change), in one transaction with the purchase row locked. Returns the
     * cancellation as now stored; one no longer `scheduled` is returned unchanged (the caller
     * refuses it), one already `rescinded` too (a repeat answers the same).
     */
    async rescindCancellation(cancellationId: number): Promise<StoredCancellation | undefined> {
      return db.transaction(async (trx) => {
        const row = await trx('policy_transactions').where({ id: cancellationId, kind: 'cancellation' }).first('purchase_id');
        if (!row) return undefined;
        await trx('purchases').where({ id: row.purchase_id }).forUpdate().first('id');
        const [done] = await trx('policy_transactions')
          .where({ id: cancellationId, status: 'scheduled' })
          .update({ status: 'rescinded', rescinded_at: trx.fn.now() })
          .returning('id');
        if (done)
          await trx('covered_units').where({ cancellation_id: cancellationId }).whereNull('cancelled_at').update({ cancellation_id: null });
        return toStoredCancellation(await trx('policy_transactions').where({ id: cancellationId }).first());
      });
    },

    /**
     * Moves a test-mode purchase's test clock to `at` (only forward: a time before the clock, or
     * before the real now when it has none, changes nothing). Returns the clock as now stored;
     * undefined for a live or unknown purchase.
     */
    async advanceTestClock(purchaseId: number, at: Date): Promise<Date | undefined> {
      const [row] = await db('purchases')
        .where({ id: purchaseId, mode: 'test' })
        .update({ test_clock_at: db.raw('greatest(coalesce(test_clock_at, now()), ?::timestamptz)', [at]), updated_at: db.fn.now() })
        .returning('test_clock_at');
      return row ? (row.test_clock_at as Date) : undefined;
    },

    /** The refund of a cancellation exists at the processor (`refundId`; null when nothing is due). */
    async markCancellationRefundPending(cancellationId: number, refundId: string | null): Promise<void> {
      await db('policy_transactions')
        .where({ id: cancellationId })
        .whereIn('status', ['accepted', 'refund_pending'])
        .update({ status: 'refund_pending', refund_id: refundId });
    },

    /**
     * The payments of a purchase, oldest first, each `{ paymentIntentId, amountMinor }` (minor
     * units collected): the sale's payment intent with the purchase's total (when it has one),
     * then each completed endorsement's payment intent with what it collected, in the order they
     * were recorded. What `allocateRefund` (./refund-allocation) splits a refund over.
     */
    async paymentsOf(purchaseId: number): Promise<PaymentShare[]> {
      const p = await db('purchases').where({ id: purchaseId }).first('payment_intent_id', 'total_minor');
      const endorsements = await db('policy_transactions')
        .where({ purchase_id: purchaseId, kind: 'endorsement', status: 'completed' })
        .whereNotNull('payment_intent_id')
        .orderBy('id')
        .select('payment_intent_id', 'total_minor');
      return [...(p?.payment_intent_id ? [p] : []), ...endorsements].map((r) => ({
        paymentIntentId: r.payment_intent_id as string,
        amountMinor: Number(r.total_minor),
      }));
    },

    /**
     * What the purchase's other cancellations and endorsements that gave premium back (any but
     * `exceptCancellationId`, rescinded ones aside) and the refunds made in the processor's
     * dashboard take from each payment intent, minor units: their planned `refunds`; a
     * cancellation refunded before refunds could be split (`refunds` null, `refund_id` set) took
     * its total from the sale's payment intent; a dashboard refund (`refund` row) its total from
     * the charge it was made on (the sale's for rows of before they named it).
     */
    async refundedByPaymentIntent(purchaseId: number, exceptCancellationId: number): Promise<Map<string, number>> {
      const [p, rows] = await Promise.all([
        db('purchases').where({ id: purchaseId }).first('payment_intent_id'),
        db('policy_transactions')
          .where({ purchase_id: purchaseId })
          .whereIn('kind', ['cancellation', 'endorsement', 'refund'])
          .whereNot({ id: exceptCancellationId })
          .whereNot({ status: 'rescinded' })
          .select('kind', 'refunds', 'refund_id', 'total_minor', 'payment_intent_id'),
      ]);
      const taken = dashboardRefundsByPaymentIntent(rows, (p?.payment_intent_id as string | null | undefined) ?? null);
      const add = (paymentIntentId: string, minor: number) => taken.set(paymentIntentId, (taken.get(paymentIntentId) ?? 0) + minor);
      for (const r of rows) {
        if (r.kind === 'refund') continue; // counted above
        if (r.refunds) for (const e of r.refunds as CancellationRefund[]) add(e.paymentIntentId, Number(e.amountMinor));
        else if (r.refund_id && p?.payment_intent_id) add(p.payment_intent_id as string, Number(r.total_minor));
      }
      return taken;
    },

    /**
     * Stores how a cancellation's refund is split (`plan`, newest payment first, no refund created
     * yet) unless it was planned already, with the row locked; returns the plan as stored either
     * way (a retry keeps the first plan, so its amounts and idempotency keys never change).
     */
    async planCancellationRefunds(cancellationId: number, plan: PaymentShare[]): Promise<CancellationRefund[]> {
      return db.transaction(async (trx) => {
        const row = await trx('policy_transactions').where({ id: cancellationId, kind: 'cancellation' }).forUpdate().first('refunds');
        if (!row) throw new Error(`cancellation ${cancellationId} does not exist`);
        if (row.refunds) return row.refunds as CancellationRefund[];
        const refunds: CancellationRefund[] = plan.map((e) => ({
          paymentIntentId: e.paymentIntentId,
          amountMinor: e.amountMinor,
          refundId: null,
        }));
        await trx('policy_transactions')
          .where({ id: cancellationId })
          .update({ refunds: JSON.stringify(refunds) });
        return refunds;
      });
    },

    /**
     * The `index`th refund of a cancellation's plan exists at the processor (`refundId`): recorded
     * in `refunds`, the first also in `refund_id` (what readers of a single refund use), and the
     * cancellation `refund_pending`, as `markCancellationRefundPending` (only from `accepted` or
     * `refund_pending`). Throws when the cancellation has no plan with that entry.
     */
    async recordCancellationRefundCreated(cancellationId: number, index: number, refundId: string): Promise<void> {
      await db.transaction(async (trx) => {
        const row = await trx('policy_transactions').where({ id: cancellationId }).forUpdate().first('refunds', 'status');
        const refunds = row?.refunds as CancellationRefund[] | null | undefined;
        if (!refunds || !Number.isInteger(index) || index < 0 || index >= refunds.length)
          throw new Error(`cancellation ${cancellationId} has no planned refund ${index}`);
        if (row.status !== 'accepted' && row.status !== 'refund_pending') return;
        await trx('policy_transactions')
          .where({ id: cancellationId })
          .update({
            refunds: trx.raw(`jsonb_set(refunds, ?::text[], to_jsonb(?::text))`, [`{${index},refundId}`, refundId]),
            status: 'refund_pending',
            ...(index === 0 ? { refund_id: refundId } : {}),
          });
      });
    },

    /**
     * The cancellation is done: its units cancelled at its effective time, the transaction
     * completed, and the purchase's refunded amount at least the sum of its completed
     * cancellations (a `charge.refunded` event may have recorded more, a dashboard refund too).
     * Idempotent. Returns the cancellation as now stored.
     */
    async completeCancellation(cancellationId: number): Promise<StoredCancellation> {
      return db.transaction(async (trx) => {
        const row = await trx('policy_transactions').where({ id: cancellationId }).forUpdate().first();
        if (row.status !== 'completed') {
          await trx('covered_units')
            .where({ cancellation_id: cancellationId })
            .whereNull('cancelled_at')
            .update({ cancelled_at: row.effective_at });
          await trx('policy_transactions').where({ id: cancellationId }).update({ status: 'completed', completed_at: trx.fn.now() });
          await trx.raw(
            `update purchases set refunded_minor = greatest(refunded_minor,
               (select coalesce(sum(total_minor), 0) from policy_transactions where purchase_id = ? and kind = 'cancellation' and status = 'completed')),
               updated_at = now()
             where id = ?`,
            [row.purchase_id, row.purchase_id],
          );
        }
        return toStoredCancellation(await trx('policy_transactions').where({ id: cancellationId }).first());
      });
    },

    /** The processor refused the refund for good: the cancellation stays visible as `refund_failed`, its units still held for a retry. */
    async failCancellation(cancellationId: number, reason: string): Promise<void> {
      await db('policy_transactions')
        .where({ id: cancellationId })
        .whereNot('status', 'completed')
        .update({ status: 'refund_failed', failure_reason: reason.slice(0, 1000) });
    },

    /** Stores a cancellation quote (its id chosen by the caller) and returns it as stored. */
    async saveCancellationQuote(q: Omit<StoredCancellationQuote, 'createdAt'>): Promise<StoredCancellationQuote> {
      const [row] = await db('cancellation_quotes')
        .insert({
          ...pricedColumns(q),
          id: q.id,
          method: q.method,
          free_look: q.freeLook,
          ends_policy: q.endsPolicy,
          expires_at: q.expiresAt,
        })
        .returning('created_at');
      return { ...q, createdAt: row.created_at as Date };
    },

    async findById(purchaseId: number): Promise<PurchaseRecord | undefined> {
      const r = await db('purchases').where({ id: purchaseId }).first();
      return r ? toPurchaseRecord(r) : undefined;
    },

    /** The original purchase of a subscription (not a renewal), or undefined. */
    async findBySubscription(subscriptionId: string): Promise<PurchaseRecord | undefined> {
      const r = await db('purchases')
        .where({ payproc_subscription_id: subscriptionId })
        .whereNull('renewal_of_purchase_id')
        .orderBy('id')
        .first();
      return r ? toPurchaseRecord(r) : undefined;
    },

    /** The newest purchase holding this payment intent, or undefined. */
    async findByPaymentIntent(paymentIntentId: string): Promise<PurchaseRecord | undefined> {
      const r = await db('purchases').where({ payment_intent_id: paymentIntentId }).orderBy('id', 'desc').first();
      return r ? toPurchaseRecord(r) : undefined;
    },

    /**
     * The purchase one of whose charges payment intent `paymentIntentId` paid: the sale's
     * (as findByPaymentIntent), else a priced endorsement's difference; undefined when neither.
     */
    async findByChargePaymentIntent(paymentIntentId: string): Promise<PurchaseRecord | undefined> {
      const sale = await this.findByPaymentIntent(paymentIntentId);
      if (sale) return sale;
      const r = await db('purchases as p')
        .join('policy_transactions as t', 't.purchase_id', 'p.id')
        .where({ 't.payment_intent_id': paymentIntentId, 't.kind': 'endorsement' })
        .orderBy('p.id', 'desc')
        .first('p.*');
      return r ? toPurchaseRecord(r) : undefined;
    },

    /**
     * What the checkout session is made from: the purchase, its lines (with the processor product
     * and name) and where the buyer returns (the key's URLs, else the account's; null where neither).
     */
    async checkoutContext(purchaseId: number) {
      const r = await db('purchases as p')
        .join('root_accounts as a', 'a.id', 'p.root_account_id')
        .join('api_keys as k', 'k.id', 'p.api_key_id')
        .where('p.id', purchaseId)
        .first(
          'p.*',
          'a.checkout_success_url as account_success_url',
          'a.checkout_cancel_url as account_cancel_url',
          'k.checkout_success_url as key_success_url',
          'k.checkout_cancel_url as key_cancel_url',
        );
      if (!r) return undefined;
      const lines = await db('purchase_items as i')
        .join('product_lines as pl', 'pl.id', 'i.product_line_id')
        .where('i.purchase_id', purchaseId)
        .orderBy('i.position')
        .select('i.amount_minor', 'pl.customer_name', 'pl.payproc_product_id');
      return {
        purchase: toPurchaseRecord(r),
        lines: lines.map((l) => ({
          amountMinor: Number(l.amount_minor),
          name: l.customer_name as string,
          payprocProductId: (l.payproc_product_id as string | null) ?? null,
        })),
        successUrl: (r.key_success_url as string | null) ?? (r.account_success_url as string | null) ?? null,
        cancelUrl: (r.key_cancel_url as string | null) ?? (r.account_cancel_url as string | null) ?? null,
      };
    },

    /** Stores the checkout session created for the purchase (and its payment intent when known). */
    async recordCheckoutSession(
      purchaseId: number,
      s: { sessionId: string; url: string | null; expiresAt: Date; paymentIntentId: string | null },
    ): Promise<void> {
      await db('purchases')
        .where({ id: purchaseId })
        .update({
          checkout_session_id: s.sessionId,
          checkout_url: s.url,
          checkout_expires_at: s.expiresAt,
          payment_intent_id: db.raw('coalesce(?, payment_intent_id)', [s.paymentIntentId]),
          updated_at: db.fn.now(),
        });
    },

    /**
     * Records the payment once (`paid_at`); the payment intent is kept when already known. A covered
     * unit already under way at payment (a same-day start) starts at the payment: never before it.
     */
    async recordPayment(purchaseId: number, paymentIntentId: string | null): Promise<void> {
      // One statement (one round trip on the payment's hot path): the payment recorded once, and
      // coverage never starting before it is paid for (a known loss): a covered day or trip already
      // under way at payment (a same-day start_date) starts at the payment instead.
      await db.raw(
        `with paid as (
           update purchases set paid_at = coalesce(paid_at, now()), payment_intent_id = coalesce(?, payment_intent_id), updated_at = now()
            where id = ? returning id, paid_at)
         update covered_units cu set starts_at = paid.paid_at from paid
          where cu.purchase_id = paid.id and cu.starts_at < paid.paid_at and cu.ends_at > paid.paid_at`,
        [paymentIntentId, purchaseId],
      );
    },

    /** Remembers the processor subscription a paid subscription checkout created (once). */
    async recordSubscription(purchaseId: number, subscriptionId: string): Promise<void> {
      await db('purchases')
        .where({ id: purchaseId })
        .whereNull('payproc_subscription_id')
        .update({ payproc_subscription_id: subscriptionId, updated_at: db.fn.now() });
    },

    /**
     * Marks issuance complete (once) and, where the status rules allow, the purchase `issued`, in
     * one statement, so no reader sees certificates listed on a purchase not yet `issued`.
     */
    async recordCertificatesIssued(purchaseId: number): Promise<void> {
      const from = predecessorsOf('issued');
      await db('purchases')
        .where({ id: purchaseId })
        .update({
          certificates_issued_at: db.raw('coalesce(certificates_issued_at, now())'),
          status: db.raw(`case when status in (${from.map(() => '?').join(', ')}) then 'issued' else status end`, from),
          updated_at: db.fn.now(),
        });
    },

    /**
     * Moves the purchase to `to` when the status rules allow it (one conditional update, so two
     * writers racing cannot break the rules); `reason` is stored with `failed`. Returns the status
     * after the call and whether it changed; undefined when the purchase does not exist.
     */
    async transition(
      purchaseId: number,
      to: PurchaseStatus,
      reason?: string,
    ): Promise<{ status: PurchaseStatus; changed: boolean } | undefined> {
      const [row] = await db('purchases')
        .where({ id: purchaseId })
        .whereIn(
          'status',
          predecessorsOf(to).filter((s) => s !== to),
        )
        .update({
          status: to,
          updated_at: db.fn.now(),
          ...(to === 'failed' ? { failure_reason: (reason ?? 'unknown').slice(0, 2000), failed_at: db.fn.now() } : {}),
          ...(to === 'refunded' ? { refunded_at: db.raw('coalesce(refunded_at, now())') } : {}),
        })
        .returning('status');
      if (row) return { status: row.status as PurchaseStatus, changed: true };
      const now = await db('purchases').where({ id: purchaseId }).first('status');
      return now ? { status: now.status as PurchaseStatus, changed: false } : undefined;
    },

    /**
     * Records a `charge.refunded` event of one of the purchase's charges: the sale's (payment
     * intent `paymentIntentId`, or none given) or an endorsement's (the payment intent that
     * endorsement collected its difference with). For the sale's charge the purchase's refunded
     * amount (minor units) becomes at least `amountRefundedMinor`, and the purchase `refunded`
     * when the charge is refunded in full; an endorsement's charge changes neither (the purchase's
     * refunded amount is its sale charge's). What the processor reports refunded on that charge
     * beyond what the ledger explains there (the parts of our cancellations' and endorsements'
     * refunds taken from that payment intent, planned or created, and earlier `refund` rows of
     * it) was refunded in the processor's dashboard: it is kept as a `refund` row of that payment
     * intent (`completed` at `at`, spread in `breakdown` as `refundableMinor` over the items by
     * what that charge paid for each: the sale's premium per item, or the endorsement's), so the
     * bordereau reports it and later refunds take only what is left on each payment. The refunded
     * amount only grows (events may arrive out of order), and replaying an event adds nothing. A
     * payment intent that paid none of the purchase's charges (a checkout link paid after its
     * endorsement no longer held, which we refund in full) records nothing. Returns the sale's
     * refund state, or undefined when the purchase does not exist.
     */
    async recordRefund(
      purchaseId: number,
      amountRefundedMinor: number,
      fullyRefunded: boolean,
      at: Date = new Date(),
      paymentIntentId?: string,
    ): Promise<{ refundedMinor: number; refunded: boolean } | undefined> {
      const result = await db.transaction(async (trx) => {
        const p = await trx('purchases')
          .where({ id: purchaseId })
          .forUpdate()
          .first('id', 'refunded_minor', 'payment_intent_id', 'currency', 'api_key_id');
        if (!p) return undefined;
        const chargePi = (paymentIntentId ?? p.payment_intent_id) as string | null;
        const sale = chargePi === p.payment_intent_id;
        const ledger = await trx('policy_transactions')
          .where({ purchase_id: purchaseId })
          .whereIn('kind', ['cancellation', 'endorsement', 'refund'])
          .whereNot({ status: 'rescinded' })
          .select('id', 'kind', 'status', 'refunds', 'refund_id', 'total_minor', 'failure_reason', 'payment_intent_id', 'breakdown');
        // The endorsement whose difference this charge collected, when it is not the sale's.
        const endorsement = sale
          ? undefined
          : ledger.find((t) => t.kind === 'endorsement' && t.payment_intent_id === chargePi && Number(t.total_minor) > 0);
        // A payment intent that paid none of its charges (a checkout link paid after the endorsement no
        // longer held, refunded in full by us): nothing was written for it, so nothing is recorded.
        if (!sale && !endorsement) return { refundedMinor: Number(p.refunded_minor), sale: false };
        let refundedMinor = Number(p.refunded_minor);
        if (sale) {
          const [row] = await trx('purchases')
            .where({ id: purchaseId })
            .update({ refunded_minor: trx.raw('greatest(refunded_minor, ?)', [amountRefundedMinor]), updated_at: trx.fn.now() })
            .returning(['refunded_minor']);
          refundedMinor = Number(row.refunded_minor);
        }
        let explained = (chargePi && dashboardRefundsByPaymentIntent(ledger, p.payment_intent_id).get(chargePi)) || 0;
        for (const t of ledger) {
          if (t.kind === 'refund') continue; // counted above
          if (t.refunds) {
            // A refund refused for good took nothing, except the parts already created.
            const refused = t.status === 'refund_failed' || (t.kind === 'endorsement' && t.failure_reason);
            for (const part of t.refunds as CancellationRefund[])
              if (part.paymentIntentId === chargePi && (!refused || part.refundId)) explained += Number(part.amountMinor);
          } else if (sale && t.kind === 'cancellation' && t.refund_id && t.status !== 'refund_failed') explained += Number(t.total_minor);
        }
        const unexplained = amountRefundedMinor - explained;
        if (unexplained > 0) {
          const items = await trx('purchase_items').where({ purchase_id: purchaseId }).orderBy('position').select('id', 'amount_minor');
          // What the charge paid for each item: the sale's premium, or the endorsement's (by its units).
          const paidFor = new Map<number, number>();
          if (endorsement)
            for (const u of endorsement.breakdown as LedgerUnitPremium[])
              paidFor.set(u.itemId, (paidFor.get(u.itemId) ?? 0) + Math.max(0, u.premiumMinor));
          const weights = items.map((i) => (endorsement ? (paidFor.get(i.id) ?? 0) : Number(i.amount_minor)));
          const shares = spreadByWeight(unexplained, weights.some((w) => w > 0) ? weights : items.map((i) => Number(i.amount_minor)));
          await trx('policy_transactions').insert({
            purchase_id: purchaseId,
            kind: 'refund',
            status: 'completed',
            api_key_id: p.api_key_id,
            requested_by: 'processor',
            covered_unit_ids: [],
            effective_at: at,
            currency: p.currency,
            premium_minor: unexplained,
            tax_minor: 0,
            platform_fee_minor: 0,
            total_minor: unexplained,
            payment_intent_id: chargePi,
            breakdown: JSON.stringify(items.map((i, k) => ({ itemId: i.id, refundableMinor: shares[k] }))),
            completed_at: at,
          });
        }
        return { refundedMinor, sale };
      });
      if (result === undefined) return undefined;
      const { refundedMinor, sale } = result;
      const status =
        sale && fullyRefunded
          ? await this.transition(purchaseId, 'refunded')
          : await db('purchases').where({ id: purchaseId }).first('status');
      return { refundedMinor, refunded: status?.status === 'refunded' };
    },
  };
}

export type PurchasesRepository = ReturnType<typeof createPurchasesRepository>;
