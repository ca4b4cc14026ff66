/**
 * The model-based suite's run (issue 54): random sequences of lifecycle commands, with faults
 * (processor refusing or hanging, storage down, worker restarted), against the real stack, every
 * invariant checked after each command and at the end (test/model/run.ts), the bordereaux once
 * the run is over. The short run (`npm test`) draws MODEL_RUNS sequences (default 50) of a
 * purchase and at most 8 commands, stopping after 150 s; the long one (`npm run test:model --
 * --long`) 200 of at most 12 and writes bench/results/model.md (its figures, faults and failure,
 * if any). A failure prints fast-check's report (seed, path, shrunk sequence) and the command
 * that replays it (`npm run test:model -- --seed N --path P --replay-path R`).
 */
import fc from 'fast-check';
import { checkBordereau } from './invariants';
import { startModelStack, type ModelStack } from './real';
import { figuresLine, runModel, seedFromEnv, writeReport, type ModelRunOptions, type RunOutcome } from './run';

const long = process.env.MODEL_LONG === '1';
/** The short run stops drawing sequences after this long (ms), so that it fits its budget on a slow machine; MODEL_TIME_LIMIT_S changes it. */
const timeLimitMs = Number(process.env.MODEL_TIME_LIMIT_S ?? (long ? 6 * 3600 : 150)) * 1000;
jest.setTimeout(timeLimitMs + 300_000);

let stack: ModelStack;
beforeAll(async () => {
  stack = await startModelStack();
});
afterAll(async () => {
  await stack?.close();
});

test('any sequence of purchases (one-time, bundles, subscriptions and renewals), holders, cancellations, moves, added days, dashboard refunds, withdrawals and disputes, with faults, keeps money, cover and answers consistent', async () => {
  const o: ModelRunOptions = {
    seed: seedFromEnv(),
    ...(process.env.MODEL_PATH ? { path: process.env.MODEL_PATH } : {}),
    ...(process.env.MODEL_REPLAY_PATH ? { replayPath: process.env.MODEL_REPLAY_PATH } : {}),
    numRuns: Number(process.env.MODEL_RUNS ?? (long ? 200 : 50)),
    maxCommands: long ? 12 : 8,
    faults: true,
    timeLimitMs,
  };
  const startedAt = new Date();
  const details = await runModel(stack, o);
  const outcome: RunOutcome = { interrupted: details.interrupted, failure: null, bordereau: null };
  if (details.failed) {
    const report = fc.defaultReportMessage(details) ?? 'failed';
    const replayPath = /replayPath="([^"]+)"/.exec(report)?.[1];
    const path = details.counterexamplePath ? ` --path "${details.counterexamplePath}"` : '';
    outcome.failure = `${report}\nReplay: npm run test:model -- --seed ${o.seed}${path}${replayPath ? ` --replay-path "${replayPath}"` : ''}`;
  } else {
    // Reports, once the run is over: the bordereau of every sequence's ledger.
    try {
      outcome.bordereau = await checkBordereau(stack);
      console.log(
        `bordereaux: ${outcome.bordereau.rows} rows adding up to ${outcome.bordereau.totalMinor} (minor units), the ledger of ${stack.models.flatMap((m) => m.ledger).length} movements`,
      );
    } catch (err) {
      outcome.failure = `${String(err)}\n(the bordereau check at the end of seed ${o.seed}'s run)`;
    }
  }
  console.log(figuresLine(o.seed, stack.figures, (Date.now() - startedAt.getTime()) / 1000, details.interrupted));
  if (long) console.log(`report: ${writeReport(o, stack.figures, startedAt, outcome)}`);
  if (outcome.failure) throw new Error(outcome.failure);
});
