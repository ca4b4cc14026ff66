import { chartPanels, chooseScale, escapeXml, latencyChartSvg, LOG_SPREAD, truncate, wrapText } from '../../scripts/bench/chart';
import { benchUsage, parseBenchCommand, parseBenchOptions, type BenchOptionsSpec } from '../../scripts/bench/options';
import {
  benchTable,
  formatMeasure,
  formatNumber,
  formatRatio,
  goalCounts,
  markdownReport,
  ratioOf,
  type BenchReport,
  type Measure,
  type RunReport,
  type ScenarioReport,
} from '../../scripts/bench/report';

const pct = (p50: number, p95: number, p99: number, samples = 1000) => ({ p50, p95, p99, samples });

/**
 * A report of bench `bench` as the benches write one: its results file is bench/results/<bench>.json,
 * `descriptions` name the figure's side and the baseline's (figureDescription, baselineDescription).
 */
function report(
  bench: string,
  run: Pick<BenchReport, 'startedAt' | 'durationSeconds' | 'options'>,
  [figureDescription, baselineDescription]: [string, string],
  scenarios: ScenarioReport[],
): BenchReport {
  return { bench, ...run, figureDescription, baselineDescription, resultsFile: `bench/results/${bench}.json`, scenarios };
}

/** A scenario measured against a same-run baseline: its ratio is figure / baseline (ratioOf), as the benches compute it. */
function measured(
  scenario: string,
  [figure, baseline]: [Measure, Measure],
  goal: ScenarioReport['goal'],
  latency?: ScenarioReport['latency'],
): ScenarioReport {
  return { scenario, figure, baseline, ratio: ratioOf(figure.value, baseline.value), goal, ...(latency ? { latency } : {}) };
}

/** A measure in milliseconds labelled `label` (p99, max). */
const ms = (label: string, value: number): Measure => ({ label, value, unit: 'ms' });

function catalogReport(): BenchReport {
  return report(
    'catalog',
    { startedAt: '2027-01-01T00:00:00.000Z', durationSeconds: 95.5, options: { seconds: 10 } },
    ['the endpoint', 'the same SQL through pg'],
    [
      measured(
        'bundles plain',
        [ms('p99', 12.34), ms('p99', 3.21)],
        { text: 'p99 <= 3x baseline + 5 ms (14.63 ms)', pass: true },
        { figure: pct(4.5, 9.9, 12.34), baseline: pct(1.1, 2.5, 3.21) },
      ),
      measured(
        'bundles | searched',
        [ms('p99', 40), ms('p99', 5)],
        { text: 'p99 <= 3x baseline + 5 ms (20 ms)', pass: false },
        { figure: pct(20, 30, 40), baseline: pct(2, 4, 5) },
      ),
    ],
  );
}

function certificatesReport(): BenchReport {
  return report(
    'certificates',
    { startedAt: '2027-01-01T00:02:00.000Z', durationSeconds: 600, options: {} },
    ['per row: the activity; a 30-day purchase', 'per row: a naive browser per PDF; a 1-day purchase'],
    [
      measured(
        'throughput',
        [
          { label: 'activity path', value: 25.5, unit: 'certificates/s' },
          { label: 'naive browser per PDF', value: 1.7, unit: 'certificates/s' },
        ],
        { text: 'ratio >= 10x', pass: true },
      ),
      {
        scenario: 'worker processes after SIGTERM',
        figure: { label: 'running at exit', value: 0, unit: 'processes', decimals: 0 },
        baseline: null,
        ratio: null,
        goal: null,
      },
    ],
  );
}

function run(benches: RunReport['benches'], quick = false): RunReport {
  return {
    startedAt: '2027-01-01T00:00:00.000Z',
    durationSeconds: 700,
    quick,
    machine: {
      node: 'v20.0.0',
      cpus: 2,
      cpuModel: 'Test CPU',
      memoryGiB: 8,
      loadAverageAtStart: [0.5, 0.4, 0.3],
      loadAverageAtEnd: [1.5, 1, 0.5],
      gitCommit: 'abc123',
      gitDirty: true,
    },
    benches,
  };
}

