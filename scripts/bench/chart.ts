/**
 * The latency chart of `npm run bench` as a self-contained SVG string (no library, no I/O):
 * one panel per bench that measured latencies, one pair of rows per scenario — the figure
 * (blue) and, beneath it, its same-run baseline (orange) — each row three overlaid bars from
 * the axis start: p99 (light), p95 (medium), p50 (dark), with the three values printed at the
 * right. png.ts screenshots it with Chromium into latest-latency.png.
 *
 * Axis: per panel, linear from 0 when the panel's largest p99 is at most LOG_SPREAD times its
 * smallest p50, else logarithmic (decades, ticks at 1-2-5), so a 0.5 ms SQL baseline and a
 * 60 ms endpoint both stay readable. All values in ms.
 */
import { formatNumber, type BenchReport, type Percentiles } from './report';

/** Above this spread (largest / smallest value of a panel) the panel's axis is logarithmic. */
export const LOG_SPREAD = 20;

const WIDTH = 1200;
const LABEL_W = 300;
const VALUE_W = 270;
const PLOT_X0 = LABEL_W + 10;
const PLOT_X1 = WIDTH - VALUE_W - 10;
/** Left edge of the value column (clear of the last tick label, which is centred on PLOT_X1). */
const VALUE_X = PLOT_X1 + 28;
/** Characters of a row label that fit in LABEL_W (12 px DejaVu Sans, about 7 px each). */
const LABEL_CHARS = 42;
/** Characters per line of the notes under a panel title (11 px DejaVu Sans, about 6.5 px each). */
const NOTE_CHARS = 175;
const ROW_H = 16;
const PAIR_GAP = 8;
const PANEL_GAP = 26;
const FONT = 'DejaVu Sans, Liberation Sans, Arial, sans-serif';

/** Fill colours of p50 / p95 / p99 for each side. */
const COLOURS = {
  figure: { p50: '#08519c', p95: '#4292c6', p99: '#c6dbef' },
  baseline: { p50: '#a63603', p95: '#fd8d3c', p99: '#fdd0a2' },
} as const;

/** A panel's x axis: maps a value (ms) to 0..1 of the plot width, and its tick values. */
export interface Scale {
  kind: 'linear' | 'log';
  /** [start, end] of the axis, ms; the bars start at `start`. */
  domain: [number, number];
  ticks: number[];
  /** Position of `v` (ms) as a fraction 0..1 of the plot width, clamped. */
  at(v: number): number;
}

