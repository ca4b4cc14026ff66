/**
 * Prometheus metrics of one process (prom-client), on a registry of its own so that several
 * apps or workers in one process (tests) never mix their figures. Names follow Prometheus
 * conventions: seconds for durations, `_total` for counters.
 *
 * API process: `http_request_duration_seconds{method,route,status,mode}` (route is the template,
 * e.g. `/api/v1/products/:id`, or `unmatched`), `rate_limit_refusals_total{limiter}`,
 * `payproc_webhook_events_total{type,outcome}` (outcome relayed | duplicate | not_relayed | forged),
 * `dependency_errors_total{dependency,mode,operation}` (processor and storage calls that failed, see
 * `countProcessorErrors` and `countStorageErrors`; a zero series per dependency and mode from the start, see
 * `dependencyErrorsCounter`).
 * Worker process: `purchases_status_total{status,mode}` (each status a purchase reaches),
 * `purchase_paid_to_issued_seconds{mode}`, `certificates_rendered_total`,
 * `certificate_render_seconds`, `pdf_browser_launches_total` and `pdf_page_pool_pages{state}` (idle | busy;
 * both read from the page pool at scrape, see `watchBrowserPool`),
 * `purchases_paid_without_certificates{mode}` (counted in the database for each scrape, which waits for the count at most 250 ms; see `watchPaidWithoutCertificates`),
 * `cancellations_needing_attention{state,mode}` (likewise, see `watchCancellationsNeedingAttention`),
 * `claims_acknowledgement_overdue{mode}` (likewise, see `watchClaimsAcknowledgementOverdue`),
 * `dependency_errors_total{dependency,mode,operation}` (processor, storage), `event_deliveries_total{outcome,mode,root_account_id,endpoint}` (once per delivery, by final outcome), `event_delivery_attempts_total{outcome,mode,root_account_id,endpoint}`,
 * `activity_attempts_total{activity_type,attempt}` (attempt `1`, `2-4` or `5+`: each activity
 * execution, so retries show by type; see `activityAttemptsInterceptor`).
 * Both: the process's default metrics (CPU, memory, event loop lag), prefixed `coi_` (`coi_process_cpu_seconds_total`).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

export function createApiMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'coi_' });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: "HTTP request duration by method, route template, status and the API key's mode (live, test; none without a key)",
      labelNames: ['method', 'route', 'status', 'mode'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused with 429 by a rate limiter',
      labelNames: ['limiter'] as const,
      registers: [registry],
    }),
    webhookEvents: new Counter({
      name: 'payproc_webhook_events_total',
      help: 'Payment processor webhook deliveries by event type and outcome (relayed, duplicate, not_relayed, forged)',
      labelNames: ['type', 'outcome'] as const,
      registers: [registry],
    }),
    dependencyErrors: dependencyErrorsCounter(registry),
  };
}
export type ApiMetrics = ReturnType<typeof createApiMetrics>;

export function createWorkerMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'coi_' });
  return {
    registry,
    purchaseStatus: new Counter({
      name: 'purchases_status_total',
      help: 'Purchases reaching a status, by status and mode',
      labelNames: ['status', 'mode'] as const,
      registers: [registry],
    }),
    paidToIssued: new Histogram({
      name: 'purchase_paid_to_issued_seconds',
      help: 'Time from payment to certificates issued, by mode',
      labelNames: ['mode'] as const,
      buckets: [5, 10, 30, 60, 120, 300, 600, 1800, 3600],
      registers: [registry],
    }),
    certificatesRendered: new Counter({
      name: 'certificates_rendered_total',
      help: 'Certificate PDFs rendered and stored',
      registers: [registry],
    }),
    renderDuration: new Histogram({
      name: 'certificate_render_seconds',
      help: 'Time to render one batch of certificate PDFs',
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers: [registry],
    }),
    pagesPerPrint: new Histogram({
      name: 'pdf_print_pages',
      help: 'Certificate pages per Chromium print (several purchases of one account share a print)',
      buckets: [1, 2, 3, 5, 8, 10, 20, 50],
      registers: [registry],
    }),
    /** Call `watchBrowserPool` to have scrapes read the pool's launch count. */
    browserLaunches: new Counter({
      name: 'pdf_browser_launches_total',
      help: 'Chromium launches by the worker’s page pool (restarts included)',
      registers: [registry],
    }),
    /** Call `watchBrowserPool` to have scrapes read the pool's pages. */
    pagePoolPages: new Gauge({
      name: 'pdf_page_pool_pages',
      help: 'Chromium pages open in the worker’s page pool, by state (idle, busy); read from the pool at each scrape',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
    cancellationsNeedingAttention: new Gauge({
      name: 'cancellations_needing_attention',
      help: 'Cancellations an operator must look at, by state (refund_failed: the processor refused the refund for good; pending: accepted more than 30 minutes ago and not completed) and mode; read from the database at each scrape',
      labelNames: ['state', 'mode'] as const,
      registers: [registry],
    }),
    reconciliationDifferences: new Gauge({
      name: 'reconciliation_differences',
      help: 'Differences between the ledger and the processor the newest reconciliation of each mode found (npm run ops -- reconcile), by mode; read from the database at each scrape',
      labelNames: ['mode'] as const,
      registers: [registry],
    }),
    paidWithoutCertificates: new Gauge({
      name: 'purchases_paid_without_certificates',
      help: 'Purchases paid more than 10 minutes ago that still have no certificates (refunded aside), by mode; read from the database at each scrape',
      labelNames: ['mode'] as const,
      registers: [registry],
    }),
    claimsAcknowledgementOverdue: new Gauge({
      name: 'claims_acknowledgement_overdue',
      help: 'Claims still submitted past their acknowledgement deadline (the insurer has not acknowledged them), by mode; read from the database at each scrape',
      labelNames: ['mode'] as const,
      registers: [registry],
    }),
    dependencyErrors: dependencyErrorsCounter(registry),
    activityAttempts: new Counter({
      name: 'activity_attempts_total',
      help: 'Activity executions started by this worker, by activity type and attempt (1, 2-4, 5+)',
      labelNames: ['activity_type', 'attempt'] as const,
      registers: [registry],
    }),
    eventDeliveries: new Counter({
      name: 'event_deliveries_total',
      help: "Agency event deliveries by final outcome (succeeded; failed: gave up after the retry window or refused; skipped: the endpoint was deleted or disabled) the endpoint's mode, the agency (root account id) it belongs to and the endpoint (its id), counted once per delivery when it ends",
      labelNames: ['outcome', 'mode', 'root_account_id', 'endpoint'] as const,
      registers: [registry],
    }),
    eventDeliveryAttempts: new Counter({
      name: 'event_delivery_attempts_total',
      help: "Agency event delivery attempts (HTTP requests) by outcome (succeeded, rejected: a non-2xx answer, failed: timeout or network error, refused: a live destination on a private address), the endpoint's mode, its agency (root account id) and the endpoint (its id)",
      labelNames: ['outcome', 'mode', 'root_account_id', 'endpoint'] as const,
      registers: [registry],
    }),
  };
}
export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;

