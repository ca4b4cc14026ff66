/**
 * Runs a real Temporal worker in the test process against the dev server the global setup
 * started, on its own task queue (so suites running in parallel never take each other's
 * tasks). `overrides` replace single activities for a test that needs processor state
 * stripe-mock cannot hold (the test says so in its name); given as a function, it receives the
 * real activities, so an override can wrap one (hold it, then call through).
 */
import { randomUUID } from 'node:crypto';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { activityDepsFromConfig, createActivities } from '../../activities';
import { createDb } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { loadConfig } from '../../src/config';
import type { BrowserPool } from '../../src/pdf/browser-pool';
import { createWorkers } from '../../src/temporal/workers';
import { activityAttemptsInterceptor, type WorkerMetrics } from '../../src/metrics/registry';
import { documentSweepActivitiesFor } from '../../activities/document-sweep';

/** The activities a worker runs: `createActivities`' and the document sweep's (as src/worker.ts builds them). */
type WorkerActivities = ReturnType<typeof createActivities> & ReturnType<typeof documentSweepActivitiesFor>;

export interface TestWorker {
  /** The worker's Prometheus metrics (the registry its activities count into). */
  metrics: WorkerMetrics;
  taskQueue: string;
  /** The worker's Chromium page pool (launches, renders, blocked requests). */
  pdf: BrowserPool;
  shutdown(): Promise<void>;
}

export function uniqueTaskQueue(): string {
  return `test-${randomUUID()}`;
}

let runtimeInstalled = false;
/** The SDK's INFO lines (worker state changes, bundling) would bury test output: WARN and above. */
function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // already installed in this process (another helper got there first)
  }
}

export async function startTestWorker(
  taskQueue: string,
  overrides: Partial<WorkerActivities> | ((real: WorkerActivities) => Partial<WorkerActivities>) = {},
  env: Record<string, string> = {},
): Promise<TestWorker> {
  quietRuntime();
  const config = loadConfig({ ...process.env, ...env });
  const db = createDb(config);
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const deps = activityDepsFromConfig(config, { db, log: createLogger({ LOG_LEVEL: 'silent' }, 'test-worker') }, { taskQueue });
  const pdf = deps.pdf;
  const real: WorkerActivities = { ...createActivities(deps), ...documentSweepActivitiesFor(config, deps, taskQueue) };
  const activities = { ...real, ...(typeof overrides === 'function' ? overrides(real) : overrides) };
  const workers = await createWorkers({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue,
    activities,
    certificateConcurrency: config.CERTIFICATE_ACTIVITY_CONCURRENCY,
    refundsPerSecond: config.REFUND_RATE_LIMIT_PER_SECOND,
    payloadKeys: config.TEMPORAL_PAYLOAD_KEYS,
    activityInterceptors: [activityAttemptsInterceptor(deps.metrics)],
    workflowBundlePath: config.TEMPORAL_WORKFLOW_BUNDLE,
  });
  const running = workers.run();
  return {
    taskQueue,
    pdf,
    metrics: deps.metrics,
    async shutdown() {
      workers.shutdown();
      await running;
      await pdf.close();
      deps.mailer.close();
      await deps.temporal.close();
      await connection.close();
      await db.destroy();
    },
  };
}

export { eventually } from '../../scripts/harness/api';
