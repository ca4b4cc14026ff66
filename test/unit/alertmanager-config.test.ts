/**
 * ops/alertmanager/alertmanager.yml routes what the rules fire (issue 55 item 4): pages and
 * tickets to receivers of their own, and the always-firing Watchdog to the dead-man's switch,
 * whose URL is configuration (DEADMANS_SWITCH_URL, written in by `localAlertmanagerConfig` of
 * scripts/prometheus-config.cjs, which the local stack's ensureAlertmanager uses). Checked with
 * Debian's `amtool` (package prometheus-alertmanager).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// CommonJS without types (scripts/prometheus-config.cjs), as test/resilience/lib/fault-stack.ts loads it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ALERTMANAGER_FILE, localAlertmanagerConfig } = require('../../scripts/prometheus-config.cjs') as {
  ALERTMANAGER_FILE: string;
  localAlertmanagerConfig: (options?: { deadmansSwitchUrl?: string | null; file?: string }) => string;
};

const amtool = (args: string[]) => {
  const r = spawnSync('amtool', args, { encoding: 'utf8' });
  if (r.error) throw new Error(`amtool could not run (${r.error.message}); install Debian's prometheus-alertmanager package`);
  return { code: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout.trim() };
};

/** Writes `text` to a scratch file, runs `check` on its path, removes it. */
function withConfig<T>(text: string, check: (file: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'alertmanager-'));
  try {
    const file = path.join(dir, 'alertmanager.yml');
    fs.writeFileSync(file, text);
    return check(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const routeOf = (file: string, ...labels: string[]) => amtool(['config', 'routes', 'test', '--config.file', file, ...labels]).stdout;

test('when the checked-in configuration is checked, then it is valid and routes the Watchdog to the dead-man’s switch, pages to page and the rest to ticket', () => {
  const check = amtool(['check-config', ALERTMANAGER_FILE]);
  expect(check.out).toContain('SUCCESS');
  expect(check.out).toContain('3 receivers');
  expect(routeOf(ALERTMANAGER_FILE, 'alertname=Watchdog', 'severity=heartbeat')).toBe('deadmans-switch');
  expect(routeOf(ALERTMANAGER_FILE, 'alertname=ApiDown', 'severity=page')).toBe('page');
  expect(routeOf(ALERTMANAGER_FILE, 'alertname=AgencyWebhookDeliveriesFailing', 'severity=ticket')).toBe('ticket');
  // Only the Watchdog reaches the dead-man's switch: a heartbeat-less page never does.
  expect(routeOf(ALERTMANAGER_FILE, 'alertname=TemporalDown', 'severity=page')).toBe('page');
});

test('when DEADMANS_SWITCH_URL is given, then the written configuration sends the Watchdog there every minute; without one the receiver notifies nobody; a non-http URL is refused', () => {
  const url = 'https://hc-ping.example.com/3f1c9a2e-deadmans?source=coi';
  const configured = localAlertmanagerConfig({ deadmansSwitchUrl: url });
  expect(configured).toContain(`- url: '${url}'`);
  expect(configured).not.toContain('deadmans-switch.invalid');
  withConfig(configured, (file) => {
    expect(amtool(['check-config', file]).out).toContain('SUCCESS');
    expect(routeOf(file, 'alertname=Watchdog', 'severity=heartbeat')).toBe('deadmans-switch');
  });
  const section = (text: string) => text.slice(text.indexOf('  - name: deadmans-switch'), text.indexOf('inhibit_rules:'));
  expect(section(configured)).toMatch(/webhook_configs:\n\s+- url: '[^']+'\n\s+send_resolved: false/);
  expect(configured).toMatch(
    /matchers: \['alertname="Watchdog"'\]\n\s+receiver: deadmans-switch\n\s+group_wait: 0s\n\s+group_interval: 1m\n\s+repeat_interval: 1m/,
  );

  const unset = localAlertmanagerConfig({ deadmansSwitchUrl: null });
  expect(section(unset)).not.toContain('webhook_configs');
  withConfig(unset, (file) => {
    expect(amtool(['check-config', file]).out).toContain('3 receivers');
    expect(routeOf(file, 'alertname=Watchdog', 'severity=heartbeat')).toBe('deadmans-switch');
  });

  expect(() => localAlertmanagerConfig({ deadmansSwitchUrl: 'ftp://example.com/x' })).toThrow(
    'DEADMANS_SWITCH_URL must be an http(s) URL, got "ftp://example.com/x"',
  );
  expect(() => localAlertmanagerConfig({ deadmansSwitchUrl: 'not a url' })).toThrow('DEADMANS_SWITCH_URL must be an http(s) URL');
});
