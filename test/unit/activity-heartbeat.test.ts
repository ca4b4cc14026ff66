/**
 * The certificate activities' heartbeats (activities/heartbeat.ts): none in an attempt's first
 * HEARTBEAT_GRACE_MS, then as the SDK would send them. Run in the SDK's MockActivityEnvironment,
 * which reports each heartbeat the activity sends; the clock is Jest's.
 */
import { Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { HEARTBEAT_GRACE_MS, HEARTBEAT_INTERVAL_MS, attemptStarted, heartbeat, withHeartbeat } from '../../activities/heartbeat';

describe('certificate activity heartbeats', () => {
  let env: MockActivityEnvironment;
  let beats: unknown[];

  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-11-28T10:00:00Z') });
    env = new MockActivityEnvironment();
    beats = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
  });
  afterEach(() => jest.useRealTimers());

  it('sends none in the grace period, then each one asked for', async () => {
    await env.run(async () => {
      const ctx = Context.current();
      attemptStarted(ctx);
      heartbeat(ctx, { done: 1, of: 3 });
      jest.advanceTimersByTime(HEARTBEAT_GRACE_MS - 1);
      heartbeat(ctx, { done: 2, of: 3 });
      expect(beats).toEqual([]);
      jest.advanceTimersByTime(1);
      heartbeat(ctx, { done: 3, of: 3 });
      heartbeat(ctx);
    });
    expect(beats).toEqual([{ done: 3, of: 3 }, undefined]);
  });

  it('counts the grace from the first step of the attempt, not from a later one', async () => {
    await env.run(async () => {
      const ctx = Context.current();
      attemptStarted(ctx);
      jest.advanceTimersByTime(HEARTBEAT_GRACE_MS - 1000);
      attemptStarted(ctx); // a later step (zips after the PDFs) marks nothing new
      jest.advanceTimersByTime(1000);
      heartbeat(ctx, 'late step');
    });
    expect(beats).toEqual(['late step']);
  });

  it('heartbeats at once in an attempt never marked (as the SDK does)', async () => {
    await env.run(async () => heartbeat(Context.current(), 'unmarked'));
    expect(beats).toEqual(['unmarked']);
  });

  it('gives each attempt its own grace', async () => {
    await env.run(async () => {
      attemptStarted(Context.current());
      jest.advanceTimersByTime(HEARTBEAT_GRACE_MS);
    });
    const retry = new MockActivityEnvironment({ attempt: 2 });
    retry.on('heartbeat', (details: unknown) => beats.push(details));
    await retry.run(async () => {
      const ctx = Context.current();
      attemptStarted(ctx);
      heartbeat(ctx, 'retry, too early');
    });
    expect(beats).toEqual([]);
  });

  it('holds back no more than a third of a heartbeat timeout shorter than three graces', async () => {
    const short = new MockActivityEnvironment({ heartbeatTimeoutMs: 3000 });
    short.on('heartbeat', (details: unknown) => beats.push(details));
    await short.run(async () => {
      const ctx = Context.current();
      attemptStarted(ctx);
      jest.advanceTimersByTime(999);
      heartbeat(ctx, 'at 999 ms');
      jest.advanceTimersByTime(1);
      heartbeat(ctx, 'at 1 s');
    });
    const usual = new MockActivityEnvironment({ heartbeatTimeoutMs: 15_000 });
    usual.on('heartbeat', (details: unknown) => beats.push(details));
    await usual.run(async () => {
      const ctx = Context.current();
      attemptStarted(ctx);
      jest.advanceTimersByTime(HEARTBEAT_GRACE_MS - 1);
      heartbeat(ctx, 'at 4.999 s of 15');
    });
    expect(beats).toEqual(['at 1 s']);
  });

  it('withHeartbeat beats every interval past the grace and stops when its step ends', async () => {
    const step = env.run(() => {
      attemptStarted(Context.current()); // the activity's first step
      return withHeartbeat(
        () =>
          new Promise<string>((resolve) => {
            setTimeout(() => resolve('stored'), 9000);
          }),
      );
    });
    await jest.advanceTimersByTimeAsync(9000);
    await expect(step).resolves.toBe('stored');
    // Ticks at 2, 4, 6 and 8 s: the first two fall in the 5 s grace.
    expect(HEARTBEAT_INTERVAL_MS).toBe(2000);
    expect(beats).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(beats).toHaveLength(2);
  });
});
