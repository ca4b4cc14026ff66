/**
 * The worker's probes of its dependencies (issue 55, item 3): `dependency_up{dependency,mode}` (1
 * when the newest probe got an answer within the last `staleMs`, 0 when it failed or none answered
 * for that long) and `dependency_last_success_timestamp_seconds{dependency,mode}` (when a probe
 * last got one, Unix seconds). They are asked at each scrape of the worker's metrics, like the
 * database counts, so an outage shows within a scrape or two whatever the activities' retry backoff
 * (a retrying activity calls the processor only every few minutes: DependencyErrorsRetrying alone
 * stayed under its threshold through a 10-minute outage). DependencyDown (live processor, object
 * storage: a page) and TestModeDependencyDown (the test-mode processor: a ticket) read them.
 *
 * Probes: the processor's balance (GET /v1/balance) with each mode's secret, without network
 * retries and with a short timeout; any answer of the processor counts (a 4xx is an answer; only
 * what `isProcessorFailure` calls a failure of the processor does not), and object storage's
 * metadata of an object that need not exist (a 404 is an answer), mode `shared` as in
 * `dependency_errors_total`. Neither is counted in `dependency_errors_total`, which stays the
 * count of the service's own calls.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Config } from '../config';
import { createPayproc } from '../payproc/client';
import { isProcessorFailure } from '../payproc/error-counting';
import { createObjectStore } from '../storage/object-store';
import type { DependencyErrorMode } from './registry';

/** The gauges' names, as the alert rules and the dashboard read them. */
export const DEPENDENCY_PROBE_METRICS = Object.freeze({
  up: 'dependency_up',
  lastSuccess: 'dependency_last_success_timestamp_seconds',
} as const);

/** One dependency to probe: `check` resolves when the dependency answered, rejects when it did not. */
export interface DependencyProbe {
  dependency: 'processor' | 'storage';
  mode: DependencyErrorMode;
  check: () => Promise<void>;
}

/** How the probes are paced and bounded (ms). */
export interface ProbeTiming {
  /** How long a scrape waits for the probes it starts (default 250: well inside a 1 s scrape timeout). */
  waitMs?: number;
  /** A probe without an answer after this long has failed (default 5 000). */
  timeoutMs?: number;
  /** No new probe of a dependency within this long of its last one (default 10 000): a scrape every second probes every 10 s. */
  minIntervalMs?: number;
  /** Up only when the last answer is at most this old (default 60 000): a probe that hangs reads down. */
  staleMs?: number;
}

interface ProbeState {
  startedAt: number | null;
  running: Promise<void> | null;
  lastSuccessAt: number | null;
  lastFailed: boolean;
}

/**
 * Registers both gauges on `registry` and makes every scrape start the probes not probed within
 * `minIntervalMs` (one at a time per dependency and mode), wait for them up to `waitMs`, and
 * report each: up 1 after an answer at most `staleMs` old with the newest probe not failed, else
 * 0; no series before a probe's first answer or failure (a scrape during start-up reads neither).
 */
export function watchDependencies(registry: Registry, probes: readonly DependencyProbe[], timing: ProbeTiming = {}): void {
  const waitMs = timing.waitMs ?? 250;
  const timeoutMs = timing.timeoutMs ?? 5000;
  const minIntervalMs = timing.minIntervalMs ?? 10_000;
  const staleMs = timing.staleMs ?? 60_000;
  const states = probes.map((): ProbeState => ({ startedAt: null, running: null, lastSuccessAt: null, lastFailed: false }));

  const probe = (p: DependencyProbe, s: ProbeState): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([p.check(), timedOut])
      .then(
        () => {
          s.lastSuccessAt = Date.now();
          s.lastFailed = false;
        },
        () => {
          s.lastFailed = true;
        },
      )
      .finally(() => {
        clearTimeout(timer);
        s.running = null;
      });
  };

  const lastSuccess = new Gauge({
    name: DEPENDENCY_PROBE_METRICS.lastSuccess,
    help: "When the worker's probe of a dependency last got an answer (Unix seconds), by dependency and mode (live, test; shared: storage serves both)",
    labelNames: ['dependency', 'mode'] as const,
    registers: [registry],
  });
  new Gauge({
    name: DEPENDENCY_PROBE_METRICS.up,
    help: "Whether the worker's probe of a dependency got an answer within the last minute (1) or not (0), by dependency and mode (live, test; shared: storage serves both); probed at scrapes",
    labelNames: ['dependency', 'mode'] as const,
    registers: [registry],
    async collect() {
      const now = Date.now();
      const started: Promise<void>[] = [];
      probes.forEach((p, i) => {
        const s = states[i]!;
        if (!s.running && (s.startedAt === null || now - s.startedAt >= minIntervalMs)) {
          s.startedAt = now;
          s.running = probe(p, s);
        }
        if (s.running) started.push(s.running);
      });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(started), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
      this.reset();
      lastSuccess.reset();
      const at = Date.now();
      probes.forEach((p, i) => {
        const s = states[i]!;
        const labels = { dependency: p.dependency, mode: p.mode };
        if (s.lastSuccessAt !== null) lastSuccess.set(labels, s.lastSuccessAt / 1000);
        const answered = s.lastSuccessAt !== null || s.lastFailed;
        const unanswered = s.startedAt !== null && at - s.startedAt >= staleMs;
        if (!answered && !unanswered) return;
        const fresh = s.lastSuccessAt !== null && at - s.lastSuccessAt <= staleMs;
        this.set(labels, fresh && !s.lastFailed ? 1 : 0);
      });
    },
  });
}

/** An object key the storage probe asks about; it need not exist (404 is an answer). */
export const STORAGE_PROBE_KEY = 'health/probe';

/**
 * The worker's probes (see the module's comment): the processor with the live and the test
 * secret, and object storage. Clients of their own, so probes never count as the service's calls.
 */
export function dependencyProbes(
  config: Pick<
    Config,
    | 'PAYPROC_LIVE_SECRET_KEY'
    | 'PAYPROC_TEST_SECRET_KEY'
    | 'PAYPROC_API_BASE'
    | 'STORAGE_API_ENDPOINT'
    | 'STORAGE_BUCKET'
    | 'STORAGE_PROJECT_ID'
  >,
  timeoutMs = 5000,
): DependencyProbe[] {
  const payproc = createPayproc(config, { maxNetworkRetries: 0, timeoutMs });
  const store = createObjectStore(config);
  const processor = (mode: 'live' | 'test'): DependencyProbe => ({
    dependency: 'processor',
    mode,
    check: async () => {
      try {
        await payproc.client(mode).balance.retrieve();
      } catch (err) {
        if (isProcessorFailure(err)) throw err;
      }
    },
  });
  return [
    processor('live'),
    processor('test'),
    {
      dependency: 'storage',
      mode: 'shared',
      check: async () => {
        await store.stat(STORAGE_PROBE_KEY);
      },
    },
  ];
}
