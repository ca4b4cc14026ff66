/**
 * Worker entry point: connects to Temporal (retrying for up to a minute while the server comes
 * up), runs the workers of src/temporal/workers.ts (workflows and activities on the task queue,
 * certificate rendering on its certificates queue with CERTIFICATE_ACTIVITY_CONCURRENCY), until
 * SIGTERM/SIGINT, when it stops polling, lets running activities finish (up to
 * `shutdownGraceTime`), closes its connection and pools, and exits 0.
 */
import v8 from 'node:v8';
import { NativeConnection } from '@temporalio/worker';
import { loadConfigOrExit, type Config } from './config';
import { createLogger, type Logger } from './logger';
import { createDb, pingDb } from './db/knex';
import { startMetricsServer, type MetricsServer } from './metrics/server';
import { ensureDocumentSweepSchedule } from './certificates/sweep-schedule';
import { ensureBordereauSchedule } from './reports/schedule';
import { activityAttemptsInterceptor } from './metrics/registry';
import { activityDepsFromConfig, createActivities } from '../activities';
import { documentSweepActivitiesFor } from '../activities/document-sweep';
import { createWorkers } from './temporal/workers';
import { installRuntimeLogger } from './temporal/runtime-logger';

/**
 * True when the Temporal frontend answers GetSystemInfo on the worker's own connection within
 * `timeoutMs` ms. A worker whose connection is down keeps its pollers "running" while the SDK
 * retries, so polling alone does not say it can take work.
 */
async function temporalAnswers(connection: NativeConnection, timeoutMs = 2000): Promise<boolean> {
  try {
    await connection.withDeadline(Date.now() + timeoutMs, () => connection.workflowService.getSystemInfo({}));
    return true;
  } catch {
    return false;
  }
}

async function connectWithRetry(config: Config, log: Logger): Promise<NativeConnection> {
  const deadline = Date.now() + 60_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
    } catch (err) {
      if (Date.now() > deadline) throw err;
      log.warn({ attempt, address: config.TEMPORAL_ADDRESS }, 'temporal not reachable yet; retrying');
      await new Promise((r) => setTimeout(r, Math.min(5000, 500 * attempt)));
    }
  }
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const log = createLogger(config, 'worker');
  installRuntimeLogger(log, config.WORKER_SDK_METRICS_ADDRESS);
  const db = createDb(config, log);
  const connection = await connectWithRetry(config, log);
  // One Chromium per worker process, launched on the first render and closed on shutdown.
  const deps = activityDepsFromConfig(config, { db, log });
  let metricsServer: MetricsServer | undefined;
  try {
    const workers = await createWorkers({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      activities: { ...createActivities(deps), ...documentSweepActivitiesFor(config, deps) },
      certificateConcurrency: config.CERTIFICATE_ACTIVITY_CONCURRENCY,
      refundsPerSecond: config.REFUND_RATE_LIMIT_PER_SECOND,
      payloadKeys: config.TEMPORAL_PAYLOAD_KEYS,
      activityInterceptors: [activityAttemptsInterceptor(deps.metrics)],
      workflowBundlePath: config.TEMPORAL_WORKFLOW_BUNDLE,
    });
    const running = workers.run(); // resolves once a shutdown signal has drained both workers
    // The monthly bordereaux schedule (created, or brought to this definition), in the background so
    // a slow Temporal never delays the worker's metrics and readiness; a failure is logged, never
    // fatal: the next start tries again.
    void ensureBordereauSchedule(deps.temporal.client, config.TEMPORAL_TASK_QUEUE).catch((err: unknown) =>
      log.warn({ err }, 'the monthly-bordereaux schedule could not be created or updated; the next worker start tries again'),
    );
    // The daily stored-documents sweep (issue 52, item 2), the same way.
    void ensureDocumentSweepSchedule(deps.temporal.client, config.TEMPORAL_TASK_QUEUE).catch((err: unknown) =>
      log.warn({ err }, 'the stored-documents-sweep schedule could not be created or updated; the next worker start tries again'),
    );
    // Metrics and health on their own port; a port in use is logged, never fatal.
    metricsServer = await startMetricsServer({
      registry: deps.metrics.registry,
      host: config.METRICS_HOST,
      port: config.WORKER_METRICS_PORT,
      readiness: async () => {
        const [temporal, database] = await Promise.all([temporalAnswers(connection), pingDb(db)]);
        const checks = { polling: workers.running(), temporal, database, browser: deps.pdf.healthy() };
        return { ready: checks.polling && checks.temporal && checks.database && checks.browser, checks };
      },
    }).catch((err: unknown) => {
      log.error(
        { err, port: config.WORKER_METRICS_PORT },
        'worker metrics listener could not start; /metrics, /healthz and /readyz are unavailable',
      );
      return undefined;
    });
    log.info(
      {
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        taskQueues: workers.taskQueues,
        address: config.TEMPORAL_ADDRESS,
        metrics: metricsServer ? `${metricsServer.url}/metrics` : null,
        sdkMetrics: config.WORKER_SDK_METRICS_ADDRESS || null,
        // The V8 heap limit (MiB): old generation (--max-old-space-size, scripts/worker-runtime.cjs) and young.
        heapLimitMiB: Math.round(v8.getHeapStatistics().heap_size_limit / 2 ** 20),
      },
      'worker running',
    );
    await running;
    log.info('worker stopped');
  } finally {
    await metricsServer?.close();
    await deps.pdf.close();
    deps.mailer.close();
    await deps.temporal.close();
    await connection.close();
    await db.destroy();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`worker failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
