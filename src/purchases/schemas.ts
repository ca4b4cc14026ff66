/**
 * Wire contracts of `/api/v1/purchases`: the purchase as a resource (a summary in lists, the
 * detail with items, covered units and a timeline) and the cancellation quote. snake_case;
 * every amount an integer in the currency's minor units (cents for usd); instants ISO 8601 UTC.
 */
import { z } from 'zod';
import { TaxLineObject } from '../quotes/schemas';
import { pageQueryFields } from '../http/query';
import type { PurchaseStatus } from '../../workflows/contracts';
import { CANCELLATION_REQUESTERS } from './refund-rule';

const minor = (what: string) =>
  z
    .number()
    .int()
    .meta({ description: `${what}, integer minor units of \`currency\` (e.g. cents)` });
const instant = (what: string) => z.string().meta({ description: `${what}, ISO 8601 UTC` });
const isoInstant = z.iso.datetime({ offset: true });

/** Every status a purchase can be in (the purchase workflow's, then its owner's once issued). */
export const PURCHASE_STATUSES = [
  'quoted',
  'awaiting_payment',
  'paid',
  'expired',
  'failed',
  'awaiting_certificates',
  'issued',
  'partly_cancelled',
  'cancelled',
  'refunded',
] as const satisfies readonly PurchaseStatus[];

/** What each status means, for the list filter's and the purchase's descriptions. */
const PURCHASE_STATUS_HELP =
  '`quoted`, `awaiting_payment`, `expired`, `failed` (not paid); `paid`, `awaiting_certificates` (paid, certificates being issued); `issued` (every certificate stored, nothing cancelled); `partly_cancelled` (some covered units cancelled or withdrawn from, the rest in force); `cancelled` (every covered unit cancelled or withdrawn from: nothing left in force; final); `refunded` (the payment refunded in full at the processor; final)';

/** Query of `GET /api/v1/purchases`; unknown parameters are refused. */
export const ListPurchasesQuery = z.strictObject({
  status: z
    .enum(PURCHASE_STATUSES)
    .optional()
    .meta({ description: `Only purchases in this status: ${PURCHASE_STATUS_HELP}` }),
  created_gte: isoInstant.optional().meta({ description: 'Only purchases created at or after this instant (ISO 8601 with offset)' }),
  created_lt: isoInstant.optional().meta({ description: 'Only purchases created before this instant (ISO 8601 with offset)' }),
  buyer_email: z
    .string()
    .trim()
    .email()
    .max(320)
    .optional()
    .meta({ description: "Only purchases by this buyer's email (case does not matter)" }),
  ...pageQueryFields(20),
});
export type ListPurchasesQuery = z.infer<typeof ListPurchasesQuery>;

const purchaseFields = {
  object: z.literal('purchase'),
  id: z.number().int(),
  status: z.enum(PURCHASE_STATUSES).meta({ description: `Where the purchase is in its life: ${PURCHASE_STATUS_HELP}` }),
  livemode: z.boolean(),
  billing: z.enum(['one_time', 'subscription']),
  checkout_session_id: z.string().nullable(),
  payment_intent: z.string().nullable(),
  currency: z.string().meta({ description: 'Three-letter ISO code, lower case' }),
  amount_subtotal: minor('Premium of every item before the platform fee'),
  platform_fee: minor('Platform fee of the key that sold it'),
  amount_tax: minor('Premium tax of all items (0: none), part of amount_total'),
  amount_total: minor('What the buyer was asked to pay at the sale, priced endorsements aside'),
  amount_paid: minor(
    'Everything the buyer paid on this purchase: amount_total once paid (else 0) plus each priced endorsement’s payment (a day added, an additional insured charged; one by checkout link once the link is paid), so amount_refunded never exceeds it',
  ),
  amount_refunded: minor('What went back to the buyer so far, by cancellations or in the processor dashboard'),
  amount_outstanding: minor(
    'What the buyer still owes on the sale: amount_total until paid, then 0 (an endorsement’s open checkout link is not owed: nothing changes until it is paid)',
  ),
  buyer_email: z.string().nullable(),
  agent_id: z.number().int().nullable().meta({ description: 'The teammate whose key sold it (null: the agency itself)' }),
  bundle: z
    .object({
      id: z.number().int().nullable().meta({ description: 'The bundle’s id (null once the bundle was deleted)' }),
      name: z.string().meta({ description: 'The bundle’s customer-facing name when it was sold' }),
    })
    .nullable()
    .meta({
      description: 'The bundle it was sold as (its products are the items with `in_bundle`); null: product lines bought on their own',
    }),
  metadata: z
    .record(z.string(), z.string())
    .meta({ description: 'The agency’s own key-value pairs given with the quote (`{}` when none); a renewal keeps its first purchase’s' }),
  failure_reason: z.string().nullable(),
  subscription_id: z.string().nullable(),
  renewal_of_purchase_id: z.number().int().nullable(),
  paid_at: instant('When it was paid').nullable(),
  certificates_issued_at: instant('When all its certificates were stored').nullable(),
  created_at: instant('When it was quoted'),
};

