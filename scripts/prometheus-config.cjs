/**
 * The Prometheus configuration of a local stack and where Debian puts the monitoring binaries, shared by `npm run dev` (scripts/stack.mjs) and
 * the resilience suite's own stacks (test/resilience/lib/fault-stack.ts). CommonJS so both an ES
 * module and the CommonJS test code can load it.
 */
'use strict';

const path = require('node:path');

/** Debian's packages `prometheus`, `prometheus-alertmanager`, `prometheus-postgres-exporter` and `prometheus-blackbox-exporter`. */
const MONITORING_BINS = Object.freeze({
  prometheus: '/usr/bin/prometheus',
  alertmanager: '/usr/bin/prometheus-alertmanager',
  postgresExporter: '/usr/bin/prometheus-postgres-exporter',
  blackboxExporter: '/usr/bin/prometheus-blackbox-exporter',
});

/** The blackbox exporter's probe modules (ops/blackbox/blackbox.yml). */
const BLACKBOX_FILE = path.join(__dirname, '..', 'ops', 'blackbox', 'blackbox.yml');
/** The checks /readyz reports, each probed by its own module `readyz_<check>`. */
const READINESS_CHECKS = Object.freeze(['database', 'temporal', 'workers']);

/**
 * The scrape job `coi-probe`: the blackbox exporter at `blackbox` (host:port) probes each public
 * API base URL of `publicApis` (e.g. `http://127.0.0.1:3000`) as a client would: `/healthz`
 * (module `healthz`, label `check="live"`) and `/readyz` once per readiness check (module
 * `readyz_<check>`, label `check="<check>"`); `instance` is the probed URL. The same job as
 * compose's ops/prometheus/prometheus.yml and the Kubernetes scrape configs.
 *
 * @param {string} blackbox host:port of the exporter
 * @param {string[]} publicApis base URLs, without a trailing slash
 * @returns {object} one `scrape_configs` entry
 */
function probeJob(blackbox, publicApis) {
  return {
    job_name: 'coi-probe',
    metrics_path: '/probe',
    static_configs: publicApis.flatMap((base) => [
      { targets: [`${base}/healthz`], labels: { module: 'healthz', check: 'live' } },
      ...READINESS_CHECKS.map((check) => ({ targets: [`${base}/readyz`], labels: { module: `readyz_${check}`, check } })),
    ]),
    relabel_configs: [
      { source_labels: ['__address__'], target_label: '__param_target' },
      { source_labels: ['module'], target_label: '__param_module' },
      { source_labels: ['__param_target'], target_label: 'instance' },
      { target_label: '__address__', replacement: blackbox },
    ],
  };
}

/** The service's alert and recording rules. */
const RULES_FILE = path.join(__dirname, '..', 'ops', 'prometheus', 'alerts.yml');

/**
 * A Prometheus configuration (an object; written as JSON, which is YAML) with the same jobs as
 * compose's ops/prometheus/prometheus.yml and the Kubernetes scrape configs, on loopback
 * addresses (`host:port`): `coi-api`, `coi-worker`, `coi-worker-sdk`, `temporal` (the Temporal
 * server's own metrics), `postgres` (postgres_exporter), and with a `blackbox` exporter (host:port;
 * null: none) `coi-probe` of the `publicApis` base URLs (see `probeJob`); the rules of
 * ops/prometheus/alerts.yml, evaluated as often as targets are scraped; alerts sent to
 * `alertmanager` (null: none).
 * `serviceScrapeInterval` scrapes the service's own processes (the three `coi-*` jobs) at another
 * interval, which is also their scrape's deadline (default: `scrapeInterval`).
 *
 * @param {{ api?: string[], workers?: string[], workerSdk?: string[], temporal?: string[], postgresExporter?: string,
 *   alertmanager?: string | null, blackbox?: string | null, publicApis?: string[], rulesFile?: string, scrapeInterval?: string,
 *   serviceScrapeInterval?: string }} [targets]
 *   scrapeInterval and serviceScrapeInterval as Prometheus writes a duration (`15s`, `1s`).
 * @returns {object} a Prometheus config (`global`, `rule_files`, `alerting`, `scrape_configs`)
 */
