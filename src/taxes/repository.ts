/**
 * Persistence of the published premium tax rates (`premium_tax_rates`; this module is its one
 * writer): the reads the quote prices tax from, and the synchronisation of the table with the
 * versioned data file ./premium-tax-rates.json (`npm run ops -- tax-rates sync`; the migration
 * that created the table loaded the file as it was then). Rates in basis points, fixed amounts in
 * minor units; days as YYYY-MM-DD.
 */
import type { Db } from '../db/knex';
import type { RiskLocation, TaxMethod, TaxRate } from './premium-tax';

/** One rate as the data file writes it (snake_case). */
export interface TaxRateData {
  country: string;
  region: string;
  line_of_business: string;
  tax: string;
  method: string;
  rate_bps?: number;
  amount_minor?: number;
  currency?: string;
  label: string;
  effective_from: string;
  effective_to: string | null;
  source: { name: string; url: string };
}

/** The data file: its version and its rates. */
export interface TaxRateFile {
  version: string;
  rates: TaxRateData[];
}

const day = (d: unknown): string | null =>
  d === null || d === undefined ? null : d instanceof Date ? d.toISOString().slice(0, 10) : String(d).slice(0, 10);

const toRate = (r: Record<string, unknown>): TaxRate => ({
  country: r.country as string,
  region: r.region as string,
  lineOfBusiness: r.line_of_business as string,
  tax: r.tax as string,
  method: r.method as TaxMethod,
  rateBps: r.rate_bps === null ? null : Number(r.rate_bps),
  amountMinor: r.amount_minor === null ? null : Number(r.amount_minor),
  currency: (r.currency as string | null) ?? null,
  label: r.label as string,
  effectiveFrom: day(r.effective_from)!,
  effectiveTo: day(r.effective_to),
  source: r.source as TaxRate['source'],
});

export function createTaxRatesRepository(db: Db) {
  return {
    /** Every rate of the countries in `countries` (upper case), whatever its dates: applicableRates picks. */
    async ratesOf(countries: string[]): Promise<TaxRate[]> {
      if (!countries.length) return [];
      // Dates as text: a date column read through a time zone could move a day.
      const rows = await db('premium_tax_rates')
        .whereIn('country', countries)
        .select(
          '*',
          db.raw(`to_char(effective_from, 'YYYY-MM-DD') as effective_from`),
          db.raw(`to_char(effective_to, 'YYYY-MM-DD') as effective_to`),
        )
        .orderBy('id');
      return rows.map(toRate);
    },

    /**
     * The tax setting of each product line of `productLineIds` that has one (read from the
     * products domain's `product_tax_settings`): its line of business and where its risk is.
     */
    async settingsOf(productLineIds: number[]): Promise<Map<number, { lineOfBusiness: string; riskLocation: RiskLocation }>> {
      if (!productLineIds.length) return new Map();
      const rows = await db('product_tax_settings').whereIn('product_line_id', productLineIds).select('*');
      return new Map(
        rows.map((r) => [
          Number(r.product_line_id),
          { lineOfBusiness: r.line_of_business as string, riskLocation: r.risk_location as RiskLocation },
        ]),
      );
    },

    /**
     * Makes the table hold the file's rates: each row of the file inserted, or updated in place
     * when its key (country, region, line, tax, start) is there. Rows of the table the file no
     * longer has are kept (a sale may have been priced by them) and counted in `notInFile`.
     */
    async sync(file: TaxRateFile): Promise<{ inserted: number; updated: number; notInFile: number }> {
      return db.transaction(async (trx) => {
        let inserted = 0;
        let updated = 0;
        const keys = new Set<string>();
        for (const r of file.rates) {
          const key = {
            country: r.country,
            region: r.region,
            line_of_business: r.line_of_business,
            tax: r.tax,
            effective_from: r.effective_from,
          };
          keys.add(JSON.stringify(Object.values(key)));
          const values = {
            method: r.method,
            rate_bps: r.rate_bps ?? null,
            amount_minor: r.amount_minor ?? null,
            currency: r.currency ?? null,
            label: r.label,
            effective_to: r.effective_to,
            source: JSON.stringify(r.source),
            data_version: file.version,
          };
          const changed = await trx('premium_tax_rates').where(key).update(values);
          if (changed) updated += 1;
          else {
            await trx('premium_tax_rates').insert({ ...key, ...values });
            inserted += 1;
          }
        }
        const all = await trx('premium_tax_rates').select(
          'country',
          'region',
          'line_of_business',
          'tax',
          trx.raw(`to_char(effective_from, 'YYYY-MM-DD') as effective_from`),
        );
        const notInFile = all.filter(
          (r) => !keys.has(JSON.stringify([r.country, r.region, r.line_of_business, r.tax, r.effective_from])),
        ).length;
        return { inserted, updated, notInFile };
      });
    },
  };
}

export type TaxRatesRepository = ReturnType<typeof createTaxRatesRepository>;
