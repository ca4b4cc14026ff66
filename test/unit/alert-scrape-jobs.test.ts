/**
 * Every `job` the alert rules select (ops/prometheus/alerts.yml) is produced by every shape's
 * scrape configuration, so that an `absent()` alert does not page forever and the others are
 * not silent where the service runs: docker compose (ops/prometheus/prometheus.yml), Kubernetes
 * (deploy/kubernetes/prometheus-scrape-configs.yaml, for the cluster's Prometheus) and `npm run
 * dev` (scripts/stack.mjs `localPrometheusConfig`, read through a child Node process).
 * The Kubernetes jobs keep exactly one pod port each of the manifests (labels and port names as
 * deploy/kubernetes declares them). A rule naming a job no shape scrapes fails the check (shown on
 * a copy). `promtool check config` (alerts.test.ts) covers the compose file; it cannot check the
 * Kubernetes one, as Debian's Prometheus is built without Kubernetes service discovery.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

const ROOT = path.resolve(__dirname, '..', '..');
const RULES = path.join(ROOT, 'ops', 'prometheus', 'alerts.yml');
const K8S = path.join(ROOT, 'deploy', 'kubernetes');

interface ScrapeConfig {
  job_name: string;
  static_configs?: Array<{ targets: string[]; labels?: Record<string, string> }>;
  kubernetes_sd_configs?: Array<{ role: string; namespaces?: { names: string[] } }>;
  relabel_configs?: Array<{ source_labels?: string[]; regex?: string; action?: string; target_label?: string }>;
}

/** The `job="…"` values the rules' expressions select, each with the alerts that use it. */
function jobsOfRules(rulesText: string): Map<string, string[]> {
  const rules = (parse(rulesText) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }).groups.flatMap((g) => g.rules);
  const jobs = new Map<string, string[]>();
  for (const rule of rules)
    for (const [, job] of rule.expr.matchAll(/\bjob="([^"]+)"/g)) jobs.set(job!, [...(jobs.get(job!) ?? []), rule.alert]);
  return jobs;
}

