/**
 * The owner's retry policies (workflows/retry-policy.ts, issue 48 item 12): the calls that move
 * money at the processor wait at most 30 s between tries whatever the general ceiling, so a refund
 * accepted during an outage is made within 30 s of the processor's return; the others keep theirs.
 */
import fc from 'fast-check';
import {
  DEFAULT_POLICY_RETRY_MAX_INTERVAL_SECONDS,
  MONEY_RETRY_MAX_INTERVAL_SECONDS,
  policyRetryPolicies,
} from '../../workflows/retry-policy';

test('when no ceiling is given, then money calls retry at least every 30 s and the others every 300 s at most', () => {
  expect(MONEY_RETRY_MAX_INTERVAL_SECONDS).toBe(30);
  expect(DEFAULT_POLICY_RETRY_MAX_INTERVAL_SECONDS).toBe(300);
  expect(policyRetryPolicies()).toEqual({ retry: { maximumInterval: '300 seconds' }, money: { maximumInterval: '30 seconds' } });
  // Neither has an attempt limit: an outage delays a refund, never fails it.
  expect(policyRetryPolicies().money.maximumAttempts).toBeUndefined();
});

test('when a ceiling is given, then money calls wait the shorter of it and 30 s, and the others the ceiling', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 3600 }), (ceiling) => {
      const { retry, money } = policyRetryPolicies(ceiling);
      expect(retry.maximumInterval).toBe(`${ceiling} seconds`);
      expect(money.maximumInterval).toBe(`${Math.min(ceiling, 30)} seconds`);
    }),
    { seed: 4812, numRuns: 200 },
  );
});
