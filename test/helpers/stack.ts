/**
 * The stack most integration suites run against, started once per file: a worker on its own task
 * queue, the API sending workflows to that queue and, when asked, stripe-mock behind a recording
 * proxy that both of them call. `useStack()` registers the beforeAll that starts them and the
 * afterAll that closes them (the API, then the worker, then the proxy), and returns getters: read
 * them in hooks and tests, not at the top of the file. A suite's own beforeAll registered after
 * the call runs once the stack is up (its proxy patches are in place before any request is made).
 */
import type { Config } from '../../src/config';
import { startTestApp, type TestApp } from './app';
import { startProcessorProxy, type ProcessorProxy } from './processor-proxy';
import { startTestWorker, uniqueTaskQueue, type TestWorker } from './worker';

export interface StackOptions {
  /** Start stripe-mock behind a recording proxy; the worker and the API call the processor through it. */
  proxy?: boolean;
  /** Config for the API alone (its task queue and the proxy's URL are set here). */
  app?: Partial<Record<keyof Config, string>>;
  /** Environment for the worker alone. */
  workerEnv?: Record<string, string>;
  /** Activities the worker runs instead of the real ones (see startTestWorker). */
  activities?: Parameters<typeof startTestWorker>[1];
}

export interface Stack {
  readonly app: TestApp;
  readonly worker: TestWorker;
  /** Only with `proxy: true`. */
  readonly proxy: ProcessorProxy;
  readonly taskQueue: string;
}

export function useStack(options: StackOptions = {}): Stack {
  let app: TestApp | undefined;
  let worker: TestWorker | undefined;
  let proxy: ProcessorProxy | undefined;
  const taskQueue = uniqueTaskQueue();

  beforeAll(async () => {
    proxy = options.proxy ? await startProcessorProxy() : undefined;
    const processor: Record<string, string> = proxy ? { PAYPROC_API_BASE: proxy.url } : {};
    worker = await startTestWorker(taskQueue, options.activities, { ...processor, ...options.workerEnv });
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, ...processor, ...options.app });
  });

  afterAll(async () => {
    await app?.close();
    await worker?.shutdown();
    await proxy?.close();
  });

  const started = <T>(what: string, value: T | undefined): T => {
    if (value === undefined) throw new Error(`useStack: the ${what} is not started (read it in a hook or a test)`);
    return value;
  };
  return {
    get app() {
      return started('API', app);
    },
    get worker() {
      return started('worker', worker);
    },
    get proxy() {
      return started('processor proxy', proxy);
    },
    taskQueue,
  };
}