export const PurchaseSummary = z.object(purchaseFields).meta({ id: 'PurchaseSummary' });
export type PurchaseSummary = z.infer<typeof PurchaseSummary>;

/**
 * A covered unit's window as both the purchase's detail and the events give it (`itemObject` of
 * purchase-object.ts builds it): its id, place in its item, kind, coverage start and end (ISO
 * 8601 UTC), time zone and label.
 */
export const CoveredUnitWindow = z.object({
  id: z.number().int().meta({ description: 'Covered unit id (what a cancellation names)' }),
  index: z.number().int().meta({ description: 'Position within its item, from 0' }),
  kind: z.enum(['day', 'trip']),
  starts_at: instant('When its coverage starts (a day: local midnight in time_zone)'),
  ends_at: instant('When its coverage ends'),
  time_zone: z.string().meta({ description: 'IANA time zone of the risk' }),
  local_label: z.string().meta({ description: 'The covered day or trip as the certificate prints it' }),
});

const CoveredUnit = CoveredUnitWindow.extend({
  state: z.enum(['unpaid', 'active', 'cancellation_scheduled', 'cancellation_pending', 'cancelled']).meta({
    description:
      '`unpaid` until the purchase is paid, `active` once paid, `cancellation_scheduled` while a cancellation dated in the future holds it (it stays covered until then; rescinding gives it back), `cancellation_pending` once a cancellation took effect (its refund on the way), `cancelled` once that refund succeeded or the purchase was refunded in full',
  }),
  coverage_started: z.boolean().meta({
    description:
      'Whether its coverage had started when this was answered, by the purchase’s test clock when it has one (a started unit is earned and cannot be cancelled)',
  }),
  certificate: z
    .object({
      number: z.string(),
      verification_url: z.string(),
      voided_at: z.string().nullable().meta({ description: 'When it was voided, ISO 8601 UTC; null while in force' }),
    })
    .nullable()
    .meta({
      description:
        'The certificate that proves it to its first certificate holder (null until issued); `certificates` has every holder’s and every version',
    }),
  certificates: z
    .array(
      z.object({
        number: z.string(),
        certificate_holder_id: z
          .number()
          .int()
          .nullable()
          .meta({ description: 'Whom it is issued to (listCertificateHolders); null: no holder named' }),
        revision: z.number().int().meta({ description: '1 for the first version' }),
        status: z.enum(['issuing', 'issued', 'voided', 'superseded']).meta({
          description:
            '`issuing` (being rendered and stored), `issued` (in force), `voided`, or `superseded` (a past version: see superseded_by)',
        }),
        verification_url: z.string(),
        voided_at: z.string().nullable(),
        superseded_at: z.string().nullable(),
        superseded_by: z.string().nullable().meta({ description: 'The number of the version that replaced it' }),
      }),
    )
    .meta({ description: 'Every certificate of this unit: one current per certificate holder, and past versions' }),
}).meta({ id: 'PurchaseCoveredUnit' });

const PurchaseItem = z
  .object({
    id: z.number().int(),
    product_id: z.number().int(),
    product_name: z.string(),
    in_bundle: z.boolean().meta({ description: 'Whether the item is one of the purchase’s bundle’s products' }),
    is_trip_excess: z.boolean(),
    unit_price: minor('Price of one covered unit before the answers’ factors'),
    price_factor: z.number().meta({ description: 'Product of the chosen answers’ price factors' }),
    amount: minor('The item’s premium (unit_price × units × price_factor, rounded once)'),
    commission: z
      .object({
        party_id: z.number().int().meta({ description: 'The party that pays it: the product’s MGA or insurer' }),
        rate_bps: z.number().int().meta({ description: 'The rate in force at the sale, basis points of premium' }),
        amount: minor('Commission earned at the sale: amount × rate_bps / 10 000, rounded down'),
        returned: minor(
          'Commission given back by completed cancellations: on each the premium it returned × rate_bps / 10 000, rounded down; never more than `amount`',
        ),
      })
      .nullable()
      .meta({
        description: 'The agency’s commission on the item, kept at the sale (a later rate never reprices it); null: no rate was set',
      }),
    tax: z
      .object({ amount: minor('Premium tax charged on the item at the sale'), lines: z.array(TaxLineObject) })
      .meta({ description: 'Premium tax of the item, kept at the sale (amount 0 and no lines: the product is not taxed)' }),
    named_insured: z.unknown().meta({ description: 'The named insured as answered' }),
    certificate_holder: z.unknown().meta({ description: 'The certificate holder as answered (null: none)' }),
    covered_units: z.array(CoveredUnit),
  })
  .meta({ id: 'PurchaseItem' });

