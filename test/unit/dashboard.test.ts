/**
 * ops/grafana/dashboard.json stays true to the service: every panel's query is valid PromQL
 * (checked by `promtool check rules` on a recording rule per panel) and reads only metrics the
 * API and worker registries define (or Prometheus' own `up`, the SDK's pollers gauge,
 * postgres_exporter's `pg_up`, or a recording rule of ops/prometheus/alerts.yml), and every rule
 * there reads only such metrics too, each alert's shown on some panel. The dashboard imports into
 * any Grafana: its data source is a variable (`__inputs`, `${datasource}` on every query), and
 * mode and instance selectors filter the queries whose metrics carry those labels.
 */
import { spawnSync } from 'node:child_process';
import { parse } from 'yaml';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApiMetrics, createWorkerMetrics } from '../../src/metrics/registry';
import { TASK_QUEUE_POLLERS_METRIC } from '../../src/metrics/task-queue-pollers';
import { DEPENDENCY_PROBE_METRICS } from '../../src/metrics/dependency-probes';

const ROOT = path.resolve(__dirname, '..', '..');
type Datasource = { type: string; uid: string };
const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, 'ops/grafana/dashboard.json'), 'utf8')) as {
  __inputs: Array<{ type: string; pluginId: string }>;
  templating: { list: Array<{ name: string; type: string }> };
  panels: Array<{ id: number; title: string; datasource: Datasource; targets: Array<{ expr: string; datasource: Datasource }> }>;
};
/** The rules of ops/prometheus/alerts.yml: alerts (`alert`) and recording rules (`record`). */
const rules = (
  parse(fs.readFileSync(path.join(ROOT, 'ops/prometheus/alerts.yml'), 'utf8')) as {
    groups: Array<{ rules: Array<{ alert?: string; record?: string; expr: string }> }>;
  }
).groups.flatMap((g) => g.rules);
const alertExprs = rules.filter((r) => r.alert).map((r) => r.expr.trim());
const recorded = rules.filter((r) => r.record).map((r) => r.record!);
const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => ({ title: p.title, expr: t.expr })));

/** Metric names a query reads (identifiers followed by `{`, `[` or a space/paren, minus PromQL words and label names). */
function metricsIn(expr: string): string[] {
  const withoutLabels = expr
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]')
    .replace(/"[^"]*"/g, '""');
  const words = withoutLabels.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [];
  const promql = new Set([
    'sum',
    'max',
    'min',
    'avg',
    'by',
    'on',
    'without',
    'rate',
    'increase',
    'histogram_quantile',
    'absent',
    'label_replace',
    'topk',
    'or',
    'and',
    'unless',
    'le',
    'status',
    'mode',
    'outcome',
    'limiter',
    'dependency',
    'operation',
    'endpoint',
    'vector',
    'route',
    'job',
    'activity_type',
    'attempt',
    'task_queue',
    'poller_type',
    'worker_type',
    'state',
    'root_account_id',
    'instance',
    'namespace',
    'task_queue_type',
    'slo',
    'check',
    'sum_over_time',
    'group_left',
  ]);
  return [...new Set(words.filter((w) => !promql.has(w)))];
}

