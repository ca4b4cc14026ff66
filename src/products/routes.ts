/**
 * `/api/v1/products` routes (spec §4.2): parse, call the service, shape the envelope.
 * POST → 201, GET/PATCH → 200. There is no delete: DELETE falls through to ROUTE_NOT_FOUND; a
 * test-mode product is removed from view by POST /products/{id}/archive (200).
 * Path ids that are not positive integers → 400 VALIDATION_ERROR (ARCHITECTURE §4).
 */
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { parseBody } from '../http/validation';
import { successEnvelope as envelope } from '../http/openapi';
import * as resource from '../http/resource-routes';
import type { ProductService } from './service';
import { ArchivedResource } from '../http/archived';
import {
  CancellationTermsRead,
  CreateProductBody,
  EndorsementTermsRead,
  ListProductsQuery,
  ProductCreated,
  ProductRead,
  UpdateCancellationTermsBody,
  UpdateEndorsementTermsBody,
  UpdateProductBody,
} from './schemas';

const notFoundResponse = resource.errorResponse('NOT_FOUND: no product with that id in this account');
const IdParam = resource.idParam('Product line id, integer >= 1', '12');

export function productRoutes(service: ProductService): RouteRegistration {
  return (router, registry) => {
    router.post('/products', async (ctx) => {
      const body = parseBody(CreateProductBody, ctx.request.body);
      const created = await service.create(ctx.state.principal!, body);
      ctx.status = 201;
      ctx.body = ok(created, 'Product created');
    });

    resource.listRoute(router, '/products', ListProductsQuery, service.list, 'Products retrieved');
    resource.idRoute(router, 'get', '/products/:id', service.get, 'Product retrieved');
    resource.idRoute(router, 'patch', '/products/:id', service.update, 'Product updated', UpdateProductBody);
    resource.idRoute(router, 'post', '/products/:id/archive', service.archive, 'Product archived');
    resource.idRoute(router, 'get', '/products/:id/cancellation_terms', service.getCancellationTerms, 'Cancellation terms retrieved');
    resource.idRoute(router, 'get', '/products/:id/endorsement_terms', service.getEndorsementTerms, 'Endorsement terms retrieved');
    resource.idRoute(
      router,
      'patch',
      '/products/:id/endorsement_terms',
      service.updateEndorsementTerms,
      'Endorsement terms updated',
      UpdateEndorsementTermsBody,
    );
    resource.idRoute(
      router,
      'patch',
      '/products/:id/cancellation_terms',
      service.updateCancellationTerms,
      'Cancellation terms updated',
      UpdateCancellationTermsBody,
    );

    resource.registerBodyPath(registry, {
      method: 'post',
      path: '/api/v1/products',
      operationId: 'createProduct',
      tags: ['Products'],
      summary: 'Create a product line and its product and price at the payment processor',
      description:
        'Send an Idempotency-Key header to retry safely after a timeout (without one, list products before retrying). Prices are major currency units.',
      body: CreateProductBody,
      responses: {
        201: resource.jsonResponse('Created', envelope(ProductCreated, 'ProductCreatedResponse')),
        401: resource.errorResponse('AUTHENTICATION_ERROR: the processor account could not be authenticated'),
        503: resource.errorResponse('CONNECTION_ERROR: the processor was unreachable'),
      },
    });
    resource.registerListPath(registry, {
      path: '/api/v1/products',
      operationId: 'listProducts',
      tags: ['Products'],
      summary: 'List product lines, newest first',
      query: ListProductsQuery,
      item: ProductRead,
      envelopeId: 'ProductListResponse',
    });
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/products/{id}',
      operationId: 'getProduct',
      tags: ['Products'],
      summary: 'Get one product line',
      params: IdParam,
      ok: resource.jsonResponse('The product', envelope(ProductRead, 'ProductResponse')),
      notFound: notFoundResponse,
    });
    resource.registerIdPath(registry, {
      method: 'patch',
      path: '/api/v1/products/{id}',
      operationId: 'updateProduct',
      tags: ['Products'],
      summary: 'Update the sent fields of a product line',
      description:
        'agencyRootAccountID and isTestMode cannot change. A price change creates a new processor price and retires the old one. isActive=false deactivates (there is no delete).',
      params: IdParam,
      body: UpdateProductBody,
      ok: resource.jsonResponse('Updated', envelope(ProductRead, 'ProductUpdatedResponse')),
      notFound: notFoundResponse,
    });
    const termsDescription =
      "What a cancellation of this product's covered units gives back. A covered unit whose coverage has started (a day at local midnight in its time zone) is earned in full and cannot be cancelled. " +
      'Within `free_look_days` of payment, while no covered unit of the purchase has started, everything comes back, platform fee included. Otherwise `refund_method` applies when the buyer or the agency cancels and `insurer_refund_method` when the insurer does: ' +
      "`pro_rata` gives back the cancelled units' share of the premium (an item's premium split evenly over its units, the odd cents on the earliest), `short_rate` the same less `short_rate_penalty_bps`, `none` nothing; tax follows premium; " +
      'an item never gives back below `minimum_earned_premium`. The platform fee is spread over the units by premium: within free look each cancelled unit gives back its share (the cancellation that leaves no unit active, all of the fee still held); outside it the fee comes back only when the cancellation leaves no unit active and `platform_fee_refundable` is true. ' +
      "Example: 7 days at 10.00 with 12 % tax and a 2.00 platform fee, pro rata, cancelled on day 3: days 4–7 come back, 40.00 + 4.80 = 44.80. A bundle uses its primary product's terms. Amounts are integer minor units. " +
      'With `buyer_withdrawal` the buyer can also withdraw on their own: a signed, single-use link in the proof-of-coverage email sent to the buyer and on the checkout return page opens a page with their quote (every unstarted unit, `requested_by` `buyer`) and a confirm button; the cancellation then runs as one made through the API, with the same events. ' +
      'Within 14 days of payment a withdrawal ignores the other terms (method, penalty, minimum earned premium, free-look days): every unstarted unit gives back its premium, tax and platform-fee share (`method` `withdrawal`), and cover already started stays in force; after that the link cancels by these terms.';
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/products/{id}/cancellation_terms',
      operationId: 'getCancellationTerms',
      tags: ['Products'],
      summary: "Get a product's cancellation terms (the defaults until set)",
      description: `${termsDescription} Defaults: 14 free-look days, pro rata for everyone, a 10 % short-rate penalty, the platform fee kept, no minimum earned premium, buyer withdrawal offered.`,
      params: IdParam,
      ok: resource.jsonResponse('The terms', envelope(CancellationTermsRead, 'CancellationTermsResponse')),
      notFound: notFoundResponse,
    });
    resource.registerIdPath(registry, {
      method: 'post',
      path: '/api/v1/products/{id}/archive',
      operationId: 'archiveProduct',
      tags: ['Products'],
      summary: 'Archive a test-mode product',
      description:
        'Removes test-mode clutter: the product stops selling (inactive, also at the processor) and is no longer listed, read, changed, linked to a bundle or quoted (404 from then on); purchases and certificates that name it are untouched. Archiving it again answers the same `archivedAt`. A live product cannot be archived (409 ARCHIVE_NOT_ALLOWED): stop selling it with `isActive: false`.',
      params: IdParam,
      ok: resource.jsonResponse('Archived', envelope(ArchivedResource, 'ProductArchivedResponse')),
      notFound: notFoundResponse,
      responses: { 409: resource.errorResponse('ARCHIVE_NOT_ALLOWED: a live product') },
    });
    resource.registerIdPath(registry, {
      method: 'patch',
      path: '/api/v1/products/{id}/cancellation_terms',
      operationId: 'updateCancellationTerms',
      tags: ['Products'],
      summary: "Change the sent fields of a product's cancellation terms",
      description: `${termsDescription} Each purchase keeps the terms in force when it was bought: a change applies to purchases made from then on.`,
      params: IdParam,
      body: UpdateCancellationTermsBody,
      ok: resource.jsonResponse('Updated', envelope(CancellationTermsRead, 'CancellationTermsUpdatedResponse')),
      notFound: notFoundResponse,
    });
    const endorsementTermsDescription =
      'Whether a certificate holder added to this product’s purchases may be named additional insured (`allows_additional_insured`) and have subrogation waived in its favour (`allows_waiver_of_subrogation`): both endorsements are printed as marks on the holder’s certificates, at no premium. A holder asking for one that a product of the purchase does not allow is refused with 409 ENDORSEMENT_NOT_ALLOWED. Both are allowed until set; a change applies to holders added from then on.';
    resource.registerIdPath(registry, {
      method: 'get',
      path: '/api/v1/products/{id}/endorsement_terms',
      operationId: 'getEndorsementTerms',
      tags: ['Products'],
      summary: "Get a product's endorsement terms (both allowed until set)",
      description: endorsementTermsDescription,
      params: IdParam,
      ok: resource.jsonResponse('The terms', envelope(EndorsementTermsRead, 'EndorsementTermsResponse')),
      notFound: notFoundResponse,
    });
    resource.registerIdPath(registry, {
      method: 'patch',
      path: '/api/v1/products/{id}/endorsement_terms',
      operationId: 'updateEndorsementTerms',
      tags: ['Products'],
      summary: "Change the sent fields of a product's endorsement terms",
      description: endorsementTermsDescription,
      params: IdParam,
      body: UpdateEndorsementTermsBody,
      ok: resource.jsonResponse('Updated', envelope(EndorsementTermsRead, 'EndorsementTermsUpdatedResponse')),
      notFound: notFoundResponse,
    });
  };
}
