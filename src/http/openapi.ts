/**
 * The OpenAPI 3.1 document, generated from the same zod schemas that validate requests
 * (STYLE practice 7). Each domain registers its paths on the registry passed to it, each
 * operation with an `operationId` and one of the tags of `TAGS` below;
 * `GET /openapi.json` serves the result and `GET /docs` renders it with Swagger UI
 * (assets from the swagger-ui-dist package; nothing is loaded from the network).
 *
 * `buildOpenApiDocument` adds what every operation of a kind shares, after generation: the
 * tag list, the `api-version` and `payproc-account` headers of `/api/v1`, the Idempotency-Key
 * header of keyed POSTs and PATCHes, and the response headers the service sets (`X-Request-Id`
 * on every answer, `X-RateLimit-*` behind a rate limit, `Retry-After` on 429). Text in the
 * document stands on its own: no references to documents outside it.
 * `npm run openapi:lint` checks it with Redocly's recommended rules (see redocly.yaml).
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Adds `.openapi()` to zod schemas; the registry needs it, and it is idempotent.
extendZodWithOpenApi(z);

export { OpenAPIRegistry };

/** The `/api/v1` error envelope `{ success: false, error: { code, message, details? } }`. */
export const ErrorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.string().meta({ description: 'Stable code to branch on' }),
      message: z.string().meta({ description: 'For humans; may change' }),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .meta({ id: 'ErrorEnvelope' });

/** Body of the gateway's 403: not the envelope. */
export const ForbiddenSchema = z.object({ message: z.literal('Forbidden') }).meta({ id: 'GatewayForbidden' });

/**
 * Error body of the unversioned surfaces (`/public-quote`, `/platform-seller-invites`,
 * `/platform-agency-certs`, `/platform-agency-root-certs`): the serialised error,
 * no envelope. Some codes add fields of their own.
 */
export const BareErrorSchema = z
  .object({
    code: z.string().meta({ description: 'Stable code to branch on' }),
    message: z.string().meta({ description: 'For humans; may change' }),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({
    id: 'BareError',
    example: {
      code: 'VALIDATION_ERROR',
      message: 'Invalid request body: buyer_email: Invalid email address',
      details: [{ path: 'buyer_email', message: 'Invalid email address' }],
    },
  });

/** A bare-surface error response with its own description, e.g. `bareError('SELLER_NOT_FOUND: …')`. */
export const bareError = (description: string) => ({
  description,
  content: { 'application/json': { schema: BareErrorSchema } },
});

/**
 * The responses the gateway can give on any operation of a surface: the 400 described as
 * `invalid`, the 403 of a missing or refused API key, 413, 429 and 500, each error in the
 * surface's shape (`error`: the bare error or the `/api/v1` envelope).
 */
function gatewayAnswers<E>(error: (description: string) => E, invalid: string) {
  return {
    400: error(invalid),
    403: {
      description: 'Missing, unknown, frozen or deleted API key (gateway)',
      content: { 'application/json': { schema: ForbiddenSchema } },
    },
    413: error('PAYLOAD_TOO_LARGE: body over 1 MiB'),
    429: error('RATE_LIMIT_ERROR: retry after the Retry-After header (seconds)'),
    500: error('INTERNAL_ERROR'),
  } as const;
}

/** Responses every operation on a bare surface can give, besides its own. */
export const bareSurfaceResponses = gatewayAnswers(bareError, 'VALIDATION_ERROR: the body failed validation or is not JSON');

/** List metadata of the `/api/v1` list envelope. */
export const ListMetadataSchema = z
  .object({
    total: z.number().int(),
    count: z.number().int(),
    pagination: z.object({ pageSize: z.number().int(), pageIndex: z.number().int() }),
    hasMore: z.boolean().optional(),
  })
  .meta({ id: 'ListMetadata' });

/** The success envelope `{ success: true, data, message }` around `data`, as a named schema. */
export function successEnvelope<T extends z.ZodType>(data: T, id: string, message?: string) {
  return z.object({ success: z.literal(true), data, message: z.string().meta(message ? { example: message } : {}) }).meta({ id });
}

/** The list envelope (`data` array plus `metadata`) around `item`, as a named schema. */
export function listEnvelope<T extends z.ZodType>(item: T, id: string) {
  return z.object({ success: z.literal(true), data: z.array(item), metadata: ListMetadataSchema, message: z.string() }).meta({ id });
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorEnvelopeSchema } },
});

