/**
 * The pool sync worker: every POOL_SYNC_INTERVAL_MS, each venue's top pools by TVL
 * (POOL_SYNC_MAX_PER_VENUE) replace that venue's rows in `pools`. A venue that fails
 * keeps its previous rows until the next run.
 *
 * Many API nodes may run the worker; one run per interval happens across all of them:
 * a run starts only by taking a Redis key (SET NX PX interval), which lapses by itself
 * when the interval ends, so a dead node never blocks the others.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Venue, VenueClient } from '../../infra/upstream/venues/types.js';
import { replaceVenuePools } from './store.js';
import { createVenueClients } from './venues.js';
import { poolsSyncLockKey } from '../../src/kernel/names/index.js';

export interface PoolSyncDeps {
  db: Db;
  redis: Redis;
  /** Redis key prefix of the deployment */
  prefix: string;
  venues: readonly VenueClient[];
  maxPerVenue: number;
  intervalMs: number;
  logger: Logger;
  clock: Clock;
}

export type SyncReport = Partial<Record<Venue, number | 'failed'>>;

/** One sync of every venue, now, without the cross-node guard. */
export async function syncPoolsOnce(deps: Omit<PoolSyncDeps, 'redis' | 'prefix' | 'intervalMs'>): Promise<SyncReport> {
  const report: SyncReport = {};
  await Promise.all(deps.venues.map(async (client) => {
    try {
      const pools = await client.listTop(deps.maxPerVenue);
      await replaceVenuePools(deps.db, client.venue, pools, new Date(deps.clock.now()));
      report[client.venue] = pools.length;
    } catch (err) {
      report[client.venue] = 'failed';
      deps.logger.warn({ venue: client.venue, err: (err as Error).message }, 'pool sync: venue failed; keeping its previous pools');
    }
  }));
  return report;
}

export interface PoolSync {
  /** runs one sync now if no node ran one within the interval; undefined when skipped */
  tick(): Promise<SyncReport | undefined>;
  stop(): Promise<void>;
}

export function startPoolSync(deps: PoolSyncDeps): PoolSync {
  const lockKey = poolsSyncLockKey(deps.prefix);
  const node = randomUUID();
  let running: Promise<SyncReport | undefined> | undefined;
  let stopped = false;

  async function tick(): Promise<SyncReport | undefined> {
    if (stopped) return undefined;
    if (running) return running;
    running = (async () => {
      try {
        const took = await deps.redis.set(lockKey, node, 'PX', Math.max(1000, deps.intervalMs), 'NX');
        if (took !== 'OK') return undefined;
        const report = await syncPoolsOnce(deps);
        deps.logger.info({ report }, 'pool sync done');
        return report;
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message }, 'pool sync failed');
        return undefined;
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  // Ticks more often than the interval so a node takes over soon after the lock lapses.
  const period = Math.max(1000, Math.floor(deps.intervalMs / 4));
  const timer = setInterval(() => { void tick(); }, period);
  timer.unref();
  void tick();

  return {
    tick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/** The worker attached to an API node's lifetime (POOL_SYNC_INTERVAL_MS = 0 turns it off). */
export const poolSyncAttachment = async (_server: unknown, ctx: { db: Db; redis: Redis; logger: Logger; clock: Clock; config: Config }): Promise<{ close(): Promise<void> }> => {
  const u = ctx.config.upstream;
  if (u.poolSyncIntervalMs === 0) return { close: async () => undefined };
  const sync = startPoolSync({
    db: ctx.db,
    redis: ctx.redis,
    prefix: ctx.config.redis.prefix,
    venues: createVenueClients(ctx.config, ctx.logger),
    maxPerVenue: u.poolSyncMaxPerVenue,
    intervalMs: u.poolSyncIntervalMs,
    logger: ctx.logger,
    clock: ctx.clock,
  });
  return { close: () => sync.stop() };
};
