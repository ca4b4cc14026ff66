/**
 * Builds the workflow bundle a worker can load instead of bundling at start
 * (TEMPORAL_WORKFLOW_BUNDLE): `npx tsx scripts/bundle-workflows.ts FILE`. The bundle must come
 * from the same code as the worker that loads it (a bundle of other workflow code would replay
 * histories differently), so build it with the code it ships with: the test setup builds one per
 * run. Writes FILE (JavaScript, about 2 MB) and prints its size; exits 1 on a bundling error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../src/temporal/workers';

async function main(): Promise<void> {
  const out = process.argv[2];
  if (!out) throw new Error('usage: tsx scripts/bundle-workflows.ts FILE');
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  fs.mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  fs.writeFileSync(out, code);
  process.stdout.write(`workflow bundle: ${out} (${(code.length / 1e6).toFixed(2)} MB)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
