/**
 * The read cache of an API node: answers of hot list queries kept in memory, as fresh as
 * an uncached read of the primary.
 *
 * Each answer is stored under the versions of the read models it was computed from. A
 * projection's runner bumps them in Redis (INCR) after every commit that changed its
 * tables, before acknowledging the batch (bumpReadVersions); a replay bumps them after
 * its swap. A request first reads the current versions (one MGET), and an entry serves
 * only when it was computed at exactly those versions:
 *
 *   - the versions a request reads cover every commit that finished before it began;
 *   - an entry stored under versions V was computed by a query that started after V was
 *     read, so it reflects at least every commit that V counts.
 *
 * So a cached answer is never older than what an uncached query at the same moment would
 * have seen on the primary. What could make versions lie is closed off:
 *   - a bump lost between commit and acknowledgement (a Redis error, a crash): the runner
 *     retries the bump before it acknowledges, and a batch delivered again (taken over from
 *     a dead consumer, or left pending by a failed bump) moves the model's epoch, which
 *     expires all its answers (projections/runner/runner.ts);
 *   - a Redis that lost its keys (restarted empty, flushed) would count versions again from
 *     0: every set of versions is read with a generation, a random name set once
 *     (readGeneration); a Redis without it gets a new one, and answers cached under the old
 *     one never serve again;
 *   - a Redis restarted from an older snapshot, or a failover to a replica that lagged,
 *     could count the same numbers again under the same generation: versions are tagged
 *     with the series of this process's connection, which moves each time the connection
 *     closes, so no answer cached before a reconnection serves after it.
 * What versions cannot bound is a replica behind the primary (DATABASE_READ_URL): an entry
 * computed there may predate a commit its versions count. Entries live at most
 * READ_CACHE_TTL_MS (30 s; 1 s by default when reads go to a replica), and while Redis does
 * not answer the cache is bypassed altogether.
 *
 * Versions come in three kinds per model. Its version moves with every commit and serves
 * answers that name no key. An answer that names the keys it depends on (a route's
 * cacheScopes: `gateway:<key>`, src/kernel/names/read-scopes.ts) is stored under the
 * model's epoch and the versions of those keys instead, so a commit that touched gateway
 * A leaves gateway B's answers valid. The epoch moves only with a change not described
 * key by key: a replay, a projection that names no keys. Keys are hashed into SCOPE_BUCKETS
 * buckets per model, which bounds Redis's memory; two keys sharing a bucket cost a miss,
 * never a stale answer.
 *
 * Concurrent misses of one key at one version share a single query (no stampede when a
 * commit invalidates a hot list). Memory is bounded by READ_CACHE_MAX_MB, least recently
 * used first (lru-cache).
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Redis } from 'ioredis';
import type { Counter } from 'prom-client';
import type { StreamKeys } from '../../src/kernel/names/index.js';

/** Redis keys of the versions (src/kernel/names). */
export type ReadVersionKeys = Pick<StreamKeys, 'readVersion' | 'readEpoch' | 'readScope' | 'readGeneration'>;

/**
 * Buckets of a model's keys. Redis holds at most this many version keys per model (about
 * 130 bytes each: 2 MB); a commit touching k keys moves a given answer's bucket with
 * probability about k / SCOPE_BUCKETS (600 keys a second, 200 payments: 4% a second).
 */
export const SCOPE_BUCKETS = 16_384;

/** A key's bucket (FNV-1a of its name). */
export function scopeBucket(scope: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < scope.length; i += 1) h = Math.imul(h ^ scope.charCodeAt(i), 0x01000193);
  return (h >>> 0) % SCOPE_BUCKETS;
}

export interface ReadCacheOptions {
  /** 0 disables the cache */
  ttlMs: number;
  maxBytes: number;
  keys: ReadVersionKeys;
  /** counts hit / miss / shared / bypass */
  outcomes?: Counter<'result'>;
}

