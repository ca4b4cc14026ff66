/**
 * deploy/kubernetes/ matches the code it deploys, and Kubernetes accepts it (as far as can be
 * told without a cluster).
 *
 * - Every file parses (the `yaml` package); kustomization.yaml lists every manifest except the
 *   Secret template and the Temporal chart's Helm values.
 * - The pods' environment (ConfigMap, the Secret template's keys, each container's `env`) is
 *   made only of settings of src/config.ts, and, with test values in place of the Secret's
 *   placeholders, loads as a production config whose ports are the containers' ports; the
 *   template as it is does not load (its placeholders stop the pods at start).
 * - Probes and ports are those of the code: API `/readyz` and `/healthz` on 3000, metrics on
 *   9464; worker `/healthz` and `/readyz` on 9465, SDK metrics on 9466; the worker's
 *   termination grace outlasts its shutdown grace; Services, HPA and PDBs select the pods.
 * - temporal-values.yaml: PostgreSQL (postgres12_pgx) persistence and SQL visibility, no Cassandra
 *   or Elasticsearch, the server and UI versions the project pins, the codec endpoint.
 * - kubeconform (`.tools/bin/kubeconform`, built by `node scripts/tools.mjs`) validates every
 *   manifest strictly against the Kubernetes schemas (deploy/kubernetes/validate.mjs), and
 *   rejects a copy with a misspelt field.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ConfigError, loadConfig } from '../../src/config';

const ROOT = path.resolve(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { WORKER_NODE_ARGS } = require('../../scripts/worker-runtime.cjs') as { WORKER_NODE_ARGS: readonly string[] };
const DIR = path.join(ROOT, 'deploy', 'kubernetes');
const KUBECONFORM = path.join(ROOT, '.tools', 'bin', 'kubeconform');
const NOT_APPLIED = ['kustomization.yaml', 'secret.example.yaml', 'temporal-values.yaml', 'prometheus-scrape-configs.yaml'];

/** A Kubernetes object as parsed; the assertions below say which fields they expect. */
type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [field: string]: any };

function readYaml(file: string): K8sObject[] {
  const docs = parseAllDocuments(fs.readFileSync(path.join(DIR, file), 'utf8'));
  for (const doc of docs) {
    if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
  }
  return docs.map((doc) => doc.toJS() as K8sObject).filter(Boolean);
}

const yamlFiles = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .sort();
/** Every Kubernetes object, by file (the Helm values and kustomize's own file are not objects). */
const manifests = new Map(
  yamlFiles
    .filter((f) => !['temporal-values.yaml', 'kustomization.yaml', 'prometheus-scrape-configs.yaml'].includes(f))
    .map((f) => [f, readYaml(f)]),
);
const all = [...manifests.values()].flat();

