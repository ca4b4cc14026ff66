/**
 * `npm run bench -- <name> [options]`: runs one benchmark from `scripts/bench/`.
 *
 *   npm run bench                      lists the benchmarks (exit 0)
 *   npm run bench -- catalog --seconds 5
 *   npm run bench -- nope              one line on stderr, exit 1
 *
 * A benchmark module is loaded only when it is run. Benchmarks print a report and exit 0
 * even when a goal fails; exit 1 means the benchmark could not run.
 */

interface Benchmark {
  description: string;
  run(argv: string[]): Promise<void>;
}

/** Every benchmark by name. */
const BENCHMARKS: Record<string, Benchmark> = {
  catalog: {
    description:
      'GET /bundles (plain, filtered, searched, sorted, deep page) and GET /products (plain, isTestMode, deep page) ' +
      'under autocannon load beside the same SQL through pg; p50/p99 ms, req/s, goal p99 <= 3x direct + 5 ms',
    run: async (argv) => (await import('./catalog.js')).runCatalogBench(argv),
  },
  search: {
    description:
      'POST searchTeammatePurchasedProducts (teammate and root; list, names, email, product, certificate, no match, last page) over ' +
      '1 000 000 seeded purchases under autocannon load beside the same SQL through pg; p50/p95/p99 ms and ratio, goal p99 < 50 ms',
    run: async (argv) => (await import('./search.js')).runSearchBench(argv),
  },
  certificates: {
    description:
      'issueCertificates activity (page pool) vs a naive browser-per-PDF script in certificates/s (goal >= 10x); webhook -> getCertificates ' +
      "'issued' p50/max for 1- and 30-day purchases through a real worker (goal 30-day <= 5 s); worker RSS after 100 and 1 000 certificates " +
      '(goal <= 1.2x) and no Chromium left after SIGTERM',
    run: async (argv) => (await import('./certificates.js')).runCertificatesBench(argv),
  },
};

async function main(): Promise<void> {
  const [name, ...rest] = process.argv.slice(2);
  if (!name) {
    console.log('usage: npm run bench -- <name> [options]   (options: see npm run bench -- <name> --help)');
    console.log('benchmarks:');
    for (const [n, b] of Object.entries(BENCHMARKS)) console.log(`  ${n.padEnd(10)} ${b.description}`);
    return;
  }
  const bench = Object.hasOwn(BENCHMARKS, name) ? BENCHMARKS[name] : undefined;
  if (!bench) {
    console.error(`unknown benchmark "${name}"; available: ${Object.keys(BENCHMARKS).join(', ')}`);
    process.exit(1);
  }
  await bench.run(rest);
}

main().then(
  // Lingering handles (lazy clients, keep-alive sockets) must not keep a finished run alive.
  () => process.exit(0),
  (err: unknown) => {
    console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
