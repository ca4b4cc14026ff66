/**
 * The fault suites' load rate follows the machine (test/resilience/lib/machine.ts): the issue's
 * 5 purchases/s on a machine of the reference speed or faster, proportionally less on a slower
 * one, never below the floor; an unreadable probe figure keeps the issue's rate. The interval of
 * the stack's scrapes of the API and workers follows the slowdown, rounded up, within 1 to
 * MAX_SCRAPE_SECONDS.
 */
import {
  ISSUE_RATE,
  machineSpeed,
  MAX_SCRAPE_SECONDS,
  MIN_RATE,
  rateFor,
  REFERENCE_PROBE_MS,
  scrapeSecondsFor,
} from '../resilience/lib/machine';

test('when the machine is as fast as the reference or faster, then the issue rate is offered', () => {
  expect(rateFor(machineSpeed(String(REFERENCE_PROBE_MS)))).toBe(ISSUE_RATE);
  expect(rateFor(machineSpeed(String(REFERENCE_PROBE_MS / 3)))).toBe(ISSUE_RATE);
  expect(machineSpeed('50')).toEqual({ probeMs: 50, slowdown: 1 });
});

test('when the machine is slower, then the rate falls in proportion, rounded down to a tenth', () => {
  // 2.5 times slower: 2/s; 3 times slower: 1.66… → 1.6/s.
  expect(rateFor(machineSpeed(String(REFERENCE_PROBE_MS * 2.5)))).toBe(2);
  expect(rateFor(machineSpeed(String(REFERENCE_PROBE_MS * 3)))).toBe(1.6);
  expect(machineSpeed(String(REFERENCE_PROBE_MS * 3)).slowdown).toBeCloseTo(3, 10);
});

test('when the machine is very slow, then the rate stops at the floor', () => {
  expect(rateFor(machineSpeed(String(REFERENCE_PROBE_MS * 40)))).toBe(MIN_RATE);
});

test('when the probe figure is missing or not a positive number, then the machine counts as the reference', () => {
  for (const figure of [undefined, '', 'fast', '0', '-3']) {
    expect(machineSpeed(figure)).toEqual({ probeMs: null, slowdown: 1 });
    expect(rateFor(machineSpeed(figure))).toBe(ISSUE_RATE);
  }
});

test('when the machine is slower, then the stack scrapes the API and workers less often, every second at reference speed and never beyond the cap', () => {
  expect(scrapeSecondsFor(machineSpeed(String(REFERENCE_PROBE_MS)))).toBe(1);
  expect(scrapeSecondsFor(machineSpeed(undefined))).toBe(1);
  expect(scrapeSecondsFor(machineSpeed(String(REFERENCE_PROBE_MS * 1.2)))).toBe(2);
  expect(scrapeSecondsFor(machineSpeed(String(REFERENCE_PROBE_MS * 3)))).toBe(3);
  expect(scrapeSecondsFor(machineSpeed(String(REFERENCE_PROBE_MS * 8.5)))).toBe(MAX_SCRAPE_SECONDS);
});
