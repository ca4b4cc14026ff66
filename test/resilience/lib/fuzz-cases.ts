/**
 * Fuzz cases for one route, generated from its OpenAPI operation with fast-check under a fixed
 * seed (so a run is reproducible from the printed seed). Each case is one HTTP request of a
 * named kind with what it must get back:
 *
 * - `client-error`: the input is invalid, so the answer must be 4xx in the surface's shape;
 * - `no-server-error`: the input may be valid (a hostile but legal string in a free-text field,
 *   a random object that happens to fit), so a 2xx is allowed; never a 5xx, never a hang.
 *
 * Bodies start from a "plausible" body built from the request schema: tier 1 with made-up ids
 * (so every request fails validation or reads 404), tier 2 with the fuzz account's real ids
 * (so one hostile field at a time reaches the service and the database).
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import type { Inventory, JsonSchema, RouteInfo } from './inventory';
import type { RawRequest, RawResponse } from './http';

export const KINDS = [
  'random-json',
  'random-object',
  'wrong-type',
  'huge-string',
  'over-limit',
  'unicode',
  'proto-keys',
  'sql-meta',
  'html',
  'malformed-json',
  'content-type',
  'bad-path-id',
  'bad-query',
  'no-key',
  'bad-headers',
  'wrong-method',
  'signed-event',
] as const;
export type Kind = (typeof KINDS)[number];

export type Expectation = 'client-error' | 'no-server-error';

export interface FuzzCase {
  kind: Kind;
  route: RouteInfo;
  request: RawRequest;
  expect: Expectation;
  /** Whether the request names a method/path no route has (ROUTE_NOT_FOUND expected). */
  unmatched?: boolean;
  /** Short description for failure reports (the body is cut). */
  label: string;
  /** Further checks of the answer; returns problems. */
  check?: (res: RawResponse) => string[];
}

/** What the generators need to know about the app under test. */
export interface FuzzContext {
  /** A valid API key of the fuzz account (passes the gateway). */
  key: string;
  /** Field name → a valid value of the fuzz account (tier-2 bodies). */
  ids: Record<string, unknown>;
  /** Path parameter name → an existing id of the fuzz account (tier-2 paths). */
  pathIds: Record<string, string>;
  bodyLimitBytes: number;
  webhookSecret: string;
  /** fast-check runs per random kind per route. */
  runs: number;
  seed: number;
}

/** Strings in many scripts and the awkward corners of Unicode (NUL, lone surrogates, RTL override, BOM). */
export const UNICODE_STRINGS = [
  'Ｆｕｌｌｗｉｄｔｈ',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀🏳️‍🌈',
  'مرحبا\u202Egnp.exe\u202C',
  'שלום עולם',
  '\u0000',
  'nul\u0000inside',
  '\ud800',
  'lone \udfff low',
  '\ufeffbom',
  'zero\u200bwidth',
  'e\u0301\u0301\u0301',
  'line\u2028sep\u2029',
  '\u001b[31mred\u001b[0m',
  'Ω'.repeat(300),
];
/** SQL metacharacters and classic injection payloads. */
export const SQL_STRINGS = [
  "' OR 1=1 --",
  "'; DROP TABLE product_lines; --",
  '" OR ""="',
  '1; SELECT pg_sleep(5)',
  "' UNION SELECT null, version() --",
  '\\',
  '%',
  '_%_',
  '$1',
  "\\'; --",
];
/** HTML and template metacharacters. */
export const HTML_STRINGS = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '{{7*7}}',
  '${7*7}',
  '<!--',
  '&lt;&#0;&amp;',
  "javascript:alert('x')",
];

