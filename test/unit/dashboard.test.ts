/**
 * ops/grafana/dashboard.json stays true to the service: every panel's query is valid PromQL
 * (checked by `promtool check rules` on a recording rule per panel) and reads only metrics the
 * API and worker registries define (or Prometheus' own `up`, or the SDK's pollers gauge), and every alert in
 * ops/prometheus/alerts.yml reads only such metrics too, each of them shown on some panel.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApiMetrics, createWorkerMetrics } from '../../src/metrics/registry';

const ROOT = path.resolve(__dirname, '..', '..');
const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, 'ops/grafana/dashboard.json'), 'utf8')) as { panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => ({ title: p.title, expr: t.expr })));

/** Metric names a query reads (identifiers followed by `{`, `[` or a space/paren, minus PromQL words and label names). */
function metricsIn(expr: string): string[] {
  const withoutLabels = expr.replace(/\{[^}]*\}/g, '{}').replace(/\[[^\]]*\]/g, '[]').replace(/"[^"]*"/g, '""');
  const words = withoutLabels.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [];
  const promql = new Set(['sum', 'max', 'min', 'avg', 'by', 'without', 'rate', 'increase', 'histogram_quantile', 'absent', 'or', 'and', 'unless', 'le', 'status', 'mode', 'outcome', 'limiter', 'dependency', 'operation', 'route', 'job', 'activity_type', 'attempt', 'task_queue', 'poller_type', 'state']);
  return [...new Set(words.filter((w) => !promql.has(w)))];
}

async function knownMetrics(): Promise<Set<string>> {
  // Prometheus' own `up`, and the Temporal SDK exporter's pollers gauge (seen on the worker's
  // WORKER_SDK_METRICS_ADDRESS; test/integration/processes.test.ts checks the worker exports it).
  const names = new Set<string>(['up', 'temporal_num_pollers']);
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

test('when the dashboard and the alerts are read, then they use only metrics the service exports', async () => {
  const known = await knownMetrics();
  const unknown = exprs.flatMap((e) => metricsIn(e.expr).filter((m) => !known.has(m)).map((m) => `${e.title}: ${m}`));
  expect(unknown).toEqual([]);
  const alerts = fs.readFileSync(path.join(ROOT, 'ops/prometheus/alerts.yml'), 'utf8');
  const alertExprs = [...alerts.matchAll(/expr: (?:\|\n)?([\s\S]*?)\n\s+(?:for|labels):/g)].map((m) => m[1]!.trim());
  expect(alertExprs).toHaveLength(8);
  expect(alertExprs.flatMap((e) => metricsIn(e).filter((m) => !known.has(m) && !['humanizePercentage'].includes(m)))).toEqual([]);
});

test('when the alerts are read, then every metric they read has a dashboard panel', () => {
  const alerts = fs.readFileSync(path.join(ROOT, 'ops/prometheus/alerts.yml'), 'utf8');
  const alertMetrics = [...alerts.matchAll(/expr: (?:\|\n)?([\s\S]*?)\n\s+(?:for|labels):/g)].flatMap((m) => metricsIn(m[1]!.trim())).filter((m) => m !== 'humanizePercentage');
  const onDashboard = new Set(exprs.flatMap((e) => metricsIn(e.expr)));
  expect([...new Set(alertMetrics)].filter((m) => !onDashboard.has(m))).toEqual([]);
});
