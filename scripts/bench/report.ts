/**
 * The structured result every benchmark returns, and the pure functions that turn the results
 * of one `npm run bench` into `bench/results/latest.json` and `bench/results/latest.md`
 * (one markdown table per benchmark: scenario | figure | baseline (same run) | ratio | goal |
 * result). No I/O here: index.ts runs the benches and writes the files; chart.ts draws the
 * latency chart from the same results.
 *
 * Units: latencies in milliseconds (ms), durations in seconds (s); every other figure carries
 * its unit (`certificates/s`, `MiB`, `processes`).
 */

/** Latency percentiles of one side of a scenario, ms; `samples` = how many latencies they come from. */
export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  samples: number;
}

/** One number with its unit, and what it is (`p99`, `max`, `activity path`), shown before the value. */
export interface Measure {
  value: number;
  unit: string;
  label?: string;
  /** Decimals to print (counts: 0); by magnitude when absent (see formatNumber). */
  decimals?: number;
}

/** A goal of the issue and whether this run met it. */
export interface Goal {
  /** The goal in words, with its limit for this run, e.g. `p99 <= 3x baseline + 5 ms (23.1 ms)`. */
  text: string;
  pass: boolean;
}

/** One row of a benchmark's table. */
export interface ScenarioReport {
  scenario: string;
  /** The measured figure (the endpoint, the activity path, the worker). */
  figure: Measure;
  /** The same measure of the same-run baseline (same unit as `figure`); null when the scenario has none. */
  baseline: Measure | null;
  /** figure / baseline; null without a baseline. */
  ratio: number | null;
  /** null when the scenario only informs (no goal of its own). */
  goal: Goal | null;
  /**
   * Latency percentiles (ms) of the figure's side and, where measured, of the baseline's; absent
   * for non-latency rows. `labels` names the chart's rows when the scenario name and "same-run
   * baseline" would not say enough (or would not fit).
   */
  latency?: { figure: Percentiles; baseline?: Percentiles; labels?: { figure: string; baseline: string } };
}

/** What one benchmark run returns (and what latest.json holds per bench). */
export interface BenchReport {
  bench: string;
  /** ISO time the bench started. */
  startedAt: string;
  /** Wall time of the bench, seconds (seeding and setup included). */
  durationSeconds: number;
  /** The options it ran with (after defaults and `--quick`). */
  options: Record<string, unknown>;
  /** What the figure is, e.g. `the endpoint under autocannon load`. */
  figureDescription: string;
  /** What the same-run baseline is, e.g. `the SQL of one request replayed through pg`. */
  baselineDescription: string;
  /** The bench's own JSON file (relative to the repository), with every detail. */
  resultsFile: string;
  scenarios: ScenarioReport[];
}

/** A bench that could not run (it threw); recorded so the report says so instead of dropping it. */
export interface BenchError {
  bench: string;
  startedAt: string;
  durationSeconds: number;
  error: string;
}

/** The machine and checkout a run happened on. */
export interface MachineInfo {
  node: string;
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  /** 1/5/15-minute load averages. */
  loadAverageAtStart: number[];
  loadAverageAtEnd: number[];
  /** `git rev-parse HEAD`, and whether the working tree had uncommitted changes. */
  gitCommit: string;
  gitDirty: boolean;
}

/** The content of latest.json: one `npm run bench`. */
export interface RunReport {
  startedAt: string;
  durationSeconds: number;
  /** True when run with `--quick`: smaller sizes, figures not comparable with the goals. */
  quick: boolean;
  machine: MachineInfo;
  benches: (BenchReport | BenchError)[];
}

/** True when the entry is a bench that ran (not one that threw). */
export function isBenchReport(b: BenchReport | BenchError): b is BenchReport {
  return (b as BenchError).error === undefined;
}

/**
 * A number for a table cell with `decimals` decimals, or by magnitude when absent: 0 from 100
 * up, 1 from 10, 2 below; `—` when not finite (NaN from an empty sample, a division by zero).
 */
