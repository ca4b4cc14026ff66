/**
 * Command-line options shared by the benchmarks: each bench declares its integer options once
 * (default, `--quick` value, bounds), and `parseBenchOptions` turns `argv` into numbers, the
 * `--only` scenario filter and the `--quick` flag; `benchUsage` prints the usage line from the
 * same declaration, so usage and parsing cannot drift apart.
 *
 * Option names are declared in camelCase and spelled in kebab-case on the command line
 * (`otherPurchases` is `--other-purchases`).
 */
import { parseArgs } from 'node:util';
import { intOption } from './lib';
import type { BenchReport } from './report';

/** One integer option: its default, its value under `--quick`, and its inclusive bounds. */
export interface IntOptionSpec {
  default: number;
  /** The value `--quick` uses when the option is not given: smaller, for a run of seconds. */
  quick: number;
  min: number;
  max: number;
  /** Placeholder in the usage line (`N` when absent), e.g. `S` for seconds, `MS`. */
  metavar?: string;
}

/** The options of one benchmark. */
export interface BenchOptionsSpec<K extends string> {
  /** The benchmark's name, as given to `npm run bench --`. */
  bench: string;
  ints: Record<K, IntOptionSpec>;
  /** Example for `--only` (comma-separated substrings of scenario names); absent when the bench has no `--only`. */
  onlyExample?: string;
  /** Rules between options; throws an `Error` with a one-line message when they are broken. */
  check?(opts: BenchOptions<K>): void;
}

/**
 * A bench's options from its name, `--only` example and rules (`head`) and its integer options
 * (`ints`), their names inferred (`BenchOptions<keyof typeof X.ints>` then types what it parses).
 */
export function benchOptions<K extends string>(
  head: NoInfer<Omit<BenchOptionsSpec<K>, 'ints'>>,
  ints: Record<K, IntOptionSpec>,
): BenchOptionsSpec<K> {
  return { ...head, ints };
}

/** A benchmark as `npm run bench` loads it (each bench's `BENCH`, see benchEntry). */
export interface BenchEntry {
  usage: string;
  /** The bench's options from `argv`; null on `--help`; throws on a bad option. */
  parse(argv: string[]): { quick: boolean } | null;
  run(argv: string[]): Promise<BenchReport>;
}

/** A bench's entry from its option declaration and run function. */
export function benchEntry<K extends string>(spec: BenchOptionsSpec<K>, run: (argv: string[]) => Promise<BenchReport>): BenchEntry {
  return { usage: benchUsage(spec), parse: (argv) => parseBenchOptions(spec, argv), run };
}

/** Parsed options: every integer option, `quick`, and `only` (empty = every scenario). */
export type BenchOptions<K extends string> = Record<K, number> & { quick: boolean; only: string[] };

const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The usage line of a benchmark, e.g. `usage: npm run bench -- catalog [--seconds S=10] … [--quick]`. */
export function benchUsage<K extends string>(spec: BenchOptionsSpec<K>): string {
  const ints = (Object.entries(spec.ints) as [string, IntOptionSpec][]).map(
    ([name, o]) => `[--${kebab(name)} ${o.metavar ?? 'N'}=${o.default}]`,
  );
  const only = spec.onlyExample === undefined ? [] : [`[--only "${spec.onlyExample}"]`];
  const quick = (Object.entries(spec.ints) as [string, IntOptionSpec][]).map(([name, o]) => `--${kebab(name)} ${o.quick}`).join(' ');
  return [
    `usage: npm run bench -- ${spec.bench} ${[...ints, ...only, '[--quick]'].join(' ')}`,
    `  --quick: smaller defaults (${quick}) for a quick check that the bench runs, not for figures`,
  ].join('\n');
}

/**
 * Parses `argv` (the arguments after the benchmark name) against `spec`. Returns null when
 * `--help`/`-h` is given (the caller prints `benchUsage`). Throws an `Error` with a one-line
 * message on an unknown option, a positional argument, an integer outside its bounds, or a
 * broken `spec.check` rule.
 */
export function parseBenchOptions<K extends string>(spec: BenchOptionsSpec<K>, argv: string[]): BenchOptions<K> | null {
  const names = Object.keys(spec.ints) as K[];
  const { values } = parseArgs({
    args: argv,
    options: {
      ...Object.fromEntries(names.map((n) => [kebab(n), { type: 'string' as const }])),
      ...(spec.onlyExample === undefined ? {} : { only: { type: 'string' as const } }),
      quick: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const vals = values as Record<string, string | boolean | undefined>;
  if (vals.help) return null;
  const quick = vals.quick === true;
  const ints = {} as Record<K, number>;
  for (const n of names) {
    const o = spec.ints[n];
    const raw = vals[kebab(n)];
    ints[n] = typeof raw === 'string' ? intOption(kebab(n), raw, o.min, o.max) : quick ? o.quick : o.default;
  }
  const onlyRaw = typeof vals.only === 'string' ? vals.only : '';
  const opts: BenchOptions<K> = {
    ...ints,
    quick,
    only: onlyRaw
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  };
  spec.check?.(opts);
  return opts;
}

/**
 * `parseBenchOptions` for a bench run from the command line: on `--help` prints the usage and
 * exits 0; on a bad option throws (the caller reports it and exits 1).
 */
export function parseBenchOptionsOrExit<K extends string>(spec: BenchOptionsSpec<K>, argv: string[]): BenchOptions<K> {
  const opts = parseBenchOptions(spec, argv);
  if (opts === null) {
    console.log(benchUsage(spec));
    process.exit(0);
  }
  return opts;
}

/** What `npm run bench -- …` asked for: the usage, the list, or a run of `names` with `argv`. */
export type BenchCommand = { kind: 'help' } | { kind: 'list' } | { kind: 'run'; names: string[]; argv: string[] };

/**
 * Reads the arguments of `npm run bench -- …`: leading words are benchmark names (run in the
 * order given, duplicates once), the rest are options passed to each named bench. Without
 * names: `--list`, `--help`/`-h`, or a run of every bench in `known` order, where only
 * `--quick` may be given. Throws an `Error` with a one-line message on an unknown name or an
 * option that needs a benchmark name.
 */
export function parseBenchCommand(args: string[], known: readonly string[]): BenchCommand {
  const firstOption = args.findIndex((a) => a.startsWith('-'));
  const names = firstOption === -1 ? args : args.slice(0, firstOption);
  const rest = firstOption === -1 ? [] : args.slice(firstOption);
  for (const n of names) {
    if (!known.includes(n)) throw new Error(`unknown benchmark "${n}"; available: ${known.join(', ')}`);
  }
  if (names.length > 0) return { kind: 'run', names: [...new Set(names)], argv: rest };
  if (rest.includes('--list')) return { kind: 'list' };
  if (rest.includes('--help') || rest.includes('-h')) return { kind: 'help' };
  const other = rest.filter((a) => a !== '--quick');
  if (other.length > 0) {
    throw new Error(
      `"${other[0]}" needs benchmark names before it (npm run bench -- <name> [options]); alone, only --quick, --list and --help are understood`,
    );
  }
  return { kind: 'run', names: [...known], argv: rest };
}
