#!/usr/bin/env node
/**
 * Validates the Kubernetes manifests of this directory offline with kubeconform, against the
 * JSON schemas of the Kubernetes version the tools pin.
 *
 * kubeconform normally downloads its JSON schemas; here they are made from the Kubernetes
 * OpenAPI v2 document (`api/openapi-spec/swagger.json` of the Go module `k8s.io/kubernetes`),
 * which `node scripts/tools.mjs` copies beside the kubeconform binary (`schemaFrom`). This
 * file converts it into kubeconform's local layout, `<root>/v<version>-standalone[-strict]/
 * <kind>-<group>-<version>.json` (one small file per kind pointing into a shared
 * `_definitions.json`), the way kubeconform's own openapi2jsonschema script does: `int-or-string`
 * becomes string or integer, a Quantity string or number, an optional field may be null (as
 * the API server allows), and the `-strict` copy forbids properties the API does not define
 * (kubectl's validation). Plain Node, no npm dependencies.
 *
 *   node deploy/kubernetes/validate.mjs                 # prints kubeconform's summary; exit 0 when all are valid
 *   node deploy/kubernetes/validate.mjs --schemas DIR [MANIFEST_DIR]
 *
 * The schemas are written afresh on each run (under a second), by default to var/kubernetes-schemas/.
 *
 * test/unit/kubernetes-manifests.test.ts runs this file (with `--schemas` in a temporary
 * directory); `writeKubeconformSchemas`, `kubeconformArgs` and `validateManifests` are exported
 * for scripts.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOLS, toolSchemaDir } from '../../scripts/tools.mjs';

export const MANIFEST_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(MANIFEST_DIR, '..', '..');
/** The Kubernetes version the schemas describe (the `k8s.io/kubernetes` module version, without `v`). */
export const KUBERNETES_VERSION = TOOLS.kubeconform.schemaFrom.version.replace(/^v/, '');
/** The linked binary (`node scripts/tools.mjs` builds it). */
export const KUBECONFORM_BIN = path.join(REPO_ROOT, '.tools', 'bin', TOOLS.kubeconform.bin);
/** Files here that are not Kubernetes objects: the Helm values of the Temporal chart, Prometheus's scrape configs. */
export const NOT_MANIFESTS = ['temporal-values.yaml', 'prometheus-scrape-configs.yaml'];

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** One OpenAPI v2 schema as JSON schema: refs to `refPrefix`, int-or-string and Quantity widened, strict objects closed. */
function convert(schema, refPrefix, strict) {
  if (Array.isArray(schema)) return schema.map((s) => convert(s, refPrefix, strict));
  if (!schema || typeof schema !== 'object') return schema;
  if (schema.format === 'int-or-string') return { oneOf: [{ type: 'string' }, { type: 'integer' }] };
  const out = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'description') continue; // half the size, no use to a validator
    if (key === '$ref') out.$ref = value.replace('#/definitions/', `${refPrefix}#/definitions/`);
    else if (key === 'properties') {
      const required = new Set(schema.required ?? []);
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, s]) => [
          name,
          required.has(name) ? convert(s, refPrefix, strict) : nullable(convert(s, refPrefix, strict)),
        ]),
      );
    } else if (key === 'items' || key === 'additionalProperties' || key === 'allOf' || key === 'oneOf' || key === 'anyOf' || key === 'not')
      out[key] = convert(value, refPrefix, strict);
    else out[key] = value;
  }
  if (strict && out.properties && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

/**
 * An optional field may be `null`: the API server takes it as unset, and Helm charts render
 * such fields. Shared definitions (what `$ref` points at) are made nullable as a whole, which
 * keeps kubeconform's messages short; a required field of such a type is let through as null.
 */
function nullable(schema) {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (schema.oneOf) return { ...schema, oneOf: [...schema.oneOf, { type: 'null' }] };
  return schema;
}

/**
 * Writes kubeconform's local schema layout for `version` under `root` from the OpenAPI v2
 * document `swaggerFile`: `v<version>-standalone/` and `v<version>-standalone-strict/`, each
 * with `_definitions.json` and one `<kind><suffix>.json` per kind. Returns the number of kinds.
 */
export function writeKubeconformSchemas(swaggerFile, root, version = KUBERNETES_VERSION) {
  const definitions = JSON.parse(fs.readFileSync(swaggerFile, 'utf8')).definitions;
  if (!definitions?.[QUANTITY]) throw new Error(`${swaggerFile} is not the Kubernetes OpenAPI v2 document (no ${QUANTITY})`);
  let kinds = 0;
  for (const strict of [false, true]) {
    const dir = path.join(root, `v${version}-standalone${strict ? '-strict' : ''}`);
    fs.mkdirSync(dir, { recursive: true });
    const shared = Object.fromEntries(Object.entries(definitions).map(([name, s]) => [name, nullable(convert(s, '', strict))]));
    shared[QUANTITY] = { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] };
    fs.writeFileSync(path.join(dir, '_definitions.json'), JSON.stringify({ definitions: shared }));
    kinds = 0;
    for (const [name, schema] of Object.entries(definitions)) {
      const gvks = schema['x-kubernetes-group-version-kind'];
      // Kinds served under many groups (DeleteOptions, WatchEvent) are not objects one applies.
      if (!Array.isArray(gvks) || gvks.length !== 1 || !schema.properties?.kind) continue;
      const { group, version: apiVersion, kind } = gvks[0];
      const own = convert(schema, '_definitions.json', strict);
      own.properties.apiVersion = { type: 'string', enum: [group ? `${group}/${apiVersion}` : apiVersion] };
      own.properties.kind = { type: 'string', enum: [kind] };
      const suffix = group ? `-${group.split('.')[0]}-${apiVersion}` : `-${apiVersion}`;
      fs.writeFileSync(path.join(dir, `${kind.toLowerCase()}${suffix}.json`), JSON.stringify({ ...own, 'x-kubernetes-definition': name }));
      kinds += 1;
    }
  }
  return kinds;
}

