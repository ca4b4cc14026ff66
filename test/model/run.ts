/**
 * Runs the model-based suite (issue 54): random command sequences (test/model/commands.ts) against
 * the real stack, seeded, every invariant checked after each command and at the end of each
 * sequence (test/model/invariants.ts). A failure's report is fast-check's: the seed, the replay
 * path and the shrunk command sequence, with the invariant that broke; `npm run test:model --
 * --seed N --path P [--replay-path R]` replays it (scripts/test-model.mjs sets MODEL_SEED,
 * MODEL_PATH and MODEL_REPLAY_PATH).
 *
 * Figures counted per run (sequences, steps, faults injected, commands by name) are printed and,
 * for the long run, written as a report like the benches' (bench/results/model.json and .md).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { commandArbitraries, firstPurchaseArbitrary } from './commands';
import { checkAll, checkEvents } from './invariants';
import { emptyModel, type PolicyModel } from './policy-model';
import type { ModelStack, RunFigures } from './real';

export interface ModelRunOptions {
  /** fast-check's seed (printed; a failure names it too). */
  seed: number;
  /** A failure's replay path (fast-check's `path`), with its seed. */
  path?: string;
  numRuns: number;
  /** Commands per sequence at most. */
  maxCommands: number;
  /** Whether the fault commands (processor down, storage down, worker restarted) are drawn. */
  faults: boolean;
  /** Stop drawing new sequences after this many ms (fast-check's interruptAfterTimeLimit; not a failure); none when absent. */
  timeLimitMs?: number;
  /** fast-check's `replayPath` of a commands counterexample (its report prints it as `/*replayPath="…"*\/`). */
  replayPath?: string;
}

/** The seed of this run: MODEL_SEED when set (a replay), else a new one. */
export function seedFromEnv(): number {
  const given = process.env.MODEL_SEED;
  return given ? Number(given) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
}

/**
 * The property: a first purchase (one in six a subscription), then any sequence of commands, keeps
 * every invariant after each step and at the end. The first purchase is drawn apart so that no sequence is spent on commands
 * that have no purchase to act on; fast-check prints it first in a counterexample.
 */
export function modelProperty(stack: ModelStack, o: Pick<ModelRunOptions, 'maxCommands' | 'faults' | 'replayPath'>) {
  const commands = fc.commands(commandArbitraries(o.faults), {
    maxCommands: o.maxCommands,
    // Sequences as long as maxCommands allows, not fast-check's small default: the interactions are the point.
    size: 'max',
    ...(o.replayPath ? { replayPath: o.replayPath } : {}),
  });
  return fc.asyncProperty(firstPurchaseArbitrary(), commands, (first, cmds) => {
    const sequence = (async () => {
      let model: PolicyModel = emptyModel();
      stack.figures.sequences += 1;
      await fc.asyncModelRun(async () => {
        model = emptyModel();
        stack.models.push(model);
        await first.run(model, stack);
        return { model, real: stack };
      }, cmds);
      await checkAll(stack, model);
      await checkEvents(stack, model);
    })();
    stack.inflight = sequence.then(
      () => undefined,
      () => undefined,
    );
    return sequence;
  });
}

/** Runs the property with `o` (fast-check's check: never throws for a broken invariant); answers fast-check's details once no sequence is in flight. */
export async function runModel(stack: ModelStack, o: ModelRunOptions) {
  const details = await fc.check(modelProperty(stack, o), {
    seed: o.seed,
    ...(o.path ? { path: o.path } : {}),
    numRuns: o.numRuns,
    ...(o.timeLimitMs ? { interruptAfterTimeLimit: o.timeLimitMs, markInterruptAsFailure: false } : {}),
    // The broken invariant's message in the report (fast-check leaves it out by default).
    includeErrorInReport: true,
    // Each sequence runs against real servers: no time limit per run here, jest's covers the whole.
  });
  // Past the time limit fast-check answers without waiting for the sequence in flight: let it end
  // its command (it starts no other), so that nothing runs on after the stack closes.
  stack.stopping = true;
  await stack.inflight;
  return details;
}

