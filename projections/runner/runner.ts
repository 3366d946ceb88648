/**
 * The projector runner, shared by every projection. Per projection: a consumer group;
 * batches applied and checkpointed in ONE Postgres transaction, acknowledged after
 * commit; a dead consumer's pending entries reclaimed; an entry that fails N times sent
 * to the dead-letter stream while the projection goes on; a stop that finishes the batch
 * in flight. A failure of Postgres itself is waited out, never charged to the entries.
 */
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Db } from '../../infra/postgres/database.js';
import type { StreamKeys } from '../../infra/redis/client.js';
import type { Logger } from '../../infra/log/logger.js';
import { parseEvent, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { AfterCommit, Projection, ProjectionIo } from './projection.js';
import { advanceCheckpoint, filterNew, lockShared } from './checkpoint.js';
import { ack, compareStreamIds, type StreamEntry } from '../../infra/redis/stream-group.js';
import { clearAttempts, countAttempt, deadLetter } from '../../infra/redis/dead-letter.js';
import { consumerName, createConsumerLoop, type EntrySource } from '../../infra/redis/consumer-loop.js';
import { acquireLeadership, type Leadership } from './leadership.js';
import { bumpReadVersions } from '../../infra/cache/read-cache.js';

export interface RunnerOptions {
  batchSize: number;
  blockMs: number;
  maxAttempts: number;
  claimIdleMs: number;
}

export interface RunnerDeps {
  db: Db;
  /** for acks, claims and dead letters */
  redis: Redis;
  /** a connection of its own for the blocking reads */
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Tries of a read-version bump before the batch is left unacknowledged, and the step between them. */
const BUMP_ATTEMPTS = 5;
const BUMP_RETRY_MS = 100;

/** Entries one transaction takes at most while a backlog waits (a replay's catch-up, a restart). */
export const MAX_TRANSACTION_ENTRIES = 10_000;

/**
 * Stream reads applied in one transaction while a backlog waits: a transaction's fixed
 * costs (BEGIN, the lock, the checkpoint, COMMIT, the ack) are paid once for all of them.
 */
export function readsPerTransaction(batchSize: number): number {
  return Math.max(1, Math.min(10, Math.floor(MAX_TRANSACTION_ENTRIES / batchSize)));
}


/** What a committed batch changed: how many events it applied, and the keys they touched (undefined: any). */
interface Applied { count: number; scopes: ReadonlySet<string> | undefined }

async function applyBatch(db: Db, projection: Projection, entries: readonly { streamId: string; event: TributaryEvent }[], io: ProjectionIo, log: Logger): Promise<Applied> {
  const last = entries.reduce((m, e) => (compareStreamIds(e.streamId, m) > 0 ? e.streamId : m), '0-0');
  let after: AfterCommit | undefined;
  const applied = await db.transaction().execute(async (trx) => {
    await lockShared(trx, projection.name);
    const events = entries.map((e) => e.event);
    const fresh = projection.selfDeduplicating ? events : await filterNew(trx, projection.name, events, projection.absorbs?.names);
    const result = fresh.length > 0 ? await projection.apply(trx, fresh, io) : new Set<string>();
    if (typeof result === 'function') after = result;
    const scopes = typeof result === 'function' ? undefined : result;
    await advanceCheckpoint(trx, projection.name, last, fresh.length);
    return { count: fresh.length, scopes: scopes ?? undefined };
  });
  if (after) await after().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'after-commit step failed; skipped'));
  return applied;
}

