/**
 * The `monthly-bordereaux` Temporal Schedule: on the 1st of each month at 02:00 UTC it starts
 * monthlyBordereauxWorkflow (workflows/bordereau.ts) on the worker's task queue, which asks for
 * the previous month's bordereau of every insurer and MGA with activity. Overlaps are skipped (one
 * run at a time); a run missed while Temporal was down is caught up within 7 days.
 *
 * `ensureBordereauSchedule` is called by every worker at start: it creates the schedule, or brings
 * an existing one to this definition (another task queue after a configuration change), so
 * restarts and several workers are harmless.
 */
import { ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { ensureSchedule } from '../temporal/schedules';
import { monthlyBordereauxWorkflow } from '../../workflows/bordereau';

export const BORDEREAU_SCHEDULE_ID = 'monthly-bordereaux';

export function bordereauScheduleOptions(taskQueue: string, scheduleId = BORDEREAU_SCHEDULE_ID): ScheduleOptions {
  return {
    scheduleId,
    spec: { calendars: [{ dayOfMonth: 1, hour: 2, minute: 0 }], timezone: 'UTC' },
    action: {
      type: 'startWorkflow',
      workflowType: monthlyBordereauxWorkflow,
      workflowId: 'monthly-bordereaux-run',
      args: [{}],
      taskQueue,
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '7 days' },
  };
}

/** Creates the schedule (`scheduleId`: another id only for tests), or updates it to this definition when it exists. */
export async function ensureBordereauSchedule(client: Client, taskQueue: string, scheduleId = BORDEREAU_SCHEDULE_ID): Promise<void> {
  await ensureSchedule(client, bordereauScheduleOptions(taskQueue, scheduleId));
}
