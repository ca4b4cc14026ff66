/**
 * The retry policies of the purchase's owner (`policy-<id>`) for its activities. Every call retries
 * without an attempt limit, the interval doubling from one second. Most stop growing at
 * `retryMaxIntervalSeconds` (default 300 s: a database or storage outage waits calmly); the calls
 * that move money at the processor (creating and checking a cancellation's refund, an endorsement's
 * charge, checkout and refund, ending a subscription) stop at `MONEY_RETRY_MAX_INTERVAL_SECONDS`,
 * so a refund or charge accepted while the processor was down is made within that many seconds of
 * its return. While it is still down that is one refused connection per waiting call every 30 s at
 * most, and the refunds are created on the rate-capped refunds queue, so a crowd of waiting refunds
 * never asks more of the processor than the queue's cap (decisions: "Money calls retry within 30 s").
 */
import type { RetryPolicy } from '@temporalio/common';

/** Longest wait between two tries of a call that moves money at the processor, in seconds. */
export const MONEY_RETRY_MAX_INTERVAL_SECONDS = 30;

/** Longest wait between two tries of the owner's other calls when the input names none, in seconds. */
export const DEFAULT_POLICY_RETRY_MAX_INTERVAL_SECONDS = 300;

/**
 * `retry` for the owner's database, storage and certificate calls and `money` for its processor
 * calls, from the workflow input's `retryMaxIntervalSeconds` (seconds; a shorter one, as tests
 * set, shortens both). Pure: the same input gives the same policies (the workflow's replay).
 */
export function policyRetryPolicies(retryMaxIntervalSeconds?: number): { retry: RetryPolicy; money: RetryPolicy } {
  const most = retryMaxIntervalSeconds ?? DEFAULT_POLICY_RETRY_MAX_INTERVAL_SECONDS;
  return {
    retry: { maximumInterval: `${most} seconds` },
    money: { maximumInterval: `${Math.min(most, MONEY_RETRY_MAX_INTERVAL_SECONDS)} seconds` },
  };
}