const compose = (
  parse(fs.readFileSync(path.join(ROOT, 'ops', 'prometheus', 'prometheus.yml'), 'utf8')) as { scrape_configs: ScrapeConfig[] }
).scrape_configs;
const kubernetes = parse(fs.readFileSync(path.join(K8S, 'prometheus-scrape-configs.yaml'), 'utf8')) as ScrapeConfig[];
/** `npm run dev`'s config with its default ports (stack.mjs is an ES module: asked in a child process). */
const local = (() => {
  const stack = JSON.stringify(path.join(ROOT, 'scripts', 'stack.mjs'));
  const run = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `const s = await import(${stack}); process.stdout.write(JSON.stringify(s.localPrometheusConfig()));`],
    { encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`localPrometheusConfig failed: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { scrape_configs: ScrapeConfig[] }).scrape_configs;
})();

/** Jobs a rule selects that a shape's scrape configs do not produce, as "<job> (alerts) not scraped by <shape>". */
function unscraped(rulesText: string): string[] {
  const problems: string[] = [];
  for (const [shape, configs] of [
    ['docker compose', compose],
    ['kubernetes', kubernetes],
    ['npm run dev', local],
  ] as const) {
    const produced = new Set(configs.map((c) => c.job_name));
    for (const [job, alerts] of jobsOfRules(rulesText))
      if (!produced.has(job)) problems.push(`${job} (${alerts.join(', ')}) not scraped by ${shape}`);
  }
  return problems;
}

test('when the rules are read, then they select the jobs of the API, its probes, the workers, the SDK exporter, Temporal and PostgreSQL', () => {
  expect([...jobsOfRules(fs.readFileSync(RULES, 'utf8')).keys()].sort()).toEqual([
    'coi-api',
    'coi-probe',
    'coi-worker',
    'coi-worker-sdk',
    'postgres',
    'temporal',
  ]);
});

test('when each shape’s scrape configuration is read, then every job the rules select is scraped there', () => {
  expect(unscraped(fs.readFileSync(RULES, 'utf8'))).toEqual([]);
  // npm run dev scrapes the default ports of its processes, Temporal's metrics and postgres_exporter.
  expect(Object.fromEntries(local.map((c) => [c.job_name, c.static_configs![0]!.targets]))).toEqual({
    'coi-api': ['127.0.0.1:9464'],
    'coi-worker': ['127.0.0.1:9465'],
    'coi-worker-sdk': ['127.0.0.1:9466'],
    temporal: ['127.0.0.1:9233'],
    postgres: ['127.0.0.1:9187'],
    'coi-probe': ['http://127.0.0.1:3000/healthz'],
  });
});

test('when each shape’s probe job is read, then the blackbox exporter probes /healthz and each readiness check of /readyz with its module', () => {
  for (const configs of [compose, kubernetes, local]) {
    const probe = configs.find((c) => c.job_name === 'coi-probe')!;
    const probes = probe.static_configs!.map((g) => ({ path: new URL(g.targets[0]!).pathname, ...g.labels }));
    expect(probes).toEqual([
      { path: '/healthz', module: 'healthz', check: 'live' },
      { path: '/readyz', module: 'readyz_database', check: 'database' },
      { path: '/readyz', module: 'readyz_temporal', check: 'temporal' },
      { path: '/readyz', module: 'readyz_workers', check: 'workers' },
    ]);
    expect(probe.relabel_configs!.map((r) => r.target_label)).toEqual(['__param_target', '__param_module', 'instance', '__address__']);
  }
  const modules = Object.keys(
    (parse(fs.readFileSync(path.join(ROOT, 'ops', 'blackbox', 'blackbox.yml'), 'utf8')) as { modules: object }).modules,
  );
  expect(modules).toEqual(['healthz', 'readyz_database', 'readyz_temporal', 'readyz_workers']);
});

test('when a rule names a job no shape scrapes, then the check reports it (it can fail)', () => {
  const broken = fs.readFileSync(RULES, 'utf8').replace('up{job="temporal"}', 'up{job="temporal-frontend"}');
  expect(unscraped(broken)).toEqual([
    'temporal-frontend (TemporalDown) not scraped by docker compose',
    'temporal-frontend (TemporalDown) not scraped by kubernetes',
    'temporal-frontend (TemporalDown) not scraped by npm run dev',
  ]);
});

test('when the Kubernetes jobs look for pods, then each keeps pods the manifests declare, by label and port name', () => {
  const objects = fs
    .readdirSync(K8S)
    .filter(
      (f) =>
        f.endsWith('.yaml') &&
        !['kustomization.yaml', 'temporal-values.yaml', 'prometheus-scrape-configs.yaml', 'secret.example.yaml'].includes(f),
    )
    .flatMap((f) => parseAllDocuments(fs.readFileSync(path.join(K8S, f), 'utf8')).map((d) => d.toJS()))
    .filter(
      (
        o,
      ): o is {
        kind: string;
        spec: {
          template: { metadata: { labels: Record<string, string> }; spec: { containers: Array<{ ports?: Array<{ name: string }> }> } };
        };
      } => o?.kind === 'Deployment',
    );
  // What each pod would show a pod-role relabelling: "<name label>;<component label>;<port name>".
  const podPorts = objects.flatMap((d) => {
    const labels = d.spec.template.metadata.labels;
    return d.spec.template.spec.containers.flatMap((c) =>
      (c.ports ?? []).map((p) => ({
        name: labels['app.kubernetes.io/name'] ?? '',
        component: labels['app.kubernetes.io/component'] ?? '',
        port: p.name,
      })),
    );
  });
  // Temporal's pods come from its Helm chart; coi-probe probes the API's Service through the blackbox exporter.
  const ours = kubernetes.filter((c) => c.job_name !== 'temporal' && c.job_name !== 'coi-probe');
  for (const config of ours) {
    const keep = config.relabel_configs!.find((r) => r.action === 'keep')!;
    const values = (p: { name: string; component: string; port: string }) =>
      keep
        .source_labels!.map((l) =>
          l.endsWith('_name') && l.includes('pod_label_app_kubernetes_io_name') ? p.name : l.includes('component') ? p.component : p.port,
        )
        .join(';');
    const kept = podPorts.filter((p) => new RegExp(`^(?:${keep.regex})$`).test(values(p)));
    expect({ job: config.job_name, kept: kept.length }).toEqual({ job: config.job_name, kept: 1 });
    expect(config.kubernetes_sd_configs).toEqual([{ role: 'pod', namespaces: { names: ['insurance'] } }]);
  }
});
