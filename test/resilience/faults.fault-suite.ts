/**
 * Issue 8, resilience suite: faults under a steady load of purchases, on the stack of `npm run dev`'s
 * shape (the Temporal dev server with a SQLite file, one API and one worker process; the
 * machinery is test/resilience/lib/fault-suite.ts).
 *
 * Two faults outlast the load: the processor refusing connections, and hanging (connections
 * accepted, never answered, through the stack's processor gate), for PROCESSOR_OUTAGE_MS each.
 * Every other purchase's webhook is held back until the outage ends, so payments are reported
 * both during it and after it; afterwards no purchase of the run may be `failed` and none paid
 * may lack a certificate, a PDF or a zip.
 */
import { PROCESSOR_OUTAGE_MS, describeFaultSuite, sleep, type Fault } from './lib/fault-suite';

const OUTAGE_MS = 30_000;
const outageWords = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} minutes` : `${(ms / 1000).toFixed(0)} s`);

const FAULTS: Fault[] = [
  {
    name: 'the worker is killed (SIGKILL) and restarted 5 s later',
    inject: async (s) => {
      await s.worker.kill();
      await sleep(5000);
      await s.worker.start();
    },
  },
  {
    name: 'PostgreSQL restarts (fast shutdown, down 5 s)',
    inject: async (s) => {
      await s.postgres.stop();
      await sleep(5000);
      await s.postgres.start();
    },
  },
  {
    name: 'stripe-mock is stopped for 30 s',
    inject: async (s) => {
      await s.stripeMock.stop();
      await sleep(OUTAGE_MS);
      await s.stripeMock.start();
    },
  },
  {
    name: 'fake-gcs-server is stopped for 30 s',
    inject: async (s) => {
      await s.fakeGcs.stop();
      await sleep(OUTAGE_MS);
      await s.fakeGcs.start();
    },
  },
  {
    name: 'the Temporal dev server restarts (same SQLite file)',
    inject: async (s) => {
      await s.temporal.stop();
      await s.temporal.start();
    },
  },
  {
    name: `the processor refuses connections for ${outageWords(PROCESSOR_OUTAGE_MS)} (stripe-mock stopped)`,
    long: true,
    inject: async (s) => {
      await s.stripeMock.stop();
      await sleep(PROCESSOR_OUTAGE_MS);
      await s.stripeMock.start();
    },
  },
  {
    name: `the processor hangs for ${outageWords(PROCESSOR_OUTAGE_MS)} (connections accepted, never answered)`,
    long: true,
    inject: async (s) => {
      const heldBefore = s.processorGate.held;
      s.processorGate.hang();
      try {
        await sleep(PROCESSOR_OUTAGE_MS);
      } finally {
        s.processorGate.open();
      }
      if (s.processorGate.held === heldBefore) throw new Error('no processor connection was held during the hang: the gate is not in the path');
    },
  },
];

describeFaultSuite({ title: 'Resilience: faults under load', shape: { temporal: 'dev', workers: 1 }, faults: FAULTS, artifact: 'resilience-faults' });
