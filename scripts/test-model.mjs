#!/usr/bin/env node
/**
 * `npm run test:model -- [--seed N] [--path P] [--replay-path R] [--runs R] [--time-limit S] [--long]`: runs the model-based suite
 * (test/model/model.test.ts, issue 54) under jest with the real servers. `--seed N --path P
 * --replay-path R` replays a failure as its report printed it; `--long` draws 200 sequences of up to 12 commands
 * and writes bench/results/model.md and model.json (its report: seed, sequences, steps, faults
 * injected by kind, failures, the bordereau check, the machine); `--runs R` sets how many
 * sequences; `--time-limit S` stops drawing new ones after S seconds (MODEL_TIME_LIMIT_S; the short
 * run's default 150, the long run's 6 hours).
 */
import { spawnSync } from 'node:child_process';

const args = process.argv.slice(2);
const env = { ...process.env };
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  const value = () => {
    const v = args[++i];
    if (v === undefined) throw new Error(`${a} needs a value`);
    return v;
  };
  if (a === '--seed') env.MODEL_SEED = value();
  else if (a === '--path') env.MODEL_PATH = value();
  else if (a === '--replay-path') env.MODEL_REPLAY_PATH = value();
  else if (a === '--runs') env.MODEL_RUNS = value();
  else if (a === '--time-limit') env.MODEL_TIME_LIMIT_S = value();
  else if (a === '--long') env.MODEL_LONG = '1';
  else {
    console.error(
      `unknown argument ${a}\nusage: npm run test:model -- [--seed N] [--path P] [--replay-path R] [--runs R] [--time-limit S] [--long]`,
    );
    process.exit(2);
  }
}
const jest = spawnSync('npx', ['jest', 'test/model/model.test.ts'], { stdio: 'inherit', env });
process.exit(jest.status ?? 1);
