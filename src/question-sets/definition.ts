/**
 * The question template a buyer answers (spec §4.4 step 1: dropdown options, numeric ranges,
 * named-insured and certificate-holder questions; the rest the spec leaves open).
 *
 * A definition is `{ version: 1, questions: Question[], agreements: Agreement[], certificate? }`
 * (`certificate.limits`: the limits of insurance its certificates print). Question ids
 * are the keys of the buyer's answers in `adminValidateBuyerResponses`. Exactly one question
 * says what is covered: `coverage_dates` (per-day products: one covered unit per calendar day)
 * or `trips` (trip-excess products: one covered unit per trip). Dropdown options may carry a
 * `price_factor` (a multiplier of the product's default price, default 1).
 */
import { z } from 'zod';

const questionId = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, { message: 'must be lower_snake_case, at most 64 characters' });
const isoDate = z.iso.date();

const base = {
  id: questionId,
  label: z.string().min(1).max(200),
  help: z.string().max(500).optional(),
  required: z.boolean().default(true),
};

export const DropdownQuestion = z
  .strictObject({
    ...base,
    kind: z.literal('dropdown'),
    options: z
      .array(
        z.strictObject({
          value: z.string().min(1).max(100),
          label: z.string().min(1).max(200),
          price_factor: z.number().positive().max(100).default(1),
        }),
      )
      .min(1)
      .max(200)
      .refine((opts) => new Set(opts.map((o) => o.value)).size === opts.length, { message: 'option values must be unique' }),
  })
  .meta({ id: 'DropdownQuestion' });

export const NumberQuestion = z
  .strictObject({
    ...base,
    kind: z.literal('number'),
    min: z.number(),
    max: z.number(),
    step: z.number().positive().default(1),
    unit: z.string().max(32).optional(),
  })
  .refine((q) => q.min <= q.max, { message: 'min must not exceed max' })
  .meta({ id: 'NumberQuestion' });

export const TextQuestion = z
  .strictObject({
    ...base,
    kind: z.literal('text'),
    max_length: z.number().int().min(1).max(2000).default(255),
  })
  .meta({ id: 'TextQuestion' });

export const DateQuestion = z
  .strictObject({ ...base, kind: z.literal('date'), min: isoDate.optional(), max: isoDate.optional() })
  .meta({ id: 'DateQuestion' });

export const DateRangeQuestion = z
  .strictObject({
    ...base,
    kind: z.literal('date_range'),
    max_days: z.number().int().min(1).max(3660).optional(),
  })
  .meta({ id: 'DateRangeQuestion' });

export const NamedInsuredQuestion = z.strictObject({ ...base, kind: z.literal('named_insured') }).meta({ id: 'NamedInsuredQuestion' });
export const CertificateHolderQuestion = z
  .strictObject({ ...base, kind: z.literal('certificate_holder') })
  .meta({ id: 'CertificateHolderQuestion' });

/** Per-day coverage: answered with a time zone and an inclusive range of calendar dates. */
export const CoverageDatesQuestion = z
  .strictObject({ ...base, required: z.literal(true).default(true), kind: z.literal('coverage_dates') })
  .meta({ id: 'CoverageDatesQuestion' });

/** Trip coverage: answered with a time zone and trips with local start and end date-times. */
export const TripsQuestion = z
  .strictObject({
    ...base,
    required: z.literal(true).default(true),
    kind: z.literal('trips'),
    max_trip_days: z.number().int().min(1).max(366).default(90),
  })
  .meta({ id: 'TripsQuestion' });

export const Question = z
  .discriminatedUnion('kind', [
    DropdownQuestion,
    NumberQuestion,
    TextQuestion,
    DateQuestion,
    DateRangeQuestion,
    NamedInsuredQuestion,
    CertificateHolderQuestion,
    CoverageDatesQuestion,
    TripsQuestion,
  ])
  .meta({
    id: 'Question',
    description:
      'One question of a template, by `kind`. Its `id` is the key of its answer in adminValidateBuyerResponses. Answers: `dropdown` one option value; `number` a number in [min, max] on the step; `text` a string; `date` YYYY-MM-DD; `date_range` `{ start_date, end_date }`; `named_insured` `{ name, address? }`; `certificate_holder` `{ name, address }`; `coverage_dates` `{ time_zone, start_date, end_date }` (one certificate per day); `trips` `{ time_zone, trips: [{ start, end }] }` (one certificate per trip).',
  });
export type Question = z.infer<typeof Question>;

export const Agreement = z
  .strictObject({
    id: questionId,
    title: z.string().min(1).max(200),
    text: z.string().min(1).max(20_000),
  })
  .meta({ id: 'Agreement', description: 'Terms the buyer accepts with the product' });
export type Agreement = z.infer<typeof Agreement>;

/** Keys of a selected product line that are not answers. */
export const RESERVED_ANSWER_KEYS = ['product_line_template_id', 'product_line_is_trip_excess_product'] as const;

/**
 * What the certificate prints beyond the product line's own fields: the limits of insurance in
 * the order to print them, each an integer amount in minor units of the product's currency.
 */
export const CertificateSection = z.strictObject({
  limits: z
    .array(z.strictObject({ label: z.string().min(1).max(100), amount_minor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) }))
    .max(12)
    .default([]),
});
export type CertificateSection = z.infer<typeof CertificateSection>;

export const QuestionSetDefinition = z
  .strictObject({
    version: z.literal(1),
    questions: z.array(Question).min(1).max(100),
    agreements: z.array(Agreement).max(20).default([]),
    certificate: CertificateSection.default({ limits: [] }),
  })
  .superRefine((d, ctx) => {
    const ids = d.questions.map((q) => q.id);
    const dup = ids.find((id, i) => ids.indexOf(id) !== i);
    if (dup) ctx.addIssue({ code: 'custom', path: ['questions'], message: `duplicate question id "${dup}"` });
    for (const reserved of RESERVED_ANSWER_KEYS) {
      if (ids.includes(reserved)) ctx.addIssue({ code: 'custom', path: ['questions'], message: `"${reserved}" is reserved` });
    }
    const coverage = d.questions.filter((q) => q.kind === 'coverage_dates' || q.kind === 'trips');
    if (coverage.length !== 1) {
      ctx.addIssue({ code: 'custom', path: ['questions'], message: 'exactly one coverage_dates or trips question is required' });
    }
  })
  .meta({
    id: 'QuestionSetDefinition',
    description:
      'A question template: typed questions (unique lower_snake_case ids, exactly one `coverage_dates` or `trips` question), the agreements the buyer accepts, and the limits of insurance its certificates print.',
  });
export type QuestionSetDefinition = z.infer<typeof QuestionSetDefinition>;

/** True when the template covers trips (a trip-excess product), false for per-day cover. */
export function isTripExcess(def: QuestionSetDefinition): boolean {
  return def.questions.some((q) => q.kind === 'trips');
}
