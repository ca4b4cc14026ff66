/**
 * `ensureSchedule(client, options)`: creates the Temporal Schedule `options.scheduleId`, or, when
 * it exists, brings it to `options` (spec, action and policies; its paused state and note are
 * kept), so every worker may call it at start: restarts and several workers are harmless, and a
 * changed task queue or time reaches the existing schedule. Used by the monthly bordereaux and
 * the stored-documents sweep. Throws what the Temporal client throws, but never
 * ScheduleAlreadyRunning.
 */
import { ScheduleAlreadyRunning, type Client, type ScheduleOptions } from '@temporalio/client';

export async function ensureSchedule(client: Client, options: ScheduleOptions): Promise<void> {
  try {
    await client.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(options.scheduleId).update((prev) => ({
      spec: options.spec,
      action: options.action,
      policies: { ...prev.policies, ...options.policies },
      state: { paused: prev.state.paused, note: prev.state.note },
    }));
  }
}
