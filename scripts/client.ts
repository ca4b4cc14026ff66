/**
 * `npm run client` (`tsx scripts/client.ts [outDir]`): regenerates the typed TypeScript client's
 * types, `clients/typescript/schema.d.ts` (or `<outDir>/schema.d.ts`), from the OpenAPI document
 * the app serves. `scripts/openapi.ts` writes the document (with the fixed server URL of
 * `npm run openapi:lint`, so the result does not depend on the local environment), then the
 * pinned openapi-typescript turns it into types. `clients/typescript/index.ts` is hand-written
 * and is not touched.
 *
 * Input and output types are kept apart (`clientDocument` below): a field with a `default` is
 * optional in what the caller sends (the service fills it in) and present in what the service
 * answers or sends in an event. openapi-typescript alone cannot tell the two apart for a named
 * schema used on both sides (with its default settings every defaulted field of a named schema
 * is required, in request bodies too), so the document it reads is rewritten first: a schema
 * that a request reaches and that has a default somewhere in it gets an input twin `<Name>Input`
 * (the document's own schema, defaults optional), which the requests use; in the schemas the
 * answers and webhooks reach, every defaulted property is listed as required. openapi-typescript
 * then runs with `--default-non-nullable=false`, so `required` alone decides. The served
 * document is unchanged.
 *
 * test/unit/client-up-to-date.test.ts runs this into a temporary directory and compares the
 * result with the checked-in file, so CI fails when the document changes without a new client.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const BIN = path.join(ROOT, 'node_modules', '.bin');
/** The server URL written into the document (the lint's, see scripts/openapi.ts). */
const CLIENT_SERVER_URL = 'http://127.0.0.1:3000';
const SCHEMA_REF = '#/components/schemas/';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Json = any; // the OpenAPI document as parsed JSON

const nameOfRef = (ref: unknown): string | undefined =>
  typeof ref === 'string' && ref.startsWith(SCHEMA_REF) ? ref.slice(SCHEMA_REF.length) : undefined;

/** Names of the component schemas `node` refers to directly ($ref and discriminator mappings), without following them. */
function directRefs(node: Json, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const v of node) directRefs(v, out);
  } else if (node && typeof node === 'object') {
    const named = nameOfRef(node.$ref);
    if (named) out.add(named);
    if (node.discriminator?.mapping)
      for (const ref of Object.values(node.discriminator.mapping)) if (nameOfRef(ref)) out.add(nameOfRef(ref)!);
    for (const [k, v] of Object.entries(node)) if (k !== 'example' && k !== 'examples' && k !== 'default') directRefs(v, out);
  }
  return out;
}

/** `start` and every schema it reaches through references. */
function closure(schemas: Record<string, Json>, start: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const todo = [...start];
  while (todo.length) {
    const name = todo.pop()!;
    if (seen.has(name) || !schemas[name]) continue;
    seen.add(name);
    todo.push(...directRefs(schemas[name]));
  }
  return seen;
}

