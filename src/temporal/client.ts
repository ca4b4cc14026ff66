/**
 * The API's Temporal client (also the worker's and the ops CLI's). The connection is lazy so the API starts (and `/healthz` answers)
 * while Temporal is still coming up; `/readyz` reports whether it answers.
 */
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Config } from '../config';
import { dataConverterFor } from './codec';

/** The kind of tasks a task queue hands out: workflow tasks or activity tasks. */
export type TaskQueueType = 'workflow' | 'activity';

export interface TemporalHandle {
  client: Client;
  /** True when the frontend answers a health check within `timeoutMs` milliseconds. */
  isHealthy(timeoutMs?: number): Promise<boolean>;
  /**
   * True when some worker polled `taskQueue` for workflow tasks within the last `freshMs`
   * milliseconds (Temporal's DescribeTaskQueue pollers; an idle worker re-polls at least every
   * minute). False on any error or after `timeoutMs`.
   */
  hasPollers(taskQueue: string, freshMs?: number, timeoutMs?: number): Promise<boolean>;
  /**
   * How many pollers the Temporal server saw on `taskQueue` for `type` tasks (workflow or
   * activity) of this client's namespace within the last `freshMs` milliseconds (DescribeTaskQueue;
   * the server's view, whatever the workers believe they poll). Rejects on any error or after
   * `timeoutMs`.
   */
  pollerCount(taskQueue: string, type: TaskQueueType, freshMs: number, timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

/** A client of `config`'s namespace whose payloads go through the service's codec (./codec.ts). */
export function createTemporalClient(
  config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE' | 'TEMPORAL_PAYLOAD_KEYS'>,
): TemporalHandle {
  const connection = Connection.lazy({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter: dataConverterFor(config.TEMPORAL_PAYLOAD_KEYS),
  });
  const { TASK_QUEUE_KIND_NORMAL } = temporal.api.enums.v1.TaskQueueKind;
  const { TASK_QUEUE_TYPE_WORKFLOW, TASK_QUEUE_TYPE_ACTIVITY } = temporal.api.enums.v1.TaskQueueType;
  const pollerCount = async (taskQueue: string, type: TaskQueueType, freshMs: number, timeoutMs = 2000): Promise<number> => {
    const res = await connection.withDeadline(Date.now() + timeoutMs, () =>
      connection.workflowService.describeTaskQueue({
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: { name: taskQueue, kind: TASK_QUEUE_KIND_NORMAL },
        taskQueueType: type === 'workflow' ? TASK_QUEUE_TYPE_WORKFLOW : TASK_QUEUE_TYPE_ACTIVITY,
      }),
    );
    const now = Date.now();
    return (res.pollers ?? []).filter((p) => {
      const seconds = p.lastAccessTime?.seconds;
      return seconds != null && now - Number(seconds) * 1000 <= freshMs;
    }).length;
  };
  return {
    client,
    async isHealthy(timeoutMs = 2000) {
      // ensureConnected() has its own (longer) connect timeout, so bound the whole check.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const check = connection
        .withDeadline(Date.now() + timeoutMs, async () => {
          await connection.ensureConnected();
          await connection.workflowService.getSystemInfo({});
        })
        .then(
          () => true,
          () => false,
        );
      try {
        return await Promise.race([check, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    async hasPollers(taskQueue, freshMs = 90_000, timeoutMs = 2000) {
      return pollerCount(taskQueue, 'workflow', freshMs, timeoutMs).then(
        (n) => n > 0,
        () => false,
      );
    },
    pollerCount,
    close: () => connection.close(),
  };
}