const TimelineEntry = z
  .object({
    type: z.enum([
      'created',
      'paid',
      'certificates_issued',
      'cancellation_scheduled',
      'cancellation_accepted',
      'cancellation_rescinded',
      'cancelled',
      'cancellation_failed',
      'refunded',
      'expired',
      'failed',
    ]),
    at: instant('When it happened'),
    by: z.enum(['agency', 'buyer', 'insurer', 'processor', 'service']).meta({
      description:
        'Who made it happen: the agency (its quote), the buyer (their payment), who asked for a cancellation, the processor (a dashboard refund, an expiry) or this service',
    }),
    cancellation_id: z.number().int().optional().meta({ description: 'The cancellation the entry belongs to' }),
  })
  .meta({ id: 'PurchaseTimelineEntry' });

/** The fields a cancellation is priced from (the quote's, and the cancel's without a quote). */
const CancellationQuoteRequestFields = {
  covered_unit_ids: z.array(z.number().int().min(1).max(2_147_483_647)).min(1).max(1000).optional().meta({
    description:
      'The covered units to cancel (ids from GET /api/v1/purchases/{id}); default: every unit not started at effective_at and not already cancelled',
  }),
  requested_by: z
    .enum(CANCELLATION_REQUESTERS)
    .optional()
    .meta({ description: 'Who asks: `buyer`, `agency` (default) or `insurer` (the product may give the insurer another refund method)' }),
  reason: z.string().trim().min(1).max(500).optional().meta({ description: 'Why, in a few words (kept with the cancellation)' }),
};

/** Body of `POST /api/v1/purchases/{id}/cancellation_quote`. */
export const CancellationQuoteRequest = z
  .strictObject({
    ...CancellationQuoteRequestFields,
    effective_at: isoInstant.optional().meta({
      description:
        'When the cancellation would take effect (ISO 8601 with offset): now (default) or later, never in the past. Units not started by then can be cancelled. Carried out with cancel, a later one is scheduled: the units stay covered until then, the refund follows at that time, and it can be rescinded before',
    }),
  })
  .meta({ id: 'CancellationQuoteRequest', example: { covered_unit_ids: [812, 813], requested_by: 'buyer', reason: 'Event postponed' } });
export type CancellationQuoteRequest = z.infer<typeof CancellationQuoteRequest>;

export const CancellationQuote = z
  .object({
    object: z.literal('cancellation_quote'),
    id: z.string().meta({ description: 'The quote id (`cq_…`), to carry the cancellation out at this price while the quote holds' }),
    purchase_id: z.number().int(),
    requested_by: z.enum(CANCELLATION_REQUESTERS),
    reason: z.string().nullable(),
    effective_at: instant('When the cancellation would take effect'),
    method: z.enum(['withdrawal', 'free_look', 'pro_rata', 'short_rate', 'none']).meta({
      description:
        'The rule applied: `withdrawal` (the buyer’s own withdrawal within 14 days of payment: every unstarted unit’s premium, tax and platform-fee share back, whatever the terms), `free_look` (the cancelled units’ premium, tax and platform-fee share back), else the product’s refund method for who asks',
    }),
    ends_policy: z.boolean().meta({ description: 'Whether no covered unit would stay active' }),
    currency: z.string(),
    refund: z.object({
      premium: minor('Premium coming back'),
      tax: minor('Tax coming back'),
      platform_fee: minor('Platform fee coming back'),
      total: minor('Everything coming back'),
    }),
    covered_units: z.array(
      z.object({
        covered_unit_id: z.number().int(),
        item_id: z.number().int(),
        premium: minor('The unit’s share of its item’s premium'),
        earned: minor('What the insurer keeps of it'),
        refundable: minor('What comes back for it'),
        certificate_number: z
          .string()
          .nullable()
          .meta({ description: 'The certificate the cancellation would void (null: none issued yet)' }),
      }),
    ),
    expires_at: instant('Until when the quote holds: 15 minutes, or the start of its first unit if sooner'),
    created_at: instant('When it was priced'),
  })
  .meta({ id: 'CancellationQuote' });
export type CancellationQuote = z.infer<typeof CancellationQuote>;

