/**
 * `/api/v1/bundles` routes (spec §4.1): parse the request, call the service, shape the
 * response into the spec §2.5 envelope with the §2.3 field names. Nothing here decides a rule.
 *
 *   POST   /bundles             201 { success, data: Bundle, message }
 *   GET    /bundles             200 { success, data: BundleListItem[], metadata (with hasMore), message }
 *   GET    /bundles/{bundleId}  200 { success, data: Bundle, message }
 *   PATCH  /bundles/{bundleId}  200 { success, data: Bundle, message }
 *   DELETE /bundles/{bundleId}  204, empty body
 *
 * Errors: VALIDATION_ERROR (body), QUERY_VALIDATION_ERROR (query), INVALID_BUNDLE_ID (path),
 * NOT_FOUND, plus whatever the gateway answers.
 */
import { z } from 'zod';
import type { RouteRegistration } from '../http/routes';
import type { AppState } from '../http/context';
import { ok } from '../http/envelope';
import { ErrorEnvelopeSchema, ListMetadataSchema, gatewayResponses, successEnvelope, type OpenAPIRegistry } from '../http/openapi';
import { listMetadata } from '../http/query';
import { parseBody, parsePathId, parseQuery } from '../http/validation';
import * as resource from '../http/resource-routes';
import { toMajorUnits } from '../shared/money';
import type { BundleRecord, BundleWithLinks } from './repository';
import { Bundle, BundleListItem, BundlePathParams, CreateBundleBody, ListBundlesQuery, UpdateBundleBody, listItemExample } from './schemas';
import type { BundleService } from './service';

/** A record as a list item: spec §2.3 without links; `youtube_link` is not settable yet. */
export function toBundleListItem(b: BundleRecord): BundleListItem {
  return {
    id: b.id,
    bundle_name: b.bundleName,
    customer_facing_name: b.customerFacingName,
    internally_facing_name: b.internallyFacingName,
    bundle_description: b.bundleDescription,
    is_recurring: b.isRecurring,
    is_test_mode: b.isTestMode,
    product_line_count: b.productLineCount,
    root_insurer_db_id: b.rootInsurerDbId,
    root_mga_db_id: b.rootMgaDbId,
    root_seller_db_id: b.rootSellerDbId,
    question_set_id: b.questionSetId,
    youtube_link: b.youtubeLink,
    creation_datetime: b.createdAt.toISOString(),
    last_updated_datetime: b.updatedAt.toISOString(),
  };
}

/** A record with its links as the single-bundle shape; `primary_product` is null without links. */
export function toBundle(b: BundleWithLinks): Bundle {
  const linked = b.links.map((l) => ({
    id: l.productLineId,
    product_name: l.productName,
    default_price: toMajorUnits(l.defaultPriceMinor),
    is_primary: l.isPrimary,
    link_created_at: l.linkedAt.toISOString(),
  }));
  const primary = linked.find((l) => l.is_primary);
  return {
    ...toBundleListItem(b),
    linked_products: linked,
    primary_product: primary
      ? { id: primary.id, product_name: primary.product_name, default_price: primary.default_price, is_primary: true }
      : null,
  };
}

// The gateway runs before every /api/v1 route, so a principal is always there.
const principalOf = (ctx: { state: AppState }) => ctx.state.principal!;
const bundleIdOf = (raw: string | undefined) => parsePathId(raw, 'INVALID_BUNDLE_ID', 'bundleId');

/** Mounts the bundle routes on the `/api/v1` router and documents them in the registry. */
export function bundleRoutes(service: BundleService): RouteRegistration {
  return (router, registry) => {
    router.post('/bundles', async (ctx) => {
      const body = parseBody(CreateBundleBody, ctx.request.body);
      const bundle = await service.create(principalOf(ctx), body);
      ctx.status = 201;
      ctx.body = ok(toBundle(bundle), 'Bundle created');
    });

    router.get('/bundles', async (ctx) => {
      const query = parseQuery(ListBundlesQuery, ctx.query);
      const page = await service.list(principalOf(ctx), query);
      ctx.body = ok(
        page.rows.map(toBundleListItem),
        'Bundles retrieved',
        listMetadata(page.total, page.rows.length, page.limit, page.page - 1, true),
      );
    });

    router.get('/bundles/:bundleId', async (ctx) => {
      const id = bundleIdOf(ctx.params.bundleId);
      ctx.body = ok(toBundle(await service.get(principalOf(ctx), id)), 'Bundle retrieved');
    });

    router.patch('/bundles/:bundleId', async (ctx) => {
      // The id is checked before the body: a bad path is the more basic mistake.
      const id = bundleIdOf(ctx.params.bundleId);
      const body = parseBody(UpdateBundleBody, ctx.request.body);
      ctx.body = ok(toBundle(await service.update(principalOf(ctx), id, body)), 'Bundle updated');
    });

    router.delete('/bundles/:bundleId', async (ctx) => {
      const id = bundleIdOf(ctx.params.bundleId);
      await service.remove(principalOf(ctx), id);
      ctx.status = 204;
      ctx.body = null;
    });

    registerBundleOpenApi(registry);
  };
}

