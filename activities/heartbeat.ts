/**
 * Heartbeats of the certificate activities (activities/certificates.ts), with a grace period.
 *
 * Each heartbeat the Temporal server records is a write of the workflow's mutable state (one
 * persistence transaction, as a workflow task's start or completion is), and the SDK sends an
 * attempt's first heartbeat at once, only later ones throttled (at most one per 80 % of the
 * heartbeat timeout). A 1-day purchase's issuance, about a second long, so paid one such write
 * for nothing: one of the eleven of a paid purchase. So an attempt sends no heartbeat in its first
 * `HEARTBEAT_GRACE_MS` (5 s, at most a third of its heartbeat timeout). Its heartbeat timeout
 * (15 s, counted from the attempt's start until a first heartbeat arrives) still finds a killed
 * worker as before, and a longer attempt heartbeats from 5 s on, well inside it. Details are progress for operators (`{ done, of }`); no retry
 * reads them.
 */
import { Context } from '@temporalio/activity';

/**
 * An attempt's first heartbeat is sent no earlier than this many ms after it began, or a third of
 * its heartbeat timeout when that is shorter (so a shorter timeout set in the workflow can never
 * expire for want of a heartbeat the grace held back).
 */
export const HEARTBEAT_GRACE_MS = 5000;

/** How often `withHeartbeat` heartbeats while its step runs (ms). */
export const HEARTBEAT_INTERVAL_MS = 2000;

/** When each running attempt began (its first `attemptStarted`), by its activity context. */
const attemptStarts = new WeakMap<Context, number>();

/** Marks the attempt of `ctx` as begun now, unless it already was (the first step of an activity calls it). */
export function attemptStarted(ctx: Context): void {
  if (!attemptStarts.has(ctx)) attemptStarts.set(ctx, Date.now());
}

/** The grace of the attempt of `ctx` (ms): `HEARTBEAT_GRACE_MS`, at most a third of its heartbeat timeout. */
export function heartbeatGraceMs(ctx: Context): number {
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  return timeoutMs ? Math.min(HEARTBEAT_GRACE_MS, timeoutMs / 3) : HEARTBEAT_GRACE_MS;
}

/**
 * Heartbeats `ctx` with `details`, unless its attempt began less than its grace
 * (`heartbeatGraceMs`) ago; an attempt never marked by `attemptStarted` heartbeats at once, as the
 * SDK would.
 */
export function heartbeat(ctx: Context, details?: unknown): void {
  const started = attemptStarts.get(ctx);
  if (started !== undefined && Date.now() - started < heartbeatGraceMs(ctx)) return;
  ctx.heartbeat(details);
}

/**
 * Runs `fn` in the current activity, heartbeating every `HEARTBEAT_INTERVAL_MS` ms while it runs
 * (for steps that make no progress to report), past the attempt's grace period. It marks no start
 * itself: a step well into an attempt would push the grace past the attempt's heartbeat timeout,
 * so an attempt its first step did not mark heartbeats at once.
 */
export async function withHeartbeat<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => heartbeat(ctx), HEARTBEAT_INTERVAL_MS);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
