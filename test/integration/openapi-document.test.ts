/**
 * The OpenAPI 3.1 document `GET /openapi.json` serves, as a whole: every operation has a unique
 * operationId and a declared tag, every request body says whether it is required, `/api/v1`
 * operations declare the `api-version` header, the response headers the service sets are
 * declared, numeric query parameters are integers, no text points at documents outside the
 * repository, and Redocly's recommended rules (redocly.yaml) report nothing. Also: the
 * document `npm run openapi:lint` builds without a server is the one the app serves.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, type TestApp } from '../helpers/app';
import { call } from '../helpers/fixtures';
import { openApiDocumentOf } from '../../scripts/openapi';

const ROOT = path.resolve(__dirname, '..', '..');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every operation of `doc` as `{ where: 'POST /path', path, method, op }`. */
function operationsOf(doc: any): { where: string; path: string; method: string; op: any }[] {
  return Object.entries<any>(doc.paths).flatMap(([p, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ where: `${m.toUpperCase()} ${p}`, path: p, method: m, op: item[m] })),
  );
}

/** Every string under a `description` or `summary` key, with where it is. */
function textsOf(value: unknown, at = '#'): { at: string; text: string }[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => textsOf(v, `${at}/${i}`));
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) =>
    (k === 'description' || k === 'summary') && typeof v === 'string' ? [{ at: `${at}/${k}`, text: v }] : textsOf(v, `${at}/${k}`),
  );
}

const resolve = (doc: any, ref: any) =>
  ref?.$ref
    ? ref.$ref
        .split('/')
        .slice(1)
        .reduce((o: any, k: string) => o[k], doc)
    : ref;

