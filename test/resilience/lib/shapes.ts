/**
 * What an error answer must look like on each surface, and what no answer may contain.
 *
 * - `/api/v1`: the envelope `{ success: false, error: { code, message, details? } }` of spec
 *   §2.5 with a §7.1 code (plus PAYLOAD_TOO_LARGE, ARCHITECTURE §4) whose status matches.
 * - the gateway's 403 on gated surfaces: exactly `{"message":"Forbidden"}` (spec §5.2).
 * - quote, buyer and certificate surfaces and the webhook (spec §7.2): a non-200 JSON body
 *   `{ code, message, … }` carrying the reason.
 * - the public pages (verification, checkout return pages): that bare body, or their HTML
 *   not-found page.
 * - anything else unmatched: ROUTE_NOT_FOUND in the envelope.
 * No body may carry a stack frame, a source path, or database error text.
 */
import { ERROR_STATUS } from '../../../src/shared/errors';
import type { Surface } from './inventory';
import type { RawResponse } from './http';

/** The codes of spec §7.1 plus PAYLOAD_TOO_LARGE (ARCHITECTURE §4) and the idempotency-key 409s: what `/api/v1` may answer. */
export const API_V1_CODES = new Set([
  'VALIDATION_ERROR',
  'QUERY_VALIDATION_ERROR',
  'INVALID_BUNDLE_ID',
  'INVALID_ACCOUNT_ID',
  'UNSUPPORTED_API_VERSION',
  'CARD_ERROR',
  'INVALID_REQUEST',
  'AUTHENTICATION_ERROR',
  'NOT_FOUND',
  'ROUTE_NOT_FOUND',
  'RATE_LIMIT_ERROR',
  'INTERNAL_ERROR',
  'API_ERROR',
  'CONNECTION_ERROR',
  'PAYLOAD_TOO_LARGE',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_KEY_IN_PROGRESS',
]);

/** Patterns of internals that must never reach a client: stack frames, source paths, SQL errors. */
export const LEAK_PATTERNS: { name: string; re: RegExp }[] = [
  { name: 'stack frame', re: /\n\s+at [^\n]+[:(]\d+:\d+\)?/ },
  { name: 'stack frame', re: /\bat (?:async )?[\w$.<>]+ \((?:\/|node:|file:)[^)]*\)/ },
  { name: 'source path', re: /\/work\/|node_modules|\/src\/[\w/-]+\.[tj]s\b|\.ts:\d+/ },
  { name: 'error class', re: /\b(?:TypeError|ReferenceError|RangeError|SyntaxError|ZodError|DatabaseError|KnexTimeoutError)\b/ },
  {
    name: 'SQL error',
    re: /syntax error at or near|violates (?:not-null|unique|foreign key|check) constraint|invalid input syntax for|invalid byte sequence for encoding|relation "[^"]+" does not exist|column "[^"]+" (?:does not exist|of relation)|unterminated quoted string|out of range for type/i,
  },
  { name: 'SQL text', re: /\b(?:select|update|delete from|insert into)\b[^\n]{0,200}"\w+"\."\w+"|\bwhere "\w+"\s*=\s*\$\d/i },
];

/** Names of the leak patterns found in `text`; empty when clean. */
export function findLeaks(text: string): string[] {
  return [...new Set(LEAK_PATTERNS.filter((p) => p.re.test(text)).map((p) => p.name))];
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Problems with an error body that should be `{ code, message, … }` with a known code and matching status. */
function bareProblems(res: RawResponse): string[] {
  const b = res.json;
  if (!isObj(b)) return [`expected a JSON error body, got ${res.contentType || 'no content type'}: ${res.text.slice(0, 120)}`];
  if (typeof b.code !== 'string' || typeof b.message !== 'string' || !b.message)
    return [`expected { code, message }, got ${res.text.slice(0, 200)}`];
  if (!(b.code in ERROR_STATUS)) return [`unknown code ${b.code}`];
  const expected = ERROR_STATUS[b.code as keyof typeof ERROR_STATUS];
  // An expired buyer token keeps its code with a 401 (docs/decisions.md); codes carry their status otherwise.
  if (expected !== res.status && !(b.code === 'ACCESS_TOKEN_EXPIRED' && res.status === 401))
    return [`code ${b.code} with status ${res.status} (expected ${expected})`];
  return [];
}

/** Problems with an `/api/v1` error envelope. */
function envelopeProblems(res: RawResponse): string[] {
  const b = res.json;
  if (!isObj(b) || b.success !== false || !isObj(b.error)) return [`expected the §2.5 error envelope, got ${res.text.slice(0, 200)}`];
  const { code, message, details } = b.error;
  const extra = Object.keys(b).filter((k) => k !== 'success' && k !== 'error');
  if (extra.length) return [`unexpected envelope fields ${extra.join(', ')}`];
  if (typeof code !== 'string' || !API_V1_CODES.has(code)) return [`code ${String(code)} is not a §7.1 code`];
  if (typeof message !== 'string' || !message) return ['error.message missing'];
  if (details !== undefined && !Array.isArray(details)) return ['error.details is not an array'];
  if (ERROR_STATUS[code as keyof typeof ERROR_STATUS] !== res.status) return [`code ${code} with status ${res.status}`];
  return [];
}

/** True when the body is exactly the gateway's `{"message":"Forbidden"}`. */
export function isGatewayForbidden(res: RawResponse): boolean {
  return res.status === 403 && isObj(res.json) && Object.keys(res.json).length === 1 && res.json.message === 'Forbidden';
}

/**
 * Problems with an error answer (status ≥ 400) of a route on `surface`; empty when it has the
 * spec's shape. `routeMatched` false means the request was for a method/path no route mounts
 * (ROUTE_NOT_FOUND is then the expected answer, in the surface's shape).
 */
export function errorShapeProblems(surface: Surface, gated: boolean, res: RawResponse): string[] {
  if (res.status === 403 && gated)
    return isGatewayForbidden(res) ? [] : [`gateway 403 body is not exactly {"message":"Forbidden"}: ${res.text.slice(0, 120)}`];
  if (!res.headers.get('x-request-id')) return ['no X-Request-Id header'];
  switch (surface) {
    case 'api-v1':
      return envelopeProblems(res);
    case 'bare':
    case 'webhook':
      return bareProblems(res);
    case 'public':
      // The public pages: the bare body for JSON clients, their own HTML page otherwise (404 for
      // what does not exist, 400 for a refused input such as a verification link's proof that
      // does not verify), or ROUTE_NOT_FOUND (envelope) for a method they do not have.
      if (res.contentType.startsWith('text/html'))
        return (res.status === 404 || res.status === 400) && res.text.length > 0 ? [] : [`HTML error page with status ${res.status}`];
      return isObj(res.json) && 'success' in res.json ? envelopeProblems(res) : bareProblems(res);
    case 'system':
      return envelopeProblems(res);
  }
}
