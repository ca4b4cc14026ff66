/**
 * Wire contracts of the `claim.*` events (issue 51), split from `schemas.ts` by aggregate: the
 * `claim` object they carry (`claim-payloads.ts` builds it), what each type says, and an example
 * object per type. `schemas.ts` adds them to every event's envelope, the union and the OpenAPI
 * document's `webhooks` section like the other events.
 */
import { z } from 'zod';
import type { ClaimEventType } from './types';

const STATUSES = ['submitted', 'acknowledged', 'under_review', 'approved', 'denied', 'paid', 'closed', 'reopened'] as const;
const minor = (what: string) =>
  z
    .number()
    .int()
    .meta({ description: `${what}, integer minor units of \`currency\` (e.g. cents)` });
const instant = (what: string) => z.string().meta({ description: `${what}, ISO 8601 UTC` });

/** The `claim` of the claim events: the claim after the change, without the claimant's contact data and description, and the change. */
export const EventClaim = z
  .object({
    object: z.literal('claim'),
    id: z.number().int(),
    purchase_id: z.number().int(),
    covered_unit_id: z.number().int().meta({ description: 'The covered unit the incident falls in' }),
    product_line_id: z.number().int(),
    certificate_number: z.string().nullable().meta({ description: 'The unit’s certificate in force when the claim was filed' }),
    status: z.enum(STATUSES).meta({ description: 'The claim’s status after the change' }),
    incident_at: instant('When the loss happened'),
    incident_day: z.string().meta({ description: 'The incident’s local day in the unit’s time zone (YYYY-MM-DD)' }),
    claim_type: z.string(),
    amount_claimed: minor('The amount claimed'),
    approved_amount: minor('The amount approved (at most amount_claimed), once approved').nullable(),
    paid_amount: minor('Paid on the claim so far'),
    currency: z.string().meta({ description: 'ISO 4217, lowercase' }),
    decision_reason: z.string().nullable(),
    denial_code: z.string().nullable(),
    payment_reference: z.string().nullable().meta({ description: 'The payout’s transfer (`tr_…`) or the reference recorded by hand' }),
    acknowledgement_due_at: instant('The insurer’s deadline to acknowledge'),
    acknowledgement_overdue: z.boolean().meta({ description: 'The deadline passed before the claim was acknowledged' }),
    acknowledged_at: instant('When acknowledged').nullable(),
    decided_at: instant('When approved or denied').nullable(),
    paid_at: instant('When paid').nullable(),
    closed_at: instant('When closed').nullable(),
    change: z
      .object({
        seq: z
          .number()
          .int()
          .meta({ description: 'The change’s number in the claim’s history (0: the filing); events of one claim in this order' }),
        from_status: z.enum(STATUSES).nullable(),
        to_status: z.enum(STATUSES).nullable(),
        actor: z.object({
          type: z.enum(['api_key', 'adjuster', 'test_helper', 'buyer', 'system']),
          id: z
            .string()
            .nullable()
            .meta({ description: 'The API key’s id (an agency’s or an adjuster’s); null for the buyer’s own claim page and the service' }),
        }),
        note: z.string().nullable().meta({ description: 'The reason given' }),
        created_at: instant('When it was made'),
      })
      .meta({ description: 'The change this event announces, as the claim’s history records it' }),
    created_at: instant('When the claim was filed'),
  })
  .meta({
    id: 'EventClaim',
    description:
      'A claim after a change of its status, and that change. The claimant’s contact data and the description stay in the API: GET /api/v1/claims/{id}',
  });

