/**
 * Property: for any JSON the buyer sends, the validator never throws, and whatever it accepts
 * lies inside the template (checked by an independent oracle written from the template).
 */
import fc from 'fast-check';
import { validateAnswers } from '../../src/quotes/answers';
import { QuestionSetDefinition } from '../../src/question-sets/definition';
import { SPECIAL_EVENT_LIABILITY, TRIP_EXCESS } from '../../src/question-sets/examples';

const now = new Date('2027-01-10T12:00:00Z');
const limits = { now, maxUnits: 30 };
const templates = [QuestionSetDefinition.parse(SPECIAL_EVENT_LIABILITY), QuestionSetDefinition.parse(TRIP_EXCESS)];

/** Near-valid values for each question kind, mixed with arbitrary JSON. */
function answerArb(q: QuestionSetDefinition['questions'][number]): fc.Arbitrary<unknown> {
  const date = fc
    .date({ min: new Date('2026-12-01T00:00:00Z'), max: new Date('2027-03-01T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10));
  const local = fc
    .date({ min: new Date('2026-12-01T00:00:00Z'), max: new Date('2027-03-01T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 16));
  const zone = fc.constantFrom('UTC', 'America/New_York', 'Europe/Paris', 'Mars/Base', '');
  const address = fc.record({
    line1: fc.string(),
    city: fc.string(),
    region: fc.string(),
    postal_code: fc.string(),
    country: fc.constantFrom('US', 'GB', 'usa', ''),
  });
  const specific: Record<string, fc.Arbitrary<unknown>> = {
    dropdown: q.kind === 'dropdown' ? fc.oneof(fc.constantFrom(...q.options.map((o) => o.value)), fc.string()) : fc.constant(null),
    number: fc.oneof(fc.integer({ min: -10, max: 6000 }), fc.double({ noNaN: false })),
    text: fc.string({ maxLength: 600 }),
    date,
    date_range: fc.record({ start_date: date, end_date: date }),
    named_insured: fc.record({ name: fc.string() }, { requiredKeys: [] }),
    certificate_holder: fc.record({ name: fc.string(), address }, { requiredKeys: [] }),
    coverage_dates: fc.record({ time_zone: zone, start_date: date, end_date: date }),
    trips: fc.record({ time_zone: zone, trips: fc.array(fc.record({ start: local, end: local }), { maxLength: 4 }) }),
  };
  return fc.oneof({ weight: 4, arbitrary: specific[q.kind]! }, { weight: 1, arbitrary: fc.jsonValue() });
}

/** Independent check that an accepted answer set is within the template. */
function withinTemplate(def: QuestionSetDefinition, raw: Record<string, unknown>): boolean {
  const ids = new Set(def.questions.map((q) => q.id));
  for (const key of Object.keys(raw))
    if (!ids.has(key) && key !== 'product_line_template_id' && key !== 'product_line_is_trip_excess_product') return false;
  for (const q of def.questions) {
    const a = raw[q.id];
    if (a === undefined || a === null) {
      if (q.required) return false;
      continue;
    }
    if (q.kind === 'dropdown' && !q.options.some((o) => o.value === a)) return false;
    if (q.kind === 'number' && (typeof a !== 'number' || a < q.min || a > q.max || !Number.isFinite(a))) return false;
    if (q.kind === 'text' && (typeof a !== 'string' || a.trim() === '' || a.trim().length > q.max_length)) return false;
    if (q.kind === 'certificate_holder' && (typeof a !== 'object' || !(a as { address?: unknown }).address)) return false;
  }
  return true;
}

describe('validateAnswers (property)', () => {
  test.each(templates.map((t, i) => [i, t] as const))(
    'when template %i gets arbitrary answers, then it never throws and never accepts outside the template',
    (_i, def) => {
      const arb = fc.record(
        {
          ...Object.fromEntries(def.questions.map((q) => [q.id, answerArb(q)])),
          product_line_template_id: fc.constant(1),
          product_line_is_trip_excess_product: fc.boolean(),
          extra_key: fc.jsonValue(),
        },
        { requiredKeys: [] },
      );
      fc.assert(
        fc.property(arb, (raw) => {
          const r = validateAnswers(1, def, raw, limits);
          if (r.ok) {
            expect(withinTemplate(def, raw as Record<string, unknown>)).toBe(true);
            expect(r.value.units.length).toBeGreaterThan(0);
            expect(r.value.units.length).toBeLessThanOrEqual(limits.maxUnits);
            for (const u of r.value.units) expect(u.endsAt.getTime()).toBeGreaterThan(u.startsAt.getTime());
          } else {
            expect(r.problems.length).toBeGreaterThan(0);
            for (const p of r.problems) expect(typeof p.reason).toBe('string');
          }
        }),
        { numRuns: 2000 },
      );
    },
  );

  test('when fed arbitrary JSON as the whole item, then it never throws', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (raw) => {
        expect(validateAnswers(1, templates[0]!, raw, limits).ok).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  test('when answers are generated valid, then the validator accepts at least some (the generator is not vacuous)', () => {
    const def = templates[0]!;
    let accepted = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(
          ...(def.questions.find((q) => q.id === 'event_type') as { options: { value: string }[] }).options.map((o) => o.value),
        ),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 0, max: 20 }),
        (eventType, attendance, offset) => {
          const start = new Date(Date.UTC(2027, 0, 15 + offset)).toISOString().slice(0, 10);
          const r = validateAnswers(
            1,
            def,
            {
              product_line_template_id: 1,
              product_line_is_trip_excess_product: false,
              event_type: eventType,
              attendance,
              liquor: 'no',
              venue_name: 'Hall',
              named_insured: { name: 'A' },
              certificate_holder: { name: 'B', address: { line1: '1', city: 'C', region: 'R', postal_code: '1', country: 'US' } },
              coverage: { time_zone: 'UTC', start_date: start, end_date: start },
            },
            limits,
          );
          if (r.ok) accepted++;
          return r.ok;
        },
      ),
      { numRuns: 200 },
    );
    expect(accepted).toBe(200);
  });
});
