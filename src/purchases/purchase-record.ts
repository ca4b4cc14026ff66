/**
 * The purchase read model, shared by every repository of the purchases domain and their readers:
 * the purchase row as every reader sees it (`PurchaseRecord`, `toPurchaseRecord`: the one read
 * model of a purchase; the API, certificates, invoices, payments and agency events all take it),
 * what a sale or a renewal writes (`NewPurchase`, `RenewalFields`), an item with its covered units
 * (`PurchaseItemDetail`), who may read what (`PurchaseScope`, `PurchaseLookup`), how a request
 * names a purchase (`PurchaseHandle`), and the status rules.
 *
 * Status rules (`PURCHASE_TRANSITIONS`): a purchase moves forward only; `refunded` and
 * `cancelled` are final; an issued purchase becomes `partly_cancelled` when a cancellation of
 * some of its units completes and `cancelled` once every unit is (`statusAfterCancellations`);
 * `failed` (the processor refused the purchase for good) and `expired` still move to `paid`,
 * because a payment the processor reports after them was taken and must be honoured. A move the
 * rules do not allow changes nothing and is reported (`changed: false`), never thrown: late
 * steps (a retried activity, an out-of-order event) are normal. The one writer that applies them
 * is `transition` (./sale-repository).
 *
 * Pure: no I/O. Amounts are integer minor units; instants are `Date`s (UTC).
 */
import type { Knex } from 'knex';
import type { Address } from '../certificates/repository';
import type { CancellationTerms } from '../products/cancellation-terms';
import type { ItemCommission } from './commission';
import type { TaxLine } from '../taxes/premium-tax';
import type { PurchaseStatus } from '../../workflows/contracts';

/** Which status each status may move to (a move to the same status is a no-op). */
export const PURCHASE_TRANSITIONS: Readonly<Record<PurchaseStatus, readonly PurchaseStatus[]>> = {
  quoted: ['awaiting_payment', 'paid', 'expired', 'failed'],
  awaiting_payment: ['paid', 'expired', 'failed'],
  failed: ['awaiting_payment', 'paid', 'expired'],
  expired: ['paid'],
  paid: ['awaiting_certificates', 'issued', 'refunded'],
  awaiting_certificates: ['issued', 'refunded'],
  issued: ['partly_cancelled', 'cancelled', 'refunded'],
  partly_cancelled: ['cancelled', 'refunded'],
  cancelled: [],
  refunded: [],
};

/**
 * The status an issued purchase's covered units give it (the owner's decision after each completed
 * cancellation or withdrawal): `cancelled` when every unit is cancelled, `partly_cancelled` when
 * some are, else `issued`. `units`: every covered unit of the purchase, with whether its
 * cancellation completed. A purchase without units stays `issued`.
 */
export function statusAfterCancellations(units: ReadonlyArray<{ cancelled: boolean }>): 'issued' | 'partly_cancelled' | 'cancelled' {
  const cancelled = units.filter((u) => u.cancelled).length;
  if (cancelled === 0) return 'issued';
  return cancelled === units.length ? 'cancelled' : 'partly_cancelled';
}

/** True when a purchase in `from` may be moved to `to` (or already is in it). */
export function canTransition(from: PurchaseStatus, to: PurchaseStatus): boolean {
  return from === to || PURCHASE_TRANSITIONS[from].includes(to);
}

/** The statuses from which `to` may be reached (itself included). */
export function predecessorsOf(to: PurchaseStatus): PurchaseStatus[] {
  return (Object.keys(PURCHASE_TRANSITIONS) as PurchaseStatus[]).filter((from) => canTransition(from, to));
}

/** One covered day or trip of a new purchase item, as the quote computes it (`src/quotes/coverage.ts`). */
export interface NewCoveredUnit {
  index: number;
  kind: 'day' | 'trip';
  startsAt: Date;
  endsAt: Date;
  timeZone: string;
  /** `2026-12-24` for a day; `2026-12-24T08:00/2026-12-27T18:00` for a trip (local times). */
  localLabel: string;
}

