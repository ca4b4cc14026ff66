/**
 * `npm run test:resilience` (issue 8): the resilience suite, run after `npm test` by `.ci/run`.
 * Same transform and global setup as jest.config.js (the fuzz and security suites use the shared
 * test stack; the fault suite boots a stack of its own on other ports), one file at a time so
 * the fault load is not competing with the fuzz pass for the machine's two cores.
 */
import base from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  // *.resilience.ts: fuzz and security; *.fault-suite.ts: the fault suite with its own stack.
  testMatch: ['<rootDir>/test/resilience/**/*.resilience.ts', '<rootDir>/test/resilience/**/*.fault-suite.ts'],
  maxWorkers: 1,
  testTimeout: 600000,
};