/** Responses every `/api/v1` operation can give, besides its own. */
export const gatewayResponses = gatewayAnswers(
  errorResponse,
  'VALIDATION_ERROR, QUERY_VALIDATION_ERROR, INVALID_ACCOUNT_ID, UNSUPPORTED_API_VERSION, …',
);

/**
 * A registry with the components every operation shares (security scheme, envelope, list
 * metadata) already registered. The whole document's registry, with the agency event webhooks
 * too, is `createOpenApiRegistry` in src/app.ts.
 */
export function createSharedOpenApiRegistry(): OpenAPIRegistry {
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
    'Optional. 1–255 printable ASCII characters of your choosing (a UUID works). The first answer (status and body, including 4xx refusals) is kept for 24 hours per account and key mode; a retry with the same key, method, path and parameters (a JSON body is compared by its content: key order and spacing do not matter) gets it again with `Idempotent-Replayed: true` instead of running twice. The same key with another method, path or parameters answers 409 IDEMPOTENCY_KEY_REUSED; a retry while the first request still runs waits up to 10 s for it, then answers 409 IDEMPOTENCY_KEY_IN_PROGRESS with `Retry-After`. A 5xx answer is not kept: a retry with the same key runs the request again.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
} as const;

/**
 * Adds the idempotency key header, its replay header and its 409 answers to every POST and PATCH
 * that takes an API key (the webhook and public pages have no key to scope one by).
 */
function addIdempotency(doc: OpenApiDocument): void {
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
        description:
          'IDEMPOTENCY_KEY_REUSED (the key was used for another request) or IDEMPOTENCY_KEY_IN_PROGRESS (its first request is still running; retry after Retry-After seconds)',
        content: {
          'application/json': { schema: { $ref: bare ? '#/components/schemas/BareError' : '#/components/schemas/ErrorEnvelope' } },
        },
      };
      for (const [status, response] of Object.entries(op.responses)) {
        // The gateway's 403 comes before the key is looked at: never a replay.
        if (!/^[24]\d\d$/.test(status) || status === '403' || !response || '$ref' in response) continue;
        response.headers = {
          ...(response.headers ?? {}),
          'Idempotent-Replayed': {
            description: '`true` when this answer is the stored answer of an earlier request with the same Idempotency-Key',
            schema: { type: 'string', enum: ['true'] },
          },
        };
      }
    }
  }
}

/**
 * Every tag an operation may carry, in the order the reference lists them. The document declares
 * exactly these; an operation tagged otherwise fails Redocly's lint (operation-tag-defined) and
 * the document test.
 */
