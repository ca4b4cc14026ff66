#!/usr/bin/env node
/**
 * Writes test/suite-durations.json, the seconds each test suite took on this machine's last
 * full run, from jest's own cache of them. test/helpers/sequencer.cjs starts the longest suites
 * first with it on a machine that has no cache of its own (a fresh CI machine), so that no
 * worker is left alone with a long suite at the end of `npm test`.
 *
 * Usage, after a full `npm test` (or `bash .ci/run`) in this checkout or in a clone of it:
 *   node scripts/suite-durations.mjs [--from /path/of/the/clone/that/ran]
 * Suites of the clone are written by their path from its root; suites that no longer exist are
 * left out, and suites jest's cache does not hold keep the figure the file had. Durations are whole seconds (at least 1). Exits 1 when jest's cache holds no suite of
 * the checkout (no full run yet).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fromIndex = process.argv.indexOf('--from');
const ranIn = fromIndex > 0 ? path.resolve(process.argv[fromIndex + 1]) : root;

const config = JSON.parse(execFileSync(path.join(root, 'node_modules', '.bin', 'jest'), ['--showConfig'], { cwd: root, encoding: 'utf8' }));
const cacheDirectory = config.configs[0].cacheDirectory;
const out = path.join(root, 'test', 'suite-durations.json');
// Suites the cache does not hold (not run on this machine) keep the figure the file had.
const durations = fs.existsSync(out) ? JSON.parse(fs.readFileSync(out, 'utf8')) : {};
for (const rel of Object.keys(durations)) if (!fs.existsSync(path.join(root, rel))) delete durations[rel];
let fromCache = 0;
for (const name of fs.existsSync(cacheDirectory) ? fs.readdirSync(cacheDirectory) : []) {
  if (!name.startsWith('perf-cache-')) continue;
  let cache;
  try {
    cache = JSON.parse(fs.readFileSync(path.join(cacheDirectory, name), 'utf8'));
  } catch {
    continue;
  }
  for (const [file, [, ms]] of Object.entries(cache)) {
    const rel = path.relative(ranIn, file);
    if (rel.startsWith('..') || !rel.startsWith('test' + path.sep)) continue;
    if (!fs.existsSync(path.join(root, rel))) continue;
    durations[rel.split(path.sep).join('/')] = Math.max(1, Math.round(ms / 1000));
    fromCache += 1;
  }
}
const entries = Object.entries(durations).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
if (!fromCache) {
  process.stderr.write(`no suite of ${ranIn} in jest's cache (${cacheDirectory}): run the tests first\n`);
  process.exit(1);
}
fs.writeFileSync(out, `${JSON.stringify(Object.fromEntries(entries), null, 2)}\n`);
process.stdout.write(
  `${fromCache} from jest's cache, ${entries.length} suites in the file, ${entries.reduce((s, [, v]) => s + v, 0)} s in all, written to ${path.relative(root, out)}\n`,
);
