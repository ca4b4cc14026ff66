/**
 * The API's Temporal client (also the worker's and the ops CLI's). The connection is lazy so the API starts (and `/healthz` answers)
 * while Temporal is still coming up; `/readyz` reports whether it answers.
 */
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Config } from '../config';
import { dataConverterFor } from './codec';

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
      try {
        const res = await connection.withDeadline(Date.now() + timeoutMs, () =>
          connection.workflowService.describeTaskQueue({
            namespace: config.TEMPORAL_NAMESPACE,
            taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
            taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
          }),
        );
        const now = Date.now();
        return (res.pollers ?? []).some((p) => {
          const seconds = p.lastAccessTime?.seconds;
          return seconds != null && now - Number(seconds) * 1000 <= freshMs;
        });
      } catch {
        return false;
      }
    },
    close: () => connection.close(),
  };
}