export const TAGS = [
  {
    name: 'Account',
    description:
      'Who the calling API key is (`/api/v1/account`): its root account and teammates with the ids the other operations ask for, its mode and platform fee. Start an integration here.',
  },
  {
    name: 'Products',
    description:
      'Product lines of the calling account (`/api/v1/products`): what is sold, its price per covered unit and its question set. Creating one creates its product and price at the payment processor.',
  },
  {
    name: 'Purchases',
    description:
      'The calling key’s purchases (`/api/v1/purchases`): each with its items, covered units and their certificates, amounts paid, refunded and outstanding, and what happened to it; and the price of cancelling some of its covered units.',
  },
  {
    name: 'Subscriptions',
    description:
      'The calling key’s subscriptions (`/api/v1/subscriptions`), each named by its first purchase and listing its periods (one purchase each); cancel one at the end of its period or now, with a refund of what has not started.',
  },
  {
    name: 'Bundles',
    description:
      'Bundles of product lines sold together (`/api/v1/bundles`), with their own question set and ownership (insurer, MGA, seller).',
  },
  {
    name: 'Question sets',
    description:
      'The question templates buyers answer (`/api/v1/question_sets`): the shared ones and the account’s own. A template’s coverage question says whether a product covers days or trips.',
  },
  {
    name: 'Webhook endpoints',
    description:
      'The calling account’s own HTTPS endpoints (`/api/v1/webhook_endpoints`) that receive signed events about its purchases, per key mode; the signing secret is shown once, at creation.',
  },
  {
    name: 'Events',
    description:
      'Events recorded about the account’s purchases (`/api/v1/events`), each with its deliveries to the webhook endpoints and their attempts; an event can be sent again.',
  },
  {
    name: 'Parties',
    description:
      'The insurers and MGAs that appointed the calling account (`/api/v1/parties`): the parties its products may name and its bordereaux are for.',
  },
  {
    name: 'Reports',
    description:
      'Premium bordereaux (`/api/v1/reports/bordereaux`): one month’s transactions for one insurer or MGA the account sells for, as a CSV file in the bucket, generated once and never rewritten.',
  },
  {
    name: 'Webhook events',
    description:
      'The signed events this service POSTs to your webhook endpoints (the `webhooks` section): one per type, each with its object; verify the `Signature` header before trusting one.',
  },
  {
    name: 'Test helpers',
    description:
      'Test-mode keys only: pay, fail or expire a test purchase’s checkout without a browser, through the same event handling as a real payment.',
  },
  {
    name: 'Quote',
    description:
      'The buyer’s journey (`/public-quote`, no envelope): the catalog with its question templates, validated and priced answers with a checkout session, and the two other ways to pay (emailed link, saved card).',
  },
  {
    name: 'Buyer connection',
    description:
      'Connects a buyer to the calling seller and hands out the short-lived buyer access token the quote operations need (`/platform-seller-invites`, no envelope).',
  },
  {
    name: 'Certificates',
    description:
      'After payment: certificates and their downloads, invoices, proof-of-coverage emails and purchase search, each for the calling teammate (`/platform-agency-certs`) or for the whole root account (`/platform-agency-root-certs`); and the public verification page behind each certificate’s QR code.',
  },
  {
    name: 'Checkout',
    description:
      'The buyer’s pages (no API key): the live status of a paid purchase with its certificates, the page after a cancelled checkout, and the buyer’s own online withdrawal behind a signed link.',
  },
  {
    name: 'Webhooks',
    description: 'Events the payment processor sends to the service, authenticated by their signature instead of an API key.',
  },
  { name: 'System', description: 'Liveness and readiness probes (no API key).' },
] as const;

type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;
type Operation = NonNullable<NonNullable<OpenApiDocument['paths']>[string]['get']>;
type Components = NonNullable<OpenApiDocument['components']>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Every operation of the document with its path and method. */
function operations(doc: OpenApiDocument): { path: string; method: (typeof METHODS)[number]; op: Operation }[] {
  const out: { path: string; method: (typeof METHODS)[number]; op: Operation }[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item?.[method];
      if (op) out.push({ path, method, op });
    }
  }
  return out;
}

/** The optional headers every `/api/v1` request may carry, checked by the gateway. */
const API_V1_PARAMETERS = {
  ApiVersion: {
    name: 'api-version',
    in: 'header',
    required: false,
    description:
      'Optional. The API version the request is written against; `v1` is the only one. Any other value answers 400 UNSUPPORTED_API_VERSION.',
    schema: { type: 'string', enum: ['v1'] },
  },
  PayprocAccount: {
    name: 'payproc-account',
    in: 'header',
    required: false,
    description: 'Optional. A payment processor account id; when sent it must start with `acct_`, otherwise 400 INVALID_ACCOUNT_ID.',
    schema: { type: 'string', pattern: '^acct_' },
  },
} satisfies Components['parameters'];

