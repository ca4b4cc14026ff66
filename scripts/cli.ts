/**
 * What the operator command lines (`npm run keys`, `npm run ops`) share: the usage error they
 * report in one line, the positive-integer argument, and the strict parse of `argv` with
 * `--json` and `--help` that prints the usage instead of running a command.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A command line that cannot run as given: its message is printed as is, the exit code is 1. */
export class UsageError extends Error {}

/**
 * `value` as an integer from 1 to 2^31-1 (a database id). Throws a UsageError naming `what`
 * when it is absent or anything else.
 */
export function positiveInt(value: string | undefined, what: string): number {
  if (value === undefined) throw new UsageError(`${what} is required`);
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 2_147_483_647)
    throw new UsageError(`${what} must be a positive integer, got "${value}"`);
  return Number(value);
}

type CliOptions = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses `argv` strictly with `options` plus `--json` and `--help` (both false by default),
 * positionals allowed. With `--help`, or without a command (no positional), prints `usage` and
 * answers `{ exit }`: 0 for `--help`, else 1. Throws node's ERR_PARSE_ARGS_* error on an unknown
 * option or a missing value.
 */
export function parseCommandLine<O extends CliOptions>(argv: string[], options: O, usage: string) {
  const parsed = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { ...options, json: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } } as const,
  });
  const help = (parsed.values as { help?: boolean }).help === true;
  if (help || !parsed.positionals[0]) {
    console.log(usage);
    return { exit: help ? 0 : 1 } as const;
  }
  return parsed;
}
