/**
 * `npm run ops -- slo [--days 30] [--mode live|test]` (scripts/ops.ts dispatches here): each
 * service level objective's compliance over the last `days` days and the error budget left, from
 * Prometheus' HTTP API at `PROMETHEUS_URL` (default http://127.0.0.1:9090, `npm run dev`'s).
 *
 * It reads the SLO report's recording rules of ops/prometheus/alerts.yml (group
 * `coi-slo-report`): `coi:slo_events_good:rate5m` and `coi:slo_events_total:rate5m` per `slo`
 * and `mode`, and the objective `coi:slo_objective:ratio` per `slo`. Over the window:
 *   compliance   = sum_over_time(good) / sum_over_time(total)
 *   events       = sum_over_time(total) × the rule group's evaluation interval (s)
 *   budget       = 1 − objective (a fraction of events); as time, budget × the window in minutes
 *   budget left  = 1 − (1 − compliance) / budget, a fraction (negative once overspent), and that
 *                  fraction of the budget's minutes.
 * An objective without events in the window has its whole budget left. Read-only.
 *
 * Exit 0 when every objective has budget left, 3 when one's is exhausted (left ≤ 0); a usage
 * error, Prometheus not answering or the rules not loaded throw (exit 1).
 */
import { UsageError } from './cli';

const DAY_S = 86_400;

/** One objective's figures over the window (fractions 0..1; budget_left may be negative). */
export interface SloFigures {
  slo: string;
  mode: 'live' | 'test';
  objective: number;
  events: number;
  good_events: number;
  compliance: number | null;
  budget_left: number;
  budget_minutes: number;
  budget_minutes_left: number;
  exhausted: boolean;
}

type Vector = Array<{ metric: Record<string, string>; value: [number, string] }>;

/** GET `path` of Prometheus' HTTP API at `base`; its `data`. Throws naming the URL when it does not answer or refuses. */
async function promApi<T>(base: string, path: string): Promise<T> {
  const url = `${base.replace(/\/$/, '')}${path}`;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  } catch (e) {
    throw new Error(`Prometheus at ${base} does not answer (${e instanceof Error ? e.message : String(e)}); set PROMETHEUS_URL`);
  }
  const body = (await res.json().catch(() => null)) as { status?: string; data?: T; error?: string } | null;
  if (!res.ok || body?.status !== 'success')
    throw new Error(`Prometheus at ${base} refused ${path}: ${body?.error ?? `HTTP ${res.status}`}`);
  return body.data as T;
}

const query = (base: string, expr: string, at: number) =>
  promApi<{ result: Vector }>(base, `/api/v1/query?query=${encodeURIComponent(expr)}&time=${at}`).then((d) => d.result);

/**
 * The figures of every objective in `mode` over the `days` days before `at` (Unix seconds), from
 * the Prometheus at `base`. Throws when it does not answer or has not loaded the recording rules.
 */
export async function sloFigures(base: string, days: number, mode: 'live' | 'test', at: number): Promise<SloFigures[]> {
  const { groups } = await promApi<{ groups: Array<{ name: string; interval: number; rules: Array<{ name: string }> }> }>(
    base,
    '/api/v1/rules',
  );
  const group = groups.find((g) => g.rules.some((r) => r.name === 'coi:slo_events_total:rate5m'));
  if (!group)
    throw new Error(
      `Prometheus at ${base} has not loaded the SLO recording rules (coi:slo_events_total:rate5m of ops/prometheus/alerts.yml)`,
    );
  const window = `${days}d`;
  const [objectives, good, total] = await Promise.all([
    query(base, 'coi:slo_objective:ratio', at),
    query(base, `sum by (slo) (sum_over_time(coi:slo_events_good:rate5m{mode="${mode}"}[${window}]))`, at),
    query(base, `sum by (slo) (sum_over_time(coi:slo_events_total:rate5m{mode="${mode}"}[${window}]))`, at),
  ]);
  const of = (v: Vector, slo: string) => Number(v.find((s) => s.metric.slo === slo)?.value[1] ?? 0);
  const budgetMinutesOfWindow = (days * DAY_S) / 60;
  return objectives
    .map((o) => o.metric.slo!)
    .sort()
    .map((slo) => {
      const objective = of(objectives, slo);
      const totalSum = of(total, slo);
      const goodSum = Math.min(of(good, slo), totalSum);
      const compliance = totalSum > 0 ? goodSum / totalSum : null;
      const budget = 1 - objective;
      const budgetLeft = compliance === null ? 1 : 1 - (1 - compliance) / budget;
      const budgetMinutes = budget * budgetMinutesOfWindow;
      return {
        slo,
        mode,
        objective,
        events: Math.round(totalSum * group.interval),
        good_events: Math.round(goodSum * group.interval),
        compliance,
        budget_left: budgetLeft,
        budget_minutes: budgetMinutes,
        budget_minutes_left: budgetLeft * budgetMinutes,
        exhausted: budgetLeft <= 0,
      };
    });
}

/** `value` as a whole number of days from 1 to 365 (UsageError otherwise). */
function daysOf(value: string | undefined): number {
  if (value === undefined) return 30;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 365)
    throw new UsageError(`--days must be a whole number of days from 1 to 365, got "${value}"`);
  return Number(value);
}

const pct = (f: number, digits: number) => `${(f * 100).toFixed(digits)} %`;

/**
 * Runs `slo` with the parsed options (mode live by default): prints a table, or with `json`
 * `{ prometheus, days, mode, at, slos: SloFigures[] }`. Returns 3 when a budget is exhausted, else 0.
 */
export async function slo(opts: { days?: string | undefined; mode?: string | undefined }, json: boolean): Promise<number> {
  if (opts.mode !== undefined && opts.mode !== 'test' && opts.mode !== 'live')
    throw new UsageError(`--mode must be live or test, got "${opts.mode}"`);
  const mode = opts.mode ?? 'live';
  const days = daysOf(opts.days);
  const base = process.env.PROMETHEUS_URL ?? 'http://127.0.0.1:9090';
  const at = Math.floor(Date.now() / 1000);
  const slos = await sloFigures(base, days, mode, at);
  const exhausted = slos.filter((s) => s.exhausted);
  if (json) {
    console.log(JSON.stringify({ prometheus: base, days, mode, at: new Date(at * 1000).toISOString(), slos }));
    return exhausted.length ? 3 : 0;
  }
  console.log(`SLO report, ${mode} mode, ${days} days to ${new Date(at * 1000).toISOString().slice(0, 16)}Z (Prometheus ${base})`);
  const head = ['objective', 'target', 'events', 'good', 'compliance', 'budget left', 'minutes left', 'of minutes'];
  const table = slos.map((s) => [
    s.slo,
    pct(s.objective, 1),
    String(s.events),
    String(s.good_events),
    s.compliance === null ? 'no events' : pct(s.compliance, 3),
    pct(s.budget_left, 1),
    s.budget_minutes_left.toFixed(1),
    s.budget_minutes.toFixed(1),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((t) => t[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(head));
  for (const t of table) console.log(line(t));
  if (exhausted.length) console.log(`error budget exhausted: ${exhausted.map((s) => s.slo).join(', ')} (exit 3)`);
  return exhausted.length ? 3 : 0;
}
