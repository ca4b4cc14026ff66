/**
 * Building blocks the `/api/v1` resource domains share (products, question sets, subscriptions,
 * bordereaux, events, webhook endpoints, …): the two handler shapes every resource repeats
 * (a paged list, an operation on one numeric path id) and the OpenAPI pieces that describe
 * them (an error response in the envelope, the `{id}` path parameter, a list operation, an
 * operation taking a JSON body). Each
 * produces exactly what the hand-written copies did, so routes, wire shapes and the OpenAPI
 * document are unchanged by using them.
 */
import type Router from '@koa/router';
import { z } from 'zod';
import type { Principal } from '../api-keys/service';
import type { AppState } from './context';
import { ok } from './envelope';
import { ErrorEnvelopeSchema, gatewayResponses, listEnvelope, type OpenAPIRegistry } from './openapi';
import { listMetadata } from './query';
import { parseBody, parsePathId, parseQuery } from './validation';

type ApiRouter = Router<AppState>;

/** A page of a list: the rows of this page and how many match in all. */
export interface ListPage<T> {
  items: T[];
  total: number;
}

/**
 * `GET path`: parses the query with `query` (→ 400 QUERY_VALIDATION_ERROR listing every
 * problem), lists the caller's page and answers 200 with the list envelope: `data` the page's
 * items, `metadata` their total, count and `pageSize`/`pageIndex` (spec §2.5, no `hasMore`).
 */
export function listRoute<S extends z.ZodType<{ pageSize: number; pageIndex: number }>>(
  router: ApiRouter,
  path: string,
  query: S,
  list: (principal: Principal, q: z.output<S>) => Promise<ListPage<unknown>>,
  message: string,
): void {
  router.get(path, async (ctx) => {
    const q = parseQuery(query, ctx.query);
    const page = await list(ctx.state.principal!, q);
    ctx.body = ok(page.items, message, listMetadata(page.total, page.items.length, q.pageSize, q.pageIndex));
  });
}

/**
 * `method path` on one resource named by the `:id` path parameter: the id must be a positive
 * integer of at most 2^31-1 (else 400 VALIDATION_ERROR "id must be a positive integer, got …");
 * then, with a `body` schema, the JSON body is parsed (else 400 VALIDATION_ERROR listing every
 * problem); `run` gets the caller, the id and the parsed body, and its result is answered 200 in
 * the success envelope with `message`.
 */
export function idRoute<S extends z.ZodType>(
  router: ApiRouter,
  method: 'get' | 'post' | 'patch' | 'delete',
  path: string,
  run: (principal: Principal, id: number, body: z.output<S>) => Promise<unknown>,
  message: string,
  body?: S,
): void {
  router[method](path, async (ctx) => {
    const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
    const parsed = body === undefined ? undefined : parseBody(body, ctx.request.body);
    ctx.body = ok(await run(ctx.state.principal!, id, parsed as z.output<S>), message);
  });
}

/** What a `scopedIdRoute` answers: its status (200 unless said), its `data` and its message. */
export interface RouteAnswer {
  status?: number;
  data: unknown;
  message: string;
}

/** What `scopedIdRoute` runs: the scope check, the body's schema, the operation and its answer. */
export interface ScopedIdOperation<S extends z.ZodType, R> {
  /** Throws (404 NOT_FOUND, or the route's own refusal) when the resource `id` is not the caller's. */
  scope: (principal: Principal, id: number) => Promise<unknown>;
  /** The JSON body's schema (an absent body is parsed as `{}`). */
  body: S;
  /** The operation; `header` reads a request header ('' when absent). */
  run: (principal: Principal, id: number, body: z.output<S>, header: (name: string) => string) => Promise<R>;
  /** The message answered with `run`'s result (200), or the whole answer made from the result and the body. */
  answer: string | ((result: R, body: z.output<S>) => RouteAnswer);
}

/**
 * `method path` on one resource that must be the caller's before its body is read: the `:id` is
 * parsed as `idRoute` parses it (400 VALIDATION_ERROR), then `op.scope` runs (so another
 * account's id reads 404 NOT_FOUND whatever is sent), then the body is parsed with `op.body`
 * (400 VALIDATION_ERROR listing every problem), then `op.run`; its result is answered in the
 * success envelope as `op.answer` says.
 */
export function scopedIdRoute<S extends z.ZodType, R>(
  router: ApiRouter,
  method: 'post' | 'patch' | 'put' | 'delete',
  path: string,
  op: ScopedIdOperation<S, R>,
): void {
  router[method](path, async (ctx) => {
    const id = parsePathId(ctx.params.id, 'VALIDATION_ERROR');
    await op.scope(ctx.state.principal!, id);
    const body = parseBody(op.body, ctx.request.body ?? {});
    const result = await op.run(ctx.state.principal!, id, body, (name) => ctx.get(name));
    const a: RouteAnswer = typeof op.answer === 'string' ? { data: result, message: op.answer } : op.answer(result, body);
    ctx.status = a.status ?? 200;
    ctx.body = ok(a.data, a.message);
  });
}

