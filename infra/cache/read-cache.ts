/**
 * The read cache of an API node: answers of hot list queries kept in memory, as fresh as
 * an uncached read of the primary.
 *
 * Each answer is stored under the versions of the read models it was computed from. A
 * projection's runner bumps its version in Redis (INCR) after every commit that changed
 * its tables, before acknowledging the batch (readVersionKey); a replay bumps it after
 * its swap. A request first reads the current versions (one MGET), and an entry serves
 * only when it was computed at exactly those versions:
 *
 *   - the versions a request reads cover every commit that finished before it began;
 *   - an entry stored under versions V was computed by a query that started after V was
 *     read, so it reflects at least every commit that V counts.
 *
 * So a cached answer is never older than what an uncached query at the same moment would
 * have seen on the primary. Two bounds cover what the versions cannot: a replica behind
 * the primary (DATABASE_READ_URL) and a bump lost to a crash or a Redis failure between
 * commit and INCR. Entries live at most READ_CACHE_TTL_MS, and while Redis does not answer
 * the cache is bypassed altogether. (Versions live in Redis: a Redis that restarts empty
 * counts them again from 0, and an entry of the same count is at most the TTL old.)
 *
 * Concurrent misses of one key at one version share a single query (no stampede when a
 * commit invalidates a hot list). Memory is bounded by READ_CACHE_MAX_MB, least recently
 * used first (lru-cache).
 */
import { LRUCache } from 'lru-cache';
import type { Redis } from 'ioredis';
import type { Counter } from 'prom-client';

export interface ReadCacheOptions {
  /** 0 disables the cache */
  ttlMs: number;
  maxBytes: number;
  /** Redis key of a read model's version */
  versionKey(readModel: string): string;
  /** counts hit / miss / shared / bypass */
  outcomes?: Counter<'result'>;
}

export interface ReadCache {
  readonly enabled: boolean;
  /**
   * The answer for `key` computed from `readModels`: cached when fresh, else computed by
   * `produce` (once for all concurrent callers) and kept. `size` gives its bytes.
   */
  get<T extends object>(readModels: readonly string[], key: string, produce: () => Promise<T>, size: (v: T) => number): Promise<T>;
}

interface Entry { versions: string; value: object; bytes: number }

export function createReadCache(redis: Redis, opts: ReadCacheOptions): ReadCache {
  const enabled = opts.ttlMs > 0 && opts.maxBytes > 0;
  const entries = new LRUCache<string, Entry>({
    max: 100_000,
    maxSize: Math.max(1, opts.maxBytes),
    sizeCalculation: (e, k) => Math.max(1, e.bytes + k.length),
    ttl: Math.max(1, opts.ttlMs),
    ttlAutopurge: false,
  });
  const inflight = new Map<string, Promise<object>>();
  const count = (result: string) => opts.outcomes?.inc({ result });

  async function versionsOf(readModels: readonly string[]): Promise<string | undefined> {
    // a Redis that is away would make every read wait for it: bypass the cache instead
    if (redis.status !== 'ready') return undefined;
    try {
      const vs = await redis.mget(readModels.map((m) => opts.versionKey(m)));
      return vs.map((v) => v ?? '0').join(':');
    } catch {
      return undefined;
    }
  }

  return {
    enabled,
    async get<T extends object>(readModels: readonly string[], key: string, produce: () => Promise<T>, size: (v: T) => number): Promise<T> {
      if (!enabled) return produce();
      const versions = await versionsOf(readModels);
      if (versions === undefined) { count('bypass'); return produce(); }
      const hit = entries.get(key);
      if (hit && hit.versions === versions) { count('hit'); return hit.value as T; }
      const flightKey = `${versions}\n${key}`;
      const shared = inflight.get(flightKey);
      if (shared) { count('shared'); return shared as Promise<T>; }
      count('miss');
      const p = (async () => {
        try {
          const value = await produce();
          // a slower, older computation may replace a newer one: that costs a miss, never
          // a stale answer, since an entry serves only at exactly its own versions
          entries.set(key, { versions, value, bytes: size(value) });
          return value;
        } finally {
          inflight.delete(flightKey);
        }
      })();
      inflight.set(flightKey, p);
      return p;
    },
  };
}

/**
 * Moves a read model's version after a commit that changed it. Never throws: a lost bump
 * only lets cached answers live out their TTL, so it is reported (false) and logged by
 * the caller, not allowed to fail the commit's caller.
 */
export async function bumpReadVersion(redis: Redis, versionKey: string): Promise<boolean> {
  try {
    await redis.incr(versionKey);
    return true;
  } catch {
    return false;
  }
}
