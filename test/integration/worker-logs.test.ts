/**
 * The worker's log lines through the production runtime logger (src/temporal/runtime-logger.ts):
 * a failing activity's "Activity failed" line carries the error's message and type, the attempt
 * and the activity and workflow, instead of the `"error":{}` pino prints for a bare Error.
 * The worker is a real process (test/fixtures/failing-activity/worker.ts) on the test Temporal.
 * The same failure is stored encrypted in the history (src/temporal/failure-converter.ts).
 */
import { WorkflowFailedError } from '@temporalio/client';
import { loadConfig } from '../../src/config';
import { createTemporalClient } from '../../src/temporal/client';
import { startProcess } from '../helpers/run';
import { eventually, uniqueTaskQueue } from '../helpers/worker';

test('when an activity fails, then the worker logs "Activity failed" at warn with its message, type, attempt and ids', async () => {
  const taskQueue = uniqueTaskQueue();
  const worker = await startProcess('test/fixtures/failing-activity/worker.ts', /fixture worker running/, {
    FIXTURE_TASK_QUEUE: taskQueue,
    LOG_LEVEL: 'info',
  });
  const temporal = createTemporalClient(loadConfig(process.env));
  try {
    const workflowId = `failing-activity-${taskQueue}`;
    const run = temporal.client.workflow.execute('failingActivityWorkflow', { taskQueue, workflowId, args: [{ purchaseId: 4242 }] });
    const error = await run.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);

    type Line = {
      level: number;
      msg: string;
      component?: string;
      attempt?: number;
      activityType?: string;
      workflowId?: string;
      error?: { type?: string; message?: string; stack?: string };
    };
    const failed = (await eventually(async () => {
      const lines = worker
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line)
        .filter((l) => l.msg === 'Activity failed');
      return lines.length === 2 ? lines : null;
    }, 10_000))!;
    const expected = 'payment processor unreachable while charging purchase 4242 (fixture)';
    expect(failed.map((l) => l.attempt).sort()).toEqual([1, 2]);
    for (const line of failed) {
      expect(line).toMatchObject({
        level: 40,
        component: 'temporal-sdk',
        activityType: 'chargeSavedCard',
        workflowId,
        error: { type: 'Error', message: expected },
      });
      expect(line.error?.stack).toContain('chargeSavedCard');
    }

    // The failure's message and stack trace reach the server encoded and encrypted like any payload
    // (they may quote what the processor was sent); the service's client decodes them.
    const history = await temporal.client.workflow.getHandle(workflowId).fetchHistory();
    const activityFailed = history.events!.find((e) => e.activityTaskFailedEventAttributes)!.activityTaskFailedEventAttributes!.failure!;
    expect(activityFailed.message).toBe('Encoded failure');
    expect(activityFailed.stackTrace ?? '').toBe('');
    expect(Buffer.from(activityFailed.encodedAttributes!.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect(JSON.stringify(history)).not.toContain('unreachable while charging');
    expect(((error as WorkflowFailedError).cause?.cause as Error | undefined)?.message).toBe(expected);
  } finally {
    await temporal.close();
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
}, 90_000);
