/**
 * The requests a load generator (the purchase load, the cancellation run) has started and not yet
 * seen settle: `track` adds a promise until it settles (fulfilled or rejected), `size` counts them,
 * and `settledOrAfter(ms)` resolves when any of them settles or `ms` milliseconds have passed,
 * whichever is first (so a wait loop sees new ones started meanwhile). Never throws.
 */
export class InFlight {
  private readonly running = new Set<Promise<unknown>>();

  /** How many tracked promises have not settled yet. */
  get size(): number {
    return this.running.size;
  }

  /** Tracks `p` until it settles. */
  track(p: Promise<unknown>): void {
    this.running.add(p);
    void p.finally(() => this.running.delete(p));
  }

  /** Resolves once one tracked promise settles or after `ms` milliseconds. */
  settledOrAfter(ms: number): Promise<unknown> {
    return Promise.race([...this.running, new Promise((r) => setTimeout(r, ms))]);
  }
}
