/**
 * Worker entry point: connects to Temporal (retrying for up to a minute while the server comes
 * up), runs the workers of src/temporal/workers.ts (workflows and activities on the task queue,
 * certificate rendering on its certificates queue with CERTIFICATE_ACTIVITY_CONCURRENCY), until
 * SIGTERM/SIGINT, when it stops polling, lets running activities finish (up to
 * `shutdownGraceTime`), closes its connection and pools, and exits 0.
 */
import { NativeConnection, Runtime, type LogLevel } from '@temporalio/worker';
import { loadConfigOrExit, type Config } from './config';
import { createLogger, type Logger } from './logger';
import { createDb } from './db/knex';
import { activityDepsFromConfig, createActivities } from '../activities';
import { createWorkers } from './temporal/workers';

/** Routes the SDK's log lines into pino. */
function installRuntimeLogger(log: Logger): void {
  const map: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'trace',
    DEBUG: 'debug',
    INFO: 'info',
    WARN: 'warn',
    ERROR: 'error',
  };
  const sdkLog = log.child({ component: 'temporal-sdk' });
  const emit = (level: LogLevel, message: string, meta?: Record<string, unknown>) => sdkLog[map[level]](meta ?? {}, message);
  Runtime.install({
    logger: {
      log: emit,
      trace: (m, meta) => emit('TRACE', m, meta),
      debug: (m, meta) => emit('DEBUG', m, meta),
      info: (m, meta) => emit('INFO', m, meta),
      warn: (m, meta) => emit('WARN', m, meta),
      error: (m, meta) => emit('ERROR', m, meta),
    },
    // The SDK core's own (Rust) lines too, as JSON through pino instead of coloured text on stderr.
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
  });
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
  installRuntimeLogger(log);
  const db = createDb(config, log);
  const connection = await connectWithRetry(config, log);
  // One Chromium per worker process, launched on the first render and closed on shutdown.
  const deps = activityDepsFromConfig(config, { db, log });
  try {
    const workers = await createWorkers({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      activities: createActivities(deps),
      certificateConcurrency: config.CERTIFICATE_ACTIVITY_CONCURRENCY,
    });
    log.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, taskQueues: workers.taskQueues, address: config.TEMPORAL_ADDRESS }, 'worker running');
    await workers.run(); // resolves once a shutdown signal has drained both workers
    log.info('worker stopped');
  } finally {
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