/** The smallest of 1, 2, 5 × 10^k that is >= v (v > 0). */
function niceStep(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/**
 * The axis for a panel whose values (ms) are `values` (non-positive and non-finite values are
 * ignored): logarithmic when max / min > LOG_SPREAD, else linear from 0 with about 5 ticks.
 * With no usable value, a linear 0..1 axis.
 */
export function chooseScale(values: number[]): Scale {
  const usable = values.filter((v) => Number.isFinite(v) && v > 0);
  const lo = usable.length ? Math.min(...usable) : 1;
  const hi = usable.length ? Math.max(...usable) : 1;
  const clamp = (f: number) => Math.min(1, Math.max(0, f));
  if (hi / lo > LOG_SPREAD) {
    const d0 = 10 ** Math.floor(Math.log10(lo));
    const d1 = 10 ** Math.ceil(Math.log10(hi));
    const ticks: number[] = [];
    for (let d = d0; d < d1 * 1.001; d *= 10) for (const m of [1, 2, 5]) if (m * d <= d1 * 1.001) ticks.push(+(m * d).toPrecision(3));
    const span = Math.log10(d1) - Math.log10(d0);
    return { kind: 'log', domain: [d0, d1], ticks, at: (v) => clamp((Math.log10(Math.max(v, d0)) - Math.log10(d0)) / span) };
  }
  const step = niceStep(hi / 5);
  const end = Math.ceil(hi / step) * step;
  const ticks: number[] = [];
  for (let t = 0; t <= end * 1.0001; t += step) ticks.push(+t.toPrecision(6));
  return { kind: 'linear', domain: [0, end], ticks, at: (v) => clamp(v / end) };
}

/** Text made safe for SVG/XML content and attribute values. */
export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const tickLabel = (v: number) => String(+v.toPrecision(3));

/** One row of the chart: a scenario's figure or its baseline. */
export interface ChartRow {
  label: string;
  side: 'figure' | 'baseline';
  latency: Percentiles;
}

/** One panel: a bench's latency rows. */
export interface ChartPanel {
  title: string;
  /** What the blue and the orange rows are (one note each). */
  notes: string[];
  rows: ChartRow[];
}

/** `s` cut to `max` characters, the last one an ellipsis, when it is longer. */
export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** `s` split at spaces into lines of at most `max` characters (a longer word gets a line of its own). */
export function wrapText(s: string, max: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of s.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > max) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * The panels of the chart: one per bench with latency rows, in bench order; per scenario the
 * figure row (labelled with the scenario), then the baseline row when the scenario measured
 * one (`same-run baseline`), unless the scenario names its rows (`latency.labels`); labels are
 * cut to fit. Benches without any latency (or without scenarios) give no panel.
 */
export function chartPanels(benches: BenchReport[]): ChartPanel[] {
  return benches
    .map((b) => ({
      title: b.bench,
      notes: [`blue: ${b.figureDescription}`, `orange, beneath: same-run baseline, ${b.baselineDescription}`],
      rows: b.scenarios.flatMap((s): ChartRow[] => {
        if (!s.latency) return [];
        const labels = s.latency.labels ?? { figure: s.scenario, baseline: 'same-run baseline' };
        const rows: ChartRow[] = [{ label: truncate(labels.figure, LABEL_CHARS), side: 'figure', latency: s.latency.figure }];
        if (s.latency.baseline) rows.push({ label: truncate(labels.baseline, LABEL_CHARS), side: 'baseline', latency: s.latency.baseline });
        return rows;
      }),
    }))
    .filter((p) => p.rows.length > 0);
}

/**
 * Draws the chart of `benches` as an SVG document (width 1200 px, height from the number of
 * rows) titled `title`. Returns null when no bench measured a latency (nothing to draw).
 */
export function latencyChartSvg(benches: BenchReport[], title: string): { svg: string; width: number; height: number } | null {
  const panels = chartPanels(benches);
  if (panels.length === 0) return null;
  const parts: string[] = [];
  const text = (x: number, y: number, s: string, attrs = '') => `<text x="${x}" y="${y}" ${attrs}>${escapeXml(s)}</text>`;
  let y = 28;
  parts.push(text(12, y, title, 'font-size="17" font-weight="bold"'));
  y += 24;
  // Legend: the three shades of each side.
  let lx = 12;
  for (const side of ['figure', 'baseline'] as const) {
    for (const q of ['p50', 'p95', 'p99'] as const) {
      parts.push(`<rect x="${lx}" y="${y - 11}" width="14" height="12" fill="${COLOURS[side][q]}" stroke="#555" stroke-width="0.5"/>`);
      parts.push(text(lx + 18, y, `${side === 'figure' ? 'figure' : 'baseline'} ${q}`));
      lx += 130;
    }
    lx += 20;
  }
  y += 18;
  parts.push(
    text(
      12,
      y,
      'Bars overlap from the axis start: dark = p50, medium = p95, light = p99 (a longer light end = a longer tail). Values at the right: p50 / p95 / p99 ms and the sample count.',
      'fill="#444"',
    ),
  );
  y += 6;

  const plotW = PLOT_X1 - PLOT_X0;
  for (const panel of panels) {
    const scale = chooseScale(panel.rows.flatMap((r) => [r.latency.p50, r.latency.p95, r.latency.p99]));
    y += PANEL_GAP;
    parts.push(text(12, y, `${panel.title} — ms, ${scale.kind} axis`, 'font-size="14" font-weight="bold"'));
    for (const line of panel.notes.flatMap((n) => wrapText(n, NOTE_CHARS))) {
      y += 15;
      parts.push(text(12, y, line, 'fill="#444" font-size="11"'));
    }
    y += 8;
    const axisY = y + 14;
    const top = axisY + 6;
    let rowsH = 0;
    for (let i = 0; i < panel.rows.length; i++) rowsH += ROW_H + (i > 0 && panel.rows[i]!.side === 'figure' ? PAIR_GAP : 0);
    const bottom = top + rowsH + 4;
    parts.push(text(VALUE_X, axisY, 'p50 / p95 / p99', 'fill="#444" font-size="11"'));
    for (const t of scale.ticks) {
      const x = PLOT_X0 + scale.at(t) * plotW;
      parts.push(`<line x1="${x.toFixed(1)}" y1="${top}" x2="${x.toFixed(1)}" y2="${bottom}" stroke="#ddd"/>`);
      parts.push(text(+x.toFixed(1), axisY, tickLabel(t), 'text-anchor="middle" fill="#444" font-size="11"'));
    }
    let ry = top;
    panel.rows.forEach((row, i) => {
      if (i > 0 && row.side === 'figure') ry += PAIR_GAP;
      const c = COLOURS[row.side];
      const barY = ry + 2;
      const h = ROW_H - 4;
      for (const q of ['p99', 'p95', 'p50'] as const) {
        const w = scale.at(row.latency[q]) * plotW;
        parts.push(
          `<rect x="${PLOT_X0}" y="${barY}" width="${w.toFixed(1)}" height="${h}" fill="${c[q]}" data-side="${row.side}" data-q="${q}"/>`,
        );
      }
      const labelAttrs = row.side === 'figure' ? 'text-anchor="end"' : 'text-anchor="end" fill="#a63603" font-size="11"';
      parts.push(text(LABEL_W, ry + ROW_H - 4, row.label, labelAttrs));
      const l = row.latency;
      parts.push(
        text(
          VALUE_X,
          ry + ROW_H - 4,
          `${formatNumber(l.p50)} / ${formatNumber(l.p95)} / ${formatNumber(l.p99)} ms (n=${l.samples})`,
          'font-size="11"',
        ),
      );
      ry += ROW_H;
    });
    parts.push(`<line x1="${PLOT_X0}" y1="${top}" x2="${PLOT_X0}" y2="${bottom}" stroke="#888"/>`);
    y = bottom;
  }
  const height = Math.ceil(y + 16);
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="${FONT}" font-size="12">` +
    `<rect width="100%" height="100%" fill="#fff"/>${parts.join('')}</svg>`;
  return { svg, width: WIDTH, height };
}
