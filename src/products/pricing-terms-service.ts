/**
 * A product's pricing terms beyond its price (issue 49): the agency's commission rates. Tenancy
 * as for products (another account's or mode's product reads as 404 NOT_FOUND).
 *
 * Commission (item 2): a rate per product and party, in basis points, effective-dated. A sale
 * takes, for each item, the newest rate already started of the product's MGA when it has one,
 * else of its insurer (src/purchases/sale-insert-repository.ts), and keeps it on the item: a
 * later rate never reprices what was sold. Errors: NOT_FOUND; VALIDATION_ERROR when the party is
 * neither the product's insurer nor its MGA, when the start is in the past, or when that party
 * already has a rate starting at that instant.
 *
 * Premium tax (item 3): a product's tax setting names its line of business and where its risk is
 * (the named insured's or the venue's address); the quote then prices the published rates of that
 * jurisdiction (src/taxes/). A product without a setting is not taxed. A recurring product cannot
 * be taxed (VALIDATION_ERROR): its monthly renewals are not priced with tax.
 */
import { AppError, notFound } from '../shared/errors';
import type { Principal } from '../api-keys/service';
import type { ProductLine, ProductsRepository } from './repository';
import type { CommissionRate, PricingTermsRepository, TaxSetting } from './pricing-terms-repository';
import type { AddCommissionRateBody, CommissionRateRead, UpdateTaxSettingsBody, TaxSettingsRead } from './pricing-terms-schemas';
import { scopeOf } from './service';

/** How far in the past a start may be and still count as "now" (a client's clock a little behind). */
const CLOCK_SKEW_MS = 60_000;

/**
 * The rates a sale at `at` would take for `product`: per party, its newest started rate; the
 * MGA's wins over the insurer's (src/purchases/sale-insert-repository.ts applies the same rule).
 * Returns the id of the rate in force, or null.
 */
export function rateInForce(
  product: Pick<ProductLine, 'insurerRootAccountId' | 'mgaRootAccountId'>,
  rates: CommissionRate[],
  at: Date,
): number | null {
  const newest = (party: number | null) =>
    party === null ? undefined : rates.filter((r) => r.partyRootAccountId === party && r.effectiveFrom.getTime() <= at.getTime()).at(-1);
  return (newest(product.mgaRootAccountId) ?? newest(product.insurerRootAccountId))?.id ?? null;
}

export function createPricingTermsService(deps: {
  products: Pick<ProductsRepository, 'find' | 'transaction'>;
  terms: PricingTermsRepository;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  const toRead = (product: ProductLine, rates: CommissionRate[]): CommissionRateRead[] => {
    const inForce = rateInForce(product, rates, now());
    return rates.map((r) => ({
      id: r.id,
      product_id: r.productLineId,
      party_id: r.partyRootAccountId,
      rate_bps: r.rateBps,
      effective_from: r.effectiveFrom.toISOString(),
      in_force: r.id === inForce,
      created_at: r.createdAt.toISOString(),
    }));
  };

  const taxRead = (id: number, t: TaxSetting | null): TaxSettingsRead => ({
    product_id: id,
    line_of_business: t?.lineOfBusiness ?? null,
    risk_location: t?.riskLocation ?? null,
    updated_at: t?.updatedAt.toISOString() ?? null,
  });

  return {
    /** The product's tax setting (all null: not taxed). */
    async getTaxSettings(principal: Principal, id: number): Promise<TaxSettingsRead> {
      if (!(await deps.products.find(id, scopeOf(principal)))) throw notFound('product', id);
      return taxRead(id, await deps.terms.taxSetting(id));
    },

    /** Sets (or with `line_of_business: null` removes) the product's tax setting; quotes from then on follow it. */
    async updateTaxSettings(principal: Principal, id: number, body: UpdateTaxSettingsBody): Promise<TaxSettingsRead> {
      return deps.products.transaction(async (trx) => {
        const product = await deps.products.find(id, scopeOf(principal), trx);
        if (!product) throw notFound('product', id);
        if (body.line_of_business !== null && product.isRecurring)
          throw new AppError(
            'VALIDATION_ERROR',
            'line_of_business: a recurring product cannot be taxed (its renewals are not priced with tax)',
            {
              details: [{ path: 'line_of_business', message: 'must be null for a recurring product' }],
            },
          );
        const saved = await deps.terms.saveTaxSetting(
          trx,
          id,
          body.line_of_business === null
            ? null
            : { lineOfBusiness: body.line_of_business, riskLocation: body.risk_location ?? 'named_insured' },
        );
        return taxRead(id, saved);
      });
    },

    /** Every commission rate of the product, oldest first, with the one a sale takes now marked. */
    async listCommissionRates(principal: Principal, id: number): Promise<CommissionRateRead[]> {
      const product = await deps.products.find(id, scopeOf(principal));
      if (!product) throw notFound('product', id);
      return toRead(product, await deps.terms.commissionRates(id));
    },

    /** Adds a rate from its start on (default now); answers it with `in_force` as of now. */
    async addCommissionRate(principal: Principal, id: number, body: AddCommissionRateBody): Promise<CommissionRateRead> {
      const at = now();
      const effectiveFrom = body.effective_from ? new Date(body.effective_from) : at;
      if (effectiveFrom.getTime() < at.getTime() - CLOCK_SKEW_MS)
        throw new AppError(
          'VALIDATION_ERROR',
          'effective_from: a commission rate cannot start in the past (a sale keeps the rate it was sold at)',
          {
            details: [{ path: 'effective_from', message: 'must not be in the past' }],
          },
        );
      return deps.products.transaction(async (trx) => {
        const product = await deps.products.find(id, scopeOf(principal), trx);
        if (!product) throw notFound('product', id);
        if (body.party_id !== product.insurerRootAccountId && body.party_id !== product.mgaRootAccountId)
          throw new AppError('VALIDATION_ERROR', `party_id: ${body.party_id} is neither this product's insurer nor its MGA`, {
            details: [{ path: 'party_id', message: 'must be the product’s insurerRootAccountID or mgaRootAccountID' }],
          });
        const added = await deps.terms.addCommissionRate(trx, {
          productLineId: id,
          partyRootAccountId: body.party_id,
          rateBps: body.rate_bps,
          effectiveFrom,
        });
        if (!added)
          throw new AppError('VALIDATION_ERROR', 'effective_from: this party already has a rate starting then', {
            details: [{ path: 'effective_from', message: 'a rate of this party already starts then' }],
          });
        const rates = await deps.terms.commissionRates(id, trx);
        return toRead(product, rates).find((r) => r.id === added.id)!;
      });
    },
  };
}

export type PricingTermsService = ReturnType<typeof createPricingTermsService>;
