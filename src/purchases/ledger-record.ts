/**
 * The policy ledger's read model: a cancellation or endorsement as kept in `policy_transactions`
 * (`StoredCancellation`, `EndorsementCharge`), a cancellation quote (`StoredCancellationQuote`),
 * the parts a refund is split into (`CancellationRefund`), an endorsement's premium per unit
 * (`LedgerUnitPremium`), the error a taken unit raises, and the one rule every reader of the
 * processor's dashboard refunds shares (`dashboardRefundsByPaymentIntent`). The ledger's writer is
 * ./ledger-repository.
 *
 * Pure: no I/O. Amounts are integer minor units; instants are `Date`s (UTC).
 */
import type { CancellationRequester, RefundQuote, UnitRefund } from './refund-rule';

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

/**
 * Progress of a change to a policy: scheduled (units taken, waiting for its effective time),
 * accepted (units taken, due now), refund pending at the processor, completed, refund failed for
 * good, or rescinded (withdrawn while scheduled: units given back, nothing refunded).
 */
export type PolicyTransactionStatus = 'scheduled' | 'accepted' | 'refund_pending' | 'completed' | 'refund_failed' | 'rescinded';

/** A cancellation as kept in `policy_transactions` (amounts: the refund, minor units). */
/**
 * What a priced cancellation is, quoted or carried out: whose and why, which covered units from
 * when, and what it gives back (amounts in minor units, per unit in `breakdown`).
 */
export interface PricedCancellation {
  purchaseId: number;
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
}

export interface StoredCancellation extends PricedCancellation {
  id: number;
  status: PolicyTransactionStatus;
  quoteId: string | null;
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

/** Thrown by `acceptCancellation` when a unit of the quote was taken by another change meanwhile. */
export class CoveredUnitTakenError extends Error {
  constructor(readonly unitIds: number[]) {
    super(`covered units ${unitIds.join(', ')} were taken by another change`);
    this.name = 'CoveredUnitTakenError';
  }
}

/** A priced cancellation as kept for the cancel that may follow (amounts in minor units). */
export interface StoredCancellationQuote extends PricedCancellation {
  id: string;
  method: RefundQuote['method'];
  freeLook: boolean;
  endsPolicy: boolean;
  expiresAt: Date;
  createdAt: Date;
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
  /** Premium tax it charged on the premium it added (minor units; 0: none). */
  taxMinor: number;
  totalMinor: number;
  paymentIntentId: string | null;
  completedAt: Date;
  breakdown: LedgerUnitPremium[];
  dashboardRefundedMinor: number;
}
