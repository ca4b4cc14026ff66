/**
 * The machine-speed probe of the fault suites (test/resilience/lib/machine.ts turns its figure
 * into the load's rate). jest.resilience.config.mjs runs it once, before jest starts any suite or
 * stack, and hands the figure to the suites as RESILIENCE_PROBE_MS.
 *
 * The probe is a loop of additions to a script-level variable, run by a fresh `node -e`: every
 * addition allocates a number on the heap, so it times allocation and young-generation garbage
 * collection, as the service's processes spend their time, rather than a register loop. It is
 * the figure that told apart the machines where the suites held 5/s (about 1 s per 10⁹ additions)
 * from those where they did not (5.6 to 17 s).
 */
import { execFileSync } from 'node:child_process';

/** Additions in one probe. */
const PROBE_ADDITIONS = 200_000_000;
/** Probes run; the fastest counts, so that a moment of contention does not make the machine look slower. */
const PROBES = 3;
const SCRIPT = `const t = process.hrtime.bigint(); let x = 0; for (let i = 0; i < ${PROBE_ADDITIONS}; i++) x += i; process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6) + (x < 0 ? '!' : ''));`;

/** The fastest of PROBES probes, in ms of wall time (each in a child `node` of this one's binary). */
export function probeMachineMs() {
  let fastest = Infinity;
  for (let p = 0; p < PROBES; p++)
    fastest = Math.min(fastest, Number(execFileSync(process.execPath, ['-e', SCRIPT], { encoding: 'utf8' })));
  return fastest;
}
