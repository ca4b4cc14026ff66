/**
 * The API harness shared by the test suites, the benches and the scripts that drive the real API
 * (scripts/harness/): what its helpers need of a running API, and a poll.
 */
import type { Container } from '../../src/container';

/** A running API: its base URL and the container it was built from (repositories, Temporal client). */
export interface ApiHandle {
  baseUrl: string;
  container: Container;
}

/**
 * Polls `fn` every `intervalMs` (default 100 ms) until it returns a truthy value or `timeoutMs` (ms)
 * passes; throws then (`condition not met within …`).
 */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 20_000, intervalMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
