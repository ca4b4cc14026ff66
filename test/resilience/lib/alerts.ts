/**
 * What the service's alert rules (ops/prometheus/alerts.yml) said about a stretch of a fault
 * suite's run: the stack's own Prometheus (lib/fault-stack.ts) scrapes every process each second
 * and evaluates the rules; this reads its `ALERTS` series (one per alert and label set while the
 * alert is pending or firing) back over the stretch.
 */
import { eventually } from '../../../scripts/harness/api';

/** An alert's series as Prometheus keeps it, with the states it was seen in. */
export interface AlertSeen {
  alertname: string;
  severity: string;
  /** The alert's own labels beyond alertname, alertstate and severity (dependency, mode…). */
  labels: Record<string, string>;
  pending: boolean;
  firing: boolean;
  /** When it was first seen firing (epoch ms), null when it never was. */
  firstFiringMs: number | null;
}

/** An alert the rules should raise (pending or firing): its name and, optionally, labels it must carry. */
export interface ExpectedAlert {
  alertname: string;
  labels?: Record<string, string>;
  /** It must be firing (not only pending) within this long of the fault's start (ms). */
  firingWithinMs?: number;
}

/**
 * The alerts that only live traffic may raise: the suites' load uses a test key, so none of these
 * may even be pending during a fault (test-mode noise never pages).
 */
export const LIVE_ONLY_ALERTS = [
  'PaidPurchaseWithoutCertificates',
  'High5xxRatio',
  'CertificatesSloBurnFast',
  'CertificatesSloBurnSlow',
  'CheckoutSloBurnFast',
  'CheckoutSloBurnSlow',
  // Cancellations: the suites with cancellations during an outage (lib/cancellations.ts) make them in test mode.
  'CancellationRefundFailed',
  'CancellationPendingTooLong',
] as const;

interface RangeResult {
  metric: Record<string, string>;
  values: [number, string][];
}

/**
 * Every alert pending or firing between `fromMs` and `toMs` (epoch ms), one entry per label set.
 * @throws {Error} when Prometheus does not answer the range query.
 */
export async function alertsBetween(prometheusUrl: string, fromMs: number, toMs: number): Promise<AlertSeen[]> {
  const url = new URL('/api/v1/query_range', prometheusUrl);
  url.searchParams.set('query', 'ALERTS');
  url.searchParams.set('start', (fromMs / 1000).toFixed(3));
  url.searchParams.set('end', (toMs / 1000).toFixed(3));
  // At most 11 000 points per series: 1 s steps up to three hours.
  url.searchParams.set('step', String(Math.max(1, Math.ceil((toMs - fromMs) / 1000 / 10_000))));
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const body = (await res.json()) as { status: string; error?: string; data?: { result: RangeResult[] } };
  if (!res.ok || body.status !== 'success') throw new Error(`Prometheus ALERTS query: HTTP ${res.status} ${body.error ?? ''}`);
  const byKey = new Map<string, AlertSeen>();
  for (const { metric, values } of body.data!.result) {
    const { __name__: _name, alertname, alertstate, severity, ...labels } = metric;
    const key = JSON.stringify([alertname, labels]);
    const seen = byKey.get(key) ?? {
      alertname: alertname!,
      severity: severity ?? '',
      labels,
      pending: false,
      firing: false,
      firstFiringMs: null,
    };
    if (alertstate === 'pending') seen.pending = true;
    if (alertstate === 'firing') {
      seen.firing = true;
      const first = Math.min(...values.map(([t]) => t * 1000));
      seen.firstFiringMs = seen.firstFiringMs === null ? first : Math.min(seen.firstFiringMs, first);
    }
    byKey.set(key, seen);
  }
  return [...byKey.values()].sort((a, b) => a.alertname.localeCompare(b.alertname));
}

/** `Name{label="v"}` for messages and reports (and, for an expectation with `firingWithinMs`, the bound). */
export function alertName(a: { alertname: string; labels?: Record<string, string>; firingWithinMs?: number }): string {
  const labels = Object.entries(a.labels ?? {}).map(([k, v]) => `${k}="${v}"`);
  const name = labels.length ? `${a.alertname}{${labels.join(',')}}` : a.alertname;
  return a.firingWithinMs === undefined ? name : `${name} firing within ${a.firingWithinMs / 1000} s`;
}

/**
 * Whether `expected` was raised among `seen` during a fault that started at `faultStartedMs` (epoch
 * ms): an alert matching it, and with `firingWithinMs`, firing that soon after the start.
 */
export function raised(expected: ExpectedAlert, seen: AlertSeen[], faultStartedMs: number): boolean {
  return seen.some(
    (a) =>
      matches(expected, a) &&
      (expected.firingWithinMs === undefined || (a.firstFiringMs !== null && a.firstFiringMs - faultStartedMs <= expected.firingWithinMs)),
  );
}

/** Whether `seen` is the `expected` alert (same name, and every expected label equal). */
export function matches(expected: ExpectedAlert, seen: AlertSeen): boolean {
  return expected.alertname === seen.alertname && Object.entries(expected.labels ?? {}).every(([k, v]) => seen.labels[k] === v);
}

/** One report line: each alert with its severity and the states it reached. */
export function alertsLine(seen: AlertSeen[]): string {
  if (!seen.length) return 'alerts: none pending or firing';
  return `alerts: ${seen.map((a) => `${alertName(a)} (${a.severity}) ${[a.pending && 'pending', a.firing && 'firing'].filter(Boolean).join(' then ')}`).join('; ')}`;
}

/**
 * Waits until the stack's Prometheus answers `expr` (PromQL, an instant query) with at least one
 * series, e.g. `up{job="coi-worker",instance="…"} == 1`: from then on every rule evaluation reads
 * what that series says. A process being ready is not enough: until its next scrape (up to one
 * scrape interval later) the rules still read its last failed scrape. A rolling restart waits for
 * this before it stops the next process, as an orchestrator waits for the restarted one's readiness.
 * @throws {Error} when Prometheus has not answered a series within `timeoutMs` (milliseconds).
 */
export async function untilPrometheusSees(prometheusUrl: string, expr: string, timeoutMs = 30_000): Promise<void> {
  const url = new URL('/api/v1/query', prometheusUrl);
  url.searchParams.set('query', expr);
  const answered = async () => {
    const body = await fetch(url, { signal: AbortSignal.timeout(5_000) })
      .then((res) => res.json() as Promise<{ status: string; data?: { result: unknown[] } }>)
      .catch(() => null);
    return body?.status === 'success' && Boolean(body.data?.result.length);
  };
  await eventually(answered, timeoutMs, 250).catch(() => {
    throw new Error(`Prometheus did not answer ${expr} within ${timeoutMs} ms`);
  });
}
