/**
 * What a claim is on the wire, as `GET /api/v1/claims/{id}` answers it and the `claim.*` events
 * carry it (the events leave out the claimant's contact data, the description, the payout
 * account and the attachments: they leave the service).
 */
import type { ClaimRecord } from './repository';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * Claim `c`'s facts in wire names: what it is against (purchase, covered unit, product line,
 * certificate), its status, the incident (instant, local day, type), its amounts (integer minor
 * units of `currency`: claimed, approved, paid), the decision (reason, denial code), the
 * payment's reference and its deadlines and milestones (ISO 8601 UTC; null until reached).
 */
export function claimFacts(c: ClaimRecord) {
  return {
    object: 'claim' as const,
    id: c.id,
    purchase_id: c.purchaseId,
    covered_unit_id: c.coveredUnitId,
    product_line_id: c.productLineId,
    certificate_number: c.certificateNumber,
    status: c.status,
    incident_at: c.incidentAt.toISOString(),
    incident_day: c.incidentDay,
    claim_type: c.claimType,
    amount_claimed: c.amountClaimedMinor,
    approved_amount: c.approvedAmountMinor,
    paid_amount: c.paidAmountMinor,
    currency: c.currency,
    decision_reason: c.decisionReason,
    denial_code: c.denialCode,
    payment_reference: c.paymentReference,
    acknowledgement_due_at: c.acknowledgementDueAt.toISOString(),
    acknowledgement_overdue: c.acknowledgementOverdueAt !== null,
    acknowledged_at: iso(c.acknowledgedAt),
    decided_at: iso(c.decidedAt),
    paid_at: iso(c.paidAt),
    closed_at: iso(c.closedAt),
  };
}