/**
 * The modes of `dependency_errors_total` per dependency: the processor's calls are made with the
 * purchase's mode's client (`live`, `test`); object storage is one bucket for both (`shared`).
 */
export const DEPENDENCY_ERROR_MODES = Object.freeze({ processor: ['live', 'test'], storage: ['shared'] } as const);

/** The `mode` label of a dependency error: `live` or `test` for the processor, `shared` for storage. */
export type DependencyErrorMode = 'live' | 'test' | 'shared';

/** The operation of the zero series each dependency and mode starts with (no call has failed yet). */
export const NO_FAILED_OPERATION = 'none';

/**
 * `dependency_errors_total{dependency,mode,operation}`, the same in both processes (dependency
 * `processor` or `storage`, mode per `DEPENDENCY_ERROR_MODES`). Each dependency and mode starts
 * with a series at 0 (`operation="none"`), so "no errors" reads 0 and is not "no data" (issue 55
 * item 4): `sum by (dependency, mode)` answers from the first scrape.
 */
function dependencyErrorsCounter(registry: Registry) {
  const counter = new Counter({
    name: 'dependency_errors_total',
    help: 'Failed calls to a dependency, by dependency, mode (live, test; shared: storage serves both) and operation (none: the zero series)',
    labelNames: ['dependency', 'mode', 'operation'] as const,
    registers: [registry],
  });
  for (const [dependency, modes] of Object.entries(DEPENDENCY_ERROR_MODES))
    for (const mode of modes) counter.inc({ dependency, mode, operation: NO_FAILED_OPERATION }, 0);
  return counter;
}

