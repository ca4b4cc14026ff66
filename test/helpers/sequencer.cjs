/**
 * Jest test sequencer: longest suite first, also on a fresh machine.
 *
 * Jest's own sequencer orders suites by the durations it cached on the last run (longest first,
 * so that no worker is left alone with a long suite at the end) and, without a cache, by file
 * size. A fresh CI machine has no cache, and the longest suites are small files (the model-based
 * suite, 150 s, is one of the smallest), so they started last and one worker ran alone for
 * minutes. This sequencer takes each suite's duration from, in order: jest's cache of this
 * machine's last run, `test/suite-durations.json` (seconds per suite, relative to the repository,
 * written by `node scripts/suite-durations.mjs` after a full run), or, for a suite in neither,
 * the median of the known ones. Failed suites of the last run still go first.
 *
 * Shapes: `test/suite-durations.json` is `{ "<path from the repository root>": <seconds> }`.
 */
const fs = require('node:fs');
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = path.resolve(__dirname, '..', '..');
const DURATIONS_FILE = path.join(ROOT, 'test', 'suite-durations.json');

/** Seconds per suite from the committed file, as milliseconds by absolute path ({} when absent). */
function committedDurationsMs() {
  let raw = {};
  try {
    raw = JSON.parse(fs.readFileSync(DURATIONS_FILE, 'utf8'));
  } catch {
    return new Map();
  }
  return new Map(Object.entries(raw).map(([rel, seconds]) => [path.join(ROOT, rel), Number(seconds) * 1000]));
}

class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const committed = committedDurationsMs();
    const known = [];
    for (const test of tests) {
      const cached = this.time(test);
      const duration = cached ?? committed.get(test.path);
      test.duration = duration;
      if (duration != null) known.push(duration);
    }
    known.sort((a, b) => a - b);
    const median = known.length ? known[Math.floor(known.length / 2)] : 0;
    const weight = (test) => test.duration ?? median;
    return tests.sort((a, b) => {
      const failedA = this.hasFailed(a);
      const failedB = this.hasFailed(b);
      if (failedA !== failedB) return failedA ? -1 : 1;
      return weight(b) - weight(a) || (a.path < b.path ? -1 : 1);
    });
  }
}

module.exports = LongestFirstSequencer;
