/**
 * The alert rules in ops/prometheus are valid and do what their names say: `promtool check
 * rules` / `check config`, and `promtool test rules` with series that fire each alert and series
 * that do not (ops/prometheus/alerts.test.yml). A control run with a loosened threshold must
 * fail, so the rule tests can catch a broken alert. promtool comes from Debian's `prometheus`
 * package (installed by .ci/run).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const DIR = path.resolve(__dirname, '..', '..', 'ops', 'prometheus');
const promtool = (args: string[], cwd = DIR) => {
  const r = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  if (r.error) throw new Error(`promtool could not run (${r.error.message}); install Debian's prometheus package`);
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
};

test('when the rules and the Prometheus config are checked, then both are valid', () => {
  const rules = promtool(['check', 'rules', 'alerts.yml']);
  expect(rules.out).toContain('SUCCESS: 8 rules found');
  expect(rules.code).toBe(0);
  const config = promtool(['check', 'config', 'prometheus.yml']);
  expect(config.code).toBe(0);
});

test('when each alert is fed series that fire it and series that do not, then promtool test rules passes', () => {
  const run = promtool(['test', 'rules', 'alerts.test.yml']);
  expect(run.out).toContain('SUCCESS');
  expect(run.code).toBe(0);
});

test('when an alert threshold is loosened, then its rule test fails (the tests can catch a broken alert)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'alerts-'));
  try {
    for (const f of ['alerts.yml', 'alerts.test.yml']) fs.copyFileSync(path.join(DIR, f), path.join(dir, f));
    const rules = fs.readFileSync(path.join(dir, 'alerts.yml'), 'utf8');
    expect(rules).toContain('> 0.05');
    fs.writeFileSync(path.join(dir, 'alerts.yml'), rules.replace('> 0.05', '> 0.5'));
    const run = promtool(['test', 'rules', 'alerts.test.yml'], dir);
    expect(run.code).not.toBe(0);
    expect(run.out).toContain('High5xxRatio');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
