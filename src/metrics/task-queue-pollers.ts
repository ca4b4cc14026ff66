/**
 * `temporal_task_queue_pollers{namespace,task_queue,task_queue_type}`: the pollers the Temporal
 * server saw recently on each task queue the deployment expects (TEMPORAL_EXPECTED_TASK_QUEUES), by
 * kind of task (`workflow`, `activity`), asked of the server (DescribeTaskQueue) at each scrape of
 * the API's metrics. It is the server's view: a worker polling another queue or another namespace
 * leaves the expected queue at 0, where the worker's own SDK figures would show it polling. The
 * NoWorkerPolling alert reads it.
 */
import { Gauge, type Registry } from 'prom-client';
import type { TaskQueueType } from '../temporal/client';
import type { ExpectedPoller } from '../temporal/expected-task-queues';
import { boundedCount, type CountTiming } from './registry';

/** The gauge's name, as the alert rules read it. */
export const TASK_QUEUE_POLLERS_METRIC = 'temporal_task_queue_pollers';

/**
 * Registers the gauge on `registry` and makes every scrape ask the server, through `boundedCount`
 * (the scrape waits at most `timing.waitMs`, default 250 ms, and reports the last answer up to
 * `timing.maxAgeMs` old): `count(queue, type)` answers the pollers seen on one queue (the API's
 * `TemporalHandle.pollerCount` within the readiness window). When any queue's answer fails (Temporal
 * unreachable) the scrape reports no series at all, so the figure goes absent rather than stale
 * or partly 0; the alert pages on its absence too.
 */
export function watchTaskQueuePollers(
  registry: Registry,
  options: {
    namespace: string;
    expected: readonly ExpectedPoller[];
    count: (taskQueue: string, type: TaskQueueType) => Promise<number>;
    timing?: CountTiming;
  },
): Gauge<'namespace' | 'task_queue' | 'task_queue_type'> {
  const counted = boundedCount(
    () => Promise.all(options.expected.map(async (q) => ({ ...q, pollers: await options.count(q.taskQueue, q.type) }))),
    options.timing,
  );
  const gauge = new Gauge({
    name: TASK_QUEUE_POLLERS_METRIC,
    help: 'Pollers the Temporal server saw recently on each task queue this deployment expects, by namespace, queue and kind of task (workflow, activity); asked of the server at each scrape, absent when it does not answer',
    labelNames: ['namespace', 'task_queue', 'task_queue_type'] as const,
    registers: [registry],
    async collect() {
      const seen = await counted();
      this.reset();
      for (const q of seen ?? []) this.set({ namespace: options.namespace, task_queue: q.taskQueue, task_queue_type: q.type }, q.pollers);
    },
  });
  return gauge;
}
