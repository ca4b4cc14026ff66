/**
 * The task queues a deployment expects some worker to poll, and for which kind of task: what the
 * API's `temporal_task_queue_pollers` gauge asks the Temporal server about (the NoWorkerPolling
 * alert). By default the four queues one worker process polls (src/temporal/workers.ts) beside
 * the main queue `taskQueue`: the main queue and the policy queue for workflow and activity tasks,
 * the certificates and refunds queues for activity tasks only (no workflow runs there).
 */
import { certificatesTaskQueue, policyTaskQueue, refundsTaskQueue } from '../../workflows/contracts';
import type { TaskQueueType } from './client';

/** One queue and kind of task that some worker must poll. */
export interface ExpectedPoller {
  taskQueue: string;
  type: TaskQueueType;
}

/** The queues and task kinds one worker process polls beside the main queue `taskQueue` (see the module). */
export function workerTaskQueues(taskQueue: string): ExpectedPoller[] {
  return [
    { taskQueue, type: 'workflow' },
    { taskQueue, type: 'activity' },
    { taskQueue: certificatesTaskQueue(taskQueue), type: 'activity' },
    { taskQueue: refundsTaskQueue(taskQueue), type: 'activity' },
    { taskQueue: policyTaskQueue(taskQueue), type: 'workflow' },
    { taskQueue: policyTaskQueue(taskQueue), type: 'activity' },
  ];
}

/**
 * Parses the list of expected queues: comma-separated `name:workflow`, `name:activity` or a bare
 * `name` (both kinds), blanks around entries ignored; an empty list is `workerTaskQueues(taskQueue)`.
 * Repeated entries count once, in the order first given.
 * @throws Error naming the entry when one has an empty name or a kind other than workflow or activity.
 */
export function parseExpectedTaskQueues(value: string, taskQueue: string): ExpectedPoller[] {
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (!entries.length) return workerTaskQueues(taskQueue);
  const seen = new Map<string, ExpectedPoller>();
  for (const entry of entries) {
    const at = entry.lastIndexOf(':');
    const name = (at < 0 ? entry : entry.slice(0, at)).trim();
    const kind = at < 0 ? null : entry.slice(at + 1).trim();
    if (!name) throw new Error(`"${entry}" names no task queue`);
    const types: TaskQueueType[] | null =
      kind === null ? ['workflow', 'activity'] : kind === 'workflow' || kind === 'activity' ? [kind] : null;
    if (!types) throw new Error(`"${entry}": the kind of task must be workflow or activity`);
    for (const type of types) seen.set(`${name}\n${type}`, { taskQueue: name, type });
  }
  return [...seen.values()];
}
