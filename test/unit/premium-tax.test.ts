/**
 * Premium tax (src/taxes/premium-tax.ts): which rates apply (region over country, the line's own
 * over '*', in force on the day), what they charge (worked examples, half up), a fixed amount in
 * another currency refused, tax never negative (property), and the versioned data file: every rate
 * well formed and its source named.
 */
import fc from 'fast-check';
import data from '../../src/taxes/premium-tax-rates.json';
import {
  applicableRates,
  jurisdictionOf,
  LINES_OF_BUSINESS,
  priceTax,
  TAX_METHODS,
  TaxCurrencyError,
  type TaxRate,
} from '../../src/taxes/premium-tax';

/** The data file's rates as the table holds them. */
const RATES: TaxRate[] = data.rates.map((r) => ({
  country: r.country,
  region: r.region,
  lineOfBusiness: r.line_of_business,
  tax: r.tax,
  method: r.method as TaxRate['method'],
  rateBps: 'rate_bps' in r ? (r.rate_bps as number) : null,
  amountMinor: 'amount_minor' in r ? (r.amount_minor as number) : null,
  currency: 'currency' in r ? (r.currency as string) : null,
  label: r.label,
  effectiveFrom: r.effective_from,
  effectiveTo: r.effective_to,
  source: r.source,
}));
const DAY = '2026-12-08';

test('when a Texas risk is taxed, then the surplus-lines tax and the stamping fee apply, each rounded half up: 90.00 → 4.37 + 0.04', () => {
  const rates = applicableRates(RATES, { country: 'US', region: 'TX' }, 'general_liability', DAY);
  expect(rates.map((r) => [r.tax, r.rateBps])).toEqual([
    ['stamping_fee', 4],
    ['surplus_lines_tax', 485],
  ]);
  const { taxMinor, lines } = priceTax(9000, 'usd', rates);
  expect(lines.map((l) => [l.tax, l.jurisdiction, l.amountMinor])).toEqual([
    ['stamping_fee', 'US-TX', 4],
    ['surplus_lines_tax', 'US-TX', 437],
  ]);
  expect(taxMinor).toBe(441);
});

test('when a rate for the line exists beside one for every line, then the line’s own wins (UK travel 20 %, else 12 %)', () => {
  expect(applicableRates(RATES, { country: 'GB', region: null }, 'travel', DAY).map((r) => r.rateBps)).toEqual([2000]);
  expect(applicableRates(RATES, { country: 'GB', region: 'ENG' }, 'general_liability', DAY).map((r) => r.rateBps)).toEqual([1200]);
});

test('when a region has no rate of its own, or the day is outside a rate’s dates, then nothing applies', () => {
  expect(applicableRates(RATES, { country: 'US', region: 'WA' }, 'general_liability', DAY)).toEqual([]);
  expect(applicableRates(RATES, { country: 'US', region: 'TX' }, 'general_liability', '2024-12-31')).toEqual([]);
  const ended: TaxRate = { ...RATES[0]!, effectiveTo: '2026-01-01' };
  const next: TaxRate = { ...RATES[0]!, rateBps: 500, effectiveFrom: '2026-01-01' };
  expect(applicableRates([ended, next], { country: 'US', region: 'TX' }, 'property', '2025-12-31').map((r) => r.rateBps)).toEqual([485]);
  expect(applicableRates([ended, next], { country: 'US', region: 'TX' }, 'property', '2026-01-01').map((r) => r.rateBps)).toEqual([500]);
});

test('when a French property policy is taxed, then the fixed contribution is per policy whatever the premium, and refused in another currency', () => {
  const rates = applicableRates(RATES, { country: 'FR', region: null }, 'property', DAY);
  expect(priceTax(10_000, 'eur', rates).lines.map((l) => [l.tax, l.method, l.amountMinor])).toEqual([
    ['fgti_contribution', 'fixed_per_policy', 590],
    ['insurance_premium_tax', 'premium_rate', 900],
  ]);
  expect(priceTax(0, 'eur', rates).taxMinor).toBe(590);
  expect(() => priceTax(10_000, 'usd', rates)).toThrow(TaxCurrencyError);
});

test('when the risk is placed, then the named insured’s or the venue’s address gives its jurisdiction; without a country, none', () => {
  const answers = {
    namedInsured: { name: 'A', address: { country: 'US', region: 'ma' } },
    certificateHolder: { name: 'Hall', address: { country: 'US', region: 'TX' } },
  };
  expect(jurisdictionOf('named_insured', answers)).toEqual({ country: 'US', region: 'MA' });
  expect(jurisdictionOf('venue', answers)).toEqual({ country: 'US', region: 'TX' });
  expect(jurisdictionOf('named_insured', { namedInsured: { name: 'A' }, certificateHolder: null })).toBeNull();
  expect(jurisdictionOf('venue', { namedInsured: null, certificateHolder: null })).toBeNull();
});

test('when any premium is taxed under any rates of the file, then no line and no total is negative, and the total is the sum of the lines', () => {
  const countries = [...new Set(RATES.map((r) => r.country))];
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 99_999_999 }),
      fc.constantFrom(...countries),
      fc.constantFrom('', 'TX', 'CA', 'NY', 'FL', 'IL', 'MA'),
      fc.constantFrom(...LINES_OF_BUSINESS),
      (premium, country, region, line) => {
        const rates = applicableRates(RATES, { country, region: region || null }, line, DAY).filter(
          (r) => r.method !== 'fixed_per_policy' || r.currency === 'usd',
        );
        const { taxMinor, lines } = priceTax(premium, 'usd', rates);
        for (const l of lines) expect(l.amountMinor).toBeGreaterThanOrEqual(0);
        expect(taxMinor).toBe(lines.reduce((s, l) => s + l.amountMinor, 0));
        expect(taxMinor).toBeGreaterThanOrEqual(0);
      },
    ),
    { seed: 4912 },
  );
});

test('when the data file is read, then every rate is well formed, unique and names its source', () => {
  expect(data.version).toMatch(/^\d{4}-\d{2}-\d{2}\.\d+$/);
  const keys = new Set<string>();
  for (const r of RATES) {
    expect(r.country).toMatch(/^[A-Z]{2}$/);
    expect(r.region).toMatch(/^([A-Z0-9]{1,3})?$/);
    expect(['*', ...LINES_OF_BUSINESS]).toContain(r.lineOfBusiness);
    expect(TAX_METHODS).toContain(r.method);
    if (r.method === 'fixed_per_policy') expect(r.amountMinor! >= 0 && /^[a-z]{3}$/.test(r.currency ?? '')).toBe(true);
    else expect(r.rateBps! >= 0 && r.rateBps! <= 10_000 && r.amountMinor === null).toBe(true);
    expect(r.effectiveFrom).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(r.source.name.length).toBeGreaterThan(3);
    expect(r.source.url).toMatch(/^https:\/\//);
    const key = [r.country, r.region, r.lineOfBusiness, r.tax, r.effectiveFrom].join('|');
    expect(keys.has(key)).toBe(false);
    keys.add(key);
  }
});
