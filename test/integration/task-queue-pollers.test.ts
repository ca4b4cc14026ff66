/**
 * The server's view of the expected task queues (issue 55 item 5), on the real Temporal dev
 * server: the API's metrics listener exports `temporal_task_queue_pollers` per expected queue and
 * kind of task, 0 while nothing polls it (also while a worker polls another queue: a mistyped
 * TEMPORAL_TASK_QUEUE), at least 1 once a worker polls it; with the default list, a real worker
 * process's queues all read at least 1 (the default names what the worker polls). The
 * NoWorkerPolling rule over the gauge is tested by promtool (test/unit/alerts.test.ts).
 */
import { NativeConnection, Runtime, DefaultLogger, Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config';
import { startMetricsServer, type MetricsServer } from '../../src/metrics/server';
import { startTestApp, type TestApp } from '../helpers/app';
import { startAppAndWorker } from '../helpers/stack';
import { eventually, uniqueTaskQueue } from '../helpers/worker';

const config = loadConfig();

/** The gauge's series as the API's metrics listener at `url` answers them: `queue/type` → pollers. */
async function pollers(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const seen: Record<string, number> = {};
  for (const m of text.matchAll(
    /^temporal_task_queue_pollers\{namespace="([^"]+)",task_queue="([^"]+)",task_queue_type="(workflow|activity)"\} (\d+)$/gm,
  )) {
    expect(m[1]).toBe(config.TEMPORAL_NAMESPACE);
    seen[`${m[2]}/${m[3]}`] = Number(m[4]);
  }
  return seen;
}

/** An activity-only worker on `taskQueue` (no workflow bundle: it polls activity tasks only), running until `stop()`. */
async function activityWorker(taskQueue: string): Promise<{ stop(): Promise<void> }> {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // installed already by another helper of this process
  }
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue,
    activities: { noop: async () => undefined },
  });
  const running = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

describe('the API asks the Temporal server who polls each expected task queue', () => {
  let app: TestApp | undefined;
  let metrics: MetricsServer | undefined;
  const stops: Array<() => Promise<void>> = [];
  const queue = uniqueTaskQueue();

  beforeAll(async () => {
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: queue, TEMPORAL_EXPECTED_TASK_QUEUES: `${queue}:activity` });
    metrics = await startMetricsServer({ registry: app.container.metrics.registry, host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    for (const stop of stops.splice(0)) await stop();
    await metrics?.close();
    await app?.close();
  });

  test('when nothing polls an expected queue, then its gauge is 0, also while a worker polls another queue; once a worker polls it, at least 1', async () => {
    // The first scrapes may answer before the server does (a scrape waits 250 ms): absent until then.
    const before = await eventually(async () => {
      const seen = await pollers(metrics!.url);
      return `${queue}/activity` in seen && seen;
    }, 30_000);
    expect(before).toEqual({ [`${queue}/activity`]: 0 });

    // A worker given the wrong queue polls, and the server sees it there, not on the expected one.
    const wrong = await activityWorker(`${queue}-typo`);
    stops.push(() => wrong.stop());
    await eventually(async () => (await app!.container.temporal.pollerCount(`${queue}-typo`, 'activity', 90_000)) >= 1, 30_000);
    expect(await pollers(metrics!.url)).toEqual({ [`${queue}/activity`]: 0 });

    const right = await activityWorker(queue);
    stops.push(() => right.stop());
    await eventually(async () => ((await pollers(metrics!.url))[`${queue}/activity`] ?? 0) >= 1, 30_000);
    expect((await pollers(metrics!.url))[`${queue}/activity`]).toBeGreaterThanOrEqual(1);
    // Nothing polls its workflow tasks (an activity-only worker): the server says so.
    expect(await app!.container.temporal.pollerCount(queue, 'workflow', 90_000)).toBe(0);
  }, 90_000);
});

test("when the expected queues are the default, then a real worker's queues each read at least 1 poller of its kind", async () => {
  const stack = await startAppAndWorker({});
  let metrics: MetricsServer | undefined;
  try {
    metrics = await startMetricsServer({ registry: stack.app.container.metrics.registry, host: '127.0.0.1', port: 0 });
    const q = stack.taskQueue;
    const seen = await eventually(async () => {
      const now = await pollers(metrics!.url);
      return Object.values(now).length === 6 && Object.values(now).every((n) => n >= 1) && now;
    }, 60_000);
    expect(Object.keys(seen).sort()).toEqual(
      [
        `${q}/workflow`,
        `${q}/activity`,
        `${q}-certificates/activity`,
        `${q}-refunds/activity`,
        `${q}-policy/workflow`,
        `${q}-policy/activity`,
      ].sort(),
    );
  } finally {
    await metrics?.close();
    await stack.close();
  }
}, 240_000); // bundling the workflows competes with the other suites for 2 cores
