/**
 * Persistence of a product's pricing terms beyond its price (issue 49), this module the one
 * writer of both tables: the agency's commission rates per party, effective-dated
 * (`product_commission_rates`: a change is a new row from its date on; rows are never edited, so
 * the history stays readable and a sale keeps the rate it was sold at, stored on its item), and
 * the product's tax setting (`product_tax_settings`: its line of business and where its risk is;
 * no row, no tax). Rates in basis points. Tenancy is the caller's: the service checks the
 * product's scope first.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { LineOfBusiness, RiskLocation } from '../taxes/premium-tax';

/** A product's tax setting: the line of business its rates are looked up by, and where its risk is. */
export interface TaxSetting {
  lineOfBusiness: LineOfBusiness;
  riskLocation: RiskLocation;
  updatedAt: Date;
}

/** One commission rate of a product: the party that pays it, the rate (bp) and from when. */
export interface CommissionRate {
  id: number;
  productLineId: number;
  partyRootAccountId: number;
  rateBps: number;
  effectiveFrom: Date;
  createdAt: Date;
}

const toRate = (r: Record<string, unknown>): CommissionRate => ({
  id: r.id as number,
  productLineId: r.product_line_id as number,
  partyRootAccountId: r.party_root_account_id as number,
  rateBps: Number(r.rate_bps),
  effectiveFrom: r.effective_from as Date,
  createdAt: r.created_at as Date,
});

export function createPricingTermsRepository(db: Db) {
  return {
    /** Every commission rate of the product, oldest first (by start, then creation). */
    async commissionRates(productLineId: number, trx?: Knex.Transaction): Promise<CommissionRate[]> {
      const rows = await (trx ?? db)('product_commission_rates')
        .where('product_line_id', productLineId)
        .orderBy([{ column: 'effective_from' }, { column: 'id' }]);
      return rows.map(toRate);
    },

    /**
     * Adds a rate for (product, party) from `effectiveFrom` on. A second rate of the same
     * product, party and start replaces nothing: it is refused by the unique key (returns null).
     */
    async addCommissionRate(
      trx: Knex.Transaction,
      rate: Pick<CommissionRate, 'productLineId' | 'partyRootAccountId' | 'rateBps' | 'effectiveFrom'>,
    ): Promise<CommissionRate | null> {
      const rows = await trx('product_commission_rates')
        .insert({
          product_line_id: rate.productLineId,
          party_root_account_id: rate.partyRootAccountId,
          rate_bps: rate.rateBps,
          effective_from: rate.effectiveFrom,
        })
        .onConflict(['product_line_id', 'party_root_account_id', 'effective_from'])
        .ignore()
        .returning('*');
      return rows[0] ? toRate(rows[0]) : null;
    },

    /** The product's tax setting, or null (not taxed). */
    async taxSetting(productLineId: number, trx?: Knex.Transaction): Promise<TaxSetting | null> {
      const row = await (trx ?? db)('product_tax_settings').where('product_line_id', productLineId).first();
      return row
        ? {
            lineOfBusiness: row.line_of_business as LineOfBusiness,
            riskLocation: row.risk_location as RiskLocation,
            updatedAt: row.updated_at as Date,
          }
        : null;
    },

    /** Sets the product's tax setting, or removes it (`null`: not taxed from then on). */
    async saveTaxSetting(
      trx: Knex.Transaction,
      productLineId: number,
      setting: Pick<TaxSetting, 'lineOfBusiness' | 'riskLocation'> | null,
    ): Promise<TaxSetting | null> {
      if (setting === null) {
        await trx('product_tax_settings').where('product_line_id', productLineId).delete();
        return null;
      }
      await trx('product_tax_settings')
        .insert({ product_line_id: productLineId, line_of_business: setting.lineOfBusiness, risk_location: setting.riskLocation })
        .onConflict('product_line_id')
        .merge({ line_of_business: setting.lineOfBusiness, risk_location: setting.riskLocation, updated_at: trx.fn.now() });
      return this.taxSetting(productLineId, trx);
    },
  };
}

export type PricingTermsRepository = ReturnType<typeof createPricingTermsRepository>;