/** The figures as one line: seed, sequences, steps, faults, and each command's count. */
export function figuresLine(seed: number, f: RunFigures, seconds: number, interrupted = false): string {
  const byCommand = Object.entries(f.byCommand)
    .sort()
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const cut = interrupted ? ', stopped at its time limit' : '';
  return `model-based run: seed ${seed}, ${f.sequences} sequences, ${f.steps} steps, ${f.faults} faults injected, ${seconds.toFixed(0)} s${cut} (${byCommand})`;
}

/** What the run ended with, for its report. */
export interface RunOutcome {
  /** fast-check stopped drawing at the time limit (not a failure). */
  interrupted: boolean;
  /** The broken invariant with fast-check's report (seed, path, shrunk sequence) and the replay command; null when none broke. */
  failure: string | null;
  /** The end-of-run bordereau check's rows and sum (minor units); null when it did not run (a failure before it). */
  bordereau: { rows: number; totalMinor: number } | null;
}

/**
 * Writes the long run's report (bench/results/model.json and model.md, git-ignored like the
 * benches'): seed, sequences, steps, faults injected (by kind), failures (0 or 1: fast-check stops
 * at the first, shrunk, with its replay command), the commands run, the bordereau check and the
 * machine. Answers the .md file's path.
 */
export function writeReport(o: ModelRunOptions, f: RunFigures, startedAt: Date, outcome: RunOutcome): string {
  const { failure } = outcome;
  const dir = path.join(__dirname, '..', '..', 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const durationSeconds = Math.round((Date.now() - startedAt.getTime()) / 100) / 10;
  const report = {
    bench: 'model',
    startedAt: startedAt.toISOString(),
    durationSeconds,
    options: o,
    figures: { ...f, failures: failure ? 1 : 0 },
    interrupted: outcome.interrupted,
    bordereau: outcome.bordereau,
    failure,
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model.trim(), node: process.version, loadAverage: os.loadavg() },
  };
  fs.writeFileSync(path.join(dir, 'model.json'), `${JSON.stringify(report, null, 2)}\n`);
  const md = [
    `# Model-based run (issue 54), ${report.startedAt}`,
    '',
    `| seed | sequences | steps | faults injected | failures | seconds |`,
    `| ---: | ---: | ---: | ---: | ---: | ---: |`,
    `| ${o.seed} | ${f.sequences} | ${f.steps} | ${f.faults} | ${failure ? 1 : 0} | ${durationSeconds} |`,
    '',
    '| command | runs | of which a fault was injected |',
    '| --- | ---: | ---: |',
    ...Object.entries(f.byCommand)
      .sort()
      .map(([k, v]) => `| ${k} | ${v} | ${f.faultsByCommand[k] ?? 0} |`),
    '',
    `numRuns ${o.numRuns}, at most ${o.maxCommands} commands a sequence, faults ${o.faults ? 'on' : 'off'}${outcome.interrupted ? `, stopped drawing at its time limit (${Math.round((o.timeLimitMs ?? 0) / 1000)} s)` : ''}; ${report.machine.cpus} × ${report.machine.cpuModel}, Node ${report.machine.node}, load average ${report.machine.loadAverage.map((l) => l.toFixed(1)).join(' ')}.`,
    '',
    outcome.bordereau
      ? `Bordereaux of the run's months: ${outcome.bordereau.rows} rows adding up to ${outcome.bordereau.totalMinor} minor units, the ledger of every sequence.`
      : 'Bordereaux not checked (a failure came first).',
    '',
    failure ? `## Failure\n\n\`\`\`\n${failure}\n\`\`\`` : 'No invariant broken.',
    '',
  ].join('\n');
  const file = path.join(dir, 'model.md');
  fs.writeFileSync(file, md);
  return file;
}