/** Adds the `api-version` and `payproc-account` header parameters to every `/api/v1` operation. */
function addApiV1Headers(doc: OpenApiDocument): void {
  doc.components ??= {};
  doc.components.parameters = { ...(doc.components.parameters ?? {}), ...API_V1_PARAMETERS };
  for (const { path, op } of operations(doc)) {
    if (!path.startsWith('/api/v1/')) continue;
    op.parameters = [
      ...(op.parameters ?? []),
      ...Object.keys(API_V1_PARAMETERS).map((name) => ({ $ref: `#/components/parameters/${name}` })),
    ];
  }
}

/** Response headers the service sets, declared once. */
const RESPONSE_HEADERS = {
  XRequestId: {
    description:
      'The request’s id: the caller’s own `X-Request-Id` when it is 1–128 characters of `A-Z a-z 0-9 . _ : -`, otherwise a new UUID. Quote it when reporting a problem.',
    required: true,
    schema: { type: 'string', maxLength: 128 },
  },
  XRateLimitLimit: {
    description:
      'Requests allowed per minute for the limited subject (the API key, or the client address on the public pages). Absent while the limiter’s store is unavailable.',
    schema: { type: 'integer', minimum: 1 },
  },
  XRateLimitRemaining: {
    description: 'Requests left in the current minute for the limited subject. Absent while the limiter’s store is unavailable.',
    schema: { type: 'integer', minimum: 0 },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
} satisfies Components['headers'];

/**
 * Declares the response headers the service sets: `X-Request-Id` on every answer; on operations
 * behind a rate limit (those that document a 429), `X-RateLimit-Limit` and `X-RateLimit-Remaining`
 * on every answer but the gateway's 403 (the key check runs before the limit); `Retry-After` on
 * every 429, and (optional) on the 409 of an Idempotency-Key whose first request still runs.
 */
function addResponseHeaders(doc: OpenApiDocument): void {
  doc.components ??= {};
  doc.components.headers = { ...(doc.components.headers ?? {}), ...RESPONSE_HEADERS };
  const ref = (name: keyof typeof RESPONSE_HEADERS) => ({ $ref: `#/components/headers/${name}` });
  for (const { op } of operations(doc)) {
    const limited = Object.hasOwn(op.responses ?? {}, '429');
    for (const [status, response] of Object.entries(op.responses ?? {})) {
      if (!response || '$ref' in response) continue;
      const headers: NonNullable<typeof response.headers> = { 'X-Request-Id': ref('XRequestId') };
      if (limited && status !== '403')
        Object.assign(headers, { 'X-RateLimit-Limit': ref('XRateLimitLimit'), 'X-RateLimit-Remaining': ref('XRateLimitRemaining') });
      if (status === '429') headers['Retry-After'] = ref('RetryAfter');
      if (status === '409' && (op.parameters ?? []).some((p) => '$ref' in p && p.$ref === '#/components/parameters/IdempotencyKey')) {
        headers['Retry-After'] = {
          description: 'With IDEMPOTENCY_KEY_IN_PROGRESS: seconds to wait before retrying.',
          schema: { type: 'integer', minimum: 1 },
        };
      }
      response.headers = { ...headers, ...(response.headers ?? {}) };
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
        'Server-to-server JSON API for selling insurance products: product lines and bundles, the buyer’s quote and checkout, and the certificates of insurance issued after payment.\n\n' +
        '- `/api/v1` answers with the `{ success, data, message }` envelope (errors: `{ success: false, error: { code, message, details? } }`).\n' +
        '- The quote, buyer connection and certificate surfaces (`/public-quote`, `/platform-seller-invites`, `/platform-agency-certs`, `/platform-agency-root-certs`) answer without an envelope; their errors are `{ code, message, details? }`.\n' +
        '- Every request to those carries the `x-api-key` header; a missing or refused key answers 403 `{ "message": "Forbidden" }`. Each key is rate limited per minute (429 with `Retry-After`).\n' +
        '- Every response carries `X-Request-Id`.',
    },
    servers: [{ url: serverUrl, description: 'This deployment' }],
    security: [{ ApiKey: [] }],
    tags: TAGS.map((t) => ({ ...t })),
  });
  addApiV1Headers(doc);
  addIdempotency(doc);
  addResponseHeaders(doc);
  return doc;
}