async function knownMetrics(): Promise<Set<string>> {
  // Prometheus' own `up`, and the Temporal SDK exporter's pollers and free slots gauges (seen on the
  // worker's WORKER_SDK_METRICS_ADDRESS; test/integration/processes.test.ts checks the worker exports
  // them). postgres_exporter's `pg_up`, and the recording rules of alerts.yml.
  // The API's gauge of the pollers the Temporal server sees per expected task queue (src/metrics/task-queue-pollers.ts),
  // the worker's dependency probes (src/metrics/dependency-probes.ts) and the blackbox exporter's `probe_success` (job coi-probe).
  const names = new Set<string>([
    'up',
    'temporal_num_pollers',
    'temporal_worker_task_slots_available',
    'pg_up',
    TASK_QUEUE_POLLERS_METRIC,
    ...Object.values(DEPENDENCY_PROBE_METRICS),
    'probe_success',
    ...recorded,
  ]);
  for (const m of [createApiMetrics(), createWorkerMetrics()]) {
    for (const metric of await m.registry.getMetricsAsJSON()) {
      names.add(metric.name);
      if (String(metric.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${s}`);
    }
  }
  return names;
}

test('when the dashboard is read, then it has panels and each query is valid PromQL', () => {
  expect(exprs.length).toBeGreaterThanOrEqual(10);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-'));
  try {
    const rules = { groups: [{ name: 'dashboard', rules: exprs.map((e, i) => ({ record: `dashboard:panel_${i}`, expr: e.expr })) }] };
    fs.writeFileSync(path.join(dir, 'rules.json'), JSON.stringify(rules));
    const r = spawnSync('promtool', ['check', 'rules', 'rules.json'], { cwd: dir, encoding: 'utf8' });
    if (r.error) throw new Error(`promtool could not run (${r.error.message}); install Debian's prometheus package`);
    expect(`${r.stdout}${r.stderr}`).toContain(`SUCCESS: ${exprs.length} rules found`);
    expect(r.status).toBe(0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('when the dashboard and the rules are read, then they use only metrics the service exports', async () => {
  const known = await knownMetrics();
  const unknown = exprs.flatMap((e) =>
    metricsIn(e.expr)
      .filter((m) => !known.has(m))
      .map((m) => `${e.title}: ${m}`),
  );
  expect(unknown).toEqual([]);
  expect(alertExprs).toHaveLength(29);
  expect(recorded).toHaveLength(20);
  expect(rules.flatMap((r) => metricsIn(r.expr).filter((m) => !known.has(m) && !['humanizePercentage'].includes(m)))).toEqual([]);
});

test('when the alerts are read, then every metric they read has a dashboard panel', () => {
  const alertMetrics = alertExprs.flatMap((e) => metricsIn(e)).filter((m) => m !== 'humanizePercentage');
  const onDashboard = new Set(exprs.flatMap((e) => metricsIn(e.expr)));
  // An SLO alert reads its recording rules: a panel shows one of each SLI's windows.
  const shown = (m: string) =>
    onDashboard.has(m) || (m.includes(':') && [...onDashboard].some((d) => d.split(':ratio_rate')[0] === m.split(':ratio_rate')[0]));
  expect([...new Set(alertMetrics)].filter((m) => !shown(m))).toEqual([]);
});

test('when the dashboard is imported into another Grafana, then it asks for a Prometheus data source and every query uses it; mode and instance select', () => {
  expect(dashboard.__inputs).toEqual([expect.objectContaining({ type: 'datasource', pluginId: 'prometheus' })]);
  expect(dashboard.templating.list.map((v) => [v.name, v.type])).toEqual([
    ['datasource', 'datasource'],
    ['mode', 'custom'],
    ['instance', 'query'],
  ]);
  const sources = dashboard.panels.flatMap((p) => [p.datasource, ...p.targets.map((t) => t.datasource)]);
  expect(sources.filter((d) => d.uid !== '${datasource}' || d.type !== 'prometheus')).toEqual([]);
  // Every query of a metric with a mode label filters by the selector, and every service metric by instance.
  const modeMetrics = [
    'cancellations_needing_attention',
    'http_request_duration_seconds_bucket',
    'http_request_duration_seconds_count',
    'purchases_paid_without_certificates',
    'purchases_status_total',
    'purchase_paid_to_issued_seconds_bucket',
    'event_delivery_attempts_total',
    'event_deliveries_total',
  ];
  for (const { title, expr } of exprs) {
    for (const m of modeMetrics)
      if (expr.includes(`${m}{`) || expr.includes(`${m}[`))
        expect({ title, expr, mode: new RegExp(`${m}\\{[^}]*mode=~"\\$mode"`).test(expr) }).toEqual({ title, expr, mode: true });
    if (!/pg_up|coi:/.test(expr))
      expect({ title, expr, instance: expr.includes('instance=~"$instance"') }).toEqual({ title, expr, instance: true });
  }
});

test("when the SLO report's panels are read, then they show each objective's 30-day compliance and budget left by mode, from the recorded good and total events", () => {
  const slo = exprs.filter((e) => e.expr.includes('coi:slo_events_total:rate5m'));
  expect(slo).toHaveLength(2);
  for (const { expr } of slo) {
    expect(expr).toContain('sum_over_time(coi:slo_events_good:rate5m{mode=~"$mode"}[30d])');
    expect(expr).toContain('sum_over_time(coi:slo_events_total:rate5m{mode=~"$mode"}[30d])');
  }
  // Budget left divides the error ratio by the objective's budget (promtool tests the formula in alerts.test.yml).
  expect(slo.filter((e) => e.expr.includes('(1 - coi:slo_objective:ratio)')).map((e) => e.title)).toEqual([
    'SLO error budget left, last 30 days (below 0: exhausted)',
  ]);
});

test('when the committed picture is read, then it shows every panel: docs/screenshots/panels holds one PNG per panel, named by its id (npm run dashboard:render writes them)', () => {
  const panelDir = path.join(ROOT, 'docs/screenshots/panels');
  const drawn = fs
    .readdirSync(panelDir)
    .filter((f) => f.endsWith('.png'))
    .map((f) => Number(/^(\d+)-/.exec(f)?.[1]));
  const ids = dashboard.panels.map((p) => p.id);
  expect(drawn.sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
  // The whole picture is rendered with them (written first, so never older than the panels' run).
  expect(fs.statSync(path.join(ROOT, 'docs/screenshots/dashboard.png')).size).toBeGreaterThan(0);
});
