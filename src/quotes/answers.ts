/**
 * Validates a buyer's answers for one selected product line against its template (spec §4.4
 * step 2) with a zod schema built from the template, and expands the coverage answer into
 * covered units.
 *
 * Input: the selected object `{ product_line_template_id, product_line_is_trip_excess_product,
 * <question id>: <answer>, … }`. Output: either the validated answers with the combined
 * dropdown price factor and the covered units, or every problem at once as
 * `{ product_line_template_id, question, reason }`. Never throws on any JSON input: unknown
 * keys, wrong types and out-of-template values are all reported as problems.
 */
import { z } from 'zod';
import { Address } from '../shared/address';
import { isTripExcess, type Question, type QuestionSetDefinition } from '../question-sets/definition';
import { expandDays, expandTrips, type CoveredUnit, type ExpansionLimits } from './coverage';

export interface AnswerProblem {
  product_line_template_id: number;
  question: string;
  reason: string;
}

export interface ValidatedAnswers {
  answers: Record<string, unknown>;
  /** Product of the chosen dropdown options' price factors, rounded to 6 decimals (1 when none apply). */
  priceFactor: number;
  units: CoveredUnit[];
  isTripExcess: boolean;
  namedInsured: { name: string; address?: Address } | null;
  certificateHolder: { name: string; address: Address } | null;
}

/** A postal address in an answer (named insured, certificate holder): the API's one address shape. */
export { Address };

const isoDate = z.iso.date({ message: 'must be a date YYYY-MM-DD' });

function answerSchema(q: Question, limits: ExpansionLimits): z.ZodType {
  switch (q.kind) {
    case 'dropdown': {
      const values = q.options.map((o) => o.value);
      return z.string().refine((v) => values.includes(v), { message: `must be one of: ${values.join(', ')}` });
    }
    case 'number':
      return z
        .number()
        .finite()
        .min(q.min)
        .max(q.max)
        .refine((v) => Math.abs((v - q.min) / q.step - Math.round((v - q.min) / q.step)) < 1e-9, {
          message: `must be a multiple of ${q.step} from ${q.min}`,
        });
    case 'text':
      return z.string().trim().min(1, { message: 'must not be empty' }).max(q.max_length);
    case 'date':
      return isoDate
        .refine((v) => !q.min || v >= q.min, { message: `must be on or after ${q.min}` })
        .refine((v) => !q.max || v <= q.max, { message: `must be on or before ${q.max}` });
    case 'date_range':
      return z
        .strictObject({ start_date: isoDate, end_date: isoDate })
        .refine((r) => r.start_date <= r.end_date, { message: 'end_date is before start_date' })
        .refine((r) => !q.max_days || (Date.parse(r.end_date) - Date.parse(r.start_date)) / 86_400_000 + 1 <= q.max_days, {
          message: `at most ${q.max_days} days`,
        });
    case 'named_insured':
      return z.strictObject({ name: z.string().trim().min(1).max(200), address: Address.optional() });
    case 'certificate_holder':
      return z.strictObject({ name: z.string().trim().min(1).max(200), address: Address });
    case 'coverage_dates':
      return z.strictObject({ time_zone: z.string(), start_date: z.string(), end_date: z.string() }).superRefine((a, ctx) => {
        const r = expandDays(a, limits);
        if (!r.ok) ctx.addIssue({ code: 'custom', message: r.reason });
      });
    case 'trips':
      return z
        .strictObject({
          time_zone: z.string(),
          trips: z.array(z.strictObject({ start: z.string(), end: z.string() })).max(limits.maxUnits),
        })
        .superRefine((a, ctx) => {
          const r = expandTrips(a, { ...limits, maxTripDays: q.max_trip_days });
          if (!r.ok) ctx.addIssue({ code: 'custom', message: r.reason });
        });
  }
}

/** The strict zod schema of one selected product line's object for `def`. */
export function buildAnswerSchema(def: QuestionSetDefinition, limits: ExpansionLimits) {
  const tripExcess = isTripExcess(def);
  const shape: Record<string, z.ZodType> = {
    product_line_template_id: z.number().int(),
    product_line_is_trip_excess_product: z.boolean().refine((v) => v === tripExcess, {
      message: tripExcess ? 'this product line is a trip-excess product' : 'this product line is not a trip-excess product',
    }),
  };
  for (const q of def.questions) {
    const s = answerSchema(q, limits);
    shape[q.id] = q.required ? s : s.nullish();
  }
  return z.strictObject(shape);
}

/** Validates `raw` for the product line `productLineId` whose template is `def`. */
export function validateAnswers(
  productLineId: number,
  def: QuestionSetDefinition,
  raw: unknown,
  limits: ExpansionLimits,
): { ok: true; value: ValidatedAnswers } | { ok: false; problems: AnswerProblem[] } {
  const result = buildAnswerSchema(def, limits).safeParse(raw);
  if (!result.success) {
    const problems: AnswerProblem[] = [];
    for (const issue of result.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys)
          problems.push({ product_line_template_id: productLineId, question: key, reason: 'not a question of this template' });
        continue;
      }
      const path = issue.path.map(String);
      const question = path[0] ?? '(answers)';
      const where = path.length > 1 ? `${path.slice(1).join('.')}: ` : '';
      problems.push({ product_line_template_id: productLineId, question, reason: `${where}${issue.message}` });
    }
    return { ok: false, problems };
  }
  const answers = result.data as Record<string, unknown>;
  let priceFactor = 1;
  let units: CoveredUnit[] = [];
  let namedInsured: ValidatedAnswers['namedInsured'] = null;
  let certificateHolder: ValidatedAnswers['certificateHolder'] = null;
  for (const q of def.questions) {
    const a = answers[q.id];
    if (a === undefined || a === null) continue;
    if (q.kind === 'dropdown') priceFactor *= q.options.find((o) => o.value === a)!.price_factor;
    if (q.kind === 'coverage_dates') {
      const r = expandDays(a as Parameters<typeof expandDays>[0], limits);
      if (r.ok) units = r.units;
    }
    if (q.kind === 'trips') {
      const r = expandTrips(a as Parameters<typeof expandTrips>[0], { ...limits, maxTripDays: q.max_trip_days });
      if (r.ok) units = r.units;
    }
    if (q.kind === 'named_insured') namedInsured = a as ValidatedAnswers['namedInsured'];
    if (q.kind === 'certificate_holder') certificateHolder = a as ValidatedAnswers['certificateHolder'];
  }
  const { product_line_template_id: _id, product_line_is_trip_excess_product: _trip, ...rest } = answers;
  // Six decimals, as stored (purchase_items.price_factor): 1.5 × 1.2 is 1.8, not 1.7999999999999998.
  priceFactor = Math.round(priceFactor * 1e6) / 1e6;
  return { ok: true, value: { answers: rest, priceFactor, units, isTripExcess: isTripExcess(def), namedInsured, certificateHolder } };
}