function localPrometheusConfig({
  api = ['127.0.0.1:9464'],
  workers = ['127.0.0.1:9465'],
  workerSdk = ['127.0.0.1:9466'],
  temporal = ['127.0.0.1:9233'],
  postgresExporter = '127.0.0.1:9187',
  alertmanager = '127.0.0.1:9093',
  blackbox = null,
  publicApis = ['http://127.0.0.1:3000'],
  rulesFile = RULES_FILE,
  scrapeInterval = '15s',
  serviceScrapeInterval = scrapeInterval,
} = {}) {
  const job = (name, targets) => ({ job_name: name, static_configs: [{ targets }] });
  const serviceJob = (name, targets) =>
    serviceScrapeInterval === scrapeInterval
      ? job(name, targets)
      : { ...job(name, targets), scrape_interval: serviceScrapeInterval, scrape_timeout: serviceScrapeInterval };
  return {
    global: { scrape_interval: scrapeInterval, evaluation_interval: scrapeInterval },
    rule_files: [rulesFile],
    ...(alertmanager ? { alerting: { alertmanagers: [{ static_configs: [{ targets: [alertmanager] }] }] } } : {}),
    scrape_configs: [
      serviceJob('coi-api', api),
      serviceJob('coi-worker', workers),
      serviceJob('coi-worker-sdk', workerSdk),
      job('temporal', temporal),
      job('postgres', [postgresExporter]),
      ...(blackbox ? [probeJob(blackbox, publicApis)] : []),
    ],
  };
}

/** The service's Alertmanager configuration, with the dead-man's switch's placeholder URL. */
const ALERTMANAGER_FILE = path.join(__dirname, '..', 'ops', 'alertmanager', 'alertmanager.yml');
const DEADMANS_SWITCH_PLACEHOLDER = 'http://deadmans-switch.invalid/DEADMANS_SWITCH_URL';
const DEADMANS_SWITCH_BLOCK = /^ *# deadmans-switch webhook: begin\n[\s\S]*?^ *# deadmans-switch webhook: end\n/m;

/**
 * The text of ops/alertmanager/alertmanager.yml with the dead-man's switch's URL (the Watchdog's
 * receiver `deadmans-switch`, issue 55 item 4) in place of its placeholder; without a URL the
 * receiver's webhook is left out, so it notifies nobody (as `page` and `ticket` locally).
 *
 * @param {{ deadmansSwitchUrl?: string | null, file?: string }} [options] deadmansSwitchUrl: an http(s) URL
 * @returns {string} the configuration, YAML
 * @throws {Error} when the URL is not http(s), or the file has no placeholder block
 */
function localAlertmanagerConfig({ deadmansSwitchUrl = null, file = ALERTMANAGER_FILE } = {}) {
  const text = require('node:fs').readFileSync(file, 'utf8');
  if (!DEADMANS_SWITCH_BLOCK.test(text) || !text.includes(DEADMANS_SWITCH_PLACEHOLDER))
    throw new Error(`${file}: no deadmans-switch webhook block with the placeholder ${DEADMANS_SWITCH_PLACEHOLDER}`);
  if (!deadmansSwitchUrl) return text.replace(DEADMANS_SWITCH_BLOCK, '');
  let url;
  try {
    url = new URL(deadmansSwitchUrl);
  } catch {
    throw new Error(`DEADMANS_SWITCH_URL must be an http(s) URL, got "${deadmansSwitchUrl}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`DEADMANS_SWITCH_URL must be an http(s) URL, got "${deadmansSwitchUrl}"`);
  // A YAML single-quoted scalar: a quote is written twice.
  return text.replace(`'${DEADMANS_SWITCH_PLACEHOLDER}'`, `'${url.href.replaceAll("'", "''")}'`);
}

module.exports = {
  localPrometheusConfig,
  localAlertmanagerConfig,
  probeJob,
  RULES_FILE,
  ALERTMANAGER_FILE,
  BLACKBOX_FILE,
  READINESS_CHECKS,
  MONITORING_BINS,
};
