/**
 * The faults of the dev-shape fault suites (the Temporal dev server with a SQLite file, one API
 * and one worker process), shared by the three files that run them at the same time on stacks of
 * their own: faults.fault-suite.ts (the short faults, one after another),
 * faults-processor-refused.fault-suite.ts and faults-processor-hang.fault-suite.ts (one long
 * processor outage each, with cancellations made during it).
 */
import type { ExpectedAlert } from './alerts';
import type { FaultStack } from './fault-stack';
import { CANCELLATIONS, CLAIM_PAYOUTS, describeFaultSuite, PROCESSOR_OUTAGE_MS, sleep, type Fault } from './fault-suite';
import { PHASES, SLOTS } from './schedule';

const OUTAGE_MS = 30_000;
/**
 * A long processor outage pages through the workers' probe of the live processor (the stack's
 * stripe-mock serves both modes), however far apart the activities' retries are: firing within 5
 * minutes of the outage's start, checked when the outage lasts that long (the full run's 10
 * minutes; the shortened run's 2 may end before the alert's 2 minutes pending do).
 */
const PROCESSOR_DOWN: ExpectedAlert = {
  alertname: 'DependencyDown',
  labels: { dependency: 'processor', mode: 'live' },
  ...(PROCESSOR_OUTAGE_MS >= 5 * 60_000 ? { firingWithinMs: 5 * 60_000 } : {}),
};
const outageWords = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} minutes` : `${(ms / 1000).toFixed(0)} s`);

/** The processes of the stack a fault can stop and start again. */
type Stoppable = 'postgres' | 'stripeMock' | 'fakeGcs';

/** The injection of an outage of the stack's `process`: stopped, `ms` milliseconds, started again. */
const stopFor =
  (process: Stoppable, ms: number) =>
  async (s: FaultStack): Promise<void> => {
    await s[process].stop();
    await sleep(ms);
    await s[process].start();
  };

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
    inject: stopFor('postgres', 5000),
  },
  {
    name: 'stripe-mock is stopped for 30 s',
    alerts: [{ alertname: 'DependencyErrorsRetrying', labels: { dependency: 'processor' } }],
    inject: stopFor('stripeMock', OUTAGE_MS),
  },
  {
    name: 'fake-gcs-server is stopped for 30 s',
    alerts: [{ alertname: 'DependencyErrorsRetrying', labels: { dependency: 'storage' } }],
    inject: stopFor('fakeGcs', OUTAGE_MS),
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
    claimPayouts: CLAIM_PAYOUTS,
    alerts: [
      { alertname: 'DependencyErrorsRetrying', labels: { dependency: 'processor' } },
      PROCESSOR_DOWN,
      { alertname: 'TestMode5xxRatio' },
    ],
    inject: stopFor('stripeMock', PROCESSOR_OUTAGE_MS),
  },
  {
    name: `the processor hangs for ${outageWords(PROCESSOR_OUTAGE_MS)} (connections accepted, never answered)`,
    long: true,
    cancellations: CANCELLATIONS,
    alerts: [
      { alertname: 'DependencyErrorsRetrying', labels: { dependency: 'processor' } },
      PROCESSOR_DOWN,
      { alertname: 'TestMode5xxRatio' },
    ],
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

/**
 * Declares the dev-shape suite of one long processor outage (`outage`: PROCESSOR_REFUSED or
 * PROCESSOR_HANG) under the steady load, on one worker, in the slot and turn its schedule gives
 * it (lib/schedule.ts; both boot once the refused outage's phase is reached, and hand the turn on
 * when the load stops). Report: var/test-artifacts/resilience-faults-<processor-refused|processor-hang>.md.
 */
export function describeProcessorOutageSuite(outage: 'processorRefused' | 'processorHang', title: string): void {
  describeFaultSuite({
    title,
    shape: { temporal: 'dev', workers: 1, slot: SLOTS[outage] },
    faults: [outage === 'processorRefused' ? PROCESSOR_REFUSED : PROCESSOR_HANG],
    artifact: `resilience-faults-${outage === 'processorRefused' ? 'processor-refused' : 'processor-hang'}`,
    turn: { phase: PHASES[outage], bootAfter: PHASES.processorRefused, holds: 'load' },
  });
}