/**
 * The `onError` callback of `countStorageErrors` and `countProcessorErrors`: each call adds one to
 * `dependency_errors_total{dependency,mode,operation}` of `metrics` (the API's or the worker's);
 * `mode` is the processor client's (storage: always `shared`).
 */
export function countDependencyError(
  metrics: { dependencyErrors: Counter<'dependency' | 'mode' | 'operation'> },
  dependency: 'processor' | 'storage',
): (operation: string, mode?: 'live' | 'test') => void {
  return (operation, mode) =>
    metrics.dependencyErrors.inc({ dependency, mode: dependency === 'storage' ? 'shared' : (mode ?? 'live'), operation });
}

/** How long a scrape waits for a database count, and how old a count it still reports (ms). */
export interface CountTiming {
  /** How long a scrape waits for the count it starts (default 250 ms: well inside a 1 s scrape timeout). */
  waitMs?: number;
  /** The oldest count a scrape still reports when the new one is late (default 60 000 ms); older: none. */
  maxAgeMs?: number;
}

/**
 * A figure counted in the database for each scrape, without the scrape waiting on the database:
 * each call starts a count (unless one is still running) and waits for it up to `waitMs`; it
 * answers that count, or when it is late the last good count if at most `maxAgeMs` old, else
 * null. A failed count forgets the last one (null until a count succeeds), so the figure goes
 * absent rather than stale. Under load the activities hold the worker's connection pool and a
 * count can wait behind them for seconds, longer than Prometheus waits for the scrape: the
 * whole scrape, `up` included, would then fail and read as "no worker is up".
 */
