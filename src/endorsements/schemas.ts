/**
 * Wire contracts of a purchase's endorsements (mid-term changes): the quote (a preview: the
 * premium difference and the certificates a change reissues) and carrying it out. snake_case;
 * amounts integer minor units of the purchase's currency; instants ISO 8601 UTC. Text printed on
 * a certificate is limited to what its boxes hold (refused when longer, never cut).
 */
import { z } from 'zod';
import { CERTIFICATE_TEXT_LIMITS as L } from '../pdf/certificate-template';
import { DescriptionOfOperationsText, HolderAddress } from '../certificate-holders/schemas';

const id = z.number().int().min(1).max(2_147_483_647);

const NamedInsuredChange = z
  .strictObject({
    type: z.literal('named_insured'),
    name: z
      .string()
      .trim()
      .min(1)
      .max(L.namedInsuredName)
      .refine((s) => !/[\r\n]/.test(s), { message: 'must be one line' })
      .meta({ description: `The corrected name, at most ${L.namedInsuredName} characters` }),
    address: HolderAddress.optional().meta({ description: 'The corrected address (omitted: the address stays as it is)' }),
  })
  .meta({ id: 'NamedInsuredEndorsement', description: 'Corrects the named insured printed on every certificate (no premium change)' });

const DescriptionChange = z
  .strictObject({
    type: z.literal('description_of_operations'),
    certificate_holder_id: id,
    description: DescriptionOfOperationsText,
  })
  .meta({
    id: 'DescriptionOfOperationsEndorsement',
    description: `Changes the description of operations / locations printed on one certificate holder’s certificates (at most ${L.descriptionOfOperations} characters in ${L.descriptionOfOperationsLines} lines)`,
  });

const MoveChange = z
  .strictObject({
    type: z.literal('move_covered_unit'),
    covered_unit_id: id,
    start_date: z.iso
      .date({ message: 'must be a date YYYY-MM-DD' })
      .optional()
      .meta({ description: 'A covered day’s new date, in the unit’s own time zone' }),
    trip: z
      .strictObject({ start: z.string().meta({ example: '2027-06-03T08:00' }), end: z.string().meta({ example: '2027-06-06T18:00' }) })
      .optional()
      .meta({ description: 'A covered trip’s new window, local date-times YYYY-MM-DDTHH:mm in the unit’s own time zone' }),
  })
  .superRefine((c, ctx) => {
    if ((c.start_date === undefined) === (c.trip === undefined))
      ctx.addIssue({ code: 'custom', path: ['start_date'], message: 'send start_date (a covered day) or trip (a covered trip)' });
  })
  .meta({
    id: 'MoveCoveredUnitEndorsement',
    description:
      'Moves a covered unit that has not started to another day or trip window (validated like a quote; the unit keeps its price)',
  });

const LocalTrip = z.strictObject({
  start: z.string().meta({ example: '2027-06-03T08:00' }),
  end: z.string().meta({ example: '2027-06-06T18:00' }),
});

const AddUnitsChange = z
  .strictObject({
    type: z.literal('add_covered_units'),
    purchase_item_id: id.meta({ description: 'The item (product) of the purchase that gains the units' }),
    start_date: z.iso
      .date({ message: 'must be a date YYYY-MM-DD' })
      .optional()
      .meta({ description: 'First day to add (a per-day item), in the item’s own time zone' }),
    end_date: z.iso
      .date({ message: 'must be a date YYYY-MM-DD' })
      .optional()
      .meta({ description: 'Last day to add, inclusive (a per-day item)' }),
    trips: z
      .array(LocalTrip)
      .min(1)
      .max(50)
      .optional()
      .meta({ description: 'Trips to add (a per-trip item): local date-times YYYY-MM-DDTHH:mm in the item’s own time zone' }),
  })
  .superRefine((c, ctx) => {
    const days = c.start_date !== undefined || c.end_date !== undefined;
    if (days === (c.trips !== undefined))
      ctx.addIssue({ code: 'custom', path: ['start_date'], message: 'send start_date and end_date (days) or trips (trips)' });
    else if (days && (c.start_date === undefined || c.end_date === undefined))
      ctx.addIssue({ code: 'custom', path: ['end_date'], message: 'send both start_date and end_date' });
  })
  .meta({
    id: 'AddCoveredUnitsEndorsement',
    description:
      'Adds covered days or trips to an item, validated like a quote (not in the past, no overlap with the item’s active units, within the product’s limits) and priced like one: the item’s unit price times its price factors for each unit added, plus the platform fee on that premium. The difference is collected before the units take effect.',
  });