export interface ReadCache {
  readonly enabled: boolean;
  /**
   * The answer for `key` computed from `readModels`: cached when fresh, else computed by
   * `produce` (once for all concurrent callers) and kept. `size` gives its bytes.
   * `scopes`: the keys of those models the answer depends on, and nothing else of them;
   * without, any commit of the models expires it.
   */
  get<T extends object>(readModels: readonly string[], key: string, produce: () => Promise<T>, size: (v: T) => number, scopes?: readonly string[], looked?: Lookup<T>): Promise<T>;
  /**
   * The first half of `get`: reads the versions and the answer kept at exactly those
   * versions, if any. Counts nothing: the caller hands the result to `get` as `looked`,
   * which counts it, and returns the hit or computes the answer at the versions read here
   * without reading them again.
   */
  lookup<T extends object>(readModels: readonly string[], key: string, scopes?: readonly string[]): Promise<Lookup<T>>;
}

/**
 * What `lookup` found: the versions of the request (undefined: the cache is bypassed), and
 * the answer cached at exactly those versions, if any.
 */
export interface Lookup<T> { readonly versions: string | undefined; readonly hit: T | undefined }

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

  const { keys } = opts;
  const versionKeys = (readModels: readonly string[], scopes: readonly string[] | undefined): string[] => (scopes === undefined
    ? readModels.map((m) => keys.readVersion(m))
    : readModels.flatMap((m) => [keys.readEpoch(m), ...scopes.map((s) => keys.readScope(m, scopeBucket(s)))]));

  // the series of the Redis connection: moves whenever it closes (a restart, a failover)
  let series = 0;
  redis.on('close', () => { series += 1; });

  async function versionsOf(readModels: readonly string[], scopes: readonly string[] | undefined): Promise<string | undefined> {
    // a Redis that is away would make every read wait for it: bypass the cache instead
    if (redis.status !== 'ready') return undefined;
    const s = series;
    try {
      const [generation, ...vs] = await redis.mget(keys.readGeneration, ...versionKeys(readModels, scopes));
      // read over another connection than the one the series names: nothing to compare with
      if (series !== s) return undefined;
      if (!generation) {
        // a Redis that lost its keys (or a new one): name a generation, and bypass until then
        await redis.set(keys.readGeneration, randomBytes(9).toString('base64url'), 'NX');
        return undefined;
      }
      return `${s}/${generation}/${vs.map((v) => v ?? '0').join(':')}`;
    } catch {
      return undefined;
    }
  }

  const bypass: Lookup<never> = { versions: undefined, hit: undefined };

  async function lookup<T extends object>(readModels: readonly string[], key: string, scopes?: readonly string[]): Promise<Lookup<T>> {
    if (!enabled) return bypass;
    const versions = await versionsOf(readModels, scopes);
    if (versions === undefined) return bypass;
    const hit = entries.get(key);
    return { versions, hit: hit && hit.versions === versions ? hit.value as T : undefined };
  }

  return {
    enabled,
    lookup,
    async get<T extends object>(readModels: readonly string[], key: string, produce: () => Promise<T>, size: (v: T) => number, scopes?: readonly string[], looked?: Lookup<T>): Promise<T> {
      if (!enabled) return produce();
      const { versions, hit } = looked ?? await lookup<T>(readModels, key, scopes);
      if (versions === undefined) { count('bypass'); return produce(); }
      if (hit !== undefined) { count('hit'); return hit; }
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
 * Moves a read model's versions after a commit that changed it, in one round trip: its
 * version, and the versions of the keys the commit touched (`scopes`), or its epoch when
 * the commit names none (undefined: a replay, a model that does not describe its changes
 * key by key), which expires all its answers. Never throws: a lost bump only lets cached
 * answers live out their TTL, so it is reported (false) and logged by the caller, not
 * allowed to fail the commit's caller.
 */
export async function bumpReadVersions(redis: Redis, keys: ReadVersionKeys, readModel: string, scopes?: Iterable<string>): Promise<boolean> {
  try {
    const p = redis.pipeline().incr(keys.readVersion(readModel));
    if (scopes === undefined) p.incr(keys.readEpoch(readModel));
    else for (const b of new Set([...scopes].map(scopeBucket))) p.incr(keys.readScope(readModel, b));
    const results = await p.exec();
    return (results ?? []).every(([err]) => err === null);
  } catch {
    return false;
  }
}