/** An OpenAPI response answering `schema` as JSON, with its `description`. */
export function jsonResponse(description: string, schema: z.ZodType) {
  return { description, content: { 'application/json': { schema } } };
}

/** An OpenAPI request body of `schema` as JSON (`required` unless said otherwise). */
export function jsonBody(schema: z.ZodType, required = true) {
  return { required, content: { 'application/json': { schema } } };
}

/** An OpenAPI error response: the `/api/v1` error envelope, `description` naming the codes. */
export function errorResponse(description: string) {
  return jsonResponse(description, ErrorEnvelopeSchema);
}

/** The OpenAPI `{id}` path parameter of a resource, as text with its description and example. */
export function idParam(description: string, example: string) {
  return z.object({ id: z.string().meta({ description, example }) });
}

/** An OpenAPI response object, as `jsonResponse` and `errorResponse` build it. */
export type JsonResponse = ReturnType<typeof jsonResponse>;

/** What `registerIdPath` documents: an operation on one resource named by its path parameters. */
export interface IdOperation {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  params: z.ZodObject;
  /** Its JSON request body (required), if it takes one. */
  body?: z.ZodType;
  /** The 200 answer (none for an operation that only creates: its 201 goes in `responses`). */
  ok?: JsonResponse;
  /** The 404 answer (NOT_FOUND: which resource is not the caller's). */
  notFound: JsonResponse;
  /** Responses of its own beside the gateway's (replacing the gateway's of the same status). */
  responses?: Record<number, JsonResponse>;
}

/**
 * Registers an operation on one resource in the OpenAPI document: its path parameters and body,
 * the 200 answer, the 404, the gateway's responses and the operation's own.
 */
export function registerIdPath(registry: OpenAPIRegistry, op: IdOperation): void {
  const responses: Record<number, JsonResponse> = { 404: op.notFound, ...gatewayResponses, ...op.responses };
  if (op.ok !== undefined) responses[200] = op.ok;
  register(registry, op, { params: op.params, ...(op.body === undefined ? {} : { body: jsonBody(op.body) }) }, responses);
}

/** The names and texts every registered operation has. */
interface OperationNames {
  path: string;
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
}

/** Registers `op` as `method` with its request parts and responses (the description only when it has one). */
function register(
  registry: OpenAPIRegistry,
  op: OperationNames & { method?: 'get' | 'post' | 'patch' | 'put' | 'delete' },
  request: Record<string, unknown>,
  responses: Record<number, JsonResponse>,
): void {
  registry.registerPath({
    method: op.method ?? 'get',
    path: op.path,
    operationId: op.operationId,
    tags: op.tags,
    summary: op.summary,
    ...(op.description === undefined ? {} : { description: op.description }),
    request,
    responses,
  });
}

/** What `registerListPath` documents: the operation's names and texts, its query, its item. */
export interface ListOperation {
  path: string;
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  query: z.ZodObject;
  /** The schema of one item and the component id of the list envelope around it. */
  item: z.ZodType;
  envelopeId: string;
  /** Responses of its own beside the gateway's (replacing the gateway's of the same status). */
  responses?: Record<number, JsonResponse>;
}

/**
 * Registers a `GET` list operation in the OpenAPI document: its query, a 200 "A page" of the
 * list envelope around `item`, the gateway's responses and the operation's own.
 */
export function registerListPath(registry: OpenAPIRegistry, op: ListOperation): void {
  register(
    registry,
    op,
    { query: op.query },
    { 200: jsonResponse('A page', listEnvelope(op.item, op.envelopeId)), ...gatewayResponses, ...op.responses },
  );
}

/** What `registerBodyPath` documents: an operation taking a JSON body on a path without parameters. */
export interface BodyOperation {
  method: 'post' | 'patch' | 'put';
  path: string;
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  /** Its JSON request body (required). */
  body: z.ZodType;
  /** Its answers: the success answer and any of its own (replacing the gateway's of the same status). */
  responses: Record<number, JsonResponse>;
}

/**
 * Registers an operation that takes a JSON body (a create, a request for a report, a batch) in the
 * OpenAPI document: the required body, the gateway's responses and the operation's own answers.
 */
export function registerBodyPath(registry: OpenAPIRegistry, op: BodyOperation): void {
  register(registry, op, { body: jsonBody(op.body) }, { ...gatewayResponses, ...op.responses });
}