const HolderEndorsementsChange = z
  .strictObject({
    type: z.literal('certificate_holder_endorsements'),
    certificate_holder_id: id,
    additional_insured: z.boolean().optional().meta({ description: 'Name the holder additional insured (true) or no longer (false)' }),
    waiver_of_subrogation: z.boolean().optional().meta({ description: 'Waive subrogation against the holder (true) or no longer (false)' }),
  })
  .superRefine((c, ctx) => {
    if (c.additional_insured === undefined && c.waiver_of_subrogation === undefined)
      ctx.addIssue({ code: 'custom', path: ['additional_insured'], message: 'send additional_insured, waiver_of_subrogation or both' });
  })
  .meta({
    id: 'CertificateHolderEndorsementsChange',
    description:
      'Names a certificate holder additional insured or waives subrogation against it (or stops either), as the products of the purchase allow. Priced by the product’s endorsement terms per covered unit the holder’s certificates cover: turning one on collects its premium on every unit still active for the holder (before it takes effect); turning one off gives back what was collected for it on the units not started. The holder’s certificates are reissued with the marks.',
  });

export const EndorsementChange = z
  .discriminatedUnion('type', [NamedInsuredChange, DescriptionChange, MoveChange, AddUnitsChange, HolderEndorsementsChange])
  .meta({ id: 'EndorsementChange' });
export type EndorsementChange = z.infer<typeof EndorsementChange>;

/** Body of `POST /api/v1/purchases/{id}/endorsement_quote`. */
export const EndorsementQuoteRequest = z
  .strictObject({
    changes: z
      .array(EndorsementChange)
      .min(1)
      .max(20)
      .superRefine((cs, ctx) => {
        if (cs.filter((c) => c.type === 'named_insured').length > 1)
          ctx.addIssue({ code: 'custom', message: 'at most one named_insured change' });
        const units = cs.flatMap((c) => (c.type === 'move_covered_unit' ? [c.covered_unit_id] : []));
        if (new Set(units).size < units.length) ctx.addIssue({ code: 'custom', message: 'a covered unit may move once per endorsement' });
        for (const priced of ['add_covered_units', 'certificate_holder_endorsements'] as const)
          if (cs.some((c) => c.type === priced) && cs.some((c) => c.type !== priced))
            ctx.addIssue({
              code: 'custom',
              message: `${priced} changes go in an endorsement of their own (their premium is collected first or given back)`,
            });
        const marked = cs.flatMap((c) => (c.type === 'certificate_holder_endorsements' ? [c.certificate_holder_id] : []));
        if (new Set(marked).size < marked.length)
          ctx.addIssue({ code: 'custom', message: 'one certificate_holder_endorsements change per certificate holder' });
        const holders = cs.flatMap((c) => (c.type === 'description_of_operations' ? [c.certificate_holder_id] : []));
        if (new Set(holders).size < holders.length) ctx.addIssue({ code: 'custom', message: 'one description per certificate holder' });
      }),
  })
  .meta({
    id: 'EndorsementQuoteRequest',
    example: {
      changes: [
        { type: 'named_insured', name: 'Jordan Lee Events LLC' },
        { type: 'move_covered_unit', covered_unit_id: 813, start_date: '2027-05-08' },
      ],
    },
  });
export type EndorsementQuoteRequest = z.infer<typeof EndorsementQuoteRequest>;

/** How a positive difference is collected: the buyer's saved card, or a checkout link the agency sends. */
export const EndorsementPayment = z
  .discriminatedUnion('method', [
    z.strictObject({
      method: z.literal('saved_card'),
      payment_method_id: z
        .string()
        .regex(/^pm_[A-Za-z0-9_]{1,250}$/, { message: 'must be a payment method id (pm_…)' })
        .meta({ description: 'A card saved on the buyer’s processor customer (the purchase was paid with save_payment_method)' }),
    }),
    z.strictObject({ method: z.literal('checkout_link') }),
  ])
  .meta({
    id: 'EndorsementPayment',
    description:
      'How the positive difference is collected. `saved_card`: charged off-session now; the change takes effect when the charge succeeds (declined: nothing changes). `checkout_link`: a checkout session for the difference; the answer carries its `checkout_url` for the agency to send, and the change takes effect when it is paid.',
  });
export type EndorsementPayment = z.infer<typeof EndorsementPayment>;

/** Body of `POST /api/v1/purchases/{id}/endorse`. */
export const EndorseRequest = z
  .strictObject({
    quote_id: z.string().regex(/^eq_[0-9a-f]{24}$/, { message: 'must be an endorsement quote id (eq_…)' }),
    payment: EndorsementPayment.optional().meta({
      description: 'Required when the quote’s total_difference is positive; refused when it is not',
    }),
  })
  .meta({ id: 'EndorseRequest' });
export type EndorseRequest = z.infer<typeof EndorseRequest>;

const minor = (what: string) =>
  z
    .number()
    .int()
    .meta({ description: `${what}, integer minor units of \`currency\`` });

/** A covered unit's coverage window in a preview: instants with the unit's own UTC offset. */
const ReissueWindow = z.object({
  starts_at: z
    .string()
    .meta({ description: 'ISO 8601 instant with the UTC offset of time_zone at that moment, e.g. 2027-05-09T00:00:00.000-05:00' }),
  ends_at: z.string().meta({ description: 'ISO 8601 instant with its UTC offset (exclusive)' }),
  time_zone: z.string().meta({ description: 'IANA zone of the covered unit' }),
  local_label: z.string().meta({ description: 'The day (YYYY-MM-DD) or trip window, local to time_zone' }),
});

