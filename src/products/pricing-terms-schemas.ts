/**
 * Wire contracts of a product's pricing terms beyond its price (issue 49): the agency's commission
 * rates (`/api/v1/products/{id}/commission_rates`) and the product's premium tax setting
 * (`/api/v1/products/{id}/tax_settings`). snake_case; rates in basis points (1 250 = 12.5 %);
 * instants ISO 8601 UTC.
 */
import { z } from 'zod';
import { LINES_OF_BUSINESS, RISK_LOCATIONS } from '../taxes/premium-tax';

/** Body of `PATCH /api/v1/products/{id}/tax_settings`. */
export const UpdateTaxSettingsBody = z
  .strictObject({
    line_of_business: z.enum(LINES_OF_BUSINESS).nullable().meta({
      description: 'The line of business the premium tax rates are looked up by; null: the product is not taxed (as without a setting)',
    }),
    risk_location: z.enum(RISK_LOCATIONS).optional().meta({
      description:
        'Where the risk is, whose jurisdiction (country, and region where the tax is a region’s) taxes it: `named_insured` (the named insured’s address, default) or `venue` (the certificate holder’s address)',
    }),
  })
  .meta({ id: 'UpdateTaxSettingsRequest', example: { line_of_business: 'general_liability', risk_location: 'named_insured' } });
export type UpdateTaxSettingsBody = z.infer<typeof UpdateTaxSettingsBody>;

/** A product's tax setting as the API answers it. */
export const TaxSettingsRead = z
  .object({
    product_id: z.number().int(),
    line_of_business: z.enum(LINES_OF_BUSINESS).nullable().meta({ description: 'null: not taxed' }),
    risk_location: z.enum(RISK_LOCATIONS).nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ id: 'TaxSettings' });
export type TaxSettingsRead = z.infer<typeof TaxSettingsRead>;

/** Body of `POST /api/v1/products/{id}/commission_rates`. */
export const AddCommissionRateBody = z
  .strictObject({
    party_id: z.number().int().min(1).max(2_147_483_647).meta({
      description: 'The party paying the commission: the product’s insurer or MGA root account (insurerRootAccountID, mgaRootAccountID)',
    }),
    rate_bps: z.number().int().min(0).max(10_000).meta({ description: 'The commission rate in basis points of premium (1250 = 12.5 %)' }),
    effective_from: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'From when it applies, ISO 8601 (default: now); not in the past: a rate never reprices what was sold' }),
  })
  .meta({ id: 'AddCommissionRateRequest', example: { party_id: 3, rate_bps: 1250 } });
export type AddCommissionRateBody = z.infer<typeof AddCommissionRateBody>;

/** One commission rate as the API answers it. */
export const CommissionRateRead = z
  .object({
    id: z.number().int(),
    product_id: z.number().int(),
    party_id: z.number().int(),
    rate_bps: z.number().int(),
    effective_from: z.string().meta({ description: 'ISO 8601 UTC' }),
    in_force: z.boolean().meta({
      description:
        'Whether a sale now takes this rate: the newest started rate of its party, that party being the product’s MGA when it has a rate, else its insurer',
    }),
    created_at: z.string(),
  })
  .meta({ id: 'CommissionRate' });
export type CommissionRateRead = z.infer<typeof CommissionRateRead>;
