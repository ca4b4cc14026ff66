/**
 * The worker process's Temporal runtime: the SDK's log lines (its own and the Rust core's) go
 * through pino as JSON, and the SDK's Prometheus exporter serves its metrics (task slots, polls,
 * latencies, activity and workflow task outcomes).
 *
 * The SDK hands errors to its logger inside `meta` (for example "Activity failed" with
 * `{ error, durationMs, attempt, activityType, workflowId, … }`); pino would print an Error
 * there as `{}`, so each Error becomes `{ type, message, failureType?, stack }`. Installed once
 * per process (`Runtime.install` throws when a runtime exists).
 */
import { Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../logger';

/** An Error as plain, loggable fields: its class name, message, failure type (ApplicationFailure) and stack. */
export function plainError(err: Error): { type: string; message: string; failureType?: unknown; stack?: string } {
  const failureType = (err as { type?: unknown }).type;
  return { type: err.name, message: err.message, ...(failureType ? { failureType } : {}), stack: err.stack };
}

/**
 * Installs the Temporal runtime of this process with `log` as its logger (component
 * `temporal-sdk`) and, when `sdkMetricsAddress` (host:port) is set, the SDK's Prometheus
 * exporter there. An exporter that cannot bind is logged and left out; the worker still runs.
 *
 * @throws Error when a runtime is already installed in this process.
 */
export function installRuntimeLogger(log: Logger, sdkMetricsAddress = ''): void {
  const map: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'trace',
    DEBUG: 'debug',
    INFO: 'info',
    WARN: 'warn',
    ERROR: 'error',
  };
  const sdkLog = log.child({ component: 'temporal-sdk' });
  const plain = (meta: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(meta).map(([k, v]) => [k, v instanceof Error ? plainError(v) : v]));
  const emit = (level: LogLevel, message: string, meta?: Record<string, unknown>) => sdkLog[map[level]](meta ? plain(meta) : {}, message);
  const install = (metrics: boolean) =>
    Runtime.install({
      logger: {
        log: emit,
        trace: (m, meta) => emit('TRACE', m, meta),
        debug: (m, meta) => emit('DEBUG', m, meta),
        info: (m, meta) => emit('INFO', m, meta),
        warn: (m, meta) => emit('WARN', m, meta),
        error: (m, meta) => emit('ERROR', m, meta),
      },
      // The SDK core's own (Rust) lines too, as JSON through pino instead of coloured text on stderr.
      telemetryOptions: {
        logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
        ...(metrics && sdkMetricsAddress ? { metrics: { prometheus: { bindAddress: sdkMetricsAddress } } } : {}),
      },
    });
  try {
    install(true);
  } catch (err) {
    // An exporter that cannot bind must not stop the worker: run without it, say so.
    if (!sdkMetricsAddress) throw err;
    install(false);
    sdkLog.error(
      { err: err instanceof Error ? err.message : String(err), address: sdkMetricsAddress },
      'Temporal SDK metrics exporter could not start; running without it',
    );
  }
}
