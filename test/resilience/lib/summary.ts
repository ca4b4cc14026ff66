/**
 * Counts of what a resilience pass sent and got back, rendered as Markdown tables: one row per
 * surface × kind with the number of requests and the count of each status code (0 = no answer
 * within the deadline), and one row per route with its request count. Printed to stdout (so
 * CI logs show it) and written under `var/test-artifacts/`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export class Tally {
  private readonly rows = new Map<string, Map<number, number>>();
  private readonly routes = new Map<string, Map<number, number>>();
  private readonly ms = new Map<string, number>();

  /** Records one answer of `status` for a request of `kind` to `route` on `surface`. */
  add(surface: string, kind: string, route: string, status: number, ms = 0): void {
    this.ms.set(`${surface}\t${kind}`, (this.ms.get(`${surface}\t${kind}`) ?? 0) + ms);
    this.ms.set(route, (this.ms.get(route) ?? 0) + ms);
    const bump = (m: Map<string, Map<number, number>>, k: string) => {
      const row = m.get(k) ?? new Map<number, number>();
      row.set(status, (row.get(status) ?? 0) + 1);
      m.set(k, row);
    };
    bump(this.rows, `${surface}\t${kind}`);
    bump(this.routes, route);
  }

  /** Requests sent per route key. */
  perRoute(): Map<string, number> {
    return new Map([...this.routes].map(([k, row]) => [k, [...row.values()].reduce((a, b) => a + b, 0)]));
  }

  /** Total requests and those answered with each status class. */
  totals(): { sent: number; byClass: Record<string, number> } {
    const byClass: Record<string, number> = {};
    let sent = 0;
    for (const row of this.rows.values()) {
      for (const [status, n] of row) {
        sent += n;
        const cls = status === 0 ? 'no answer' : `${Math.floor(status / 100)}xx`;
        byClass[cls] = (byClass[cls] ?? 0) + n;
      }
    }
    return { sent, byClass };
  }

  /** The Markdown report: a header (`title`, free lines), the kind table and the route table. */
  markdown(title: string, headerLines: string[]): string {
    const statuses = [...new Set([...this.rows.values()].flatMap((r) => [...r.keys()]))].sort((a, b) => a - b);
    const out = [`## ${title}`, '', ...headerLines, ''];
    out.push(`| surface | kind | sent | s | ${statuses.map(String).join(' | ')} |`);
    out.push(`|---|---|---:|---:|${statuses.map(() => '---:').join('|')}|`);
    for (const [k, row] of [...this.rows].sort(([a], [b]) => a.localeCompare(b))) {
      const [surface, kind] = k.split('\t');
      const sent = [...row.values()].reduce((a, b) => a + b, 0);
      out.push(
        `| ${surface} | ${kind} | ${sent} | ${((this.ms.get(k) ?? 0) / 1000).toFixed(1)} | ${statuses.map((s) => row.get(s) ?? '').join(' | ')} |`,
      );
    }
    const t = this.totals();
    out.push(
      `| **all** | | **${t.sent}** | | ${statuses.map((s) => [...this.rows.values()].reduce((a, r) => a + (r.get(s) ?? 0), 0)).join(' | ')} |`,
    );
    out.push('', '| route | sent | s | statuses |', '|---|---:|---:|---|');
    for (const [route, row] of [...this.routes].sort(([a], [b]) => a.localeCompare(b))) {
      const sent = [...row.values()].reduce((a, b) => a + b, 0);
      out.push(
        `| \`${route}\` | ${sent} | ${((this.ms.get(route) ?? 0) / 1000).toFixed(1)} | ${[...row]
          .sort(([a], [b]) => a - b)
          .map(([s, n]) => `${s}×${n}`)
          .join(', ')} |`,
      );
    }
    return `${out.join('\n')}\n`;
  }
}

/** Prints `markdown` to stdout (bypassing Jest's console capture) and writes it to `var/test-artifacts/<file>`. */
export function publish(file: string, markdown: string): string {
  const dir = path.resolve(__dirname, '..', '..', '..', 'var', 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  const target = path.join(dir, file);
  writeFileSync(target, markdown);
  process.stdout.write(`\n${markdown}\n(written to ${path.relative(process.cwd(), target)})\n`);
  return target;
}
