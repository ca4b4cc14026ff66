/**
 * Premium tax (issue 49, item 3): which published rates apply to a risk and what they charge.
 * Pure: no I/O, no clock (the day is an input), integers only (minor units, basis points).
 *
 * A rate (./premium-tax-rates.json, loaded into `premium_tax_rates`) belongs to a jurisdiction
 * (an ISO 3166-1 country, and an ISO 3166-2 region code where the tax is a region's, else '') and
 * a line of business ('*': every line), is in force from `effectiveFrom` (a day, inclusive) until
 * `effectiveTo` (exclusive; null: open), and is one of three methods:
 * - `premium_rate`: `rateBps` of the premium (surplus-lines tax, insurance premium tax);
 * - `stamping_fee`: `rateBps` of the premium, charged by a stamping office on its own line;
 * - `fixed_per_policy`: `amountMinor` of `currency` per policy (a purchase item), whatever its premium.
 * The jurisdiction is the risk's location: the named insured's address or the venue's (the
 * certificate holder's), a product setting. For each tax (`tax`, e.g. `surplus_lines_tax`) the
 * most specific rate in force applies: the region's over the country's, the line's own over '*'.
 * Each line is rounded half up once to a whole minor unit; a premium of 0 pays no rate-based tax.
 * Worked example: 90.00 in Texas (surplus-lines tax 4.85 %, stamping fee 0.04 %): 4.365 → 4.37
 * and 0.036 → 0.04, tax 4.41.
 */

/**
 * The metadata a premium tax line of a processor checkout carries on its product
 * (`price_data.product_data.metadata.line`): the monthly reconciliation adds up the session's
 * lines that carry it as the tax the processor collected.
 */
export const PROCESSOR_TAX_LINE = 'premium_tax';

export const TAX_METHODS = ['premium_rate', 'stamping_fee', 'fixed_per_policy'] as const;
export type TaxMethod = (typeof TAX_METHODS)[number];

/** Lines of business a product can name for its tax (a rate of '*' applies to every one). */
export const LINES_OF_BUSINESS = ['general_liability', 'property', 'travel', 'motor', 'accident_health'] as const;
export type LineOfBusiness = (typeof LINES_OF_BUSINESS)[number];

/** Where a product's risk is: the named insured's address or the venue's (the certificate holder's). */
export const RISK_LOCATIONS = ['named_insured', 'venue'] as const;
export type RiskLocation = (typeof RISK_LOCATIONS)[number];

/** One published rate, as the data file and the table hold it. */
export interface TaxRate {
  country: string;
  /** ISO 3166-2 subdivision code without the country (`TX`), or '' for the whole country. */
  region: string;
  /** A line of business, or '*' for every line. */
  lineOfBusiness: string;
  /** Which tax it is (one line per tax on a purchase item). */
  tax: string;
  method: TaxMethod;
  /** `premium_rate` and `stamping_fee`: basis points of premium. */
  rateBps: number | null;
  /** `fixed_per_policy`: minor units of `currency` per policy. */
  amountMinor: number | null;
  currency: string | null;
  label: string;
  /** YYYY-MM-DD, inclusive. */
  effectiveFrom: string;
  /** YYYY-MM-DD, exclusive; null: open. */
  effectiveTo: string | null;
  source: { name: string; url: string };
}

/** A risk's jurisdiction: country (upper case) and region (upper case, or null). */
export interface Jurisdiction {
  country: string;
  region: string | null;
}

/** One tax charged on a purchase item (minor units), with the rate it came from. */
export interface TaxLine {
  tax: string;
  method: TaxMethod;
  label: string;
  /** `US-TX`, `DE`: where the rate belongs. */
  jurisdiction: string;
  rateBps: number | null;
  amountMinor: number;
  source: string;
}

/** A fixed tax in another currency than the premium's cannot be charged (no conversion here). */
export class TaxCurrencyError extends Error {
  constructor(
    readonly rate: TaxRate,
    readonly currency: string,
  ) {
    super(`${rate.label} is a fixed ${rate.currency?.toUpperCase()} amount; the premium is in ${currency.toUpperCase()}`);
    this.name = 'TaxCurrencyError';
  }
}

/**
 * The jurisdiction of a risk at `location` from an item's answers: the named insured's address
 * or the certificate holder's (the venue's); null when that address (or its country) is missing.
 */
