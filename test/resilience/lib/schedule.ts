/**
 * Turns for the resilience suites, so `npm run test:resilience` runs them at the same time (each
 * fault suite on a stack of its own) without two of them loading the machine at once. Each
 * suite waits for its turn, by phase, before its load; the dev-shape stacks also wait to boot
 * until the cluster suite is done (`bootAfter`):
 *
 * | phase | suite (stack slot)                         | holds the turn while                                   |
 * |------:|--------------------------------------------|--------------------------------------------------------|
 * |     0 | fuzz pass, security checks (shared stack)  | it runs (the two run together)                         |
 * |     1 | cluster shape, two workers (3)             | its two faults run: the cluster is at its knee at 5/s on two cores, so it runs with nothing beside it, not even idle stacks |
 * |     2 | processor refuses connections (1)          | its purchases to cancel are issued and its load runs; its outage (2 min, 10 in the full run) is then mostly waiting |
 * |     3 | processor hangs (2)                        | the same; its outage overlaps the first one's           |
 * |     4 | short faults, one after another (0)        | they run, inside the two outages                       |
 *
 * One after another the fault suites took 32 minutes, most of it two outages spent waiting; what
 * overlaps is their waiting with the other loads. In the shortened run of every change (lib/scope.ts)
 * the outages end before the short faults do, so the loads one after another are the run's length.
 *
 * Mechanics: files in one directory per run (RESILIENCE_T0, set by jest.resilience.config.mjs):
 * a suite writes `joined-<phase>-<name>` when it starts and `done-<phase>-<name>` when its turn
 * ends (also when it fails). `waitForTurn` first gives every file of the run JOIN_MS to join,
 * then waits until every joined suite of a lower phase is done (at most MAX_WAIT_MS, then it goes
 * on and says so). Suites not in the run (a file run alone, a name filter) never join, so nobody
 * waits for them. RESILIENCE_STAGGER=0 turns the waiting off.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const RUN = process.env.RESILIENCE_T0 ?? String(process.ppid);
const DIR = path.join(os.tmpdir(), `coi-resilience-turns-${RUN}`);
const ENABLED = process.env.RESILIENCE_STAGGER !== '0';
/** Every file of a run starts within seconds of the others (jest runs them all at once). */
const JOIN_MS = 20_000;
const MAX_WAIT_MS = 45 * 60_000;

export const PHASES = Object.freeze({ fuzzAndSecurity: 0, cluster: 1, processorRefused: 2, processorHang: 3, short: 4 });
/** Stack slots (ports + 100·slot, see fault-stack.ts). */
export const SLOTS = Object.freeze({ short: 0, processorRefused: 1, processorHang: 2, cluster: 3 });

export interface Turn {
  /**
   * Resolves when every joined suite of a phase below `before` (default: this suite's phase) is
   * done, or at once when turns are off.
   */
  wait(before?: number, log?: (line: string) => void): Promise<void>;
  /** Ends this suite's turn (idempotent). */
  done(): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Seconds since the run began (RESILIENCE_T0), so the turns' lines make the run's timeline. */
const sinceStart = () =>
  Number.isFinite(Number(RUN)) && Number(RUN) > 1e12 ? `+${((Date.now() - Number(RUN)) / 1000).toFixed(0)} s` : 'run';

/** Prints one line of the run's timeline: `[resilience +<s since the run began> s] <who>: <what>`. */
export function timeline(who: string, what: string): void {
  process.stdout.write(`[resilience ${sinceStart()}] ${who}: ${what}\n`);
}

/** Joins the run's turns as `name` in `phase` (writes its marker at once). */
export function joinTurns(name: string, phase: number): Turn {
  const file = (kind: 'joined' | 'done') => path.join(DIR, `${kind}-${phase}-${name}`);
  const started = Date.now();
  if (ENABLED) {
    fs.mkdirSync(DIR, { recursive: true });
    fs.writeFileSync(file('joined'), String(process.pid));
  }
  let finished = false;
  return {
    async wait(before = phase, log = (line) => process.stdout.write(`${line}\n`)) {
      if (!ENABLED) return;
      await sleep(Math.max(0, started + JOIN_MS - Date.now()));
      const deadline = Date.now() + MAX_WAIT_MS;
      for (;;) {
        const entries = fs.readdirSync(DIR);
        const waitingFor = entries
          .filter((e) => e.startsWith('joined-'))
          .map((e) => e.slice('joined-'.length))
          .filter((who) => Number(who.split('-')[0]) < before && !entries.includes(`done-${who}`));
        if (waitingFor.length === 0) {
          timeline(name, `every suite before phase ${before} is done`);
          return;
        }
        if (Date.now() > deadline) {
          log(`${name}: waited ${MAX_WAIT_MS / 60_000} min for ${waitingFor.join(', ')}; going on`);
          return;
        }
        await sleep(1000);
      }
    },
    done() {
      if (!ENABLED || finished) return;
      finished = true;
      fs.writeFileSync(file('done'), String(Date.now()));
      timeline(name, 'turn done');
    },
  };
}
