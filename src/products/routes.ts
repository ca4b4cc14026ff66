/**
 * `/api/v1/products` routes (spec §4.2): parse, call the service, shape the envelope.
 * POST → 201, GET/PATCH → 200. There is no delete: DELETE falls through to ROUTE_NOT_FOUND.
 * Path ids that are not positive integers → 400 VALIDATION_ERROR (ARCHITECTURE §4).
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import { ok } from '../http/envelope';
import { listMetadata } from '../http/query';
import { parseBody, parsePathId, parseQuery } from '../http/validation';
import { gatewayResponses, ErrorEnvelopeSchema, listEnvelope, successEnvelope as envelope } from '../http/openapi';
import type { ProductService } from './service';
import { CreateProductBody, ListProductsQuery, ProductCreated, ProductRead, UpdateProductBody } from './schemas';

const notFoundResponse = { description: 'NOT_FOUND: no product with that id in this account', content: { 'application/json': { schema: ErrorEnvelopeSchema } } };
const IdParam = z.object({ id: z.string().meta({ description: 'Product line id, integer >= 1', example: '12' }) });

export function productRoutes(service: ProductService): RouteRegistration {
  return (router, registry) => {
    router.post('/products', async (ctx) => {
      const body = parseBody(CreateProductBody, ctx.request.body);
      const created = await service.create(ctx.state.principal!, body);
      ctx.status = 201;
      ctx.body = ok(created, 'Product created');
    });

    router.get('/products', async (ctx) => {
      const q = parseQuery(ListProductsQuery, ctx.query);
      const page = await service.list(ctx.state.principal!, q);
      ctx.body = ok(page.items, 'Products retrieved', listMetadata(page.total, page.items.length, q.pageSize, q.pageIndex));
    });

    router.get('/products/:id', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      ctx.body = ok(await service.get(ctx.state.principal!, id), 'Product retrieved');
    });

    router.patch('/products/:id', async (ctx) => {
      const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
      const body = parseBody(UpdateProductBody, ctx.request.body);
      ctx.body = ok(await service.update(ctx.state.principal!, id, body), 'Product updated');
    });

    registry.registerPath({
      method: 'post',
      path: '/api/v1/products',
      operationId: 'createProduct',
      tags: ['Products'],
      summary: 'Create a product line and its product and price at the payment processor',
      description: 'Send an Idempotency-Key header to retry safely after a timeout (without one, list products before retrying). Prices are major currency units.',
      request: { body: { required: true, content: { 'application/json': { schema: CreateProductBody } } } },
      responses: {
        201: { description: 'Created', content: { 'application/json': { schema: envelope(ProductCreated, 'ProductCreatedResponse') } } },
        ...gatewayResponses,
        401: { description: 'AUTHENTICATION_ERROR: the processor account could not be authenticated', content: { 'application/json': { schema: ErrorEnvelopeSchema } } },
        503: { description: 'CONNECTION_ERROR: the processor was unreachable', content: { 'application/json': { schema: ErrorEnvelopeSchema } } },
      },
    });
    registry.registerPath({
      method: 'get',
      path: '/api/v1/products',
      operationId: 'listProducts',
      tags: ['Products'],
      summary: 'List product lines, newest first',
      request: { query: ListProductsQuery },
      responses: { 200: { description: 'A page', content: { 'application/json': { schema: listEnvelope(ProductRead, 'ProductListResponse') } } }, ...gatewayResponses },
    });
    registry.registerPath({
      method: 'get',
      path: '/api/v1/products/{id}',
      operationId: 'getProduct',
      tags: ['Products'],
      summary: 'Get one product line',
      request: { params: IdParam },
      responses: { 200: { description: 'The product', content: { 'application/json': { schema: envelope(ProductRead, 'ProductResponse') } } }, 404: notFoundResponse, ...gatewayResponses },
    });
    registry.registerPath({
      method: 'patch',
      path: '/api/v1/products/{id}',
      operationId: 'updateProduct',
      tags: ['Products'],
      summary: 'Update the sent fields of a product line',
      description: 'agencyRootAccountID and isTestMode cannot change. A price change creates a new processor price and retires the old one. isActive=false deactivates (there is no delete).',
      request: { params: IdParam, body: { required: true, content: { 'application/json': { schema: UpdateProductBody } } } },
      responses: { 200: { description: 'Updated', content: { 'application/json': { schema: envelope(ProductRead, 'ProductUpdatedResponse') } } }, 404: notFoundResponse, ...gatewayResponses },
    });
  };
}
