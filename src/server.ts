/**
 * API entry point: loads the config (one clear line and exit 1 when it is bad), builds the
 * container, listens on HOST:PORT, and on SIGTERM/SIGINT stops accepting connections, lets
 * in-flight requests finish, then closes the pools.
 */
import { loadConfigOrExit } from './config';
import { createContainer } from './container';
import { createApp } from './app';
import { startMetricsServer, type MetricsServer } from './metrics/server';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const container = createContainer(config);
  const app = createApp(container);
  const server = app.listen(config.PORT, config.HOST, () => {
    container.log.info({ url: `http://${config.HOST}:${config.PORT}` }, 'api listening');
  });
  // Expired idempotency keys are pruned at start and every 10 minutes (each API process does it; harmless twice).
  const prune = async () => {
    try {
      let pruned = 0;
      for (let n = -1; n !== 0; pruned += n) n = await container.idempotency.store.pruneExpired(10_000);
      if (pruned > 0) container.log.info({ pruned }, 'expired idempotency keys pruned');
    } catch (err) {
      container.log.warn({ err }, 'idempotency keys not pruned; will retry');
    }
  };
  void prune();
  const pruning = setInterval(() => void prune(), 10 * 60_000);
  pruning.unref();
  // Metrics on their own port; a port in use is logged, never fatal (the API still serves).
  let metricsServer: MetricsServer | undefined;
  startMetricsServer({ registry: container.metrics.registry, host: config.METRICS_HOST, port: config.METRICS_PORT }).then(
    (m) => {
      metricsServer = m;
      container.log.info({ url: `${m.url}/metrics` }, 'metrics listening');
    },
    (err: unknown) =>
      container.log.error({ err, port: config.METRICS_PORT }, 'metrics listener could not start; GET /metrics is unavailable'),
  );
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    clearInterval(pruning);
    void metricsServer?.close();
    container.log.info({ signal }, 'api stopping');
    server.close(() => {
      container
        .close()
        .catch((err: unknown) => container.log.error({ err }, 'error while closing'))
        .finally(() => process.exit(0));
    });
    server.closeIdleConnections();
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main();
