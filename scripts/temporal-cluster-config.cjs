/**
 * Config of a local Temporal cluster (temporal-server on PostgreSQL) and the arguments of a
 * local dev server, shared by the dev/test stack (scripts/stack.mjs) and the resilience suite's
 * own stack (test/resilience/lib/fault-stack.ts).
 * CommonJS so both an ES module and the CommonJS test code can load it.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');

/**
 * Dynamic config of the local cluster: `ops/temporal/dynamicconfig.yaml`, the file compose's
 * server reads, so the two never drift (what the dev server turns on and this service uses).
 */
const CLUSTER_DYNAMIC_CONFIG = fs.readFileSync(path.join(__dirname, '..', 'ops', 'temporal', 'dynamicconfig.yaml'), 'utf8');

/**
 * The server config of a Temporal cluster on PostgreSQL (all four services in one process).
 * @param {{ pg: { host: string, port: number, user: string, password: string },
 *   databases: { main: string, visibility: string },
 *   ports: { frontend: number, frontendHttp: number, history: number, matching: number, worker: number, membership: number, metrics?: number },
 *   shards: number }} options  `metrics` absent: no server metrics listener.
 * @returns {string} YAML for `temporal-server --config-file`; the dynamic config is read from
 *   `dynamicconfig.yaml` in the server's working directory.
 */
function clusterConfigYaml({ pg, databases, ports, shards }) {
  const store = (database, maxConns) => `      sql:
        pluginName: postgres12_pgx
        databaseName: ${JSON.stringify(database)}
        connectAddr: ${JSON.stringify(`${pg.host}:${pg.port}`)}
        connectProtocol: tcp
        user: ${JSON.stringify(pg.user)}
        password: ${JSON.stringify(pg.password)}
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
  const service = (grpc, membership, extra = '') => `    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnLocalHost: true${extra}`;
  const metrics = ports.metrics
    ? `
  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: "127.0.0.1:${ports.metrics}"`
    : '';
  return `# Written from scripts/temporal-cluster-config.cjs for a local Temporal cluster; edits are overwritten.
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: ${shards}
  datastores:
    postgres-default:
${store(databases.main, 20)}
    postgres-visibility:
${store(databases.visibility, 10)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"${metrics}
services:
  frontend:
${service(ports.frontend, ports.membership, `\n      httpPort: ${ports.frontendHttp}`)}
  history:
${service(ports.history, ports.membership + 1)}
  matching:
${service(ports.matching, ports.membership + 2)}
  worker:
${service(ports.worker, ports.membership + 6)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:${ports.frontend}"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: dynamicconfig.yaml
  pollInterval: 10s
`;
}

/**
 * The arguments of `temporal server start-dev` on `host` with its ports and SQLite state file
 * `dbFile` (absolute), logging at warn, with SQLite in WAL mode and `synchronous=normal`: commits
 * no longer fsync one by one (a process crash loses nothing, a power cut may lose the last
 * commits: a dev server's trade); the default rollback journal's fsyncs took an eighth of the
 * server's CPU under load and capped a loaded run at a few purchases per second (issue 16).
 * Callers add what differs (namespace, search attributes, dynamic config).
 * @param {{ host: string, port: number, uiPort: number, metricsPort: number, dbFile: string }} options
 * @returns {string[]}
 */
function devServerArgs({ host, port, uiPort, metricsPort, dbFile }) {
  const flags = { ip: host, port, 'ui-port': uiPort, 'metrics-port': metricsPort, 'db-filename': dbFile, 'log-level': 'warn' };
  return [
    ...['server', 'start-dev'],
    ...Object.entries(flags).flatMap(([name, value]) => [`--${name}`, String(value)]),
    ...['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'],
  ];
}

module.exports = { clusterConfigYaml, CLUSTER_DYNAMIC_CONFIG, devServerArgs };