export function jurisdictionOf(
  location: RiskLocation,
  answers: { namedInsured: unknown; certificateHolder: unknown },
): Jurisdiction | null {
  const party = (location === 'venue' ? answers.certificateHolder : answers.namedInsured) as {
    address?: { country?: string; region?: string };
  } | null;
  const address = party?.address;
  if (!address?.country) return null;
  return { country: address.country.toUpperCase(), region: address.region ? address.region.trim().toUpperCase() : null };
}

/**
 * The rates that apply on `day` (YYYY-MM-DD) to a risk in `j` of line `line`: per tax, the most
 * specific rate in force (region over country, the line's own over '*'; on a tie the later start).
 * Ordered by tax name, so the same inputs always give the same lines.
 */
export function applicableRates(rates: readonly TaxRate[], j: Jurisdiction, line: string, day: string): TaxRate[] {
  const best = new Map<string, { rate: TaxRate; score: number }>();
  for (const r of rates) {
    if (r.country !== j.country) continue;
    if (r.region !== '' && r.region !== j.region) continue;
    if (r.lineOfBusiness !== '*' && r.lineOfBusiness !== line) continue;
    if (r.effectiveFrom > day || (r.effectiveTo !== null && day >= r.effectiveTo)) continue;
    const score = (r.region !== '' ? 2 : 0) + (r.lineOfBusiness !== '*' ? 1 : 0);
    const held = best.get(r.tax);
    if (!held || score > held.score || (score === held.score && r.effectiveFrom > held.rate.effectiveFrom))
      best.set(r.tax, { rate: r, score });
  }
  return [...best.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v.rate);
}

/** `premiumMinor × bps / 10 000` rounded half up, in integers. */
const ofPremium = (premiumMinor: number, bps: number) => Math.floor((premiumMinor * bps + 5_000) / 10_000);

/**
 * The tax lines of one policy (a purchase item) of `premiumMinor` (≥ 0) in `currency` under
 * `rates` (from applicableRates): each line never negative, `taxMinor` their sum.
 * @throws {TaxCurrencyError} for a fixed amount in another currency.
 * @throws {RangeError} when the premium is not a non-negative safe integer.
 */
export function priceTax(premiumMinor: number, currency: string, rates: readonly TaxRate[]): { taxMinor: number; lines: TaxLine[] } {
  if (!Number.isSafeInteger(premiumMinor) || premiumMinor < 0)
    throw new RangeError(`premium must be non-negative minor units, not ${premiumMinor}`);
  const lines = rates.map((r): TaxLine => {
    let amountMinor: number;
    if (r.method === 'fixed_per_policy') {
      if ((r.currency ?? '').toLowerCase() !== currency.toLowerCase()) throw new TaxCurrencyError(r, currency);
      amountMinor = Math.max(0, r.amountMinor ?? 0);
    } else amountMinor = ofPremium(premiumMinor, Math.max(0, r.rateBps ?? 0));
    return {
      tax: r.tax,
      method: r.method,
      label: r.label,
      jurisdiction: r.region ? `${r.country}-${r.region}` : r.country,
      rateBps: r.method === 'fixed_per_policy' ? null : r.rateBps,
      amountMinor,
      source: r.source.name,
    };
  });
  return { taxMinor: lines.reduce((s, l) => s + l.amountMinor, 0), lines };
}

/**
 * The premium tax on premium an endorsement adds to an item (`premiumMinor` > 0) that was taxed
 * with `lines` at its sale: each rate of the sale (a rate on premium, a stamping fee) on the added
 * premium, rounded half up as at the sale; a fixed amount per policy is not charged again (the
 * policy is the same). 0 for an untaxed item or no added premium. Never negative.
 */
export function taxOnAddedPremium(premiumMinor: number, lines: readonly TaxLine[] | null | undefined): number {
  if (!lines || !(premiumMinor > 0)) return 0;
  return lines.reduce((s, l) => s + (l.method === 'fixed_per_policy' ? 0 : ofPremium(premiumMinor, Math.max(0, l.rateBps ?? 0))), 0);
}

/** A tax line as the API shows it (quote, purchase): snake_case, amounts in minor units. */
export function taxLineObject(l: TaxLine) {
  return {
    tax: l.tax,
    method: l.method,
    label: l.label,
    jurisdiction: l.jurisdiction,
    rate_bps: l.rateBps,
    amount: l.amountMinor,
    source: l.source,
  };
}
