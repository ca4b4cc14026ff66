/**
 * Ready-made question templates: the seed script installs them for the demo agency and the
 * tests use them. Each is a valid `QuestionSetDefinition`.
 */
import type { z } from 'zod';
import type { QuestionSetDefinition } from './definition';

type DefinitionInput = z.input<typeof QuestionSetDefinition>;

const namedInsured = { id: 'named_insured', kind: 'named_insured', label: 'Named insured (person or organisation covered)' } as const;
const certificateHolder = {
  id: 'certificate_holder',
  kind: 'certificate_holder',
  label: 'Certificate holder (venue or party requiring proof of coverage)',
} as const;

/** A dropdown question: its id, its label, and its options with their price factors. */
const dropdown = (id: string, label: string, options: { value: string; label: string; price_factor: number }[]) =>
  ({ id, kind: 'dropdown', label, options }) as const;

const terms = { id: 'terms', title: 'Policy terms', text: 'Coverage is subject to the master policy terms, conditions and exclusions.' };

/** A template of version 1: its questions, the policy terms to agree to, and the certificate's limits. */
function template(questions: DefinitionInput['questions'], limits: { label: string; amount_minor: number }[]): DefinitionInput {
  return { version: 1, questions, agreements: [terms], certificate: { limits } };
}

/** Special-event general liability, priced per covered day. */
export const SPECIAL_EVENT_LIABILITY = template(
  [
    dropdown('event_type', 'Type of event', [
      { value: 'wedding', label: 'Wedding or reception', price_factor: 1 },
      { value: 'birthday', label: 'Birthday or anniversary party', price_factor: 0.9 },
      { value: 'concert', label: 'Concert or performance', price_factor: 1.5 },
      { value: 'trade_show', label: 'Trade show or exhibition', price_factor: 1.25 },
    ]),
    { id: 'attendance', kind: 'number', label: 'Expected attendance', min: 1, max: 5000, step: 1, unit: 'people' },
    dropdown('liquor', 'Will alcohol be served?', [
      { value: 'no', label: 'No', price_factor: 1 },
      { value: 'yes', label: 'Yes (host liquor liability)', price_factor: 1.2 },
    ]),
    { id: 'venue_name', kind: 'text', label: 'Venue name', max_length: 200 },
    namedInsured,
    certificateHolder,
    { id: 'coverage', kind: 'coverage_dates', label: 'Event dates (one certificate per day)' },
  ],
  [
    { label: 'Each occurrence', amount_minor: 100_000_000 },
    { label: 'General aggregate', amount_minor: 200_000_000 },
    { label: 'Damage to rented premises', amount_minor: 10_000_000 },
  ],
);

/** Equipment damage waiver for rented equipment, priced per covered day. */
export const EQUIPMENT_DAMAGE_WAIVER = template(
  [
    dropdown('equipment_value', 'Replacement value of the equipment', [
      { value: 'up_to_5000', label: 'Up to $5,000', price_factor: 1 },
      { value: 'up_to_25000', label: '$5,001 – $25,000', price_factor: 2 },
      { value: 'up_to_100000', label: '$25,001 – $100,000', price_factor: 4 },
    ]),
    { id: 'equipment_description', kind: 'text', label: 'Describe the equipment', max_length: 500 },
    { id: 'rental_agreement_date', kind: 'date', label: 'Date of the rental agreement', required: false },
    namedInsured,
    certificateHolder,
    { id: 'coverage', kind: 'coverage_dates', label: 'Rental dates (one certificate per day)' },
  ],
  [{ label: 'Equipment damage, each loss', amount_minor: 2_500_000 }],
);

/** Trip excess cover, priced per covered trip. */
export const TRIP_EXCESS = template(
  [
    dropdown('vehicle_class', 'Vehicle class', [
      { value: 'car', label: 'Car or van', price_factor: 1 },
      { value: 'motorhome', label: 'Motorhome', price_factor: 1.75 },
    ]),
    { id: 'drivers', kind: 'number', label: 'Number of drivers', min: 1, max: 6, step: 1 },
    namedInsured,
    { id: 'trips', kind: 'trips', label: 'Trips (one certificate per trip)', max_trip_days: 60 },
  ],
  [
    { label: 'Excess per trip', amount_minor: 250_000 },
    { label: 'Medical expenses', amount_minor: 5_000_000 },
  ],
);
