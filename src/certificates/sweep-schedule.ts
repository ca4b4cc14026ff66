/**
 * The `stored-documents-sweep` Temporal Schedule (issue 52, item 2): every day at 03:30 UTC it
 * starts storedDocumentsSweepWorkflow (workflows/document-sweep.ts) on the worker's task queue,
 * which checks every current certificate PDF and zip against its recorded size and sha256 and
 * repairs what is missing or damaged. Overlaps are skipped (one sweep at a time); a run missed
 * while Temporal was down is caught up within a day. Built like the `monthly-bordereaux` schedule
 * (src/reports/schedule.ts): `ensureDocumentSweepSchedule` runs at every worker start and creates
 * the schedule or brings it to this definition.
 */
import { ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import { ensureSchedule } from '../temporal/schedules';
import { storedDocumentsSweepWorkflow } from '../../workflows/document-sweep';

export const DOCUMENT_SWEEP_SCHEDULE_ID = 'stored-documents-sweep';

export function documentSweepScheduleOptions(taskQueue: string, scheduleId = DOCUMENT_SWEEP_SCHEDULE_ID): ScheduleOptions {
  return {
    scheduleId,
    spec: { calendars: [{ hour: 3, minute: 30 }], timezone: 'UTC' },
    action: {
      type: 'startWorkflow',
      workflowType: storedDocumentsSweepWorkflow,
      workflowId: 'stored-documents-sweep-run',
      args: [{}],
      taskQueue,
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' },
  };
}

/** Creates the schedule (`scheduleId`: another id only for tests), or updates it to this definition when it exists. */
export async function ensureDocumentSweepSchedule(
  client: Client,
  taskQueue: string,
  scheduleId = DOCUMENT_SWEEP_SCHEDULE_ID,
): Promise<void> {
  await ensureSchedule(client, documentSweepScheduleOptions(taskQueue, scheduleId));
}