describe('the OpenAPI document', () => {
  let app: TestApp;
  let doc: any;
  beforeAll(async () => {
    app = await startTestApp();
    const res = await call(app.baseUrl, '/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(() => app.close());

  test('when built without a server (npm run openapi:lint), then it is the document the app serves', () => {
    expect(JSON.parse(JSON.stringify(openApiDocumentOf(app.container)))).toEqual(doc);
  });

  test('when every operation is listed, then each has a unique camelCase operationId and only declared tags', () => {
    const ops = operationsOf(doc);
    expect(ops.length).toBeGreaterThan(30);
    expect(
      ops.filter(({ op }) => typeof op.operationId !== 'string' || !/^[a-z][A-Za-z0-9]*$/.test(op.operationId)).map((o) => o.where),
    ).toEqual([]);
    const ids = ops.map(({ op }) => op.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);

    const declared = new Map<string, string>(doc.tags.map((t: any) => [t.name, t.description]));
    for (const [name, description] of declared)
      expect({ name, description: description?.length > 20 }).toEqual({ name, description: true });
    expect(
      ops
        .filter(({ op }) => !Array.isArray(op.tags) || op.tags.length === 0 || op.tags.some((t: string) => !declared.has(t)))
        .map((o) => o.where),
    ).toEqual([]);
    // Teammate and root variants of one operation name stay apart.
    expect(doc.paths['/platform-agency-certs/getCertificates'].post.operationId).toBe('teammateGetCertificates');
    expect(doc.paths['/platform-agency-root-certs/getCertificates'].post.operationId).toBe('rootGetCertificates');
  });

  test('when an operation takes a body, then the body says whether it is required', () => {
    const bodies = operationsOf(doc).filter(({ op }) => op.requestBody);
    expect(bodies.filter(({ op }) => typeof op.requestBody.required !== 'boolean').map((o) => o.where)).toEqual([]);
    // Every body of the unversioned surfaces and of the webhook is required; the test helpers take an empty one.
    expect(bodies.filter(({ path: p, op }) => !p.startsWith('/api/v1/') && op.requestBody.required !== true).map((o) => o.where)).toEqual(
      [],
    );
    const keyed: [string, string][] = [
      ['/api/v1/products', 'post'],
      ['/api/v1/products/{id}', 'patch'],
      ['/api/v1/bundles', 'post'],
      ['/api/v1/question_sets', 'post'],
    ];
    for (const [p, m] of keyed) {
      expect({ p, m, required: doc.paths[p][m].requestBody.required }).toEqual({ p, m, required: true });
    }
    expect(doc.paths['/api/v1/test_helpers/purchases/{id}/pay'].post.requestBody.required).toBe(false);
  });

  test('when an /api/v1 operation is read, then it declares the optional api-version header (v1), and the keyed ones the Idempotency-Key', () => {
    expect(doc.components.parameters.ApiVersion).toMatchObject({
      name: 'api-version',
      in: 'header',
      required: false,
      schema: { enum: ['v1'] },
    });
    const v1 = operationsOf(doc).filter(({ path: p }) => p.startsWith('/api/v1/'));
    expect(v1.length).toBeGreaterThan(10);
    expect(
      v1.filter(({ op }) => !(op.parameters ?? []).some((p: any) => p.$ref === '#/components/parameters/ApiVersion')).map((o) => o.where),
    ).toEqual([]);
    const others = operationsOf(doc).filter(({ path: p }) => !p.startsWith('/api/v1/'));
    expect(
      others
        .filter(({ op }) => (op.parameters ?? []).some((p: any) => p.$ref === '#/components/parameters/ApiVersion'))
        .map((o) => o.where),
    ).toEqual([]);
    expect(doc.paths['/api/v1/products'].post.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
  });

  test('when responses are read, then X-Request-Id is on each, Retry-After on each 429, and the rate-limit headers only where a limit applies', () => {
    for (const { where, op } of operationsOf(doc)) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        expect({ where, status, requestId: response.headers?.['X-Request-Id'] }).toEqual({
          where,
          status,
          requestId: { $ref: '#/components/headers/XRequestId' },
        });
        if (status === '429')
          expect({ where, retryAfter: response.headers['Retry-After'] }).toEqual({
            where,
            retryAfter: { $ref: '#/components/headers/RetryAfter' },
          });
      }
    }
    expect(doc.components.headers.RetryAfter.schema.type).toBe('integer');
    // The service sends X-RateLimit-Limit / -Remaining (not the draft RateLimit-* fields).
    expect(Object.keys(doc.paths['/api/v1/products'].get.responses['200'].headers)).toEqual(
      expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining']),
    );
    expect(Object.keys(doc.paths['/verify/{code}'].get.responses['200'].headers)).toContain('X-RateLimit-Limit');
    expect(Object.keys(doc.paths['/webhooks/payproc'].post.responses['200'].headers)).toEqual(['X-Request-Id']);
    expect(Object.keys(doc.paths['/api/v1/products'].get.responses['403'].headers)).toEqual(['X-Request-Id']);
    expect(JSON.stringify(doc)).not.toMatch(/"RateLimit-/);
  });

  test('when the real service answers, then it sends the headers the document declares', async () => {
    const res = await call(app.baseUrl, '/verify/COI-0-0-0-0000000000', { headers: { accept: 'application/json' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(Number(res.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
    expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  });

  test('when numeric query parameters are read, then they are integers with bounds', () => {
    const params = operationsOf(doc)
      .flatMap(({ where, op }) => (op.parameters ?? []).map((p: any) => ({ where, ...resolve(doc, p) })))
      .filter((p: any) => p.in === 'query');
    const numeric = [
      'pageSize',
      'pageIndex',
      'agencyRootAccountID',
      'page',
      'limit',
      'root_insurer_db_id',
      'root_mga_db_id',
      'root_seller_db_id',
    ];
    const found = params.filter((p: any) => numeric.includes(p.name));
    expect(found.length).toBeGreaterThanOrEqual(numeric.length);
    for (const p of found) {
      expect({
        where: p.where,
        name: p.name,
        type: p.schema.type,
        bounded: typeof p.schema.minimum === 'number' && typeof p.schema.maximum === 'number',
      }).toEqual({ where: p.where, name: p.name, type: 'integer', bounded: true });
    }
    expect(params.filter((p: any) => p.schema?.pattern === '^-?\\d{1,10}$').map((p: any) => `${p.where} ${p.name}`)).toEqual([]);
  });

  test('when descriptions and summaries are read, then none points at documents outside the repository', () => {
    const texts = textsOf(doc);
    expect(texts.length).toBeGreaterThan(100);
    expect(texts.filter(({ text }) => /spec §|SPEC\.md|ARCHITECTURE|§/.test(text))).toEqual([]);
  });

  test('when the quote operations are read, then the catalog questions and the buyer answers are typed', () => {
    const schemas = doc.components.schemas;
    expect(schemas.CatalogItem.properties.product_line_question_template.properties.questions.items).toEqual({
      $ref: '#/components/schemas/Question',
    });
    expect(schemas.Question.discriminator.propertyName).toBe('kind');
    expect(Object.keys(schemas.Question.discriminator.mapping)).toEqual(expect.arrayContaining(['coverage_dates', 'trips', 'dropdown']));

    const request = resolve(
      doc,
      doc.paths['/public-quote/adminValidateBuyerResponses'].post.requestBody.content['application/json'].schema,
    );
    const line = resolve(doc, request.properties.selected_product_lines_to_purchase.items);
    expect(line.required).toEqual(['product_line_template_id', 'product_line_is_trip_excess_product']);
    const answers = resolve(doc, line.additionalProperties)
      .anyOf.map((a: any) => a.$ref)
      .filter(Boolean);
    expect(answers).toEqual(expect.arrayContaining(['#/components/schemas/CoverageDatesAnswer', '#/components/schemas/TripsAnswer']));
    expect(Object.keys(schemas.CoverageDatesAnswer.properties).sort()).toEqual(['end_date', 'start_date', 'time_zone']);
    expect(Object.keys(schemas.TripsAnswer.properties).sort()).toEqual(['time_zone', 'trips']);
  });

  test('when the payment webhook and the verification page are read, then their bodies and headers are documented', () => {
    const webhook = doc.paths['/webhooks/payproc'].post;
    expect(webhook.security).toEqual([]);
    expect(webhook.parameters).toContainEqual(expect.objectContaining({ name: 'stripe-signature', in: 'header', required: true }));
    expect(webhook.requestBody.required).toBe(true);
    const event = resolve(doc, webhook.requestBody.content['application/json'].schema);
    expect(Object.keys(event.properties)).toEqual(expect.arrayContaining(['id', 'type', 'livemode', 'created', 'data']));
    expect(event.properties.data.properties).toHaveProperty('object');
    const receipt = resolve(doc, webhook.responses['200'].content['application/json'].schema);
    expect(Object.keys(receipt.properties).sort()).toEqual(['duplicate', 'purchase_id', 'received', 'relayed']);

    const verify = doc.paths['/verify/{code}'].get;
    expect(verify.security).toEqual([]);
    expect(Object.keys(verify.responses['200'].content).sort()).toEqual(['application/json', 'text/html']);
    expect(Object.keys(resolve(doc, verify.responses['200'].content['application/json'].schema).properties)).toEqual(
      expect.arrayContaining(['code', 'state', 'coverage']),
    );
    expect(Object.keys(verify.responses['404'].content).sort()).toEqual(['application/json', 'text/html']);
  });

  test('when Redocly lints it with the recommended rules (redocly.yaml), then there are no errors and no warnings', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-'));
    try {
      const file = path.join(dir, 'openapi.json');
      fs.writeFileSync(file, JSON.stringify(doc, null, 2));
      const result = await promisify(execFile)(
        path.join(ROOT, 'node_modules', '.bin', 'redocly'),
        ['lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format=json'],
        {
          cwd: ROOT,
          timeout: 50_000,
          maxBuffer: 50 * 1024 * 1024,
        },
      ).catch((err: { code?: number; stdout?: string; stderr?: string }) => ({
        failed: err.code ?? 'no exit code',
        stdout: err.stdout ?? '',
        stderr: err.stderr ?? '',
      }));
      const report = JSON.parse(result.stdout);
      expect({
        failed: 'failed' in result ? result.failed : 0,
        totals: report.totals,
        problems: report.problems.map((p: any) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`),
      }).toEqual({
        failed: 0,
        totals: { errors: 0, warnings: 0, ignored: 0 },
        problems: [],
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
