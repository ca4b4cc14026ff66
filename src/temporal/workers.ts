/**
 * The Temporal workers one worker process runs (ARCHITECTURE §1; issue 8):
 *
 * - on `taskQueue`: every workflow (`workflows/index.ts`) and every activity;
 * - on `certificatesTaskQueue(taskQueue)`: the same activities, of which only the certificate
 *   rendering steps are scheduled there, at most `certificateConcurrency` at once. A burst of
 *   certificate work then waits in Temporal (schedule-to-start) instead of competing for the CPU
 *   with checkouts, which a buyer is waiting on. The main worker keeps the activities too, so a
 *   step scheduled on the main queue by an older history still runs.
 *
 * - on `refundsTaskQueue(taskQueue)`: the same activities, of which only the creation of a
 *   cancellation's refund at the processor is scheduled there, `refundsPerSecond` started per
 *   second across every worker (a task-queue rate limit Temporal enforces; its bucket lets one
 *   second see up to twice that), below the processor's request limit, so a bulk cancellation
 *   never meets its 429s.
 *
 * - on `policyTaskQueue(taskQueue)`: the policy workflows (cancellations, one purchase's changes
 *   after its sale) and their database steps, with workflow-task slots of their own: during a
 *   processor outage under checkout load every slot of the main queue can be held by purchase
 *   workflows whose checkout calls retry, and a cancellation must still be accepted at once (the
 *   fault suite measured 5 of 60 answered within 30 s on a shared queue, 60 of 60 on this one).
 *
 * `run()` resolves once all have stopped (after `shutdown()` or a shutdown signal, which the
 * SDK installs for SIGINT/SIGTERM); it rejects if any fails.
 */
import { Runtime, Worker, bundleWorkflowCode, type ActivityInterceptorsFactory, type NativeConnection } from '@temporalio/worker';
import { certificatesTaskQueue, policyTaskQueue, refundsTaskQueue } from '../../workflows/contracts';
import type { PayloadKey } from '../config';
import { dataConverterFor } from './codec';

/** The workflow code's entry point (workflows/index.ts), which a bundle is built from. */
export const WORKFLOWS_PATH = require.resolve('../../workflows');

export interface WorkerSet {
  taskQueues: string[];
  run(): Promise<void>;
  shutdown(): void;
  /** True while every worker of the set is running (polling its task queue). */
  running(): boolean;
}

export async function createWorkers(options: {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: object;
  certificateConcurrency: number;
  /** Refund activities started per second across every worker of the refunds queue (Temporal enforces it server-side, a second's burst on top; default 10). */
  refundsPerSecond?: number;
  /** Seconds running activities get to finish on shutdown (default 10). */
  shutdownGraceSeconds?: number;
  /** Payload codec keys (TEMPORAL_PAYLOAD_KEYS): every payload is encrypted with the first. */
  payloadKeys: readonly PayloadKey[];
  /** Activity interceptors of both workers (e.g. the attempt counter of the metrics). */
  activityInterceptors?: ActivityInterceptorsFactory[];
  /** A workflow bundle file built from this code (TEMPORAL_WORKFLOW_BUNDLE); absent: bundled here. */
  workflowBundlePath?: string;
}): Promise<WorkerSet> {
  const { connection, namespace, taskQueue, activities } = options;
  const shutdownGraceTime = `${options.shutdownGraceSeconds ?? 10}s`;
  const dataConverter = dataConverterFor(options.payloadKeys);
  const interceptors = { activity: options.activityInterceptors ?? [] };
  // One bundle of the workflow code for the two workers that run workflows (bundling takes seconds
  // of CPU, so a bundle built ahead of time is loaded instead when there is one).
  const workflowBundle = options.workflowBundlePath
    ? { codePath: options.workflowBundlePath }
    : await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: Runtime.instance().logger });
  const main = await Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowBundle,
    activities,
    shutdownGraceTime,
    dataConverter,
    interceptors,
  });
  const certificates = await Worker.create({
    connection,
    namespace,
    dataConverter,
    interceptors,
    taskQueue: certificatesTaskQueue(taskQueue),
    activities,
    maxConcurrentActivityTaskExecutions: options.certificateConcurrency,
    shutdownGraceTime,
  });
  const refunds = await Worker.create({
    connection,
    namespace,
    dataConverter,
    interceptors,
    taskQueue: refundsTaskQueue(taskQueue),
    activities,
    maxTaskQueueActivitiesPerSecond: options.refundsPerSecond ?? 10,
    shutdownGraceTime,
  });
  const policy = await Worker.create({
    connection,
    namespace,
    taskQueue: policyTaskQueue(taskQueue),
    workflowBundle,
    activities,
    shutdownGraceTime,
    dataConverter,
    interceptors,
  });
  const workers = [main, certificates, refunds, policy];
  return {
    taskQueues: [taskQueue, certificatesTaskQueue(taskQueue), refundsTaskQueue(taskQueue), policyTaskQueue(taskQueue)],
    async run() {
      const running = workers.map((w) => w.run());
      // One failing stops the other, so the process never runs half a worker.
      await Promise.all(
        running.map((p) =>
          p.catch((err: unknown) => {
            for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
            throw err;
          }),
        ),
      );
    },
    shutdown() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    },
    running: () => workers.every((w) => w.getState() === 'RUNNING'),
  };
}
