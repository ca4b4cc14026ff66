/**
 * `/api/v1/products/{id}/commission_rates` (issue 49, item 2): list a product's commission rates
 * and add one. Parse, call the service, shape the envelope; both answer 200. Path ids that are
 * not positive integers → 400 VALIDATION_ERROR, another account's product → 404 NOT_FOUND.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { successEnvelope as envelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import type { PricingTermsService } from './pricing-terms-service';
import { AddCommissionRateBody, CommissionRateRead } from './pricing-terms-schemas';

const notFoundResponse = resource.errorResponse('NOT_FOUND: no product with that id in this account');
const IdParam = resource.idParam('Product line id, integer >= 1', '12');

const commissionDescription =
  'The agency’s commission per product and party (the product’s insurer or MGA), in basis points of premium, effective-dated: a new rate applies from its `effective_from` on and never reprices what was sold. ' +
  'Each purchase item keeps the rate in force at its sale (the MGA’s when the product names one and it has a rate, else the insurer’s) and the commission it earned: premium × rate, rounded down to a whole minor unit. ' +
  'A cancellation or refund gives back the commission on the premium it returns, rounded down the same way, so it never gives back more than was earned. ' +
  'The purchase (`items[].commission`) and the premium bordereau (`commission`, `net_premium` = gross premium − commission) show it. Without a rate an item has no commission (null; the bordereau’s column stays empty).';

export function pricingTermsRoutes(service: PricingTermsService): RouteRegistration {
  return (router, registry) => {
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
  };
}
