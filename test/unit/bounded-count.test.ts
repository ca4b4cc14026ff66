/**
 * `boundedCount`, the database counts behind the worker's scrape-time gauges: a scrape never
 * waits longer than `waitMs` for a count (a slow database must not fail the whole scrape and read
 * as "no worker is up"); a late count's scrape reports the last good count while it is fresh
 * enough, and nothing once it is too old or after a failed count.
 */
import { boundedCount, createWorkerMetrics, watchPaidWithoutCertificates } from '../../src/metrics/registry';
import { eventually } from '../../scripts/harness/api';

/** A count the test answers by hand. */
function manualCount() {
  const pending: Array<{ resolve: (n: number) => void; reject: (e: Error) => void }> = [];
  let calls = 0;
  const count = () => {
    calls++;
    return new Promise<number>((resolve, reject) => pending.push({ resolve, reject }));
  };
  return { count, pending, calls: () => calls };
}

/** Starts a scrape with `read` and answers the count it starts with `n`; the scrape's answer. */
function scrapeAnswered(read: () => Promise<number | null>, m: ReturnType<typeof manualCount>, n: number) {
  const scrape = read();
  m.pending.shift()!.resolve(n);
  return scrape;
}

test('when the count answers within the wait, then the scrape reports it', async () => {
  const m = manualCount();
  const read = boundedCount(m.count, { waitMs: 1000, maxAgeMs: 60_000 });
  expect(await scrapeAnswered(read, m, 7)).toBe(7);
});

test('when a count is late, then the scrape answers after the wait with the last good count, and one count runs at a time', async () => {
  const m = manualCount();
  const read = boundedCount(m.count, { waitMs: 30, maxAgeMs: 60_000 });
  expect(await scrapeAnswered(read, m, 3)).toBe(3);

  const started = Date.now();
  expect(await read()).toBe(3); // the second count hangs: the scrape still answers, with the last count
  expect(Date.now() - started).toBeLessThan(1000);
  expect(await read()).toBe(3); // still running: no second count started beside it
  expect(m.calls()).toBe(2);

  m.pending.shift()!.resolve(4);
  await new Promise((r) => setImmediate(r));
  expect(await scrapeAnswered(read, m, 5)).toBe(5);
});

test('when the last good count is older than maxAgeMs and the new one is late, then nothing is reported', async () => {
  const m = manualCount();
  const read = boundedCount(m.count, { waitMs: 20, maxAgeMs: 50 });
  expect(await scrapeAnswered(read, m, 9)).toBe(9);
  const countedBy = Date.now(); // the count was taken at or before this
  await eventually(async () => Date.now() - countedBy > 50, 2_000); // the last good count is now older than maxAgeMs
  expect(await read()).toBeNull();
});

test('when a count fails, then nothing is reported until a count succeeds', async () => {
  const m = manualCount();
  const read = boundedCount(m.count, { waitMs: 1000 });
  expect(await scrapeAnswered(read, m, 2)).toBe(2);
  const failed = read();
  m.pending.shift()!.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
  expect(await failed).toBeNull();
});

test('when the worker gauge’s count hangs, then the whole scrape still answers within the wait, without that series', async () => {
  const metrics = createWorkerMetrics();
  watchPaidWithoutCertificates(metrics, () => new Promise(() => {}), { waitMs: 50 });
  const started = Date.now();
  const text = await metrics.registry.metrics();
  expect(Date.now() - started).toBeLessThan(1000);
  expect(text).toContain('certificates_rendered_total');
  expect(text.split('\n').filter((l) => l.startsWith('purchases_paid_without_certificates{'))).toEqual([]);
});
