/**
 * What an operator is told of a purchase's coverage (`npm run ops -- find|reissue`, issue 55 item
 * 1): read from the purchase's own status and covered units (the sale's repository), never from
 * a workflow run's result or its PurchaseStatus search attribute. The sale run (`purchase-<id>`)
 * completes once the certificates are issued and keeps saying `issued` for good; a later
 * cancellation or refund is decided by the owner (`policy-<id>`) and written to `purchases.status`
 * (docs/decisions.md, "Statuses").
 */
import type { PurchaseStatus } from '../../workflows/contracts';
import type { SaleRepository } from './sale-repository';

/** A purchase's coverage as its record tells it; unit counts over every item. */
export interface PurchaseStanding {
  purchase_id: number;
  status: PurchaseStatus;
  mode: 'live' | 'test';
  root_account_id: number;
  covered_units: number;
  cancelled_units: number;
  /** Units still covered: none once the purchase is `cancelled` or `refunded`, or before it is paid. */
  in_force_units: number;
  refunded_at: string | null;
  /** One line: the status and what it means for coverage. */
  summary: string;
}

const UNPAID: readonly PurchaseStatus[] = ['quoted', 'awaiting_payment', 'expired', 'failed'];

/**
 * The standing of purchase `purchaseId`, or undefined when it does not exist. Two reads
 * (`findById`, `itemDetails`); amounts are not read.
 */
export async function purchaseStanding(
  sales: Pick<SaleRepository, 'findById' | 'itemDetails'>,
  purchaseId: number,
): Promise<PurchaseStanding | undefined> {
  const purchase = await sales.findById(purchaseId);
  if (!purchase) return undefined;
  const units = (await sales.itemDetails(purchaseId)).flatMap((i) => i.units);
  const cancelled = units.filter((u) => u.cancelledAt !== null).length;
  const covering = !UNPAID.includes(purchase.status) && purchase.status !== 'refunded' && purchase.status !== 'cancelled';
  const standing = {
    purchase_id: purchaseId,
    status: purchase.status,
    mode: purchase.mode,
    root_account_id: purchase.rootAccountId,
    covered_units: units.length,
    cancelled_units: cancelled,
    in_force_units: covering ? units.length - cancelled : 0,
    refunded_at: purchase.refundedAt?.toISOString() ?? null,
  };
  return { ...standing, summary: standingSummary(standing) };
}

/** The one-line meaning of a standing, e.g. `partly cancelled: 1 of 2 covered units cancelled, 1 in force`. */
export function standingSummary(s: Omit<PurchaseStanding, 'summary'>): string {
  const of = `${s.cancelled_units} of ${s.covered_units} covered unit${s.covered_units === 1 ? '' : 's'} cancelled`;
  switch (s.status) {
    case 'refunded':
      return `refunded in full${s.refunded_at ? ` at ${s.refunded_at}` : ''}: certificates void, nothing in force`;
    case 'cancelled':
      return `cancelled: ${of}, nothing in force`;
    case 'partly_cancelled':
      return `partly cancelled: ${of}, ${s.in_force_units} in force`;
    case 'issued':
      return `issued: ${s.in_force_units} covered unit${s.in_force_units === 1 ? '' : 's'} in force, none cancelled`;
    case 'paid':
    case 'awaiting_certificates':
      return `${s.status.replace('_', ' ')}: ${s.in_force_units} covered unit${s.in_force_units === 1 ? '' : 's'} in force, certificates not all stored yet`;
    default:
      return `${s.status.replace('_', ' ')}: not paid, nothing in force`;
  }
}
