/**
 * The fault suites' load rate on this machine (lib/fault-suite.ts): the issue's 5 purchases/s on
 * a machine as fast as the ones that rate was set on, proportionally less on a slower one.
 *
 * 5/s is where the cluster shape is at its knee on two cores of the machines the suites were
 * written on. Machines CI runs on are not all alike: on some the same code runs several times
 * slower, every process alike (Chromium, PostgreSQL, Temporal). There 5/s is far past the knee:
 * every checkout waits out its 30 s deadline, the surviving worker and the Temporal server miss
 * their one-second metric scrapes (NoWorkerUp and TemporalDown go pending with both up), and the
 * drain bounds pass with purchases still queued. That measures the machine, not the faults. So
 * the rate is 5/s divided by the machine's slowdown (never above 5, never below MIN_RATE); the
 * test names and the report say the rate run and the probe's figure. Every check is kept at
 * whatever rate runs, and the outages keep their length. RESILIENCE_RATE still sets a rate by hand.
 *
 * The slowdown comes from a probe (./machine-probe.mjs: 2·10⁸ additions to a script-level
 * variable in a fresh node, the fastest of three), run once by jest.resilience.config.mjs before
 * any stack boots and passed here as RESILIENCE_PROBE_MS.
 */

/**
 * The probe's time, in ms, on the machines the 5/s rate was set on (a loop of 10⁹ such additions
 * took about 1 s there; 5.6 to 17 s on the machines where the fault suites failed at 5/s).
 */
export const REFERENCE_PROBE_MS = 200;
/** The issue's load: purchases per second on a machine of the reference speed. */
export const ISSUE_RATE = 5;
/** The load never goes below this many purchases/s, however slow the machine (30 purchases in a 30 s load, 60 in the full run's 60 s). */
export const MIN_RATE = 1;

export interface MachineSpeed {
  /** The probe's time on this machine, in ms (null: not measured, taken as the reference). */
  probeMs: number | null;
  /** probeMs / REFERENCE_PROBE_MS, at least 1 (a faster machine keeps the issue's rate). */
  slowdown: number;
}

/** This machine's speed, from the probe's figure (RESILIENCE_PROBE_MS by default). */
export function machineSpeed(probeMs: string | undefined = process.env.RESILIENCE_PROBE_MS): MachineSpeed {
  const ms = probeMs === undefined || probeMs === '' ? NaN : Number(probeMs);
  if (!Number.isFinite(ms) || ms <= 0) return { probeMs: null, slowdown: 1 };
  return { probeMs: ms, slowdown: Math.max(1, ms / REFERENCE_PROBE_MS) };
}

/**
 * Purchases/s to offer on a machine of `speed`: ISSUE_RATE divided by its slowdown, rounded down
 * to a tenth, at least MIN_RATE.
 */
export function rateFor(speed: MachineSpeed): number {
  return Math.min(ISSUE_RATE, Math.max(MIN_RATE, Math.floor((ISSUE_RATE / speed.slowdown) * 10) / 10));
}

/** The longest interval between scrapes of the API and the workers a slow machine gets (their outages last 20 s or more). */
export const MAX_SCRAPE_SECONDS = 4;

/**
 * Seconds between the fault stack's scrapes of the service's own processes (the API and the
 * workers), which is also each scrape's deadline: 1 on a machine of the reference speed, the
 * slowdown rounded up on a slower one, at most MAX_SCRAPE_SECONDS. A one-second deadline on a
 * machine 8 times slower starves a busy process's answer, which reads as the process being down:
 * while one worker restarted at 1 purchase/s, the other missed one-second scrapes. Everything
 * else is still scraped, and every rule evaluated, each second: a 5 s PostgreSQL restart gives
 * one four-second scrape at most, which the rules missed.
 */
export function scrapeSecondsFor(speed: MachineSpeed): number {
  return Math.min(MAX_SCRAPE_SECONDS, Math.ceil(speed.slowdown));
}
