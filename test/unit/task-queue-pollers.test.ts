/**
 * The expected task queues (TEMPORAL_EXPECTED_TASK_QUEUES) and the gauge the API exports from the
 * Temporal server's answers (`temporal_task_queue_pollers`): the default list is the queues a
 * worker process polls, a given list is parsed entry by entry, and a scrape reports every expected
 * queue or, when the server does not answer, none. The server itself is in
 * test/integration/task-queue-pollers.test.ts; here its answers are a function of the test.
 */
import { Registry } from 'prom-client';
import { loadConfig } from '../../src/config';
import { parseExpectedTaskQueues, workerTaskQueues, type ExpectedPoller } from '../../src/temporal/expected-task-queues';
import { watchTaskQueuePollers } from '../../src/metrics/task-queue-pollers';

/** The expected task queues, each written `name:kind` as TEMPORAL_EXPECTED_TASK_QUEUES writes it (`insurance:workflow`). */
const queues = (...entries: string[]): ExpectedPoller[] =>
  entries.map((entry) => {
    const [taskQueue, type] = entry.split(':');
    return { taskQueue, type } as ExpectedPoller;
  });

test('when no queues are configured, then the expected ones are the four a worker polls beside its main queue, each for the tasks run there', () => {
  expect(parseExpectedTaskQueues(' , ', 'insurance')).toEqual(
    queues(
      'insurance:workflow',
      'insurance:activity',
      'insurance-certificates:activity',
      'insurance-refunds:activity',
      'insurance-policy:workflow',
      'insurance-policy:activity',
    ),
  );
  expect(parseExpectedTaskQueues('', 'x')).toEqual(workerTaskQueues('x'));
});

test('when queues are configured, then each is expected for its kind of task, a bare name for both, repeats once', () => {
  expect(parseExpectedTaskQueues('a:workflow, b , c:activity,a:workflow', 'insurance')).toEqual(
    queues('a:workflow', 'b:workflow', 'b:activity', 'c:activity'),
  );
  expect(() => parseExpectedTaskQueues('a:nexus', 'insurance')).toThrow('"a:nexus": the kind of task must be workflow or activity');
  expect(() => parseExpectedTaskQueues(':activity', 'insurance')).toThrow('names no task queue');
});

test('when the config names a kind of task that does not exist, then it is refused with the variable named', () => {
  expect(loadConfig({ TEMPORAL_EXPECTED_TASK_QUEUES: 'insurance:workflow,insurance:activity' }).TEMPORAL_EXPECTED_TASK_QUEUES).toBe(
    'insurance:workflow,insurance:activity',
  );
  expect(() => loadConfig({ TEMPORAL_EXPECTED_TASK_QUEUES: 'insurance:nexus' })).toThrow(
    /^Invalid configuration: TEMPORAL_EXPECTED_TASK_QUEUES:/,
  );
  expect(() => loadConfig({ TEMPORAL_EXPECTED_TASK_QUEUES: ':activity' })).toThrow(/TEMPORAL_EXPECTED_TASK_QUEUES/);
});

test('when the server answers, then each expected queue and kind is a series with its pollers; when it fails, no series at all', async () => {
  const registry = new Registry();
  let down = false;
  const asked: string[] = [];
  watchTaskQueuePollers(registry, {
    namespace: 'ns1',
    expected: queues('q:workflow', 'q:activity', 'q-certificates:activity'),
    count: async (queue, type) => {
      asked.push(`${queue}/${type}`);
      if (down && type === 'activity') throw new Error('UNAVAILABLE');
      return queue === 'q' && type === 'workflow' ? 2 : 0;
    },
    timing: { waitMs: 1000, maxAgeMs: 0 },
  });
  const series = async () =>
    (await registry.metrics())
      .split('\n')
      .filter((l) => l.startsWith('temporal_task_queue_pollers{'))
      .sort();
  expect(await series()).toEqual([
    'temporal_task_queue_pollers{namespace="ns1",task_queue="q",task_queue_type="activity"} 0',
    'temporal_task_queue_pollers{namespace="ns1",task_queue="q",task_queue_type="workflow"} 2',
    'temporal_task_queue_pollers{namespace="ns1",task_queue="q-certificates",task_queue_type="activity"} 0',
  ]);
  expect(asked.sort()).toEqual(['q-certificates/activity', 'q/activity', 'q/workflow']);
  down = true;
  expect(await series()).toEqual([]);
  expect(await registry.metrics()).toContain('# TYPE temporal_task_queue_pollers gauge');
});
