/**
 * The projector runner, shared by every projection. Per projection: a consumer group;
 * batches applied and checkpointed in ONE Postgres transaction, acknowledged after
 * commit; a dead consumer's pending entries reclaimed; an entry that fails N times sent
 * to the dead-letter stream while the projection goes on; a stop that finishes the batch
 * in flight. A failure of Postgres itself is waited out, never charged to the entries.
 */
import type { Redis } from 'ioredis';
import type { Db } from '../../infra/postgres/database.js';
import type { StreamKeys } from '../../infra/redis/client.js';
import type { Logger } from '../../infra/log/logger.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { Projection, ProjectionIo } from './projection.js';
import type { StreamEntry } from '../../infra/redis/stream-group.js';
import { consumerName, createConsumerLoop, type ConsumerLoop, type EntrySource } from '../../infra/redis/consumer-loop.js';
import { acquireLeadership, type Leadership } from './leadership.js';
import {
  applyBatch, applyOneByOne, databaseAnswers, deadLetterEntry, parseEntry, settleBatch, sleep, type BatchCtx, type ParsedEntry,
} from './batch.js';

export interface RunnerOptions {
  batchSize: number;
  blockMs: number;
  maxAttempts: number;
  claimIdleMs: number;
}

export interface RunnerDeps {
  db: Db;
  /** for acks and dead letters, and the projection's own writes to Redis */
  redis: Redis;
  /**
   * the stream's other reads (claims, the pending list, a read ahead); default `redis`. The
   * projector role gives one that never sends a read again after a reconnect (createStreamReader)
   */
  streamRedis?: Redis;
  /** a connection of its own for the blocking reads (the projector role's: createStreamReader) */
  blockingRedis: Redis;
  keys: StreamKeys;
  logger: Logger;
  /**
   * When set, the runner first takes the projection's leadership (leadership.ts) so that
   * one process at a time applies it, in stream order. The projector role always sets it.
   */
  dbUrl?: string;
}

export interface RunningProjection {
  readonly name: string;
  stop(): Promise<void>;
  stats(): { applied: number; batches: number; deadLettered: number; failures: number };
}

/** Entries one transaction takes at most while a backlog waits (a replay's catch-up, a restart). */
export const MAX_TRANSACTION_ENTRIES = 10_000;

/**
 * Stream reads applied in one transaction while a backlog waits: a transaction's fixed
 * costs (BEGIN, the lock, the checkpoint, COMMIT, the ack) are paid once for all of them.
 */
export function readsPerTransaction(batchSize: number): number {
  return Math.max(1, Math.min(10, Math.floor(MAX_TRANSACTION_ENTRIES / batchSize)));
}

