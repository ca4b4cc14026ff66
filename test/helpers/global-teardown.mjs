/**
 * Jest globalTeardown: drops the run's database, storage bucket and workflow bundle, deletes its Temporal namespace, and stops the servers
 * global-setup.mjs started (servers that were already running when the tests began are left
 * alone). Waits until they have exited.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';

export default async function globalTeardown() {
  const stack = globalThis.__INSURANCE_TEST_STACK__ ?? (await import('../../scripts/stack.mjs'));
  // The run's own Temporal namespace (see global-setup.mjs) goes with it, so they do not pile up.
  const ns = globalThis.__INSURANCE_TEST_NAMESPACE__;
  if (ns) {
    await new Promise((resolve) =>
      execFile(
        ns.bin,
        ['operator', 'namespace', 'delete', '--namespace', ns.namespace, '--yes', '--address', ns.address],
        { timeout: 15_000 },
        () => resolve(),
      ),
    );
  }
  const bucket = globalThis.__INSURANCE_TEST_BUCKET__;
  if (bucket) await stack.deleteFakeGcsBucket({ ...bucket, log: (line) => process.stderr.write(`${line}\n`) });
  const db = globalThis.__INSURANCE_TEST_DATABASE__;
  if (db) await stack.dropTestDatabases({ ...db, dropSelf: true, log: () => {} }).catch(() => {});
  if (globalThis.__INSURANCE_TEST_WORKFLOW_BUNDLE__) fs.rmSync(globalThis.__INSURANCE_TEST_WORKFLOW_BUNDLE__, { force: true });
  await stack.stopAll({ log: (line) => process.stderr.write(`${line}\n`) });
}