export const Endorsement = z
  .object({
    object: z.enum(['endorsement_quote', 'endorsement']),
    id: z.string().meta({ description: 'The quote’s id (`eq_…`); the endorsement carried out keeps it' }),
    purchase_id: z.number().int(),
    status: z.enum(['quoted', 'awaiting_payment', 'applied', 'payment_failed', 'refunded']).meta({
      description:
        '`quoted` (a preview, until expires_at); `awaiting_payment` (a checkout link for the difference is open until checkout_expires_at); `applied` (carried out: new certificates and new versions are issued after the answer); `payment_failed` (the saved card was declined: nothing changed; quote again to retry); `refunded` (the link was paid after the purchase changed so that the quote no longer held: the payment went back and nothing changed)',
    }),
    changes: z.array(EndorsementChange),
    currency: z.string(),
    premium_difference: minor(
      'Premium to collect (positive) or give back (negative): the units added and the holder endorsements; 0 for the other change kinds',
    ),
    platform_fee_difference: minor('Platform fee difference'),
    tax_difference: minor(
      'Premium tax on the premium added, at the rates the item’s sale was taxed with (a fixed amount per policy is not charged again); 0 when the product is not taxed or nothing is added. A cancellation gives it back with the sale’s tax, in proportion to the premium it returns',
    ),
    total_difference: minor('Total difference: premium, platform fee and premium tax'),
    new_amount_total: minor('The purchase’s total after the change'),
    reissues: z
      .array(
        z.object({
          certificate_number: z.string(),
          covered_unit_id: z.number().int(),
          certificate_holder_id: z.number().int().nullable(),
          current_window: ReissueWindow.meta({ description: 'The coverage window the current version prints' }),
          new_window: ReissueWindow.meta({
            description: 'The coverage window the new version will print (the same as current_window unless the change moves the unit)',
          }),
        }),
      )
      .meta({
        description:
          'The certificates in force the change replaces with a new version (a higher revision on the number), each with its window before and after; the old version’s verification page keeps the window it printed and says it was superseded',
      }),
    reissued: z
      .array(z.object({ from: z.string(), to: z.string() }))
      .nullable()
      .meta({ description: 'Once applied: each old certificate number and its new version’s' }),
    added_covered_units: z
      .array(
        z.object({
          purchase_item_id: z.number().int(),
          local_label: z.string().meta({ description: 'The day (YYYY-MM-DD) or trip window, local to the item’s time zone' }),
          starts_at: z.string(),
          ends_at: z.string(),
          premium: minor('The unit’s premium'),
        }),
      )
      .meta({ description: 'The covered units the change adds (each gets a certificate per certificate holder once applied)' }),
    holder_endorsement_premiums: z
      .array(
        z.object({
          certificate_holder_id: z.number().int(),
          endorsement: z.enum(['additional_insured', 'waiver_of_subrogation']),
          covered_unit_id: z.number().int().nullable().meta({ description: 'The unit (null: a unit this change adds)' }),
          local_label: z.string(),
          premium: minor('Premium collected for it (negative: given back)'),
        }),
      )
      .meta({
        description:
          'Additional-insured and waiver-of-subrogation premiums the change collects or gives back, per certificate holder and covered unit (included in premium_difference)',
      }),
    refund: z
      .object({
        amount: minor('Given back (positive)'),
        status: z.enum(['pending', 'submitted', 'failed']).meta({
          description:
            '`pending` (being created at the processor after the change was applied; retried through outages), `submitted` (every part created), `failed` (refused by the processor: see failure_reason)',
        }),
        refunds: z.array(
          z.object({ refund_id: z.string().nullable(), payment_intent: z.string(), amount: minor('Taken from this payment') }),
        ),
        failure_reason: z.string().nullable(),
      })
      .nullable()
      .meta({
        description:
          'How a negative difference goes back once the endorsement is applied (null: nothing given back, or not applied yet): split over the purchase’s payments, newest first, one refund per payment',
      }),
    payment: z
      .object({
        method: z.enum(['saved_card', 'checkout_link']),
        payment_intent: z.string().nullable().meta({ description: 'The processor’s payment intent that collected the difference' }),
        checkout_url: z.string().nullable().meta({ description: 'The checkout link for the difference (checkout_link)' }),
        checkout_expires_at: z.string().nullable(),
        paid_at: z.string().nullable(),
        failure: z.object({ code: z.string(), message: z.string() }).nullable(),
      })
      .nullable()
      .meta({ description: 'How the difference is collected (null: nothing to collect)' }),
    expires_at: z.string(),
    created_at: z.string(),
    applied_at: z.string().nullable(),
  })
  .meta({ id: 'Endorsement' });
export type Endorsement = z.infer<typeof Endorsement>;