/** The cells of the table row whose first cell is `scenario` (escaped pipes kept inside cells). */
function rowCells(markdown: string, scenario: string): string[] {
  const line = markdown.split('\n').find((l) => l.startsWith(`| ${scenario} |`));
  if (!line) throw new Error(`no row for ${scenario}`);
  return line
    .slice(2, -2)
    .split(/ (?<!\\)\| /)
    .map((c) => c.trim());
}

describe('bench report: numbers', () => {
  test('when values are formatted, then digits follow magnitude and NaN/Infinity print a dash', () => {
    expect(formatNumber(1234.5)).toBe('1235');
    expect(formatNumber(13)).toBe('13.0');
    expect(formatNumber(3, 0)).toBe('3');
    expect(formatNumber(12.345)).toBe('12.3');
    expect(formatNumber(1.2345)).toBe('1.23');
    expect(formatNumber(Number.NaN)).toBe('—');
    expect(formatNumber(Number.POSITIVE_INFINITY)).toBe('—');
  });

  test('when a ratio has no usable baseline, then it is null and prints a dash', () => {
    expect(ratioOf(10, 4)).toBe(2.5);
    expect(ratioOf(10, 3)).toBe(3.33);
    expect(ratioOf(10, 0)).toBeNull();
    expect(ratioOf(10, null)).toBeNull();
    expect(ratioOf(Number.NaN, 2)).toBeNull();
    expect(formatRatio(2.5)).toBe('2.50x');
    expect(formatRatio(null)).toBe('—');
  });

  test('when a measure is formatted, then its label, value and unit appear in that order', () => {
    expect(formatMeasure({ label: 'p99', value: 12.34, unit: 'ms' })).toBe('p99 12.3 ms');
    expect(formatMeasure({ value: 512.25, unit: 'MiB' })).toBe('512 MiB');
    expect(formatMeasure({ label: 'max', value: 4000, unit: 'ms' })).toBe('max 4000 ms');
    expect(formatMeasure({ label: 'left', value: 2, unit: 'processes', decimals: 0 })).toBe('left 2 processes');
    expect(formatMeasure(null)).toBe('—');
  });
});

describe('bench report: markdown', () => {
  test('when a goal is met or missed, then its row says PASS or FAIL and the baseline column holds the same-run baseline', () => {
    const table = benchTable(catalogReport());
    expect(table.split('\n')[0]).toBe('| scenario | figure | baseline (same run) | ratio (figure / baseline) | goal | result |');
    expect(rowCells(table, 'bundles plain')).toEqual([
      'bundles plain',
      'p99 12.3 ms',
      'p99 3.21 ms',
      '3.84x',
      'p99 <= 3x baseline + 5 ms (14.63 ms)',
      'PASS',
    ]);
    const failing = rowCells(table, 'bundles \\| searched');
    expect(failing[2]).toBe('p99 5.00 ms');
    expect(failing[3]).toBe('8.00x');
    expect(failing[5]).toBe('FAIL');
  });

  test('when a row has no baseline and no goal, then baseline, ratio and result are dashes, not PASS', () => {
    const cells = rowCells(benchTable(certificatesReport()), 'worker processes after SIGTERM');
    expect(cells).toEqual(['worker processes after SIGTERM', 'running at exit 0 processes', '—', '—', '—', '—']);
  });

  test('when the report is built, then it has the machine line, one section per bench, the goal totals and the chart link', () => {
    const md = markdownReport(run([catalogReport(), certificatesReport()]), 'latest-latency.png');
    expect(md).toContain('Node v20.0.0; 2 CPU core(s) (Test CPU), 8 GiB; commit abc123 (with uncommitted changes)');
    expect(md).toContain('load average (1/5/15 min) 0.5 / 0.4 / 0.3 at start, 1.5 / 1 / 0.5 at end');
    expect(md).toContain('Goals: 2 PASS, 1 FAIL.');
    expect(md).toContain('![latency percentiles](latest-latency.png)');
    expect(md.indexOf('## catalog')).toBeLessThan(md.indexOf('## certificates'));
    expect(md).toContain('details in `bench/results/catalog.json`');
    expect(md).not.toContain('--quick');
  });

  test('when a bench could not run or the run was quick, then the report says so', () => {
    const r = run(
      [
        catalogReport(),
        { bench: 'search', startedAt: '2027-01-01T00:05:00.000Z', durationSeconds: 3, error: 'database "x" does not exist' },
      ],
      true,
    );
    const md = markdownReport(r);
    expect(goalCounts(r)).toEqual({ pass: 1, fail: 1, errors: 1 });
    expect(md).toContain('## search\n\nCould not run (after 3.00 s): database "x" does not exist');
    expect(md).toContain('1 bench(es) could not run');
    expect(md).toContain('`--quick` run');
    expect(md).not.toContain('![latency percentiles]');
  });
});