/** What `data.object` is for each claim event type, and what the event says. */
export const CLAIM_EVENTS: Record<ClaimEventType, { name: string; object: z.ZodType; summary: string }> = {
  'claim.submitted': { name: 'ClaimSubmitted', object: EventClaim, summary: 'A claim was filed on a purchase (first notice of loss)' },
  'claim.acknowledged': { name: 'ClaimAcknowledged', object: EventClaim, summary: 'The insurer acknowledged a claim' },
  'claim.under_review': { name: 'ClaimUnderReview', object: EventClaim, summary: 'The insurer started reviewing a claim' },
  'claim.approved': {
    name: 'ClaimApproved',
    object: EventClaim,
    summary: 'The insurer approved a claim: approved_amount (at most the amount claimed) and decision_reason',
  },
  'claim.denied': { name: 'ClaimDenied', object: EventClaim, summary: 'The insurer denied a claim: denial_code and decision_reason' },
  'claim.paid': { name: 'ClaimPaid', object: EventClaim, summary: 'An approved claim was paid (payment_reference, paid_amount)' },
  'claim.closed': { name: 'ClaimClosed', object: EventClaim, summary: 'A paid or denied claim was closed' },
  'claim.reopened': { name: 'ClaimReopened', object: EventClaim, summary: 'A closed claim was reopened (change.note says why)' },
};

const CLAIM_EXAMPLE = {
  object: 'claim',
  id: 7,
  purchase_id: 42,
  covered_unit_id: 301,
  product_line_id: 12,
  certificate_number: 'COI-42-1-1-3FA9C2B71D',
  status: 'submitted',
  incident_at: '2026-12-25T01:30:00.000Z',
  incident_day: '2026-12-24',
  claim_type: 'property_damage',
  amount_claimed: 125000,
  approved_amount: null,
  paid_amount: 0,
  currency: 'usd',
  decision_reason: null,
  denial_code: null,
  payment_reference: null,
  acknowledgement_due_at: '2026-12-29T10:00:00.000Z',
  acknowledgement_overdue: false,
  acknowledged_at: null,
  decided_at: null,
  paid_at: null,
  closed_at: null,
  change: {
    seq: 0,
    from_status: null,
    to_status: 'submitted',
    actor: { type: 'api_key', id: '9' },
    note: null,
    created_at: '2026-12-25T10:00:00.000Z',
  },
  created_at: '2026-12-25T10:00:00.000Z',
};
const step = (seq: number, from: string, to: string, over: Record<string, unknown> = {}, note: string | null = null) => ({
  ...CLAIM_EXAMPLE,
  status: to,
  acknowledged_at: '2026-12-26T09:00:00.000Z',
  ...over,
  change: { seq, from_status: from, to_status: to, actor: { type: 'adjuster', id: '15' }, note, created_at: '2026-12-28T09:00:00.000Z' },
});
const APPROVED = { approved_amount: 100000, decision_reason: 'Receipts cover 1,000.00', decided_at: '2026-12-28T09:00:00.000Z' };
const PAID = { ...APPROVED, paid_amount: 100000, payment_reference: 'tr_1Q2w3E4r5T6y7U8i', paid_at: '2026-12-28T09:00:04.000Z' };

/** An example `claim` object of each claim event type. */
export const CLAIM_EXAMPLE_OBJECTS: Record<ClaimEventType, Record<string, unknown>> = {
  'claim.submitted': CLAIM_EXAMPLE,
  'claim.acknowledged': step(1, 'submitted', 'acknowledged'),
  'claim.under_review': step(2, 'acknowledged', 'under_review'),
  'claim.approved': step(3, 'under_review', 'approved', APPROVED, APPROVED.decision_reason),
  'claim.denied': step(
    3,
    'under_review',
    'denied',
    { decision_reason: 'Wear and tear is excluded', denial_code: 'excluded_peril', decided_at: '2026-12-28T09:00:00.000Z' },
    'Wear and tear is excluded',
  ),
  'claim.paid': {
    ...step(4, 'approved', 'paid', PAID),
    change: { ...step(4, 'approved', 'paid').change, actor: { type: 'system', id: null } },
  },
  'claim.closed': step(5, 'paid', 'closed', { ...PAID, closed_at: '2027-01-04T09:00:00.000Z' }),
  'claim.reopened': step(6, 'closed', 'reopened', PAID, 'The claimant sent a second invoice'),
};
