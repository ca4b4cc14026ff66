/**
 * The OpenAPI 3.1 document, generated from the same zod schemas that validate requests
 * (STYLE practice 7). Each domain registers its paths on the registry passed to it;
 * `GET /openapi.json` serves the result and `GET /docs` renders it with Swagger UI
 * (assets from the swagger-ui-dist package; nothing is loaded from the network).
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Adds `.openapi()` to zod schemas; the registry needs it, and it is idempotent.
extendZodWithOpenApi(z);

export { OpenAPIRegistry };

/** Error envelope of spec §2.5. */
export const ErrorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.string().meta({ description: 'Stable code to branch on (spec §7.1)' }),
      message: z.string().meta({ description: 'For humans; may change' }),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .meta({ id: 'ErrorEnvelope' });

/** Body of the gateway's 403 (spec §5.2): not the envelope. */
export const ForbiddenSchema = z.object({ message: z.literal('Forbidden') }).meta({ id: 'GatewayForbidden' });

/**
 * Error body of the unversioned surfaces (`/public-quote`, `/platform-seller-invites`,
 * `/platform-agency-certs`, `/platform-agency-root-certs`; spec §7.2): the serialised error,
 * no envelope. Some codes add fields of their own.
 */
export const BareErrorSchema = z
  .object({
    code: z.string().meta({ description: 'Stable code to branch on' }),
    message: z.string().meta({ description: 'For humans; may change' }),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'BareError', example: { code: 'VALIDATION_ERROR', message: 'Invalid request body: buyer_email: Invalid email address', details: [{ path: 'buyer_email', message: 'Invalid email address' }] } });

/** A bare-surface error response with its own description, e.g. `bareError('SELLER_NOT_FOUND: …')`. */
export const bareError = (description: string) => ({
  description,
  content: { 'application/json': { schema: BareErrorSchema } },
});

/** Responses every operation on a bare surface (spec §7.2) can give, besides its own. */
export const bareSurfaceResponses = {
  400: bareError('VALIDATION_ERROR: the body failed validation or is not JSON'),
  403: { description: 'Missing, unknown, frozen or deleted API key (gateway)', content: { 'application/json': { schema: ForbiddenSchema } } },
  413: bareError('PAYLOAD_TOO_LARGE: body over 1 MiB'),
  429: bareError('RATE_LIMIT_ERROR: retry after the Retry-After header (seconds)'),
  500: bareError('INTERNAL_ERROR'),
} as const;

/** List metadata of spec §2.5. */
export const ListMetadataSchema = z
  .object({
    total: z.number().int(),
    count: z.number().int(),
    pagination: z.object({ pageSize: z.number().int(), pageIndex: z.number().int() }),
    hasMore: z.boolean().optional(),
  })
  .meta({ id: 'ListMetadata' });

/** The success envelope `{ success: true, data, message }` of spec §2.5 around `data`, as a named schema. */
export function successEnvelope<T extends z.ZodType>(data: T, id: string, message?: string) {
  return z.object({ success: z.literal(true), data, message: z.string().meta(message ? { example: message } : {}) }).meta({ id });
}

/** The list envelope (`data` array plus `metadata`) of spec §2.5 around `item`, as a named schema. */
export function listEnvelope<T extends z.ZodType>(item: T, id: string) {
  return z.object({ success: z.literal(true), data: z.array(item), metadata: ListMetadataSchema, message: z.string() }).meta({ id });
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorEnvelopeSchema } },
});

/** Responses every `/api/v1` operation can give, besides its own. */
export const gatewayResponses = {
  400: errorResponse('VALIDATION_ERROR, QUERY_VALIDATION_ERROR, INVALID_ACCOUNT_ID, UNSUPPORTED_API_VERSION, …'),
  403: { description: 'Missing, unknown, frozen or deleted API key (gateway)', content: { 'application/json': { schema: ForbiddenSchema } } },
  413: errorResponse('PAYLOAD_TOO_LARGE: body over 1 MiB'),
  429: errorResponse('RATE_LIMIT_ERROR: retry after the Retry-After header (seconds)'),
  500: errorResponse('INTERNAL_ERROR'),
} as const;

/** A registry with the shared components (security scheme, envelope) already registered. */
export function createOpenApiRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'ApiKey', { type: 'apiKey', in: 'header', name: 'x-api-key' });
  registry.register('ErrorEnvelope', ErrorEnvelopeSchema);
  registry.register('ListMetadata', ListMetadataSchema);
  return registry;
}

/** The `Idempotency-Key` request header, declared once and referenced by every keyed POST and PATCH. */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Optional. 1–255 printable ASCII characters of your choosing (a UUID works). The first answer (status and body, including 4xx refusals) is kept for 24 hours per account and key mode; a retry with the same key, method, path and body gets it again with `Idempotent-Replayed: true` instead of running twice. The same key with another method, path or body answers 409 IDEMPOTENCY_KEY_REUSED; a retry while the first request still runs waits up to 10 s for it, then answers 409 IDEMPOTENCY_KEY_IN_PROGRESS with `Retry-After`. A 5xx answer is not kept: a retry with the same key runs the request again.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
} as const;

/**
 * Adds the idempotency key header, its replay header and its 409 answers to every POST and PATCH
 * that takes an API key (the webhook and public pages have no key to scope one by).
 */
function addIdempotency(doc: ReturnType<OpenApiGeneratorV31['generateDocument']>): void {
  doc.components ??= {};
  doc.components.parameters = { ...(doc.components.parameters ?? {}), IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of ['post', 'patch'] as const) {
      const op = item?.[method];
      if (!op || (Array.isArray(op.security) && op.security.length === 0)) continue;
      op.parameters = [...(op.parameters ?? []), { $ref: '#/components/parameters/IdempotencyKey' }];
      const bare = !path.startsWith('/api/v1');
      op.responses ??= {};
      op.responses['409'] ??= {
        description: 'IDEMPOTENCY_KEY_REUSED (the key was used for another request) or IDEMPOTENCY_KEY_IN_PROGRESS (its first request is still running; retry after Retry-After seconds)',
        content: { 'application/json': { schema: { $ref: bare ? '#/components/schemas/BareError' : '#/components/schemas/ErrorEnvelope' } } },
      };
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^[24]\d\d$/.test(status) || !response || '$ref' in response) continue;
        response.headers = { ...(response.headers ?? {}), 'Idempotent-Replayed': { description: '`true` when this answer is the stored answer of an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } } };
      }
    }
  }
}

/** Builds the OpenAPI 3.1 document from everything registered. */
export function buildOpenApiDocument(registry: OpenAPIRegistry, serverUrl: string) {
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Insurance products, bundles, quote and certificate service',
      version: 'v1',
      description:
        'Server-to-server JSON API. Every /api/v1 request carries the x-api-key header; responses use the {success, data, message} envelope and carry X-Request-Id.',
    },
    servers: [{ url: serverUrl }],
    security: [{ ApiKey: [] }],
  });
  addIdempotency(doc);
  return doc;
}
