/**
 * Per-endpoint rate (rate_limit_per_second), honored across every worker: attempts to an
 * endpoint are spaced at least 1000/limit ms apart. Each attempt reserves the next free
 * slot of its endpoint in Redis (one atomic script, Redis's clock); a slot further away
 * than `maxWaitMs` is not reserved, and the caller gives the delivery back for that long
 * instead of holding its lease while it waits.
 *
 * Without Redis (a worker built by hand in a test), slots are kept in this process.
 */
import type { Redis } from 'ioredis';
import { webhookRateKey } from '../../../src/kernel/names/index.js';

export interface RateLimiter {
  /** ms to wait before the attempt (slot reserved), or { later } ms to come back after (nothing reserved) */
  reserve(webhookId: number, perSecond: number, maxWaitMs: number): Promise<{ waitMs: number } | { laterMs: number }>;
}

const spacingMs = (perSecond: number): number => Math.ceil(1000 / perSecond);

// KEYS[1] next free slot (ms); ARGV spacing, maxWait. Returns wait ≥ 0 (reserved) or -wait (not).
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local spacing = tonumber(ARGV[1])
local maxWait = tonumber(ARGV[2])
local slot = tonumber(redis.call('GET', KEYS[1]) or '0')
if slot < now then slot = now end
local wait = slot - now
if wait > maxWait then return -wait end
redis.call('SET', KEYS[1], string.format('%.0f', slot + spacing), 'PX', wait + spacing + 1000)
return wait`;

type WithReserve = Redis & { webhookRateReserve(key: string, spacing: number, maxWait: number): Promise<number> };

export function createRateLimiter(redis: Redis | undefined, prefix: string): RateLimiter {
  if (!redis) return localRateLimiter();
  if (!('webhookRateReserve' in redis)) redis.defineCommand('webhookRateReserve', { numberOfKeys: 1, lua: RESERVE });
  const r = redis as WithReserve;
  return {
    async reserve(webhookId, perSecond, maxWaitMs) {
      const v = await r.webhookRateReserve(webhookRateKey(prefix, webhookId), spacingMs(perSecond), Math.max(0, Math.floor(maxWaitMs)));
      return v < 0 ? { laterMs: -v } : { waitMs: v };
    },
  };
}

export function localRateLimiter(now: () => number = () => Date.now()): RateLimiter {
  const next = new Map<number, number>();
  return {
    reserve(webhookId, perSecond, maxWaitMs) {
      const t = now();
      const slot = Math.max(next.get(webhookId) ?? 0, t);
      const wait = slot - t;
      if (wait > maxWaitMs) return Promise.resolve({ laterMs: wait });
      next.set(webhookId, slot + spacingMs(perSecond));
      return Promise.resolve({ waitMs: wait });
    },
  };
}