/**
 * Writes the certificate holders the buyer named in a new purchase's answers (one per item that
 * has one; `holder` null for an item without) inside the purchase's transaction `trx`. The
 * holders' own repository does it (`insertHoldersFromAnswers`, src/certificate-holders): the
 * sale's insert hands it the new item ids, so each table keeps its one writer.
 */
export type WriteAnsweredHolders = (
  trx: Knex.Transaction,
  purchaseId: number,
  items: Array<{ purchaseItemId: number; holder: { name: string; address: Address } | null }>,
) => Promise<void>;

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
  /** Premium tax of all items (minor units; absent: 0). */
  taxMinor?: number;
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
    /** Premium tax charged on the item (minor units; absent: 0) and its lines (absent or null: not taxed). */
    taxMinor?: number;
    taxLines?: TaxLine[] | null;
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

/**
 * A purchase as read: the one read model of a purchase (issue 47 item 3), loaded only by the
 * purchases domain's reads (./sale-repository, ./subscription-repository) and taken by every
 * other domain as it is, or as a documented `Pick<PurchaseRecord, …>` where a function needs a
 * few fields. Amounts are integer minor units; instants are `Date`s (UTC).
 */
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
  /** Premium tax charged with it (minor units; 0: none), part of `totalMinor`. */
  taxMinor: number;
  totalMinor: number;
  savePaymentMethod: boolean;
  checkoutSessionId: string | null;
  checkoutUrl: string | null;
  checkoutExpiresAt: Date | null;
  paymentIntentId: string | null;
  /** The processor invoice that paid it, when recorded (a subscription renewal's); null otherwise. */
  payprocInvoiceId: string | null;
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

/** A `purchases` row (snake_case columns, bigints as text) as a `PurchaseRecord`: amounts as numbers of minor units, absent columns as null (`billing` one_time, `metadata` {}). */
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
  taxMinor: Number(r.tax_minor ?? 0),
  totalMinor: Number(r.total_minor),
  savePaymentMethod: Boolean(r.save_payment_method),
  checkoutSessionId: (r.checkout_session_id as string | null) ?? null,
  checkoutUrl: (r.checkout_url as string | null) ?? null,
  checkoutExpiresAt: (r.checkout_expires_at as Date | null) ?? null,
  paymentIntentId: (r.payment_intent_id as string | null) ?? null,
  payprocInvoiceId: (r.payproc_invoice_id as string | null) ?? null,
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

/** Which purchases an API key may read: its root account's, in its mode, and its teammate's only when the key belongs to one. */
export interface PurchaseScope {
  rootAccountId: number;
  mode: 'live' | 'test';
  agentId: number | null;
}

/** How a request names one purchase: exactly one of its id, its checkout session, its payment intent. */
export type PurchaseHandle = { purchaseId: number } | { checkoutSessionId: string } | { paymentIntent: string };

/**
 * Whose purchases a lookup by handle (`findByHandle` of ./sale-repository) may find: always one
 * root account's; and, when given, one mode's, one teammate's (`agentId`; null or absent: the
 * whole account), one buyer's by internal id (`buyerId`) or by the `idp_accnt_uuid` an agency
 * knows the buyer by (`buyerIdpUuid`, compared lower-cased).
 */
export interface PurchaseLookup {
  rootAccountId: number;
  mode?: 'live' | 'test';
  agentId?: number | null;
  buyerId?: number;
  buyerIdpUuid?: string;
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
  /** The agency's commission kept at the sale (./commission.ts); null or absent: no rate was in force. */
  commission?: ItemCommission | null;
  /** Premium tax charged on it at the sale (minor units; absent: 0) and its lines (absent or null: not taxed). */
  taxMinor?: number;
  taxLines?: TaxLine[] | null;
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
