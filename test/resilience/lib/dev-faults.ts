/**
 * The faults of the dev-shape fault suites (the Temporal dev server with a SQLite file, one API
 * and one worker process), shared by the three files that run them at the same time on stacks of
 * their own: faults.fault-suite.ts (the short faults, one after another),
 * faults-processor-refused.fault-suite.ts and faults-processor-hang.fault-suite.ts (one long
 * processor outage each, with cancellations made during it).
 */
import { CANCELLATIONS, PROCESSOR_OUTAGE_MS, sleep, type Fault } from './fault-suite';

const OUTAGE_MS = 30_000;
const outageWords = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} minutes` : `${(ms / 1000).toFixed(0)} s`);

const FAULTS: Fault[] = [
  {
    name: 'the worker is killed (SIGKILL) and restarted 5 s later',
    alerts: [{ alertname: 'NoWorkerUp' }],
    inject: async (s) => {
      await s.worker.kill();
      await sleep(5000);
      await s.worker.start();
    },
  },
  {
    name: 'PostgreSQL restarts (fast shutdown, down 5 s)',
    alerts: [{ alertname: 'PostgresDown' }],
    inject: async (s) => {
      await s.postgres.stop();
      await sleep(5000);
      await s.postgres.start();
    },
  },
  {
    name: 'stripe-mock is stopped for 30 s',
    alerts: [{ alertname: 'DependencyErrorsRetrying', labels: { dependency: 'processor' } }],
    inject: async (s) => {
      await s.stripeMock.stop();
      await sleep(OUTAGE_MS);
      await s.stripeMock.start();
    },
  },
  {
    name: 'fake-gcs-server is stopped for 30 s',
    alerts: [{ alertname: 'DependencyErrorsRetrying', labels: { dependency: 'storage' } }],
    inject: async (s) => {
      await s.fakeGcs.stop();
      await sleep(OUTAGE_MS);
      await s.fakeGcs.start();
    },
  },
  {
    name: 'the Temporal dev server restarts (same SQLite file)',
    // Down for about a second: too short to alert on (TemporalDown waits 2 minutes), and no page.
    alerts: [],
    inject: async (s) => {
      await s.temporal.stop();
      await s.temporal.start();
    },
  },
  {
    name: `the processor refuses connections for ${outageWords(PROCESSOR_OUTAGE_MS)} (stripe-mock stopped)`,
    long: true,
    cancellations: CANCELLATIONS,
    alerts: [{ alertname: 'DependencyErrorsRetrying', labels: { dependency: 'processor' } }, { alertname: 'TestMode5xxRatio' }],
    inject: async (s) => {
      await s.stripeMock.stop();
      await sleep(PROCESSOR_OUTAGE_MS);
      await s.stripeMock.start();
    },
  },
  {
    name: `the processor hangs for ${outageWords(PROCESSOR_OUTAGE_MS)} (connections accepted, never answered)`,
    long: true,
    cancellations: CANCELLATIONS,
    alerts: [{ alertname: 'DependencyErrorsRetrying', labels: { dependency: 'processor' } }, { alertname: 'TestMode5xxRatio' }],
    inject: async (s) => {
      const heldBefore = s.processorGate.held;
      s.processorGate.hang();
      try {
        await sleep(PROCESSOR_OUTAGE_MS);
      } finally {
        s.processorGate.open();
      }
      if (s.processorGate.held === heldBefore)
        throw new Error('no processor connection was held during the hang: the gate is not in the path');
    },
  },
];

/** The faults that end within the load (or keep it on until they end), in the order they run. */
export const SHORT_FAULTS = FAULTS.filter((f) => !f.long);
/** The processor refusing connections for PROCESSOR_OUTAGE_MS. */
export const PROCESSOR_REFUSED = FAULTS.find((f) => f.long && /refuses connections/.test(f.name))!;
/** The processor accepting connections and never answering, for PROCESSOR_OUTAGE_MS. */
export const PROCESSOR_HANG = FAULTS.find((f) => f.long && /hangs/.test(f.name))!;