describe('bench report: latency chart', () => {
  test('when values spread over more than LOG_SPREAD, then the axis is logarithmic with decade bounds, else linear from 0', () => {
    const log = chooseScale([0.4, 3, 60]);
    expect(log.kind).toBe('log');
    expect(log.domain).toEqual([0.1, 100]);
    expect(log.ticks).toEqual([0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]);
    expect(log.at(1)).toBeCloseTo(1 / 3);
    const lin = chooseScale([2, 3, 2 * LOG_SPREAD - 1]);
    expect(lin.kind).toBe('linear');
    expect(lin.domain[0]).toBe(0);
    expect(lin.domain[1]).toBeGreaterThanOrEqual(39);
    expect(lin.at(lin.domain[1] / 2)).toBeCloseTo(0.5);
    expect(lin.at(1e9)).toBe(1);
  });

  test('when a scenario has latencies, then it gets a figure row and a baseline row; rows without latency are left out', () => {
    const panels = chartPanels([catalogReport(), certificatesReport()]);
    expect(panels).toHaveLength(1);
    expect(panels[0]!.rows.map((r) => `${r.side}:${r.label}`)).toEqual([
      'figure:bundles plain',
      'baseline:same-run baseline',
      'figure:bundles | searched',
      'baseline:same-run baseline',
    ]);
  });

  test('when the chart is drawn, then the p99 bar is longer than the p50 bar, labels are escaped and the values are printed', () => {
    const drawn = latencyChartSvg([catalogReport()], 'Latency <test>');
    expect(drawn).not.toBeNull();
    const { svg, width, height } = drawn!;
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="1200"')).toBe(true);
    expect(width).toBe(1200);
    expect(height).toBeGreaterThan(100);
    expect(svg).toContain('Latency &lt;test&gt;');
    expect(svg).toContain('bundles | searched');
    expect(svg).toContain('4.50 / 9.90 / 12.3 ms (n=1000)');
    const widthOf = (side: string, q: string) =>
      [...svg.matchAll(new RegExp(`width="([0-9.]+)" height="[0-9.]+" fill="#[0-9a-f]+" data-side="${side}" data-q="${q}"`, 'g'))].map(
        (m) => Number(m[1]),
      );
    const p50 = widthOf('figure', 'p50');
    const p99 = widthOf('figure', 'p99');
    expect(p50).toHaveLength(2);
    p50.forEach((w, i) => expect(p99[i]!).toBeGreaterThan(w));
    expect(widthOf('baseline', 'p99')[1]!).toBeLessThan(p99[1]!);
  });

  test('when a scenario names its rows, then the chart uses those names, cut to fit', () => {
    const b = certificatesReport();
    b.scenarios.push(
      measured(
        'webhook -> issued',
        [ms('max', 4000), ms('max', 900)],
        { text: 'max <= 5000 ms', pass: true },
        {
          figure: pct(3000, 4000, 4000, 10),
          baseline: pct(800, 900, 900, 10),
          labels: { figure: `30 days ${'x'.repeat(60)}`, baseline: '1-day purchase' },
        },
      ),
    );
    const rows = chartPanels([b])[0]!.rows;
    expect(rows[0]!.label).toHaveLength(42);
    expect(rows[0]!.label.endsWith('…')).toBe(true);
    expect(rows[1]!.label).toBe('1-day purchase');
    expect(truncate('short', 42)).toBe('short');
  });

  test('when no bench measured a latency, then there is no chart', () => {
    expect(latencyChartSvg([certificatesReport()], 't')).toBeNull();
  });

  test('when a note is longer than a line, then it wraps at spaces and keeps every word', () => {
    const lines = wrapText('one two three four five', 9);
    expect(lines).toEqual(['one two', 'three', 'four five']);
    expect(wrapText('a-very-long-word x', 5)).toEqual(['a-very-long-word', 'x']);
  });

  test('when text holds markup characters, then they are escaped', () => {
    expect(escapeXml('a < b & "c" > d')).toBe('a &lt; b &amp; &quot;c&quot; &gt; d');
  });
});