function find(kind: string, name: string): K8sObject {
  const found = all.filter((o) => o.kind === kind && o.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name}, found ${found.length}`);
  return found[0]!;
}

const configMap = find('ConfigMap', 'insurance-config');
const secretTemplate = find('Secret', 'insurance-secrets');
const api = find('Deployment', 'insurance-api');
const worker = find('Deployment', 'insurance-worker');
const container = (deployment: K8sObject, name: string) =>
  deployment.spec.template.spec.containers.find((c: { name: string }) => c.name === name);
const apiContainer = container(api, 'api');
const workerContainer = container(worker, 'worker');

/** Test values for the Secret template's keys (the template itself holds only placeholders). */
const TEST_SECRETS: Record<string, string> = {
  DATABASE_URL: 'postgres://app:pw@pgbouncer.test:6432/insurance',
  PAYPROC_LIVE_SECRET_KEY: 'sk_live_test',
  PAYPROC_TEST_SECRET_KEY: 'sk_test_test',
  PAYPROC_WEBHOOK_SECRET: 'whsec_test',
  TEMPORAL_PAYLOAD_KEYS: `k8s-test:${Buffer.alloc(32, 7).toString('base64')}`,
  BUYER_EMAIL_HASH_KEY: 'k8s-test-buyer-email-hash-key',
  WITHDRAWAL_LINK_KEY: 'k8s-test-withdrawal-link-key-0123456789',
  CERTIFICATE_SIGNING_KEYS: `k8s-cert-1:${Buffer.alloc(32, 9).toString('base64')}`,
  TEMPORAL_CODEC_TOKEN: 'k8s-test-codec-token-0123456789',
  TEMPORAL_CODEC_UI_KEY: 'k8s-test-codec-ui-key-0123456789',
  SMTP_URL: 'smtps://user:pw@smtp.test:465',
  PORTAL_OIDC_CLIENT_SECRET: 'k8s-test-portal-client-secret',
  PORTAL_SESSION_KEYS: 'k8s-test-portal-session-key-0123456789abcdef',
  REDIS_URL: 'redis://:pw@redis.test:6379',
};

/** The environment a container starts with: ConfigMap, then the Secret, then its own `env` (which wins). */
function containerEnv(c: { env?: { name: string; value: string }[] }, secrets: Record<string, string>): Record<string, string> {
  return { ...configMap.data, ...secrets, ...Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value])) };
}

/** The port number a probe or Service names (by name or number) in `c`'s ports. */
function portOf(c: { ports: { name: string; containerPort: number }[] }, port: string | number): number | undefined {
  return typeof port === 'number' ? port : c.ports.find((p) => p.name === port)?.containerPort;
}

describe('deploy/kubernetes manifests', () => {
  test('when every file is parsed, then each is valid YAML and kustomization.yaml applies every manifest but the template and the Helm values', () => {
    const [kustomization] = readYaml('kustomization.yaml');
    expect(kustomization?.kind).toBe('Kustomization');
    expect([...kustomization!.resources].sort()).toEqual(yamlFiles.filter((f) => !NOT_APPLIED.includes(f)));
    expect(kustomization!.namespace).toBe(find('Namespace', 'insurance').metadata.name);
    // The image both of the service's Deployments name is the one kustomize rewrites to the release's.
    const images = all
      .filter((o) => o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/name'] === 'insurance-coi-service')
      .flatMap((d) => [...(d.spec.template.spec.initContainers ?? []), ...d.spec.template.spec.containers].map((c) => c.image));
    expect(new Set(images)).toEqual(new Set([kustomization!.images[0].name]));
  });

  test('when the pods get their environment, then every name is a setting of src/config.ts and secrets stay out of the ConfigMap', () => {
    expect(Object.keys(secretTemplate.stringData).sort()).toEqual(Object.keys(TEST_SECRETS).sort());
    expect(Object.keys(configMap.data).filter((k) => k in TEST_SECRETS)).toEqual([]);
    for (const c of [apiContainer, workerContainer, ...api.spec.template.spec.initContainers]) {
      expect(c.envFrom).toEqual([{ configMapRef: { name: 'insurance-config' } }, { secretRef: { name: 'insurance-secrets' } }]);
      const env = containerEnv(c, TEST_SECRETS);
      const config = loadConfig(env); // throws naming the variable when a value is bad
      expect(config.NODE_ENV).toBe('production');
      // loadConfig keeps only the schema's keys: a name missing here is not a setting.
      expect(Object.keys(env).filter((name) => !(name in config))).toEqual([]);
    }
  });

  test('when the Secret template is used unchanged, then the config refuses it (the pods stop at start naming the variable)', () => {
    for (const value of Object.values(secretTemplate.stringData as Record<string, string>)) expect(value).toContain('REPLACE');
    expect(() => loadConfig(containerEnv(apiContainer, secretTemplate.stringData))).toThrow(ConfigError);
  });

  test('when the API pods are probed and reached, then the paths and ports are those of src/server.ts (3000: /readyz, /healthz; metrics 9464)', () => {
    const defaults = loadConfig({});
    const config = loadConfig(containerEnv(apiContainer, TEST_SECRETS));
    expect([defaults.PORT, config.PORT, portOf(apiContainer, 'http')]).toEqual([3000, 3000, 3000]);
    expect([defaults.METRICS_PORT, config.METRICS_PORT, portOf(apiContainer, 'metrics')]).toEqual([9464, 9464, 9464]);
    expect([config.HOST, config.METRICS_HOST]).toEqual(['0.0.0.0', '0.0.0.0']);
    const routes = fs.readFileSync(path.join(ROOT, 'src', 'http', 'system-routes.ts'), 'utf8');
    expect(routes).toContain("router.get('/healthz'");
    expect(routes).toContain("router.get('/readyz'");
    expect(apiContainer.readinessProbe.httpGet.path).toBe('/readyz');
    expect(portOf(apiContainer, apiContainer.readinessProbe.httpGet.port)).toBe(3000);
    expect(apiContainer.livenessProbe.httpGet.path).toBe('/healthz');
    expect(portOf(apiContainer, apiContainer.livenessProbe.httpGet.port)).toBe(3000);
    // tini stays the entry point (args replace the image's CMD), and the scripts exist.
    expect(apiContainer.command).toBeUndefined();
    expect(apiContainer.args).toEqual(['node', 'dist/src/server.js']);
    expect(fs.existsSync(path.join(ROOT, 'src', 'server.ts'))).toBe(true);
    expect(api.spec.template.spec.initContainers[0].args).toEqual(['node', 'dist/scripts/migrate.js']);
    expect(fs.existsSync(path.join(ROOT, 'scripts', 'migrate.ts'))).toBe(true);
    // preStop sleep plus the server's 10 s drain fit in the termination grace.
    const preStop = Number(apiContainer.lifecycle.preStop.exec.command[1]);
    expect(api.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + 10);
  });

  test('when the worker pods are probed, then the paths and ports are those of src/worker.ts (9465: /healthz, /readyz; SDK metrics 9466) and the grace outlasts the drain', () => {
    const defaults = loadConfig({});
    const config = loadConfig(containerEnv(workerContainer, TEST_SECRETS));
    expect([defaults.WORKER_METRICS_PORT, config.WORKER_METRICS_PORT, portOf(workerContainer, 'metrics')]).toEqual([9465, 9465, 9465]);
    expect(defaults.WORKER_SDK_METRICS_ADDRESS.endsWith(':9466')).toBe(true);
    expect(config.WORKER_SDK_METRICS_ADDRESS).toBe(`0.0.0.0:${portOf(workerContainer, 'sdk-metrics')}`);
    expect(portOf(workerContainer, 'sdk-metrics')).toBe(9466);
    expect(config.METRICS_HOST).toBe('0.0.0.0');
    const listener = fs.readFileSync(path.join(ROOT, 'src', 'metrics', 'server.ts'), 'utf8');
    expect(listener).toContain("path === '/healthz'");
    expect(listener).toContain("path === '/readyz'");
    for (const [probe, route] of [
      ['startupProbe', '/healthz'],
      ['readinessProbe', '/readyz'],
      ['livenessProbe', '/healthz'],
    ] as const) {
      expect(workerContainer[probe].httpGet.path).toBe(route);
      expect(portOf(workerContainer, workerContainer[probe].httpGet.port)).toBe(9465);
    }
    expect(workerContainer.command).toBeUndefined();
    // Started with the flags every launcher gives a worker (its heap cap), as docker compose does.
    expect(workerContainer.args).toEqual(['node', ...WORKER_NODE_ARGS, 'dist/src/worker.js']);
    const compose = parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: { worker: { command: string[] } };
    };
    expect(compose.services.worker.command).toEqual(['node', ...WORKER_NODE_ARGS, 'dist/src/worker.js']);
    // The worker drains for shutdownGraceTime, then closes Chromium, its connection and pools.
    const workers = fs.readFileSync(path.join(ROOT, 'src', 'temporal', 'workers.ts'), 'utf8');
    const grace = Number(/shutdownGraceSeconds \?\? (\d+)/.exec(workers)?.[1]);
    expect(grace).toBe(10);
    expect(worker.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(grace + 30);
  });

  test('when Services, the HPA and the PDBs look for pods, then they find the Deployments', () => {
    const podLabels = (d: K8sObject) => d.spec.template.metadata.labels as Record<string, string>;
    const selects = (selector: Record<string, string>, d: K8sObject) => Object.entries(selector).every(([k, v]) => podLabels(d)[k] === v);
    for (const d of [api, worker]) expect(d.spec.selector.matchLabels).toEqual(podLabels(d));
    const apiService = find('Service', 'insurance-api');
    expect(selects(apiService.spec.selector, api) && !selects(apiService.spec.selector, worker)).toBe(true);
    for (const p of apiService.spec.ports) expect(portOf(apiContainer, p.targetPort)).toBeDefined();
    const workerService = find('Service', 'insurance-worker-metrics');
    expect(selects(workerService.spec.selector, worker) && !selects(workerService.spec.selector, api)).toBe(true);
    for (const p of workerService.spec.ports) expect(portOf(workerContainer, p.targetPort)).toBeDefined();
    const hpa = find('HorizontalPodAutoscaler', 'insurance-api');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'insurance-api' });
    expect(api.spec.replicas).toBeUndefined(); // the HPA owns the count
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(selects(find('PodDisruptionBudget', 'insurance-api').spec.selector.matchLabels, api)).toBe(true);
    expect(selects(find('PodDisruptionBudget', 'insurance-worker').spec.selector.matchLabels, worker)).toBe(true);
    // Every container states requests and a memory limit (figures: docs/scaling.md).
    for (const c of [apiContainer, workerContainer, ...api.spec.template.spec.initContainers]) {
      expect(c.resources.requests).toEqual({ cpu: expect.anything(), memory: expect.anything() });
      expect(c.resources.limits.memory).toBeDefined();
    }
  });

  test('when the Temporal chart values are read, then persistence and visibility are PostgreSQL, nothing else, with the versions the project pins', () => {
    const values = parse(fs.readFileSync(path.join(DIR, 'temporal-values.yaml'), 'utf8'));
    const { persistence } = values.server.config;
    expect(Object.keys(persistence.datastores).sort()).toEqual(['default', 'visibility']);
    for (const store of ['default', 'visibility']) {
      expect(Object.keys(persistence.datastores[store])).toEqual(['sql']);
      expect(persistence.datastores[store].sql.pluginName).toBe('postgres12_pgx');
    }
    expect([persistence.defaultStore, persistence.visibilityStore]).toEqual(['default', 'visibility']);
    expect(JSON.stringify(values)).not.toMatch(/cassandra|elasticsearch/i);
    expect(persistence.numHistoryShards).toBe(512); // docs/scaling.md, 100 purchases/s
    for (const service of ['frontend', 'history', 'matching', 'worker'])
      expect(values.server[service].replicaCount).toBeGreaterThanOrEqual(2);
    const tools = fs.readFileSync(path.join(ROOT, 'scripts', 'tools.mjs'), 'utf8');
    const pinned = (key: string) => new RegExp(`${key}: \\{[^}]*?version: 'v([0-9.]+)'`).exec(tools)?.[1];
    expect(values.server.image.tag).toBe(pinned('temporalServer'));
    expect(values.admintools.image.tag).toBe(pinned('temporalServer'));
    expect(values.web.image.tag).toBe(pinned('temporalUiServer'));
    const codec = values.web.additionalEnv.find((e: { name: string }) => e.name === 'TEMPORAL_CODEC_ENDPOINT');
    // The UI mount, its key from a Secret defined before it (Kubernetes expands $(VAR) of earlier entries).
    expect(codec.value).toMatch(/^https:\/\/.+\/codec\/ui\/\$\(TEMPORAL_CODEC_UI_KEY\)$/);
    const names = values.web.additionalEnv.map((e: { name: string }) => e.name);
    expect(names.indexOf('TEMPORAL_CODEC_UI_KEY')).toBeLessThan(names.indexOf('TEMPORAL_CODEC_ENDPOINT'));
    expect(configMap.data.TEMPORAL_ADDRESS).toBe('temporal-frontend.temporal.svc.cluster.local:7233');
  });

  test('when kubeconform validates the manifests against the Kubernetes schemas, then all are valid, and a misspelt field is not', () => {
    if (!fs.existsSync(KUBECONFORM)) {
      throw new Error(
        `${KUBECONFORM} is missing: build it with \`node scripts/tools.mjs --k8s\` (CI's \`node scripts/tools.mjs\` builds it before the tests)`,
      );
    }
    const schemas = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-schemas-'));
    const broken = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-broken-'));
    const validate = (...args: string[]) => {
      const run = spawnSync(process.execPath, [path.join(DIR, 'validate.mjs'), '--schemas', schemas, ...args], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      return { code: run.status, out: `${run.stdout}${run.stderr}` };
    };
    try {
      const ok = validate();
      expect(ok.out).toContain(`Valid: ${all.length}, Invalid: 0, Errors: 0, Skipped: 1`); // skipped: the Kustomization
      expect(ok.code).toBe(0);
      const api = fs.readFileSync(path.join(DIR, 'api.yaml'), 'utf8');
      expect(api).toContain('terminationGracePeriodSeconds: 30');
      fs.writeFileSync(path.join(broken, 'api.yaml'), api.replace('terminationGracePeriodSeconds: 30', 'terminationGracePeriodSecond: 30'));
      const bad = validate(broken);
      expect(bad.out).toContain("additional properties 'terminationGracePeriodSecond' not allowed");
      expect(bad.code).not.toBe(0);
    } finally {
      fs.rmSync(schemas, { recursive: true, force: true });
      fs.rmSync(broken, { recursive: true, force: true });
    }
  });
});