async function databaseAnswers(db: Db): Promise<boolean> {
  try {
    await sql`SELECT 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

export function startProjection(deps: RunnerDeps, projection: Projection, opts: RunnerOptions): RunningProjection {
  const { db, redis, blockingRedis, keys, logger } = deps;
  const group = projection.name;
  const consumer = consumerName();
  const log = logger.child({ projection: group, consumer });
  const stats = { applied: 0, batches: 0, deadLettered: 0, failures: 0 };
  const io: ProjectionIo = { redis, keys };
  let stopping = false;

  async function deadLetterEntry(entry: StreamEntry, error: string, attempts: number): Promise<void> {
    await deadLetter(redis, keys, group, entry.streamId, entry.payload, error, attempts);
    stats.deadLettered += 1;
    log.error({ streamId: entry.streamId, error, attempts }, 'entry sent to the dead-letter stream');
  }

  /**
   * After a commit that changed the read model: its versions move (the model's, and those
   * of the keys the batch touched), so API nodes stop serving cached answers computed
   * before it (read-cache.ts). Bumped before the ack, so a caught-up group means bumped
   * versions, and retried a few times. A batch delivered again (`redelivered`: taken over
   * from a consumer that died, or left pending) may have been committed by a run whose
   * bump was lost; its events are deduplicated now, so nothing says which keys it touched,
   * and the model's epoch moves instead, expiring all its answers. False: the bump could
   * not be made; the caller leaves the batch unacknowledged, to be delivered again.
   */
  async function bumpVersion(applied: Applied, redelivered: boolean): Promise<boolean> {
    if (applied.count === 0 && !redelivered) return true;
    const scopes = redelivered ? undefined : applied.scopes;
    for (let attempt = 1; ; attempt += 1) {
      if (await bumpReadVersions(redis, keys, group, scopes)) return true;
      if (attempt >= BUMP_ATTEMPTS || stopping) {
        log.warn('could not bump the read model version; the batch is left unacknowledged and, delivered again, moves the epoch');
        return false;
      }
      await sleep(BUMP_RETRY_MS * attempt);
    }
  }

  /** Entries read ahead, parsed when they arrived (the loop's onReadAhead), while the batch before them was written. */
  // a Map, not a WeakMap (whose entries cost the collector work of their own), emptied by
  // the batch that looks them up: the read after it cannot arrive before its lookups end
  // (and an entry missed is parsed where it is taken, as one never read ahead)
  const parsedAhead = new Map<StreamEntry, TributaryEvent | Error>();
  const parseEntry = (entry: StreamEntry): TributaryEvent | Error => {
    try {
      return parseEvent(entry.payload ?? '');
    } catch (err) {
      return err as Error;
    }
  };

  /**
   * The bump and acknowledgement of the batch committed last, still under way: they run
   * while the next batch is applied (its Redis round trips no longer wait for Postgres,
   * nor its transaction for Redis), each batch's bump still before its own ack. True once
   * acknowledged; false when the bump or the ack failed, the batch then left pending.
   */
  let settling: Promise<boolean> | undefined;

  async function settle(applied: Applied, ids: readonly string[], redelivered: boolean, clear: boolean): Promise<boolean> {
    try {
      if (!(await bumpVersion(applied, redelivered))) { loop.setPending(true); return false; }
      await ack(redis, keys.events, group, ids);
      if (clear) await clearAttempts(redis, keys, group, ids);
      return true;
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'could not acknowledge a committed batch; it is delivered again');
      loop.setPending(true);
      return false;
    }
  }

  /** Waits for the last batch's bump and ack (before the pending list is read again, a stop, a lost lease). */
  async function settled(): Promise<void> {
    const s = settling;
    settling = undefined;
    await s;
  }

  /** Applies a batch; on failure isolates the poison entries one by one. */
  async function process(entries: StreamEntry[], from: EntrySource): Promise<void> {
    if (from === 'claimed') log.info({ count: entries.length }, 'reclaimed pending entries of a dead consumer');
    const parsed: { streamId: string; event: TributaryEvent }[] = [];
    for (const entry of entries) {
      const event = parsedAhead.get(entry) ?? parseEntry(entry);
      if (event instanceof Error) await deadLetterEntry(entry, `unparseable entry: ${event.message}`, 1);
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
      settling = settle(applied, parsed.map((p) => p.streamId), from !== 'fresh', loop.pending());
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
    for (const p of parsed) {
      try {
        const applied = await applyBatch(db, projection, [p], io, log);
        stats.applied += applied.count;
        if (!(await bumpVersion(applied, from !== 'fresh'))) { loop.setPending(true); return; }
        await ack(redis, keys.events, group, [p.streamId]);
      } catch (err) {
        if (!(await databaseAnswers(db))) { loop.setPending(true); return; }
        const attempts = await countAttempt(redis, keys, group, p.streamId);
        if (attempts >= opts.maxAttempts) {
          await deadLetterEntry({ streamId: p.streamId, payload: JSON.stringify(p.event) }, (err as Error).message, attempts);
        } else {
          loop.setPending(true);
          await sleep(Math.min(100 * attempts, 2000));
        }
      }
    }
  }

  const loop = createConsumerLoop({ redis, blockingRedis }, {
    stream: keys.events, group, consumer, batchSize: opts.batchSize, blockMs: opts.blockMs, claimIdleMs: opts.claimIdleMs,
    readsPerBatch: readsPerTransaction(opts.batchSize),
    readAhead: true,
    onReadAhead: (ahead) => { for (const entry of ahead) parsedAhead.set(entry, parseEntry(entry)); },
    pendingEveryMs: 0, startPending: true, now: Date.now,
  }, process);

  async function consume(lease: Leadership | undefined): Promise<void> {
    // a new leader first applies every entry a previous holder left pending, oldest first
    let tookOver = lease === undefined;
    const active = () => !stopping && (lease === undefined || lease.held());
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
    await loop.run(active, (err) => log.warn({ err: err.message }, 'projection step failed; retrying'), () => stopping && (lease === undefined || lease.held()));
    await settled();
  }

  const running = (async () => {
    for (;;) {
      try {
        await loop.ensureGroup();
        break;
      } catch (err) {
        if (stopping) return;
        log.warn({ err: (err as Error).message }, 'cannot create the consumer group yet; retrying');
        await sleep(500);
      }
    }
    while (!stopping) {
      if (deps.dbUrl === undefined) { await consume(undefined); continue; }
      const lease = await acquireLeadership(deps.dbUrl, group, () => stopping);
      if (!lease) return;
      log.info('leading the projection');
      await consume(lease);
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
