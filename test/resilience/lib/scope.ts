/**
 * How long and how large the fault suites run (lib/fault-suite.ts, lib/dev-faults.ts): the
 * shortened run of every change, or the full run (RESILIENCE_FULL=1, weekly or by hand).
 *
 * Both runs inject the same faults, on the same stacks, in the same order, and assert the same
 * things on every purchase, cancellation, answer and alert; the shortened run only offers each
 * fault's load for 30 s instead of 60 s (a fault that outlasts it still keeps the load on until
 * it ends), holds the two processor outages for 2 minutes instead of 10, and cancels 20 issued
 * purchases during each instead of 60 (the three ways of cancelling, in turn, each repeated as
 * before); the fuzz pass (not a fault suite, but the longest of the run's first phase) sends 10
 * random cases per kind and route instead of 25, every route still getting every kind. Two minutes is four times the workflows' retry cap in the fault stacks
 * (PURCHASE_RETRY_MAX_INTERVAL_SECONDS=30) and four times a checkout's 30 s deadline, so the
 * processor calls still reach their capped backoff, checkouts still time out during the outage,
 * and webhooks still arrive both during it (spread over ten steps) and after it. What only the
 * full run shows: recovery after a ten-minute outage (retries capped for many rounds, more
 * workflows waiting) and the full volume.
 *
 * RESILIENCE_PROCESSOR_OUTAGE_MS and RESILIENCE_CANCELLATIONS still override either run's figure,
 * to explore locally.
 */

export interface RunScope {
  /** 'full' (RESILIENCE_FULL=1) or 'shortened' (every change). */
  name: 'full' | 'shortened';
  /** Each fault's purchase load, in ms (a short fault that lasts longer keeps the load on until it ends). */
  loadMs: number;
  /** Each long processor outage (refused, hanging), in ms. */
  processorOutageMs: number;
  /** Issued purchases cancelled during each long processor outage. */
  cancellations: number;
  /** The fuzz pass's random cases per kind and route (every route still gets every kind). */
  fuzzRuns: number;
}

/** The full run: the 60 s loads, 10-minute processor outages and 60 cancellations in each. */
export const FULL_SCOPE: RunScope = Object.freeze({
  name: 'full',
  loadMs: 60_000,
  processorOutageMs: 600_000,
  cancellations: 60,
  fuzzRuns: 25,
});
/** The run of every change: the same faults and checks with 30 s loads, 2-minute outages and 20 cancellations. */
export const SHORTENED_SCOPE: RunScope = Object.freeze({
  name: 'shortened',
  loadMs: 30_000,
  processorOutageMs: 120_000,
  cancellations: 20,
  fuzzRuns: 10,
});

/**
 * The scope of this run: FULL_SCOPE with RESILIENCE_FULL=1, else SHORTENED_SCOPE, with
 * RESILIENCE_PROCESSOR_OUTAGE_MS and RESILIENCE_CANCELLATIONS (whole numbers) applied over it.
 */
export function runScope(env: NodeJS.ProcessEnv = process.env): RunScope {
  const base = env.RESILIENCE_FULL === '1' ? FULL_SCOPE : SHORTENED_SCOPE;
  const override = (value: string | undefined, fallback: number) => (value === undefined || value === '' ? fallback : Number(value));
  return {
    ...base,
    processorOutageMs: override(env.RESILIENCE_PROCESSOR_OUTAGE_MS, base.processorOutageMs),
    cancellations: override(env.RESILIENCE_CANCELLATIONS, base.cancellations),
  };
}

/** This run's scope (read once from the environment jest was started with). */
export const SCOPE = runScope();