describe('bench options', () => {
  const spec: BenchOptionsSpec<'seconds' | 'otherRows'> = {
    bench: 'demo',
    ints: {
      seconds: { default: 10, quick: 2, min: 1, max: 60, metavar: 'S' },
      otherRows: { default: 1000, quick: 10, min: 10, max: 5000 },
    },
    onlyExample: 'a,b',
    check: (o) => {
      if (o.otherRows > o.seconds * 100) throw new Error('--other-rows must be at most 100x --seconds');
    },
  };

  test('when --quick is given, then unset options take their quick values and explicit ones win', () => {
    expect(parseBenchOptions(spec, ['--quick', '--other-rows', '50'])).toEqual({ seconds: 2, otherRows: 50, quick: true, only: [] });
    expect(parseBenchOptions(spec, ['--only', ' a , b,'])).toEqual({ seconds: 10, otherRows: 1000, quick: false, only: ['a', 'b'] });
    expect(parseBenchOptions(spec, ['-h'])).toBeNull();
  });

  test('when an option is out of bounds, unknown or breaks a rule, then parsing throws one line', () => {
    expect(() => parseBenchOptions(spec, ['--seconds', '0'])).toThrow('--seconds must be an integer from 1 to 60');
    expect(() => parseBenchOptions(spec, ['--rows', '5'])).toThrow(/rows/);
    expect(() => parseBenchOptions(spec, ['--seconds', '1', '--other-rows', '500'])).toThrow('--other-rows must be at most 100x --seconds');
  });

  test('when usage is printed, then every option shows its kebab-case name and default', () => {
    expect(benchUsage(spec).split('\n')[0]).toBe(
      'usage: npm run bench -- demo [--seconds S=10] [--other-rows N=1000] [--only "a,b"] [--quick]',
    );
  });

  test('when names lead the arguments, then they are the subset and the rest goes to each; alone, only --quick/--list/--help', () => {
    const known = ['catalog', 'certificates', 'search'];
    expect(parseBenchCommand([], known)).toEqual({ kind: 'run', names: known, argv: [] });
    expect(parseBenchCommand(['--quick'], known)).toEqual({ kind: 'run', names: known, argv: ['--quick'] });
    expect(parseBenchCommand(['search', 'catalog', 'search'], known)).toEqual({ kind: 'run', names: ['search', 'catalog'], argv: [] });
    expect(parseBenchCommand(['certificates', '--runs', '5'], known)).toEqual({
      kind: 'run',
      names: ['certificates'],
      argv: ['--runs', '5'],
    });
    expect(parseBenchCommand(['--list'], known)).toEqual({ kind: 'list' });
    expect(parseBenchCommand(['--help'], known)).toEqual({ kind: 'help' });
    expect(() => parseBenchCommand(['nope'], known)).toThrow('unknown benchmark "nope"; available: catalog, certificates, search');
    expect(() => parseBenchCommand(['--runs', '5'], known)).toThrow(/needs benchmark names/);
  });
});
