/**
 * Premium tax at quote (issue 49, item 3): for each item of a quote whose product has a tax
 * setting, the jurisdiction of its risk (the named insured's or the venue's address), the rates
 * in force there on the day for its line of business, and the tax lines they charge on its
 * premium (./premium-tax.ts). Items of products without a setting pay no tax (as before tax
 * existed). Money in minor units.
 */
import { applicableRates, jurisdictionOf, priceTax, TaxCurrencyError, type TaxLine } from './premium-tax';
import type { TaxRatesRepository } from './repository';

/** One item of a quote to tax: its product, its premium (minor units) and the answers that place its risk. */
export interface TaxableItem {
  productLineId: number;
  premiumMinor: number;
  namedInsured: unknown;
  certificateHolder: unknown;
}

/** The tax of one item: its sum and its lines (empty when not taxed). */
export interface ItemTax {
  taxMinor: number;
  lines: TaxLine[];
}

/** Why an item cannot be taxed, named like an answer problem of the quote. */
export interface TaxProblem {
  productLineId: number;
  question: string;
  reason: string;
}

export function createTaxPricer(repo: Pick<TaxRatesRepository, 'settingsOf' | 'ratesOf'>) {
  return {
    /**
     * The tax of each of `items` (same order) in `currency` on the UTC day of `at`; or the
     * problems when a taxed item's risk has no address with a country, or a fixed tax is in
     * another currency.
     */
    async priceItems(
      items: TaxableItem[],
      currency: string,
      at: Date,
    ): Promise<{ ok: true; items: ItemTax[]; taxMinor: number } | { ok: false; problems: TaxProblem[] }> {
      const settings = await repo.settingsOf([...new Set(items.map((i) => i.productLineId))]);
      const problems: TaxProblem[] = [];
      const placed = items.map((item) => {
        const setting = settings.get(item.productLineId);
        if (!setting) return null;
        const where = jurisdictionOf(setting.riskLocation, item);
        if (!where) {
          const question = setting.riskLocation === 'venue' ? 'certificate_holder' : 'named_insured';
          problems.push({
            productLineId: item.productLineId,
            question,
            reason: `this product is taxed where its risk is: the ${setting.riskLocation === 'venue' ? 'certificate holder’s (venue’s)' : 'named insured’s'} address with its country is needed`,
          });
          return null;
        }
        return { where, setting };
      });
      const rates = await repo.ratesOf([...new Set(placed.flatMap((p) => (p ? [p.where.country] : [])))]);
      const day = at.toISOString().slice(0, 10);
      const out = items.map((item, i): ItemTax => {
        const p = placed[i];
        if (!p) return { taxMinor: 0, lines: [] };
        try {
          return priceTax(item.premiumMinor, currency, applicableRates(rates, p.where, p.setting.lineOfBusiness, day));
        } catch (err) {
          if (!(err instanceof TaxCurrencyError)) throw err;
          problems.push({ productLineId: item.productLineId, question: 'product_line_template_id', reason: err.message });
          return { taxMinor: 0, lines: [] };
        }
      });
      if (problems.length) return { ok: false, problems };
      return { ok: true, items: out, taxMinor: out.reduce((s, t) => s + t.taxMinor, 0) };
    },
  };
}

export type TaxPricer = ReturnType<typeof createTaxPricer>;
