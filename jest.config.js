/**
 * Jest runs TypeScript through SWC (type-checking is `npm run typecheck`).
 * globalSetup brings up (or reuses) the real servers the suites talk to: PostgreSQL
 * (database insurance_test, migrated), the Temporal dev server, stripe-mock and fake-gcs-server.
 */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
    // The portal's OpenID Connect client (openid-client and the two libraries under it) ships
    // only ES modules; Jest's CommonJS loader gets them compiled to CommonJS (Node itself
    // require()s them natively, as the built service and tsx do).
    '^.+/node_modules/(openid-client|oauth4webapi|jose)/.+\\.js$': [
      '@swc/jest',
      { jsc: { target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(openid-client|oauth4webapi|jose)/)'],
  // Longest suites first, also on a fresh machine without jest's cache (test/suite-durations.json).
  testSequencer: '<rootDir>/test/helpers/sequencer.cjs',
  globalSetup: '<rootDir>/test/helpers/global-setup.mjs',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.mjs',
  testTimeout: 60000,
  maxWorkers: 2,
  // In CI only: an open handle still unexplained (storage suite run alone; see the closing note)
  // must never hang the run. Locally Jest keeps reporting leaks so they get fixed.
  forceExit: process.env.CI === 'true',
};
