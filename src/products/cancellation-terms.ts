/**
 * A product's cancellation terms: what a cancellation of its covered units gives back (the rule
 * that applies them is src/purchases/refund-rule.ts). Stored per product in
 * `product_cancellation_terms` (written by the products repository only); a product without a row
 * has the defaults below. Bundles use their primary product's. Money in minor units.
 */

/** How an unstarted unit's premium comes back outside free look. */
export const REFUND_METHODS = ['pro_rata', 'short_rate', 'none'] as const;
export type RefundMethod = (typeof REFUND_METHODS)[number];

/** A product's cancellation terms (bundles use their primary product's). */
export interface CancellationTerms {
  /** Days after payment during which a purchase with no started unit is refunded in full (0: none). */
  freeLookDays: number;
  /** Method when the buyer or the agency asks. */
  refundMethod: RefundMethod;
  /** Method when the insurer cancels. */
  insurerRefundMethod: RefundMethod;
  /** Short-rate penalty in basis points of the pro-rata refund (0–10 000). */
  shortRatePenaltyBps: number;
  /** Whether the platform fee comes back (outside free look) when the whole purchase is cancelled. */
  platformFeeRefundable: boolean;
  /** Premium an item always keeps once paid (minor units), free look aside. */
  minimumEarnedPremiumMinor: number;
  /**
   * Whether the buyer may withdraw online on their own (src/withdrawals/): the proof-of-coverage
   * email to the buyer and the checkout return page then carry a signed link to a page that shows
   * the buyer's quote (every unstarted unit) and confirms it. Within WITHDRAWAL_PERIOD_DAYS of
   * payment the withdrawal gives back every unstarted unit's premium, tax and fee share in full
   * and ignores the other terms here (method, short-rate penalty, minimum earned premium, free-look
   * days), so no terms can make a withdrawal cost a penalty; after it, the link cancels under them.
   */
  buyerWithdrawal: boolean;
}

/**
 * Days after payment during which the buyer's own withdrawal (the withdrawal link) is priced as
 * a withdrawal, whatever the product's terms: the EU and UK distance-selling withdrawal period for
 * non-life insurance (src/purchases/refund-rule.ts applies it).
 */
export const WITHDRAWAL_PERIOD_DAYS = 14;

/**
 * The defaults an agency can change per product: 14 free-look days (the EU and UK distance-selling
 * withdrawal period), pro rata for everyone, a 10 % short-rate penalty when short rate is chosen,
 * the platform fee kept outside free look, no minimum earned premium, and the buyer's own online
 * withdrawal offered (EU distance contracts must offer a withdrawal function from 19 June 2026;
 * an agency turns it off for covers exempt from the right, e.g. short travel covers).
 */
export const DEFAULT_CANCELLATION_TERMS: Readonly<CancellationTerms> = Object.freeze({
  freeLookDays: 14,
  refundMethod: 'pro_rata',
  insurerRefundMethod: 'pro_rata',
  shortRatePenaltyBps: 1000,
  platformFeeRefundable: false,
  minimumEarnedPremiumMinor: 0,
  buyerWithdrawal: true,
});

/** Terms from a `product_cancellation_terms` row (snake_case columns; money in minor units). */
export function cancellationTermsFromRow(row: Record<string, unknown>): CancellationTerms {
  return {
    freeLookDays: Number(row.free_look_days),
    refundMethod: row.refund_method as RefundMethod,
    insurerRefundMethod: row.insurer_refund_method as RefundMethod,
    shortRatePenaltyBps: Number(row.short_rate_penalty_bps),
    platformFeeRefundable: Boolean(row.platform_fee_refundable),
    minimumEarnedPremiumMinor: Number(row.minimum_earned_premium_minor),
    buyerWithdrawal: Boolean(row.buyer_withdrawal ?? DEFAULT_CANCELLATION_TERMS.buyerWithdrawal),
  };
}
