/**
 * `/api/v1/products/{id}/commission_rates` (issue 49, item 2): list a product's commission rates
 * and add one; `/api/v1/products/{id}/tax_settings` (item 3): read and set its premium tax
 * setting. Parse, call the service, shape the envelope; all answer 200. Path ids that are
 * not positive integers → 400 VALIDATION_ERROR, another account's product → 404 NOT_FOUND.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { successEnvelope as envelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import type { PricingTermsService } from './pricing-terms-service';
import { AddCommissionRateBody, CommissionRateRead, UpdateTaxSettingsBody, TaxSettingsRead } from './pricing-terms-schemas';

const notFoundResponse = resource.errorResponse('NOT_FOUND: no product with that id in this account');
const IdParam = resource.idParam('Product line id, integer >= 1', '12');

const commissionDescription =
  'The agency’s commission per product and party (the product’s insurer or MGA), in basis points of premium, effective-dated: a new rate applies from its `effective_from` on and never reprices what was sold. ' +
  'Each purchase item keeps the rate in force at its sale (the MGA’s when the product names one and it has a rate, else the insurer’s) and the commission it earned: premium × rate, rounded down to a whole minor unit. ' +
  'A cancellation or refund gives back the commission on the premium it returns, rounded down the same way, so it never gives back more than was earned. ' +
  'The purchase (`items[].commission`) and the premium bordereau (`commission`, `net_premium` = gross premium − commission) show it. Without a rate an item has no commission (null; the bordereau’s column stays empty).';

export function pricingTermsRoutes(service: PricingTermsService): RouteRegistration {
  return (router, registry) => {
    resource.idRoute(router, 'get', '/products/:id/tax_settings', service.getTaxSettings, 'Tax settings retrieved');
    resource.idRoute(
      router,
      'patch',
      '/products/:id/tax_settings',
      service.updateTaxSettings,
      'Tax settings updated',
      UpdateTaxSettingsBody,
    );
    resource.idRoute(router, 'get', '/products/:id/commission_rates', service.listCommissionRates, 'Commission rates retrieved');
    resource.idRoute(
      router,
      'post',
      '/products/:id/commission_rates',
      service.addCommissionRate,
      'Commission rate added',
      AddCommissionRateBody,
    );

    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/products/{id}/commission_rates',
      operationId: 'listCommissionRates',
      tags: ['Products'],
      summary: "List a product's commission rates, oldest first",
      description: commissionDescription,
      params: IdParam,
      ok: resource.jsonResponse('The rates', envelope(z.array(CommissionRateRead), 'CommissionRatesResponse')),
      notFound: notFoundResponse,
    });
    resource.registerIdPath(registry, {
      method: 'post',
      path: '/api/v1/products/{id}/commission_rates',
      operationId: 'addCommissionRate',
      tags: ['Products'],
      summary: 'Add a commission rate for one of the product’s parties from a date on',
      description: `${commissionDescription} 400 VALIDATION_ERROR when party_id is neither the product’s insurer nor its MGA, when effective_from is in the past, or when that party already has a rate starting then.`,
      params: IdParam,
      body: AddCommissionRateBody,
      ok: resource.jsonResponse('Added', envelope(CommissionRateRead, 'CommissionRateAddedResponse')),
      notFound: notFoundResponse,
    });
    const taxDescription =
      'Premium tax: the product’s line of business and where its risk is (`named_insured`: the named insured’s address; `venue`: the certificate holder’s). ' +
      'A quote then prices, per item, every tax the published rates of that jurisdiction (country, and region where the tax is a region’s) and line levy on the day: a rate on premium (surplus-lines tax, insurance premium tax), a stamping fee (a rate on premium of its own), or a fixed amount per policy, each rounded half up to a whole minor unit. ' +
      'The tax is shown apart on the quote (`amount_tax`, `tax_lines`), as its own lines at the processor’s checkout, on the purchase and in the bordereau’s `tax` column, and a cancellation gives it back by the same rule as the premium. ' +
      'The rates are kept as versioned data, each with its published source; a product without a setting is not taxed. A recurring product cannot be taxed (400 VALIDATION_ERROR).';
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/products/{id}/tax_settings',
      operationId: 'getTaxSettings',
      tags: ['Products'],
      summary: "Get a product's premium tax setting (null fields: not taxed)",
      description: taxDescription,
      params: IdParam,
      ok: resource.jsonResponse('The setting', envelope(TaxSettingsRead, 'TaxSettingsResponse')),
      notFound: notFoundResponse,
    });
    resource.registerIdPath(registry, {
      method: 'patch',
      path: '/api/v1/products/{id}/tax_settings',
      operationId: 'updateTaxSettings',
      tags: ['Products'],
      summary: "Set (or with line_of_business null remove) a product's premium tax setting",
      description: `${taxDescription} A change applies to quotes from then on; a purchase keeps the tax it was charged.`,
      params: IdParam,
      body: UpdateTaxSettingsBody,
      ok: resource.jsonResponse('Updated', envelope(TaxSettingsRead, 'TaxSettingsUpdatedResponse')),
      notFound: notFoundResponse,
    });
  };
}
