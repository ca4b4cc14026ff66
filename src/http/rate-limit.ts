/**
 * The per-key request limiter (spec §8: roughly 100 requests per minute per key).
 *
 * rate-limiter-flexible with a 60 s window of `RATE_LIMIT_PER_MINUTE` points: in memory by
 * default; with `REDIS_URL`, counters live in Redis so every API instance shares them, and an
 * in-memory limiter takes over while Redis is unreachable (the library's "insurance" limiter).
 */
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config } from '../config';

export interface RateLimiterHandle {
  limiter: RateLimiterAbstract;
  close(): Promise<void>;
}

export function createRateLimiter(
  config: Pick<Config, 'RATE_LIMIT_PER_MINUTE' | 'REDIS_URL' | 'RATE_LIMIT_REDIS_PREFIX'>,
): RateLimiterHandle {
  const opts = { points: config.RATE_LIMIT_PER_MINUTE, duration: 60, keyPrefix: config.RATE_LIMIT_REDIS_PREFIX };
  if (!config.REDIS_URL) {
    return { limiter: new RateLimiterMemory(opts), close: async () => {} };
  }
  const redis = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
  redis.on('error', () => {
    // reconnects on its own; the insurance limiter covers the gap
  });
  const limiter = new RateLimiterRedis({ ...opts, storeClient: redis, insuranceLimiter: new RateLimiterMemory(opts) });
  return {
    limiter,
    close: async () => {
      redis.disconnect();
    },
  };
}
