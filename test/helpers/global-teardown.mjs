/**
 * Jest globalTeardown: drops the run's database, deletes its Temporal namespace, and stops the servers
 * global-setup.mjs started (servers that were already running when the tests began are left
 * alone). Waits until they have exited.
 */
import { execFile } from 'node:child_process';

export default async function globalTeardown() {
  const stack = globalThis.__INSURANCE_TEST_STACK__ ?? (await import('../../scripts/stack.mjs'));
  // The run's own Temporal namespace (see global-setup.mjs) goes with it, so they do not pile up.
  const ns = globalThis.__INSURANCE_TEST_NAMESPACE__;
  if (ns) {
    await new Promise((resolve) =>
      execFile(ns.bin, ['operator', 'namespace', 'delete', '--namespace', ns.namespace, '--yes', '--address', ns.address], { timeout: 15_000 }, () => resolve()),
    );
  }
  const db = globalThis.__INSURANCE_TEST_DATABASE__;
  if (db) await stack.dropTestDatabases({ ...db, dropSelf: true, log: () => {} }).catch(() => {});
  await stack.stopAll({ log: (line) => process.stderr.write(`${line}\n`) });
}