export function startProjection(deps: RunnerDeps, projection: Projection, opts: RunnerOptions): RunningProjection {
  const { db, redis, blockingRedis, keys, logger } = deps;
  const group = projection.name;
  const consumer = consumerName();
  const log = logger.child({ projection: group, consumer });
  const stats = { applied: 0, batches: 0, deadLettered: 0, failures: 0 };
  const io: ProjectionIo = { redis, keys };
  let stopping = false;
  const c: BatchCtx = {
    db, redis, keys, group, projection, io, log, stats, maxAttempts: opts.maxAttempts,
    stopping: () => stopping,
    setPending: (v) => loop.setPending(v),
  };

  /** Entries read ahead, parsed when they arrived (the loop's onReadAhead), while the batch before them was written. */
  // a Map, not a WeakMap (whose entries cost the collector work of their own), emptied by
  // the batch that looks them up: the read after it cannot arrive before its lookups end
  // (and an entry missed is parsed where it is taken, as one never read ahead)
  const parsedAhead = new Map<StreamEntry, TributaryEvent | Error>();

  /**
   * The bump and acknowledgement of the batch committed last, still under way: they run
   * while the next batch is applied (its Redis round trips no longer wait for Postgres,
   * nor its transaction for Redis), each batch's bump still before its own ack. True once
   * acknowledged; false when the bump or the ack failed, the batch then left pending.
   */
  let settling: Promise<boolean> | undefined;

  /** Waits for the last batch's bump and ack (before the pending list is read again, a stop, a lost lease). */
  async function settled(): Promise<void> {
    const s = settling;
    settling = undefined;
    await s;
  }

  /** Applies a batch; on failure isolates the poison entries one by one. */
  async function process(entries: StreamEntry[], from: EntrySource): Promise<void> {
    if (from === 'claimed') log.info({ count: entries.length }, 'reclaimed pending entries of a dead consumer');
    const parsed: ParsedEntry[] = [];
    for (const entry of entries) {
      const event = parsedAhead.get(entry) ?? parseEntry(entry);
      if (event instanceof Error) await deadLetterEntry(c, entry, `unparseable entry: ${event.message}`, 1);
      else parsed.push({ streamId: entry.streamId, event });
    }
    parsedAhead.clear();
    if (parsed.length === 0) return;
    const previous = settling;
    settling = undefined;
    try {
      const applied = await applyBatch(db, projection, parsed, io, log);
      stats.applied += applied.count;
      stats.batches += 1;
      settling = settleBatch(c, applied, parsed.map((p) => p.streamId), from !== 'fresh', loop.pending());
      await previous;
      // the pending list is read next (a failure, a redelivery): nothing of it may be in flight
      if (from !== 'fresh' || loop.pending()) await settled();
      return;
    } catch (err) {
      await previous;
      stats.failures += 1;
      if (!(await databaseAnswers(db))) {
        log.warn({ err }, 'postgres unavailable; batch will be retried');
        loop.setPending(true);
        await sleep(500);
        return;
      }
      log.warn({ err: (err as Error).message }, 'batch failed; applying its entries one by one');
    }
    await applyOneByOne(c, parsed, from !== 'fresh');
  }

  const loop = createConsumerLoop({ redis: deps.streamRedis ?? redis, blockingRedis }, {
    stream: keys.events, group, consumer, batchSize: opts.batchSize, blockMs: opts.blockMs, claimIdleMs: opts.claimIdleMs,
    readsPerBatch: readsPerTransaction(opts.batchSize),
    readAhead: true,
    onReadAhead: (ahead) => { for (const entry of ahead) parsedAhead.set(entry, parseEntry(entry)); },
    pendingEveryMs: 0, startPending: true, now: Date.now,
  }, process);

  const running = (async () => {
    if (!(await ensureGroup(loop, log, () => stopping))) return;
    while (!stopping) {
      if (deps.dbUrl === undefined) { await consume(loop, log, settled, () => stopping, undefined); continue; }
      const lease = await acquireLeadership(deps.dbUrl, group, () => stopping);
      if (!lease) return;
      log.info('leading the projection');
      await consume(loop, log, settled, () => stopping, lease);
      await lease.release();
      if (!stopping) log.warn('lost the projection\'s leadership; standing by');
    }
  })();

  return {
    name: group,
    async stop() {
      stopping = true;
      await running;
    },
    stats: () => ({ ...stats }),
  };
}

/** Creates the consumer group, retrying until it exists (true) or the projection stops (false). */
async function ensureGroup(loop: ConsumerLoop, log: Logger, stopping: () => boolean): Promise<boolean> {
  for (;;) {
    try {
      await loop.ensureGroup();
      return true;
    } catch (err) {
      if (stopping()) return false;
      log.warn({ err: (err as Error).message }, 'cannot create the consumer group yet; retrying');
      await sleep(500);
    }
  }
}

/** Applies the stream while `lease` is held (no lease: until stopped), then waits for the last batch's ack. */
async function consume(loop: ConsumerLoop, log: Logger, settled: () => Promise<void>, stopping: () => boolean, lease: Leadership | undefined): Promise<void> {
  // a new leader first applies every entry a previous holder left pending, oldest first
  let tookOver = lease === undefined;
  const active = () => !stopping() && (lease === undefined || lease.held());
  while (!tookOver && active()) {
    try {
      await loop.takeOverAll();
      tookOver = true;
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'projection step failed; retrying');
      await sleep(500);
    }
  }
  // Redis unreachable or a read failed: nothing was acknowledged, so wait and go on.
  // a graceful stop commits and acknowledges what was read ahead too; a lost lease leaves it to the next leader
  await loop.run(active, (err) => log.warn({ err: err.message }, 'projection step failed; retrying'), () => stopping() && (lease === undefined || lease.held()));
  await settled();
}