/** kubeconform's arguments for the manifests in `dir` against the schemas under `schemaRoot`. */
export function kubeconformArgs(schemaRoot, dir = MANIFEST_DIR) {
  return [
    '-strict',
    '-summary',
    '-output',
    'text',
    '-kubernetes-version',
    KUBERNETES_VERSION,
    '-schema-location',
    schemaRoot,
    // kustomize's own file has no Kubernetes schema; `kubectl kustomize` reads it.
    '-skip',
    'Kustomization',
    ...NOT_MANIFESTS.flatMap((name) => ['-ignore-filename-pattern', name.replace(/\./g, '\\.')]),
    dir,
  ];
}

/**
 * Writes the schemas under `schemaRoot` and runs kubeconform on `dir`. Throws when the binary
 * or the OpenAPI document is missing (run `node scripts/tools.mjs`).
 */
export function validateManifests({ schemaRoot, dir = MANIFEST_DIR, bin = KUBECONFORM_BIN } = {}) {
  if (!fs.existsSync(bin))
    throw new Error(
      `${bin} is missing: run \`node scripts/tools.mjs\` (or \`node scripts/tools.mjs --k8s\`) to build kubeconform ${TOOLS.kubeconform.version}`,
    );
  const swagger = path.join(toolSchemaDir('kubeconform'), 'swagger.json');
  if (!fs.existsSync(swagger))
    throw new Error(
      `${swagger} is missing: run \`node scripts/tools.mjs --k8s\` to copy the Kubernetes ${KUBERNETES_VERSION} OpenAPI document`,
    );
  writeKubeconformSchemas(swagger, schemaRoot);
  const args = kubeconformArgs(schemaRoot, dir);
  const run = spawnSync(bin, args, { encoding: 'utf8' });
  if (run.error) throw run.error;
  const shown = (arg) =>
    path.isAbsolute(arg) && !path.relative(REPO_ROOT, arg).startsWith('..') ? path.relative(REPO_ROOT, arg) || '.' : arg;
  return { code: run.status ?? 1, out: `${run.stdout}${run.stderr}`, command: [bin, ...args].map(shown).join(' ') };
}

function isMain() {
  try {
    return fs.realpathSync(process.argv[1] ?? '') === fs.realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  try {
    const args = process.argv.slice(2);
    const at = args.indexOf('--schemas');
    const given = at >= 0 ? args.splice(at, 2)[1] : path.join(REPO_ROOT, 'var', 'kubernetes-schemas');
    if (!given || given.startsWith('-')) throw new Error('usage: node deploy/kubernetes/validate.mjs [--schemas DIR] [MANIFEST_DIR]');
    const schemaRoot = path.resolve(given);
    const result = validateManifests({ schemaRoot, ...(args[0] ? { dir: path.resolve(args[0]) } : {}) });
    process.stdout.write(`$ ${result.command}\n${result.out}`);
    process.exit(result.code);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