/** A cancellation as the API answers it (the refund in minor units). */
export const Cancellation = z
  .object({
    object: z.literal('cancellation'),
    id: z.number().int(),
    purchase_id: z.number().int(),
    quote_id: z.string().nullable(),
    status: z.enum(['scheduled', 'accepted', 'refund_pending', 'completed', 'refund_failed', 'rescinded']).meta({
      description:
        '`scheduled` (dated in the future: its units are held, still covered, until effective_at; rescind withdraws it), `accepted` (its units are taken), `refund_pending` (the refund is at the processor), `completed` (refunded; units cancelled and certificates voided), `refund_failed` (the processor refused the refund for good; its units stay taken for an operator to retry) or `rescinded` (withdrawn while scheduled: units active again, nothing refunded)',
    }),
    requested_by: z.enum(CANCELLATION_REQUESTERS),
    reason: z.string().nullable(),
    effective_at: instant('When it takes effect'),
    currency: z.string(),
    refund: z.object({
      id: z.string().nullable().meta({ description: 'The processor’s refund id (null until created, or when nothing was due)' }),
      premium: minor('Premium going back'),
      tax: minor('Tax going back'),
      platform_fee: minor('Platform fee going back'),
      total: minor('Everything going back'),
    }),
    covered_units: z.array(
      z.object({
        covered_unit_id: z.number().int(),
        item_id: z.number().int(),
        premium: minor('Its share of the premium'),
        earned: minor('Kept'),
        refundable: minor('Going back'),
      }),
    ),
    failure_reason: z.string().nullable(),
    created_at: instant('When it was accepted'),
    completed_at: instant('When it completed').nullable(),
    rescinded_at: instant('When it was rescinded').nullable(),
  })
  .meta({ id: 'Cancellation' });
export type Cancellation = z.infer<typeof Cancellation>;

/** Body of `POST /api/v1/purchases/{id}/cancel`: a quote to carry out, or what to price and cancel at once. */
export const CancelRequest = z
  .strictObject({
    quote_id: z
      .string()
      .regex(/^cq_[0-9a-f]{24}$/, { message: 'must be a cancellation quote id (cq_…)' })
      .optional()
      .meta({
        description:
          'A quote from cancellation_quote to carry out at its price (409 CANCELLATION_QUOTE_EXPIRED or _STALE when it no longer holds). Without it the other fields are priced afresh, as cancellation_quote does, and carried out',
      }),
    covered_unit_ids: CancellationQuoteRequestFields.covered_unit_ids,
    requested_by: CancellationQuoteRequestFields.requested_by,
    reason: CancellationQuoteRequestFields.reason,
  })
  .meta({ id: 'CancelRequest', example: { quote_id: 'cq_4f1c2d3e4b5a6c7d8e9f0a1b' } });
export type CancelRequest = z.infer<typeof CancelRequest>;

/** A buyer's dispute (chargeback) of the purchase's payment, as the processor last reported it. */
export const PurchaseDispute = z
  .object({
    id: z.string().meta({ description: 'The processor’s dispute id (dp_…)' }),
    charge: z.string().nullable().meta({ description: 'The processor’s charge disputed (ch_…)' }),
    amount: z.number().int().meta({ description: 'Amount disputed, integer minor units of `currency`' }),
    currency: z.string().meta({ description: 'ISO 4217, lowercase' }),
    reason: z.string().meta({ description: 'The processor’s reason (fraudulent, product_not_received, general…)' }),
    status: z
      .string()
      .meta({ description: 'The processor’s status: needs_response, under_review, won, lost, or warning_* for an inquiry' }),
    opened_at: instant('When the buyer opened it'),
    closed_at: instant('When it was decided (or the inquiry closed)').nullable(),
  })
  .meta({ id: 'PurchaseDispute' });

export const PurchaseDetail = z
  .object({
    ...purchaseFields,
    items: z.array(PurchaseItem),
    cancellations: z.array(Cancellation).meta({ description: 'Its cancellations, oldest first' }),
    disputes: z.array(PurchaseDispute).meta({
      description: 'Disputes (chargebacks) of its payment, oldest first; the events dispute.opened and dispute.closed announce them',
    }),
    timeline: z.array(TimelineEntry).meta({ description: 'What happened to the purchase, oldest first' }),
    test_clock: instant(
      'A test purchase’s test clock: its frozen now for coverage and cancellations (set by advanceTestClock); null on the real clock, always null in live mode',
    ).nullable(),
    buyer_page_url: z.string().nullable().meta({
      description:
        'The buyer’s own page of this purchase (the checkout-complete page, opened by its unguessable token): its live status, the certificates to download and, when the product offers it, the withdrawal link. Give it to the buyer only; null for a purchase with no checkout',
      example: 'https://coi.example.com/checkout/complete?purchase=42&token=q8ZyVb1c3m0s5XkR2nTq7wLr4uJh9dEa6fCiPgBoN0Y',
    }),
  })
  .meta({ id: 'Purchase' });
export type PurchaseDetail = z.infer<typeof PurchaseDetail>;
