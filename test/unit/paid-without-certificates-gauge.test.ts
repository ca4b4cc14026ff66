/**
 * `watchPaidWithoutCertificates`: each scrape of the worker's registry reads the count afresh; a
 * count that fails (the database is down) leaves no `purchases_paid_without_certificates` series
 * in that scrape, so the figure goes absent (PaidWithoutCertificatesUnknown) instead of repeating
 * the last value; the next good count brings it back.
 */
import { createWorkerMetrics, watchPaidWithoutCertificates } from '../../src/metrics/registry';

test('when the count fails after a good one, then the scrape has no series for it; a later good count brings the series back', async () => {
  const metrics = createWorkerMetrics();
  let answer: Record<'live' | 'test', number> | Error = { live: 2, test: 5 };
  const asked: number[] = [];
  watchPaidWithoutCertificates(metrics, async (olderThanSeconds) => {
    asked.push(olderThanSeconds);
    if (answer instanceof Error) throw answer;
    return answer;
  });
  const lines = async () =>
    (await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('purchases_paid_without_certificates{'));

  expect(await lines()).toEqual([
    'purchases_paid_without_certificates{mode="live"} 2',
    'purchases_paid_without_certificates{mode="test"} 5',
  ]);
  answer = new Error('connect ECONNREFUSED 127.0.0.1:5432');
  expect(await lines()).toEqual([]);
  answer = { live: 0, test: 1 };
  expect(await lines()).toEqual([
    'purchases_paid_without_certificates{mode="live"} 0',
    'purchases_paid_without_certificates{mode="test"} 1',
  ]);
  expect(asked).toEqual([600, 600, 600]);
});
