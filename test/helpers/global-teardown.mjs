/**
 * Jest globalTeardown: stops the servers global-setup.mjs started (servers that were already
 * running when the tests began are left alone). Waits until they have exited.
 */
export default async function globalTeardown() {
  const stack = globalThis.__INSURANCE_TEST_STACK__ ?? (await import('../../scripts/stack.mjs'));
  await stack.stopAll({ log: (line) => process.stderr.write(`${line}\n`) });
}