const successOf = <T extends z.ZodType>(data: T, message: string, id: string) => successEnvelope(data, id, message);

const json = (schema: z.ZodType, description: string) => ({ description, content: { 'application/json': { schema } } });

const notFoundResponse = {
  description: "NOT_FOUND: no bundle with that id for this key (another account's, or live-mode for a test key)",
  content: {
    'application/json': {
      schema: ErrorEnvelopeSchema,
      example: { success: false, error: { code: 'NOT_FOUND', message: 'bundle 42 not found' } },
    },
  },
};

const badRequest = (description: string, example: { code: string; message: string }) => ({
  description,
  content: { 'application/json': { schema: ErrorEnvelopeSchema, example: { success: false, error: example } } },
});

const bodyError = badRequest('VALIDATION_ERROR (body, rule 2, reach of root ids, product ids, test mode), or a gateway 400', {
  code: 'VALIDATION_ERROR',
  message: 'Invalid request body: product_ids.1: product 99 not found',
});
const pathError = badRequest('INVALID_BUNDLE_ID: bundleId is not a positive integer, or a gateway 400', {
  code: 'INVALID_BUNDLE_ID',
  message: 'bundleId must be a positive integer, got "abc"',
});
const pathOrBodyError = badRequest('INVALID_BUNDLE_ID or VALIDATION_ERROR, or a gateway 400', {
  code: 'VALIDATION_ERROR',
  message: 'Invalid request body: is_test_mode: linked product 12 is live-mode but the bundle is test-mode',
});
const queryError = badRequest('QUERY_VALIDATION_ERROR: a query parameter is out of range, repeated or unknown, or a gateway 400', {
  code: 'QUERY_VALIDATION_ERROR',
  message: 'Invalid query parameter: limit: Too big: expected number to be <=100',
});

// Response envelopes, built once: zod keeps their ids in its global registry.
const BundleResponse = successOf(Bundle, 'Bundle retrieved', 'BundleResponse');
const BundleCreatedResponse = successOf(Bundle, 'Bundle created', 'BundleCreatedResponse');
const BundleUpdatedResponse = successOf(Bundle, 'Bundle updated', 'BundleUpdatedResponse');
const BundleListResponse = z
  .object({
    success: z.literal(true),
    data: z.array(BundleListItem),
    metadata: ListMetadataSchema,
    message: z.string().meta({ example: 'Bundles retrieved' }),
  })
  .meta({
    id: 'BundleListResponse',
    example: {
      success: true,
      data: [listItemExample],
      metadata: { total: 21, count: 1, pagination: { pageSize: 20, pageIndex: 1 }, hasMore: false },
      message: 'Bundles retrieved',
    },
  });

function registerBundleOpenApi(registry: OpenAPIRegistry): void {
  const tags = ['Bundles'];
  const params = BundlePathParams;

  resource.registerBodyPath(registry, {
    method: 'post',
    path: '/api/v1/bundles',
    operationId: 'createBundle',
    tags,
    summary: 'Create a bundle',
    description:
      'The first of product_ids becomes the primary product. When product_ids is non-empty, one of root_insurer_db_id, root_mga_db_id or root_seller_db_id is required. Send an Idempotency-Key header to retry safely after a timeout (without one, list before retrying).',
    body: CreateBundleBody,
    responses: { 201: json(BundleCreatedResponse, 'Created'), 400: bodyError },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/bundles',
    operationId: 'listBundles',
    tags,
    summary: 'List bundles',
    description: "The key's bundles (only test-mode ones for a test key), one page at a time. Unknown query parameters are rejected.",
    request: { query: ListBundlesQuery },
    responses: { ...gatewayResponses, 200: json(BundleListResponse, 'A page of bundles'), 400: queryError },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/v1/bundles/{bundleId}',
    operationId: 'getBundle',
    tags,
    summary: 'Get a bundle with its linked products',
    request: { params },
    responses: { ...gatewayResponses, 200: json(BundleResponse, 'The bundle'), 400: pathError, 404: notFoundResponse },
  });

  registry.registerPath({
    method: 'patch',
    path: '/api/v1/bundles/{bundleId}',
    operationId: 'updateBundle',
    tags,
    summary: 'Update a bundle',
    description: 'Only sent fields change. product_ids, when sent, replaces the links ([] removes them all).',
    request: { params, body: resource.jsonBody(UpdateBundleBody) },
    responses: {
      ...gatewayResponses,
      200: json(BundleUpdatedResponse, 'The updated bundle'),
      400: pathOrBodyError,
      404: notFoundResponse,
    },
  });

  registry.registerPath({
    method: 'delete',
    path: '/api/v1/bundles/{bundleId}',
    operationId: 'deleteBundle',
    tags,
    summary: 'Delete a bundle',
    description: 'Removes the bundle and its product links; the products themselves stay.',
    request: { params },
    responses: { ...gatewayResponses, 204: { description: 'Deleted; empty body' }, 400: pathError, 404: notFoundResponse },
  });
}