/** Every schema object inside `node`, `node` included, without following references. */
function* subschemas(node: Json): Generator<Json> {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return;
  yield node;
  for (const key of ['properties', 'patternProperties', '$defs']) for (const v of Object.values(node[key] ?? {})) yield* subschemas(v);
  for (const key of ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else'])
    yield* subschemas(node[key]);
  for (const key of ['allOf', 'anyOf', 'oneOf', 'prefixItems']) for (const v of node[key] ?? []) yield* subschemas(v);
}

const hasOwnDefault = (schema: Json) =>
  [...subschemas(schema)].some((s) => Object.values(s.properties ?? {}).some((p: Json) => p && typeof p === 'object' && 'default' in p));

/** Makes every defaulted property of every object in `schema` required (what an answer always carries). */
function requireDefaults(schema: Json): void {
  for (const s of subschemas(schema)) {
    const defaulted = Object.entries(s.properties ?? {})
      .filter(([, p]: [string, Json]) => p && typeof p === 'object' && 'default' in p)
      .map(([k]) => k);
    if (defaulted.length) s.required = [...(s.required ?? []), ...defaulted.filter((k) => !(s.required ?? []).includes(k))];
  }
}

/** Rewrites, in place, every reference under `node` to a schema of `rename` to its new name. */
function renameRefs(node: Json, rename: Map<string, string>): void {
  if (Array.isArray(node)) {
    for (const v of node) renameRefs(v, rename);
  } else if (node && typeof node === 'object') {
    const named = nameOfRef(node.$ref);
    if (named && rename.has(named)) node.$ref = SCHEMA_REF + rename.get(named);
    const mapping = node.discriminator?.mapping;
    if (mapping)
      for (const [k, ref] of Object.entries(mapping))
        if (rename.has(nameOfRef(ref) ?? '')) mapping[k] = SCHEMA_REF + rename.get(nameOfRef(ref)!);
    for (const [k, v] of Object.entries(node)) if (k !== 'example' && k !== 'examples' && k !== 'default') renameRefs(v, rename);
  }
}

/**
 * The document openapi-typescript reads: `doc` with input and output types apart (see the top of
 * this file). Returns a new document; `doc` is not changed.
 */
export function clientDocument(source: Json): Json {
  const doc = structuredClone(source);
  const schemas: Record<string, Json> = doc.components?.schemas ?? {};
  const operations = (items: Record<string, Json> | undefined) =>
    Object.values(items ?? {}).flatMap((item) => HTTP_METHODS.map((m) => item?.[m]).filter(Boolean));
  const pathOps = operations(doc.paths);
  const webhookOps = operations(doc.webhooks);
  const resolveParameter = (p: Json) => (typeof p?.$ref === 'string' ? doc.components?.parameters?.[p.$ref.split('/').pop()] : p);

  // What the caller sends: request bodies and parameters of the paths.
  const requestNodes = pathOps.flatMap((op) => [op.requestBody, ...(op.parameters ?? []).map(resolveParameter)]).filter(Boolean);
  // What the caller receives: answers of the paths, and everything of the webhooks (the service sends those).
  const answerNodes = [...pathOps.map((op) => op.responses), ...webhookOps].filter(Boolean);
  const sent = closure(
    schemas,
    requestNodes.flatMap((n) => [...directRefs(n)]),
  );
  const received = closure(
    schemas,
    answerNodes.flatMap((n) => [...directRefs(n)]),
  );

  // Schemas with a default in them or in a schema they reach.
  const defaulted = new Set(Object.keys(schemas).filter((n) => hasOwnDefault(schemas[n])));
  for (let grew = true; grew;) {
    grew = false;
    for (const n of Object.keys(schemas)) {
      if (!defaulted.has(n) && [...directRefs(schemas[n])].some((r) => defaulted.has(r))) {
        defaulted.add(n);
        grew = true;
      }
    }
  }

  // Input twins of the schemas both sides use; a schema only requests use stays as it is (input).
  const inputName = new Map<string, string>();
  for (const n of [...sent].filter((s) => defaulted.has(s) && received.has(s))) {
    const twin = `${n}Input`;
    if (schemas[twin]) throw new Error(`clientDocument: the document already has a schema named ${twin}`);
    inputName.set(n, twin);
  }
  // (Added after the document's own schemas, in the order the document lists them.)
  for (const [n, twin] of inputName) schemas[twin] = structuredClone(source.components.schemas[n]);
  for (const n of new Set([...sent].map((s) => inputName.get(s) ?? s))) renameRefs(schemas[n], inputName);
  for (const node of requestNodes) renameRefs(node, inputName);

  // Outputs: what the service fills in is always there.
  for (const n of received) requireDefaults(schemas[n]);
  for (const op of pathOps)
    for (const response of Object.values<Json>(op.responses ?? {}))
      for (const media of Object.values<Json>(response?.content ?? {})) requireDefaults(media.schema);
  for (const op of webhookOps) for (const media of Object.values<Json>(op.requestBody?.content ?? {})) requireDefaults(media.schema);

  return doc;
}

function main(): void {
  const outDir = path.resolve(process.argv[2] ?? path.join(ROOT, 'clients', 'typescript'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-client-'));
  try {
    const served = path.join(work, 'openapi.json');
    execFileSync(path.join(BIN, 'tsx'), [path.join(ROOT, 'scripts', 'openapi.ts'), '--server-url', CLIENT_SERVER_URL, served], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const doc = path.join(work, 'openapi.client.json');
    fs.writeFileSync(doc, JSON.stringify(clientDocument(JSON.parse(fs.readFileSync(served, 'utf8'))), null, 2));
    fs.mkdirSync(outDir, { recursive: true });
    const out = path.join(outDir, 'schema.d.ts');
    execFileSync(path.join(BIN, 'openapi-typescript'), [doc, '--output', out, '--default-non-nullable=false'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    console.log(`wrote ${path.relative(process.cwd(), out)}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  try {
    main();
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
