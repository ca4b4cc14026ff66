/**
 * The stack most integration suites run against, started once per file (or per describe block):
 * a worker on its own task queue, the API sending workflows to that queue and, when asked,
 * stripe-mock behind a recording proxy that both of them call (`proxy`) and a test SMTP server
 * the worker sends its mail to (`smtp`). `useStack()` registers the beforeAll that starts them
 * and the afterAll that closes them (the API, then the worker, then the proxy and the SMTP
 * server), and returns getters: read them in hooks and tests, not at the top of the file. A suite's own beforeAll registered after the call runs once the stack is up
 * (its proxy patches are in place before any request is made).
 */
import type { Config } from '../../src/config';
import { startTestApp, type TestApp } from './app';
import { createAgency, type Agency } from './certificates';
import { startProcessorProxy, type ProcessorProxy } from './processor-proxy';
import { createQuotingAccount, WEBHOOK_SECRET, type QuotingAccount } from './purchases';
import { startSmtp, type TestSmtp } from './smtp';
import { startTestWorker, uniqueTaskQueue, type TestWorker } from './worker';

export interface StackOptions {
  /** Start stripe-mock behind a recording proxy; the worker and the API call the processor through it. */
  proxy?: boolean;
  /** Start a test SMTP server; the worker sends mail to it (SMTP_URL). */
  smtp?: boolean;
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
  /** Only with `smtp: true`. */
  readonly smtp: TestSmtp;
  readonly taskQueue: string;
}

export function useStack(options: StackOptions = {}): Stack {
  let app: TestApp | undefined;
  let worker: TestWorker | undefined;
  let proxy: ProcessorProxy | undefined;
  let smtp: TestSmtp | undefined;
  const taskQueue = uniqueTaskQueue();

  beforeAll(async () => {
    proxy = options.proxy ? await startProcessorProxy() : undefined;
    smtp = options.smtp ? await startSmtp() : undefined;
    const processor: Record<string, string> = proxy ? { PAYPROC_API_BASE: proxy.url } : {};
    const mail: Record<string, string> = smtp ? { SMTP_URL: smtp.url } : {};
    worker = await startTestWorker(taskQueue, options.activities, { ...processor, ...mail, ...options.workerEnv });
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, ...processor, ...options.app });
  });

  afterAll(async () => {
    await app?.close();
    await worker?.shutdown();
    await proxy?.close();
    await smtp?.close();
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
    get smtp() {
      return started('SMTP server', smtp);
    },
    taskQueue,
  };
}

/** What useAgencyStack answers: the stack and, once its beforeAll has run, its agencies. */
export interface AgencyStack extends Stack {
  /** An agency with createAgency's default name ('Harbor & Pine Insurance Agency'). */
  readonly agency: Agency;
  /** Only with `other`: a second agency, of that name. */
  readonly other: Agency;
}

/**
 * The certificate suites' stack: useStack with the API taking the test webhook secret (payments
 * arrive as signed `checkout.session.completed` webhooks) and no per-key rate limit (the suites
 * poll getCertificates until certificates are issued), and an agency that sells on it
 * (createAgency), with a second one named `other` when given, both made in its beforeAll. A
 * suite's own beforeAll registered after the call runs once they exist; read the getters there.
 */
export function useAgencyStack(o: { other?: string } = {}): AgencyStack {
  const stack = useStack({ app: { PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: '100000' } });
  let agency: Agency | undefined;
  let other: Agency | undefined;
  beforeAll(async () => {
    agency = await createAgency(stack.app);
    if (o.other) other = await createAgency(stack.app, o.other);
  });
  const made = (what: string, value: Agency | undefined): Agency => {
    if (value === undefined)
      throw new Error(`useAgencyStack: ${what} is not made (read it in a hook or a test${what === 'other' ? ', and pass other' : ''})`);
    return value;
  };
  return Object.defineProperties(stack, {
    agency: { get: () => made('agency', agency) },
    other: { get: () => made('other', other) },
  }) as AgencyStack;
}

/** What startAppAndWorker answers: the API and a worker on a task queue of their own. */
export interface AppAndWorker {
  app: TestApp;
  worker: TestWorker;
  taskQueue: string;
  /** Closes the API, then stops the worker. */
  close(): Promise<void>;
}

/**
 * Starts a worker (environment `workerEnv`, replaced `activities`, see startTestWorker), then the API
 * (config `appEnv`), on a task queue of their own: for a stack started per test or per suite
 * outside useStack. The caller closes it (`close()`, in a finally or afterAll).
 */
export async function startAppAndWorker(
  appEnv: Record<string, string>,
  workerEnv: Record<string, string> = {},
  activities: Parameters<typeof startTestWorker>[1] = {},
): Promise<AppAndWorker> {
  const taskQueue = uniqueTaskQueue();
  const worker = await startTestWorker(taskQueue, activities, workerEnv);
  const app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, ...appEnv });
  return {
    app,
    worker,
    taskQueue,
    async close() {
      await app.close();
      await worker.shutdown();
    },
  };
}

/** What startQuotingStack answers: the API, the worker and an account that quotes on them. */
export interface QuotingStack extends QuotingAccount {
  app: TestApp;
  worker: TestWorker;
  /** Closes the API, then stops the worker. */
  close(): Promise<void>;
}

/**
 * A worker and the API on a task queue of their own, both with the environment `env` (the API
 * with the test webhook secret too), and an agency that quotes on them (createQuotingAccount):
 * for tests that start a stack per test, each with its own settings or replaced activities
 * (`activities`, see startTestWorker). The caller closes it (`close()`, in a finally or afterAll).
 */
export async function startQuotingStack(
  env: Record<string, string> = {},
  activities: Parameters<typeof startTestWorker>[1] = {},
): Promise<QuotingStack> {
  const stack = await startAppAndWorker({ PAYPROC_WEBHOOK_SECRET: WEBHOOK_SECRET, ...env }, env, activities);
  return { ...(await createQuotingAccount(stack.app)), ...stack };
}
