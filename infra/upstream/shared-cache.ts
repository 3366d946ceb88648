/**
 * Upstream answers cached in Redis, so every API node shares one copy and an upstream
 * sees one call per key per TTL however many nodes serve the route. Values are JSON.
 *
 * Contract: a Redis failure is a cache miss (get) or a lost write (set), never an error
 * to the caller: the cache may make a route faster, never make it fail. Each Redis
 * command is bounded by `timeoutMs` because the shared client queues commands while
 * Redis is away.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { sharedCacheKey } from '../../src/kernel/names/index.js';

export interface SharedCache {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /** the cached value, or `load()`'s, stored when `store(value)` says so (default: always) */
  wrap<T>(key: string, ttlSeconds: number, load: () => Promise<T>, store?: (value: T) => boolean): Promise<T>;
}

/** A key part from free text (a search query): bounded length, no separators. */
export function keyPart(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 32);
}

function bounded<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.catch(() => undefined),
    new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), ms); }),
  ]).finally(() => clearTimeout(timer));
}

export function createSharedCache(redis: Redis, prefix: string, timeoutMs = 500): SharedCache {
  const full = (key: string) => sharedCacheKey(prefix, key);
  const cache: SharedCache = {
    async get<T>(key: string) {
      const raw = await bounded(redis.get(full(key)), timeoutMs);
      if (raw === undefined || raw === null) return undefined;
      try {
        return JSON.parse(raw) as T;
      } catch {
        return undefined;
      }
    },
    async set(key, value, ttlSeconds) {
      await bounded(redis.set(full(key), JSON.stringify(value), 'EX', Math.max(1, Math.ceil(ttlSeconds))), timeoutMs);
    },
    async wrap<T>(key: string, ttlSeconds: number, load: () => Promise<T>, store: (value: T) => boolean = () => true) {
      const hit = await cache.get<T>(key);
      if (hit !== undefined) return hit;
      const value = await load();
      if (store(value)) await cache.set(key, value, ttlSeconds);
      return value;
    },
  };
  return cache;
}
