/**
 * Child process of the bordereaux bench (scripts/bench/bordereaux.ts): generates one bordereau's
 * files with the worker's own activity (CSV and XLSX into the bucket, the ledger through a
 * cursor) in a fresh process, so its peak RSS is this generation's alone, and prints one JSON
 * line: `{ "ms": <wall time>, "rows": <rows>, "peakRssMiB": <VmHWM> }`.
 *
 * Usage: `tsx scripts/bench/bordereau-generate.ts <bordereau id>` with DATABASE_URL,
 * STORAGE_API_ENDPOINT and STORAGE_BUCKET of the bench. The agency event it would send is not
 * sent (the bench has no webhook endpoints; publishing is measured elsewhere).
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadConfigOrExit } from '../../src/config';
import { createDb } from '../../src/db/knex';
import { createPayproc } from '../../src/payproc/client';
import { createReportActivities } from '../../activities/reports';

async function main(): Promise<void> {
  const id = Number(process.argv[2]);
  if (!Number.isInteger(id) || id < 1) throw new Error('usage: bordereau-generate.ts <bordereau id>');
  const config = loadConfigOrExit();
  const db = createDb(config);
  try {
    const activities = createReportActivities({
      db,
      payproc: createPayproc(config),
      config,
      events: { reportReady: async () => undefined },
      startBordereau: async () => undefined,
    });
    const t0 = performance.now();
    const { rows } = await activities.generateBordereau({ bordereauId: id });
    const ms = performance.now() - t0;
    const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    process.stdout.write(`${JSON.stringify({ ms, rows, peakRssMiB: hwm ? Number(hwm[1]) / 1024 : null })}\n`);
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