/** Invalid JSON texts (and texts strict JSON parsing refuses at the top level). */
export const MALFORMED_JSON = [
  '{',
  '{"a":',
  "{'a':1}",
  '{"a":1,}',
  '[1,2',
  'NaN',
  '"unterminated',
  '{"a":1}{"b":2}',
  'nul',
  '<xml/>',
  '1',
  'null',
  '"a string"',
  'true',
  '\u0000',
  '{"a":"\\x41"}',
  '{"a":"\\ud800"}',
  `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
  `{"a":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`,
];

const PROTO_MARKER = 'fuzzPolluted';
/** The prototype-pollution keys sent; the suite checks afterwards that `({}).fuzzPolluted` is unset. */
export const PROTO_PAYLOADS = [
  `"__proto__":{"${PROTO_MARKER}":"yes"}`,
  `"constructor":{"prototype":{"${PROTO_MARKER}":"yes"}}`,
  `"prototype":{"${PROTO_MARKER}":"yes"}`,
  `"__proto__":{"toString":"x","valueOf":1,"isAdmin":true}`,
];
export { PROTO_MARKER };

/** Path segments that are not ids (sent raw, already URL-encoded where needed). */
export const BAD_PATH_SEGMENTS = [
  '0',
  '-1',
  '1e309',
  '1.5',
  'abc',
  '9'.repeat(400),
  '2147483648',
  '0x10',
  '%20%31',
  '%D9%A1%D9%A2',
  '%00',
  '%2e%2e',
  '..%2f..%2fetc%2fpasswd',
  "'%20OR%201=1--",
  '%3Cscript%3E',
  '%E0%A4%A',
  '%',
  'null',
  'undefined',
  '__proto__',
  'constructor',
];

/**
 * `encodeURIComponent`, except that a lone surrogate (which it refuses) is sent as its
 * WTF-8 bytes: invalid UTF-8 on the wire, as a hostile client would send it.
 */
export function encodeLoose(s: string): string {
  return s.replace(/[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]|[^]/g, (ch) => {
    if (ch.length === 1 && ch >= '\ud800' && ch <= '\udfff') {
      const c = ch.charCodeAt(0);
      return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    }
    return encodeURIComponent(ch);
  });
}

/** A deterministic 32-bit hash (route keys → per-route seeds). */
export function hash32(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

const typesOf = (s: JsonSchema): string[] => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.anyOf ? s.anyOf.flatMap(typesOf) : []);

/** A plausible value for `schema`: right type, inside the documented bounds. */
export function plausibleValue(schema: JsonSchema, name: string, ids: Record<string, unknown>): unknown {
  if (name in ids) return ids[name];
  const types = typesOf(schema);
  if (schema.enum?.length) return schema.enum[0];
  if (types.includes('string')) {
    if (schema.format === 'uuid') return '00000000-0000-4000-8000-00000000f022';
    if (schema.format === 'email') return 'fuzz@example.com';
    if (schema.pattern?.includes('pm|card|src')) return 'pm_fuzz';
    if (schema.pattern) return 'pi_fuzz_missing';
    return 'fuzz'.padEnd(schema.minLength ?? 1, 'z');
  }
  if (types.includes('integer')) return Math.max(1, schema.minimum ?? 1);
  if (types.includes('number')) return Math.max(1, schema.minimum ?? 1);
  if (types.includes('boolean')) return false;
  if (types.includes('array')) return (schema.minItems ?? 0) > 0 && schema.items ? [plausibleValue(schema.items, `${name}[]`, ids)] : [];
  if (types.includes('object')) return plausibleBody(schema, ids);
  return null;
}

/** A plausible body for an object schema: every required field, plus every field named in `ids`. */
export function plausibleBody(schema: JsonSchema, ids: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    if ((schema.required ?? []).includes(name) || name in ids) out[name] = plausibleValue(s, name, ids);
  }
  return out;
}

const WRONG_VALUES: unknown[] = [null, true, 0, -1, 1.5, 1e308, '', 'x', [], {}, [1, 'a'], { a: 1 }];

function jsType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** Values whose JSON type the field's schema does not allow. */
export function wrongTypeValues(schema: JsonSchema): unknown[] {
  const allowed = typesOf(schema);
  if (!allowed.length) return [];
  return WRONG_VALUES.filter((v) => {
    const t = jsType(v);
    return !(allowed.includes(t) || (t === 'integer' && allowed.includes('number')));
  });
}

/** Fills the route's path parameters: `values[param]`, else a well-formed id that does not exist. */
export function concretePath(route: RouteInfo, values: Record<string, string> = {}): string {
  return route.path.replace(/:(\w+)/g, (_m, p: string) => values[p] ?? missingPathValue(p));
}

function missingPathValue(param: string): string {
  if (param === 'code') return 'COI-1-1-1-FUZZ000000';
  if (param === 'asset') return 'swagger-ui.css';
  return '2147483000';
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/** Builds a JSON text from `base` with a raw `"key":value` member spliced in first. */
function withRawMember(base: Record<string, unknown>, member: string): string {
  const text = JSON.stringify(base);
  return text === '{}' ? `{${member}}` : `{${member},${text.slice(1)}`;
}

/** A signed processor webhook header for `payload` (the processor's scheme: t=…,v1=HMAC-SHA256). */
export function signWebhook(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

function sample<T>(arb: fc.Arbitrary<T>, seed: number, n: number): T[] {
  return n > 0 ? fc.sample(arb, { seed, numRuns: n }) : [];
}

/**
 * Every fuzz case for `route` (see the file comment for the kinds and expectations). The
 * same `ctx.seed` gives the same cases.
 */
export function casesFor(route: RouteInfo, inventory: Inventory, ctx: FuzzContext): FuzzCase[] {
  const cases: FuzzCase[] = [];
  const seed = (ctx.seed ^ hash32(route.key)) >>> 0;
  const keyHeaders: Record<string, string> = route.gated ? { 'x-api-key': ctx.key } : {};
  // A public route with no path parameter names a real resource on every request (the published
  // keys): like the system routes, a request to it without a key or with a query it ignores may
  // be answered 2xx, never 5xx. Elsewhere the fuzzed path names nothing, so a refusal is due.
  const fixedPublic = route.surface === 'public' && route.params.length === 0;
  const invalid: Expectation = route.surface === 'system' || fixedPublic ? 'no-server-error' : 'client-error';
  const op = route.operation;
  const bodySchema = op?.body;
  const hasBody = !!bodySchema || route.surface === 'webhook';
  const tier1Path = concretePath(route);
  const tier2Path = concretePath(route, ctx.pathIds);
  const add = (kind: Kind, request: RawRequest, expect: Expectation, label: string, unmatched = false) =>
    cases.push({ kind, route, request: { ...request, headers: { ...keyHeaders, ...request.headers } }, expect, label, unmatched });

  const base1 = bodySchema ? plausibleBody(bodySchema, {}) : {};
  const base2 = bodySchema ? plausibleBody(bodySchema, ctx.ids) : {};
  const fields = Object.entries(bodySchema?.properties ?? {});
  const stringFields = fields.filter(([, s]) => typesOf(s).includes('string'));
  const strict = bodySchema?.additionalProperties === false;
  const json = (path: string, body: string, headers: Record<string, string> = JSON_HEADERS): RawRequest => ({
    method: route.method,
    path,
    headers,
    body,
  });

  if (hasBody) {
    for (const v of sample(fc.jsonValue({ maxDepth: 4 }), seed + 1, ctx.runs)) {
      add(
        'random-json',
        json(tier1Path, JSON.stringify(v)),
        route.surface === 'webhook' ? 'client-error' : 'no-server-error',
        `random JSON ${JSON.stringify(v).slice(0, 60)}`,
      );
    }
    const names = fields.map(([n]) => n);
    const keyArb = names.length ? fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 12 })) : fc.string({ maxLength: 12 });
    for (const v of sample(fc.dictionary(keyArb, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }), seed + 2, ctx.runs)) {
      add('random-object', json(tier1Path, JSON.stringify(v)), 'no-server-error', `random object ${JSON.stringify(v).slice(0, 60)}`);
    }
    for (const [name, s] of fields) {
      for (const v of wrongTypeValues(s))
        add('wrong-type', json(tier1Path, JSON.stringify({ ...base1, [name]: v })), invalid, `${name} = ${JSON.stringify(v)}`);
    }
    for (const [name] of stringFields) {
      add(
        'huge-string',
        json(tier2Path, JSON.stringify({ ...base2, [name]: 'A'.repeat(100 * 1024) })),
        'no-server-error',
        `${name} = 100 KB ASCII`,
      );
      add(
        'huge-string',
        json(tier2Path, JSON.stringify({ ...base2, [name]: '€😀'.repeat(17 * 1024) })),
        'no-server-error',
        `${name} = 100 KB multibyte`,
      );
    }
    const padField = stringFields[0]?.[0] ?? 'pad';
    add(
      'over-limit',
      json(tier2Path, JSON.stringify({ ...base2, [padField]: 'B'.repeat(ctx.bodyLimitBytes + 1024) })),
      invalid,
      `body of ${ctx.bodyLimitBytes + 1024} bytes`,
    );
    add(
      'over-limit',
      json(tier2Path, JSON.stringify({ ...base2, [padField]: 'C'.repeat(5 * ctx.bodyLimitBytes) })),
      invalid,
      `body of ${5 * ctx.bodyLimitBytes} bytes`,
    );
    const stringKinds: [Kind, string[]][] = [
      ['unicode', [...UNICODE_STRINGS, ...sample(fc.string({ unit: 'binary', maxLength: 40 }), seed + 3, 4)]],
      ['sql-meta', SQL_STRINGS],
      ['html', HTML_STRINGS],
    ];
    for (const [kind, values] of stringKinds) {
      for (const [name] of stringFields) {
        for (const v of values)
          add(
            kind,
            json(tier2Path, JSON.stringify({ ...base2, [name]: v })),
            'no-server-error',
            `${name} = ${JSON.stringify(v).slice(0, 40)}`,
          );
      }
    }
    for (const p of PROTO_PAYLOADS) {
      add('proto-keys', json(tier2Path, withRawMember(base2, p)), strict ? invalid : 'no-server-error', `top-level ${p.slice(0, 40)}`);
      add('proto-keys', json(tier1Path, `{${p}}`), strict ? invalid : 'no-server-error', `only ${p.slice(0, 40)}`);
      for (const [name, s] of fields) {
        const t = typesOf(s);
        if (t.includes('array') && s.items && typesOf(s.items).includes('object')) {
          add(
            'proto-keys',
            json(
              tier2Path,
              JSON.stringify({ ...base2, [name]: '__RAW__' }).replace(
                '"__RAW__"',
                `[${withRawMember((base2[name] as Record<string, unknown>[] | undefined)?.[0] ?? {}, p)}]`,
              ),
            ),
            'no-server-error',
            `${name}[0] with ${p.slice(0, 30)}`,
          );
        }
      }
    }
    for (const text of MALFORMED_JSON)
      add('malformed-json', json(tier1Path, text), invalid, `malformed ${JSON.stringify(text.slice(0, 30))}`);
    const b1 = JSON.stringify(base1);
    const contentTypes: [Record<string, string>, string | Buffer][] = [
      [{ 'content-type': 'text/plain' }, b1],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, 'a=1&__proto__[fuzzPolluted]=yes'],
      [{ 'content-type': 'multipart/form-data; boundary=x' }, '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--'],
      [{ 'content-type': 'application/xml' }, '<a>1</a>'],

      [{ 'content-type': 'application/json', 'content-encoding': 'gzip' }, Buffer.from('not gzip at all')],
      [{ 'content-type': 'application/json', 'content-encoding': 'br' }, Buffer.from([0xff, 0x00, 0x13])],
      [{ 'content-type': 'application/json', 'content-encoding': 'x-unknown' }, b1],
      [{}, b1],
      [{ 'content-type': 'application/json' }, Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xff, 0xfe])],
    ];
    for (const [headers, body] of contentTypes)
      add('content-type', { method: route.method, path: tier1Path, headers, body }, invalid, `content-type ${JSON.stringify(headers)}`);
    // A JSON body under a charset label it does not have is read as UTF-8 (koa-bodyparser): it may be accepted.
    for (const charset of ['utf-16', 'nonsense']) {
      add(
        'content-type',
        { method: route.method, path: tier1Path, headers: { 'content-type': `application/json; charset=${charset}` }, body: b1 },
        'no-server-error',
        `content-type charset=${charset}`,
      );
    }
  }

  if (route.params.length) {
    for (const param of route.params) {
      for (const seg of BAD_PATH_SEGMENTS) {
        const path = route.path.replace(/:(\w+)/g, (_m, p: string) => (p === param ? seg : missingPathValue(p)));
        // A dot segment (`%2e%2e`) is resolved by the URL parser before the request leaves: it goes
        // to the parent path, which may be another route (`/purchases/%2e%2e/claims` is `/claims`).
        const resolvedElsewhere = new URL(path, 'http://fuzz.invalid').pathname !== path.split('?')[0];
        add(
          'bad-path-id',
          { method: route.method, path, ...(hasBody ? { headers: JSON_HEADERS, body: JSON.stringify(base1) } : {}) },
          resolvedElsewhere ? 'no-server-error' : invalid,
          `${param} = ${seg.slice(0, 30)}`,
        );
      }
      // Random segments, except canonical ids (one could name a real record: DELETE would delete it).
      for (const s of sample(
        fc.string({ minLength: 1, maxLength: 30 }).filter((x) => !/^[1-9][0-9]*$/.test(x)),
        seed + 4,
        Math.ceil(ctx.runs / 3),
      )) {
        const path = route.path.replace(/:(\w+)/g, (_m, p: string) => (p === param ? encodeLoose(s) : missingPathValue(p)));
        add(
          'bad-path-id',
          { method: route.method, path, ...(hasBody ? { headers: JSON_HEADERS, body: JSON.stringify(base1) } : {}) },
          invalid,
          `${param} = ${JSON.stringify(s)}`,
        );
      }
    }
  }

  if (route.method === 'GET') {
    const known = op?.query ?? [];
    const q = (pairs: [string, string][]) => `${tier1Path}?${pairs.map(([k, v]) => `${encodeLoose(k)}=${encodeLoose(v)}`).join('&')}`;
    // Lists reject unknown parameters (spec §4.1); elsewhere a query string is ignored.
    const listRoute = known.length > 0;
    const queryInvalid: Expectation = listRoute ? 'client-error' : route.surface === 'system' ? 'no-server-error' : invalid;
    for (const { name, schema } of known) {
      const bad: string[] = [];
      if (schema.enum) bad.push('TRUE', 'yes', '', `${String(schema.enum[0])};drop`, String(schema.enum[0]).toUpperCase() + 'X');
      else if (schema.pattern) bad.push('abc', '1.5', '1e3', '-99999', '99999999999', '', '0x1', ' 1', '١', "1' OR '1'='1");
      else bad.push('s'.repeat((schema.maxLength ?? 255) + 1), 'Ω'.repeat((schema.maxLength ?? 255) + 1));
      for (const v of bad) add('bad-query', { method: 'GET', path: q([[name, v]]) }, queryInvalid, `${name}=${v.slice(0, 30)}`);
      add(
        'bad-query',
        {
          method: 'GET',
          path: q([
            [name, '1'],
            [name, '2'],
          ]),
        },
        queryInvalid,
        `${name} repeated`,
      );
      if (!schema.enum && !schema.pattern) {
        for (const v of [...SQL_STRINGS, ...HTML_STRINGS, ...UNICODE_STRINGS])
          add(kindOf(v), { method: 'GET', path: q([[name, v]]) }, 'no-server-error', `${name}=${JSON.stringify(v).slice(0, 30)}`);
      }
    }
    for (const k of ['fuzz_unknown', 'constructor', 'toString', 'hasOwnProperty', '__proto__[fuzzPolluted]']) {
      add('bad-query', { method: 'GET', path: q([[k, '1']]) }, queryInvalid, `unknown ${k}`);
    }
    // Koa's query parser drops a `__proto__` key (assigning a string to it is a no-op), so the
    // list sees no parameter at all: may answer 200. The pollution check runs after the pass.
    add('bad-query', { method: 'GET', path: q([['__proto__', '1']]) }, 'no-server-error', 'key __proto__');
    add(
      'bad-query',
      {
        method: 'GET',
        path: q([
          ['__proto__', '1'],
          ['__proto__', '2'],
        ]),
      },
      'no-server-error',
      'key __proto__ repeated',
    );
    add('bad-query', { method: 'GET', path: `${tier1Path}?${'a=1&'.repeat(2000)}` }, queryInvalid, '2000 repeated pairs');
    add('bad-query', { method: 'GET', path: `${tier1Path}?%E0%A4%A=1&%=%` }, queryInvalid, 'malformed percent-encoding');
    const names = new Set(known.map((k) => k.name));
    for (const d of sample(
      fc.dictionary(
        fc.string({ maxLength: 10 }).filter((k) => !names.has(k)),
        fc.string({ maxLength: 20 }),
        { minKeys: 1, maxKeys: 4 },
      ),
      seed + 5,
      ctx.runs,
    )) {
      add('bad-query', { method: 'GET', path: q(Object.entries(d)) }, queryInvalid, `random query ${JSON.stringify(d).slice(0, 50)}`);
    }
  }

  // Without a valid key: missing, malformed, well-formed but unknown, huge.
  const anyBody = hasBody ? { headers: JSON_HEADERS, body: JSON.stringify(base1) } : {};
  const keyless = route.gated ? 'client-error' : route.surface === 'system' ? 'no-server-error' : invalid;
  for (const key of [
    undefined,
    '',
    'not-a-key',
    `ik_live_${'A'.repeat(43)}`,
    `ik_test_${'é'.repeat(43)}`,
    'x'.repeat(8 * 1024),
    `${ctx.key.slice(0, -1)}`,
    `${ctx.key}x`,
  ]) {
    const headers: Record<string, string> = { ...(anyBody.headers ?? {}) };
    if (key !== undefined) headers['x-api-key'] = key;
    cases.push({
      kind: 'no-key',
      route,
      request: { method: route.method, path: tier1Path, headers, body: anyBody.body },
      expect: keyless,
      label: `x-api-key ${key === undefined ? 'missing' : JSON.stringify(key.slice(0, 20))}`,
    });
  }

  // Gateway headers (spec §5.6, §9.1), and a log-injection attempt through the request id.
  const gatewayHeaders: Record<string, string>[] = [
    { 'api-version': 'v2' },
    { 'api-version': '' },
    { 'payproc-account': 'nope' },
    { 'payproc-account': '' },
    { 'x-request-id': 'evil id\twith tab' },
    { 'x-request-id': 'z'.repeat(5000) },
  ];
  for (const headers of gatewayHeaders) {
    const rejected = route.surface === 'api-v1' && !('x-request-id' in headers);
    const sentId = headers['x-request-id'];
    add(
      'bad-headers',
      { method: route.method, path: tier1Path, headers: { ...(anyBody.headers ?? {}), ...headers }, body: anyBody.body },
      rejected ? 'client-error' : 'no-server-error',
      `headers ${JSON.stringify(headers).slice(0, 50)}`,
    );
    // A malformed request id is replaced, never echoed (log injection; docs/decisions.md).
    if (sentId !== undefined)
      cases[cases.length - 1]!.check = (res) => (res.headers.get('x-request-id') === sentId ? ['malformed X-Request-Id echoed'] : []);
  }

  // Methods the path does not have: ROUTE_NOT_FOUND (no 405; docs/decisions.md).
  const mounted = inventory.methodsByPath.get(route.path) ?? new Set<string>();
  if ([...mounted][0] === route.method) {
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((x) => !mounted.has(x) && !(x === 'GET' && mounted.has('HEAD')))) {
      add(
        'wrong-method',
        { method: m, path: tier1Path, ...(m === 'GET' || m === 'DELETE' ? {} : anyBody) },
        'client-error',
        `${m} ${route.path}`,
        true,
      );
    }
  }

  if (route.surface === 'webhook') {
    const signed = (payload: string, label: string, ts?: number) =>
      add(
        'signed-event',
        {
          method: 'POST',
          path: tier1Path,
          headers: { ...JSON_HEADERS, 'stripe-signature': signWebhook(payload, ctx.webhookSecret, ts) },
          body: payload,
        },
        'client-error',
        label,
      );
    const shapes = [
      '{}',
      '[]',
      '{"id":"evt_fuzz_1"}',
      '{"id":"evt_fuzz_2","type":"checkout.session.completed"}',
      '{"id":5,"type":[],"data":{"object":null}}',
      '{"id":"evt_fuzz_3","type":"charge.refunded","data":{"object":"x"}}',
      `{"id":"${'e'.repeat(5000)}","type":"x","data":{"object":{}}}`,
      '{"id":"evt_fuzz_4","type":"invoice.paid","data":{"object":{"billing_reason":"subscription_cycle","id":7}}}',
    ];
    for (const s of shapes) signed(s, `signed ${s.slice(0, 50)}`);
    for (const v of sample(fc.jsonValue({ maxDepth: 3 }), seed + 6, ctx.runs))
      signed(JSON.stringify(v), `signed random ${JSON.stringify(v).slice(0, 50)}`);
    // Forged or stale signatures over a well-formed event.
    const event = JSON.stringify({
      id: 'evt_fuzz_forged',
      object: 'event',
      type: 'checkout.session.completed',
      livemode: false,
      created: 1,
      data: { object: { id: 'cs_x', metadata: { purchase_id: '1' } } },
    });
    add(
      'signed-event',
      { method: 'POST', path: tier1Path, headers: { ...JSON_HEADERS, 'stripe-signature': signWebhook(event, 'whsec_wrong') }, body: event },
      'client-error',
      'signature with another secret',
    );
    add(
      'signed-event',
      {
        method: 'POST',
        path: tier1Path,
        headers: { ...JSON_HEADERS, 'stripe-signature': signWebhook(event, ctx.webhookSecret, 1_000_000) },
        body: event,
      },
      'client-error',
      'signature from 1970',
    );
    for (const sig of ['', 't=', 'v1=', 't=abc,v1=zz', `t=${'9'.repeat(400)},v1=${'a'.repeat(64)}`]) {
      add(
        'signed-event',
        { method: 'POST', path: tier1Path, headers: { ...JSON_HEADERS, 'stripe-signature': sig }, body: event },
        'client-error',
        `signature header ${JSON.stringify(sig.slice(0, 30))}`,
      );
    }
  }
  return cases;
}

function kindOf(v: string): Kind {
  if (SQL_STRINGS.includes(v)) return 'sql-meta';
  if (HTML_STRINGS.includes(v)) return 'html';
  return 'unicode';
}
