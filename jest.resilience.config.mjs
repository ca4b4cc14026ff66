/**
 * `npm run test:resilience` (issue 8): the resilience suite, run after `npm test` by `.ci/run`.
 * Same transform and global setup as jest.config.js (the fuzz and security suites use the shared
 * test stack). Every file runs at the same time: each fault suite boots a stack of its own on
 * its own ports and waits for its turn (test/resilience/lib/schedule.ts) in a directory named by
 * RESILIENCE_T0, set here once so the workers (forked after this runs) share it. Every change
 * runs the shortened faults (30 s loads, 2-minute processor outages, 20 cancellations in each);
 * RESILIENCE_FULL=1 runs the full ones (60 s loads, 10-minute outages, 60 cancellations), weekly
 * or by hand: the same faults and the same checks (test/resilience/lib/scope.ts).
 * It also times the machine once (RESILIENCE_PROBE_MS, test/resilience/lib/machine-probe.mjs), so
 * that a slower machine is offered a proportionally lower load; the figure is printed with the
 * run's scope, so that the run's duration reads against it.
 */
import base from './jest.config.js';
import { probeMachineMs } from './test/resilience/lib/machine-probe.mjs';

process.env.RESILIENCE_T0 ||= String(Date.now());
// How fast this machine is, taken once before any stack boots: the fault suites' load rate
// follows it (test/resilience/lib/machine.ts).
process.env.RESILIENCE_PROBE_MS ||= String(probeMachineMs());
process.stdout.write(
  `resilience: ${process.env.RESILIENCE_FULL === '1' ? 'full run (RESILIENCE_FULL=1)' : 'shortened run (RESILIENCE_FULL=1 runs the full one)'}; ` +
    `machine probe ${Number(process.env.RESILIENCE_PROBE_MS).toFixed(0)} ms (200 ms on the reference machines)\n`,
);

/** @type {import('jest').Config} */
export default {
  ...base,
  // *.resilience.ts: fuzz and security; *.fault-suite.ts: the fault suite with its own stack.
  testMatch: ['<rootDir>/test/resilience/**/*.resilience.ts', '<rootDir>/test/resilience/**/*.fault-suite.ts'],
  // fuzz, security and the four fault suites, all at once
  maxWorkers: 6,
  testTimeout: 600000,
};
