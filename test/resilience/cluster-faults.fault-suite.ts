/**
 * Issue 16, resilience on the production shape: the Temporal cluster (temporal-server 1.30.4
 * with PostgreSQL persistence and SQL visibility) and two worker processes on both task queues,
 * under the same steady purchase load as the dev-shape suite (machinery:
 * test/resilience/lib/fault-suite.ts). Faults: one worker SIGKILLed mid-load (the other carries
 * on; the killed one's activities time out and are retried there), and a rolling restart of
 * both (SIGTERM, the worker drains, starts again, then the next). Every paid purchase must end
 * with all its certificates exactly once and every answer keep the contract. Runs beside the
 * dev-shape fault suites on a stack of its own, taking turns (lib/schedule.ts).
 */
import { untilPrometheusSees } from './lib/alerts';
import { describeFaultSuite, sleep, type Fault } from './lib/fault-suite';
import { PHASES, SLOTS } from './lib/schedule';

const FAULTS: Fault[] = [
  {
    name: 'one of two workers is killed (SIGKILL) and restarted 5 s later',
    // One worker is still up: NoWorkerUp must not even go pending.
    alerts: [],
    quiet: [{ alertname: 'NoWorkerUp' }],
    inject: async (s) => {
      await s.workers[0]!.kill();
      await sleep(5000);
      await s.workers[0]!.start();
    },
  },
  {
    name: 'both workers restart one after the other (SIGTERM and drain, start, then the next)',
    // One worker is still up: NoWorkerUp must not even go pending.
    alerts: [],
    quiet: [{ alertname: 'NoWorkerUp' }],
    // The next worker stops only once Prometheus has scraped the restarted one up and counting
    // (paid purchases without certificates): being ready is not enough, the rules read its last
    // failed scrape until the next one (up to a second later).
    inject: async (s) => {
      for (const [i, worker] of s.workers.entries()) {
        await worker.stop();
        await worker.start();
        const instance = s.workerInstances[i]!;
        await untilPrometheusSees(s.prometheusUrl, `up{job="coi-worker",instance="${instance}"} == 1`);
        await untilPrometheusSees(s.prometheusUrl, `purchases_paid_without_certificates{instance="${instance}",mode="live"}`);
      }
    },
  },
];

describeFaultSuite({
  title: 'Resilience on the cluster shape: Temporal server on PostgreSQL, two workers',
  shape: { temporal: 'cluster', workers: 2, slot: SLOTS.cluster },
  faults: FAULTS,
  artifact: 'resilience-faults-cluster',
  turn: { phase: PHASES.cluster, holds: 'suite' },
});
