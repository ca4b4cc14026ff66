/**
 * Every question kind's valid and invalid answers (validateAnswers), with a fixed clock.
 */
import { validateAnswers } from '../../src/quotes/answers';
import { QuestionSetDefinition } from '../../src/question-sets/definition';

const now = new Date('2027-01-10T12:00:00Z');
const limits = { now, maxUnits: 366 };

const def = QuestionSetDefinition.parse({
  version: 1,
  questions: [
    {
      id: 'tier',
      kind: 'dropdown',
      label: 'Tier',
      options: [
        { value: 'basic', label: 'Basic' },
        { value: 'plus', label: 'Plus', price_factor: 1.5 },
      ],
    },
    { id: 'guests', kind: 'number', label: 'Guests', min: 10, max: 100, step: 5 },
    { id: 'notes', kind: 'text', label: 'Notes', max_length: 10 },
    { id: 'signed_on', kind: 'date', label: 'Signed on', min: '2026-01-01', max: '2027-12-31' },
    { id: 'setup', kind: 'date_range', label: 'Setup', max_days: 3 },
    { id: 'nickname', kind: 'text', label: 'Optional', required: false },
    { id: 'named_insured', kind: 'named_insured', label: 'Named insured' },
    { id: 'certificate_holder', kind: 'certificate_holder', label: 'Holder' },
    { id: 'coverage', kind: 'coverage_dates', label: 'Dates' },
  ],
});

const valid = {
  product_line_template_id: 5,
  product_line_is_trip_excess_product: false,
  tier: 'plus',
  guests: 35,
  notes: 'ok',
  signed_on: '2027-01-05',
  setup: { start_date: '2027-02-01', end_date: '2027-02-03' },
  named_insured: { name: 'Ada', address: { line1: '1 A St', city: 'Austin', region: 'TX', postal_code: '73301', country: 'US' } },
  certificate_holder: { name: 'Venue Co', address: { line1: '2 B St', city: 'Austin', region: 'TX', postal_code: '73301', country: 'US' } },
  coverage: { time_zone: 'America/Chicago', start_date: '2027-02-01', end_date: '2027-02-02' },
};

describe('validateAnswers', () => {
  test('when every answer is valid, then the factor, units and parties come back', () => {
    const r = validateAnswers(5, def, valid, limits);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.value.priceFactor).toBe(1.5);
    expect(r.value.units.map((u) => u.localLabel)).toEqual(['2027-02-01', '2027-02-02']);
    expect(r.value.certificateHolder?.name).toBe('Venue Co');
    expect(r.value.namedInsured?.name).toBe('Ada');
    expect(r.value.answers).not.toHaveProperty('product_line_template_id');
    expect(r.value.isTripExcess).toBe(false);
  });

  test('when an optional question is omitted or null, then it is accepted', () => {
    expect(validateAnswers(5, def, { ...valid, nickname: null }, limits).ok).toBe(true);
    expect(validateAnswers(5, def, valid, limits).ok).toBe(true);
  });

  test.each([
    ['tier', 'gold', 'must be one of: basic, plus'],
    ['tier', 1, ''],
    ['guests', 105, '<=100'],
    ['guests', 12, 'multiple of 5'],
    ['guests', '35', ''],
    ['notes', '', 'must not be empty'],
    ['notes', 'x'.repeat(11), ''],
    ['signed_on', '2025-12-31', 'on or after 2026-01-01'],
    ['signed_on', '2027-02-30', 'YYYY-MM-DD'],
    ['setup', { start_date: '2027-02-03', end_date: '2027-02-01' }, 'before start_date'],
    ['setup', { start_date: '2027-02-01', end_date: '2027-02-05' }, 'at most 3 days'],
    ['named_insured', { name: '' }, ''],
    ['named_insured', 'Ada', ''],
    ['certificate_holder', { name: 'Venue Co' }, 'address'],
    ['certificate_holder', { ...valid.certificate_holder, address: { ...valid.certificate_holder.address, country: 'USA' } }, 'ISO 3166'],
    ['coverage', { time_zone: 'Nowhere/City', start_date: '2027-02-01', end_date: '2027-02-02' }, 'IANA'],
    ['coverage', { time_zone: 'UTC', start_date: '2027-01-01', end_date: '2027-01-02' }, 'past'],
    ['coverage', { time_zone: 'UTC', start_date: '2027-02-01', end_date: '2028-03-01' }, 'at most 366'],
    ['product_line_is_trip_excess_product', true, 'not a trip-excess product'],
  ])('when %s is %p, then it is reported for that question', (question, value, reason) => {
    const r = validateAnswers(5, def, { ...valid, [question]: value }, limits);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([{ product_line_template_id: 5, question, reason: expect.stringContaining(reason) }]);
  });

  test('when a required answer is missing and an unknown key is sent, then both are reported', () => {
    const { tier: _t, ...rest } = valid;
    const r = validateAnswers(5, def, { ...rest, shoe_size: 44 }, limits);
    expect(!r.ok && r.problems.map((p) => p.question).sort()).toEqual(['shoe_size', 'tier']);
  });

  test.each([[null], [[]], ['answers'], [42]])('when the selected item is %p, then it is a problem, not a crash', (raw) => {
    const r = validateAnswers(5, def, raw, limits);
    expect(r.ok).toBe(false);
  });
});