export function boundedCount<T>(count: () => Promise<T>, timing: CountTiming = {}): () => Promise<T | null> {
  const waitMs = timing.waitMs ?? 250;
  const maxAgeMs = timing.maxAgeMs ?? 60_000;
  let last: { value: T; at: number } | null = null;
  let running: Promise<void> | null = null;
  return async () => {
    running ??= count()
      .then(
        (value) => {
          last = { value, at: Date.now() };
        },
        () => {
          last = null;
        },
      )
      .finally(() => {
        running = null;
      });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([running, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
    const seen = last as { value: T; at: number } | null;
    return seen && Date.now() - seen.at <= maxAgeMs ? seen.value : null;
  };
}

/** A figure for each key mode (`live`, `test`), e.g. a count of rows of that mode. */
export type PerMode = Record<'live' | 'test', number>;

/**
 * Makes every scrape of `gauge` (labelled by `mode` only) set its `live` and `test` series from
 * `count`, a figure per mode, through `boundedCount` with `timing`: no count (failed, or late and
 * the last one too old) resets the gauge, so the series are absent from that scrape rather than
 * stale.
 */
function collectPerMode(gauge: Gauge, count: () => Promise<PerMode>, timing: CountTiming): void {
  const collected = gauge as Gauge & { collect?: () => Promise<void> };
  const counted = boundedCount(count, timing);
  collected.collect = async () => {
    const byMode = await counted();
    if (!byMode) return collected.reset();
    for (const mode of ['live', 'test'] as const) collected.set({ mode }, byMode[mode]);
  };
}

/**
 * Makes every scrape count the cancellations needing an operator in the database
 * (`cancellations_needing_attention{state,mode}`: `refund_failed`, and `pending` past
 * `pendingSeconds`, default 1800), through `boundedCount`: no count (failed, or late and the last
 * one too old) drops the series, like the gauge below.
 */
export function watchCancellationsNeedingAttention(
  metrics: WorkerMetrics,
  count: (pendingSeconds: number) => Promise<Record<'live' | 'test', { refundFailed: number; pending: number }>>,
  pendingSeconds = 1800,
  timing: CountTiming = {},
): void {
  const gauge = metrics.cancellationsNeedingAttention as Gauge<'state' | 'mode'> & { collect?: () => Promise<void> };
  const counted = boundedCount(() => count(pendingSeconds), timing);
  gauge.collect = async () => {
    const byMode = await counted();
    if (!byMode) return gauge.reset();
    for (const mode of ['live', 'test'] as const) {
      gauge.set({ state: 'refund_failed', mode }, byMode[mode].refundFailed);
      gauge.set({ state: 'pending', mode }, byMode[mode].pending);
    }
  };
}

/**
 * Makes every scrape read the differences the newest reconciliation of each mode found
 * (`reconciliation_differences{mode}`: 0 until a mode is first reconciled), through `boundedCount`
 * like the counts above (a failed read removes the series from that scrape).
 */
export function watchReconciliationDifferences(metrics: WorkerMetrics, latest: () => Promise<PerMode>, timing: CountTiming = {}): void {
  collectPerMode(metrics.reconciliationDifferences, latest, timing);
}

/**
 * Makes every scrape count the claims still submitted past their acknowledgement deadline
 * (`claims_acknowledgement_overdue{mode}`, the figure behind `ClaimAcknowledgementOverdue`),
 * through `boundedCount` like the counts above (a failed count removes the series from that scrape).
 */
export function watchClaimsAcknowledgementOverdue(metrics: WorkerMetrics, count: () => Promise<PerMode>, timing: CountTiming = {}): void {
  collectPerMode(metrics.claimsAcknowledgementOverdue, count, timing);
}

/**
 * Makes every scrape count paid purchases still without certificates 10 minutes after payment
 * (`purchases_paid_without_certificates{mode}`, the figure behind the first alert), through
 * `boundedCount`: a failed count (the database is down), or a late one whose last good count is
 * too old, removes the series from that scrape instead of repeating a stale value, so the figure
 * goes absent and `PaidWithoutCertificatesUnknown` fires rather than a stale 0 keeping the
 * on-call quiet. The scrape itself always answers, within `timing.waitMs` of the count.
 */
export function watchPaidWithoutCertificates(
  metrics: WorkerMetrics,
  count: (olderThanSeconds: number) => Promise<PerMode>,
  timing: CountTiming = {},
): void {
  collectPerMode(metrics.paidWithoutCertificates, () => count(600), timing);
}

/**
 * Makes every scrape read the page pool: its launch count into the counter
 * `pdf_browser_launches_total` (raised by the launches since the last scrape, so it stays equal to
 * `pool.launches` when watching starts before the first launch), and its open pages into
 * `pdf_page_pool_pages{state="idle"|"busy"}`. Call it once per pool and metrics.
 */
export function watchBrowserPool(
  metrics: Pick<WorkerMetrics, 'browserLaunches' | 'pagePoolPages'>,
  pool: { readonly launches: number; readonly pages: { readonly idle: number; readonly busy: number } },
): void {
  const launches = metrics.browserLaunches as Counter & { collect?: () => void };
  let counted = 0;
  launches.collect = () => {
    const seen = pool.launches;
    if (seen > counted) launches.inc(seen - counted);
    counted = seen;
  };
  const pages = metrics.pagePoolPages as Gauge<'state'> & { collect?: () => void };
  pages.collect = () => {
    const { idle, busy } = pool.pages;
    pages.set({ state: 'idle' }, idle);
    pages.set({ state: 'busy' }, busy);
  };
}

/** The `attempt` label of `activity_attempts_total`: `1`, `2-4` or `5+` (three series per type at most). */
export function attemptBucket(attempt: number): '1' | '2-4' | '5+' {
  return attempt <= 1 ? '1' : attempt < 5 ? '2-4' : '5+';
}

/**
 * Worker activity interceptor counting each execution in `activity_attempts_total` with its
 * attempt bucket before it runs; the `ActivityRetrying` alert fires on `5+`.
 */
export function activityAttemptsInterceptor(metrics: Pick<WorkerMetrics, 'activityAttempts'>): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      execute: (input, next) => {
        metrics.activityAttempts.inc({ activity_type: ctx.info.activityType, attempt: attemptBucket(ctx.info.attempt) });
        return next(input);
      },
    },
  });
}
