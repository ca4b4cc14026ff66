/**
 * `npm run test:resilience` (issue 8): the resilience suite, run after `npm test` by `.ci/run`.
 * Same transform and global setup as jest.config.js (the fuzz and security suites use the shared
 * test stack). Every file runs at the same time: each fault suite boots a stack of its own on
 * its own ports and waits for its turn (test/resilience/lib/schedule.ts) in a directory named by
 * RESILIENCE_T0, set here once so the workers (forked after this runs) share it. Most of a fault
 * suite's time is a 10-minute outage spent waiting; one after another they took 32 minutes.
 */
import base from './jest.config.js';

process.env.RESILIENCE_T0 ||= String(Date.now());

/** @type {import('jest').Config} */
export default {
  ...base,
  // *.resilience.ts: fuzz and security; *.fault-suite.ts: the fault suite with its own stack.
  testMatch: ['<rootDir>/test/resilience/**/*.resilience.ts', '<rootDir>/test/resilience/**/*.fault-suite.ts'],
  // fuzz, security and the four fault suites, all at once
  maxWorkers: 6,
  testTimeout: 600000,
};