export function formatNumber(v: number, decimals?: number): string {
  if (!Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  return v.toFixed(decimals ?? (a >= 100 ? 0 : a >= 10 ? 1 : 2));
}

/** `label value unit`, e.g. `p99 12.3 ms`; `—` for null. */
export function formatMeasure(m: Measure | null): string {
  if (m === null) return '—';
  return [m.label, formatNumber(m.value, m.decimals), m.unit].filter((s) => s !== undefined && s !== '').join(' ');
}

/** A ratio as `2.31x` (same digits as formatNumber); `—` for null or not finite. */
export function formatRatio(r: number | null): string {
  return r === null || !Number.isFinite(r) ? '—' : `${formatNumber(r)}x`;
}

/** The result cell: PASS, FAIL, or `—` for a row without a goal. */
export function formatResult(goal: Goal | null): string {
  return goal === null ? '—' : goal.pass ? 'PASS' : 'FAIL';
}

/** figure / baseline to 3 significant digits, or null when there is no baseline or it is 0 / not finite. */
export function ratioOf(figure: number, baseline: number | null): number | null {
  if (baseline === null || !Number.isFinite(baseline) || baseline === 0 || !Number.isFinite(figure)) return null;
  return +(figure / baseline).toPrecision(3);
}

/** A cell's text with the characters that would break a markdown table row escaped. */
function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** One markdown table (header, separator, rows) from string cells. */
export function markdownTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

/**
 * A plain-text table for the console, in markdown's pipe layout with every column padded to its
 * widest cell: the header, a rule, then `rows` (string cells), as one string of lines. Cells of
 * the columns `rightAligned` answers true for (numbers) are padded on the left.
 */
export function textTable(header: string[], rows: string[][], rightAligned: (column: number) => boolean = () => false): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (rightAligned(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** The table of one bench: scenario | figure | baseline (same run) | ratio | goal | result. */
export function benchTable(b: BenchReport): string {
  return markdownTable(
    ['scenario', 'figure', 'baseline (same run)', 'ratio (figure / baseline)', 'goal', 'result'],
    b.scenarios.map((s) => [
      s.scenario,
      formatMeasure(s.figure),
      formatMeasure(s.baseline),
      formatRatio(s.ratio),
      s.goal?.text ?? '—',
      formatResult(s.goal),
    ]),
  );
}

/** Counts of goals met and missed over the benches that ran. */
export function goalCounts(run: RunReport): { pass: number; fail: number; errors: number } {
  const goals = run.benches.filter(isBenchReport).flatMap((b) => b.scenarios.flatMap((s) => (s.goal ? [s.goal.pass] : [])));
  return {
    pass: goals.filter(Boolean).length,
    fail: goals.filter((p) => !p).length,
    errors: run.benches.filter((b) => !isBenchReport(b)).length,
  };
}

/**
 * latest.md: a header (time, machine, commit, load, totals), then per bench its figure and
 * baseline in words, its duration, and its table (or the error that stopped it), and a link to
 * the latency chart `chartFile` (relative to the markdown file) when given.
 */
export function markdownReport(run: RunReport, chartFile?: string): string {
  const m = run.machine;
  const counts = goalCounts(run);
  const out: string[] = [
    `# Benchmarks — ${run.startedAt}`,
    '',
    `Node ${m.node}; ${m.cpus} CPU core(s) (${m.cpuModel}), ${m.memoryGiB} GiB; commit ${m.gitCommit}${m.gitDirty ? ' (with uncommitted changes)' : ''}; ` +
      `load average (1/5/15 min) ${m.loadAverageAtStart.join(' / ')} at start, ${m.loadAverageAtEnd.join(' / ')} at end; ` +
      `${formatNumber(run.durationSeconds)} s in all.`,
    '',
    `Goals: ${counts.pass} PASS, ${counts.fail} FAIL${counts.errors ? `; ${counts.errors} bench(es) could not run` : ''}. ` +
      'Each figure sits beside its baseline measured in the same run on the same machine: the ratio is the number to compare between machines.',
  ];
  if (run.quick) {
    out.push(
      '',
      '**`--quick` run: smaller sizes and shorter runs, to check that the benches work; the figures are not the ones the goals are about.**',
    );
  }
  if (chartFile) out.push('', `Latency percentiles: [${chartFile}](${chartFile})`, '', `![latency percentiles](${chartFile})`);
  for (const b of run.benches) {
    out.push('', `## ${b.bench}`, '');
    if (!isBenchReport(b)) {
      out.push(`Could not run (after ${formatNumber(b.durationSeconds)} s): ${b.error}`);
      continue;
    }
    out.push(
      `Figure: ${b.figureDescription}. Baseline: ${b.baselineDescription}. ${formatNumber(b.durationSeconds)} s; details in \`${b.resultsFile}\`.`,
      '',
      benchTable(b),
    );
  }
  return `${out.join('\n')}\n`;
}
