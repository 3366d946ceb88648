/**
 * The consumer-group loop, once for every reader of the event stream (the projection
 * runner, the notifier, and the workers to come). Each step does one of, in this order:
 *   1. claim: every max(1 s, claimIdleMs / 2), take over what a dead consumer left pending
 *      for longer than claimIdleMs;
 *   2. pending: while this consumer has entries it did not acknowledge (a failed batch, an
 *      entry that waits for something), read its own pending list again: at once until it
 *      is empty (pendingEveryMs 0), or at most every pendingEveryMs;
 *   3. fresh: a blocking read of new entries (its own connection, a finite BLOCK), shorter
 *      while pending entries wait.
 * The handler acknowledges what it is done with (ack, dead letters); the loop never does.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { autoClaim, ensureGroup, readFreshNow, readGroup, type StreamEntry } from './stream-group.js';

export type EntrySource = 'claimed' | 'pending' | 'fresh';

export interface ConsumerLoopOptions {
  stream: string;
  group: string;
  consumer: string;
  batchSize: number;
  blockMs: number;
  claimIdleMs: number;
  /** 0: re-read the pending list at every step until it is empty; else at most this often */
  pendingEveryMs: number;
  /**
   * Fresh reads handed to the handler at once while a backlog waits (default 1): after a
   * full read, up to this many reads' worth more is taken without blocking. A caught-up
   * consumer still handles each entry as it arrives.
   */
  readsPerBatch?: number;
  /**
   * While a backlog waits, read the next batch while the handler works on this one. The
   * entries read ahead are this consumer's pending entries: after a failure they come back
   * through the pending read; a consumer that stops gracefully handles them (run's
   * finishAhead), one that loses its lease or dies leaves them to the next one's claim
   * (takeOverAll, autoClaim), as it would a batch it died handling.
   */
  readAhead?: boolean;
  /**
   * Given the entries of a read-ahead as soon as they arrive, while the handler still works
   * on the batch before them: a handler prepares them there (parses them), so that this
   * work overlaps the previous batch's writes instead of following them. Must not throw.
   */
  onReadAhead?: (entries: readonly StreamEntry[]) => void;
  /** whether the first steps read this consumer's pending list (a restarted consumer of the same name) */
  startPending: boolean;
  now(): number;
}

export interface ConsumerLoopDeps {
  /** claims, pending reads */
  redis: Redis;
  /** the blocking reads of fresh entries */
  blockingRedis: Redis;
}

export type BatchHandler = (entries: StreamEntry[], from: EntrySource) => Promise<void>;

export interface ConsumerLoop {
  ensureGroup(): Promise<void>;
  step(): Promise<void>;
  /** whether this consumer's pending list is to be read again (set after a failure, cleared when it is empty) */
  setPending(pending: boolean): void;
  pending(): boolean;
  /** takes over every entry pending in the group, whoever holds it, oldest first (a new leader) */
  takeOverAll(): Promise<void>;
  /**
   * Steps while `active()`; a failed step (Redis unreachable, a failed read) is reported
   * and waited out, and the pending list is read again, as nothing was acknowledged.
   * When it ends, entries read ahead are handled if `finishAhead()` says so (a graceful
   * stop: what this consumer read, it commits and acknowledges), else left pending for
   * the next holder's claim (leadership lost).
   */
  run(active: () => boolean, onError: (err: Error) => void, finishAhead?: () => boolean): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A consumer name unique to this process and start. */
export function consumerName(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

export function createConsumerLoop(deps: ConsumerLoopDeps, opts: ConsumerLoopOptions, handle: BatchHandler): ConsumerLoop {
  const { redis, blockingRedis } = deps;
  const { stream, group, consumer, batchSize } = opts;
  let pending = opts.startPending;
  let lastClaim = 0;
  let lastPending = 0;
  /** the next fresh read, begun while a backlog's batch is handled */
  let ahead: Promise<StreamEntry[]> | undefined;

  async function step(): Promise<void> {
    const now = opts.now();
    if (now - lastClaim > Math.max(1000, opts.claimIdleMs / 2)) {
      lastClaim = now;
      const claimed = await autoClaim(redis, stream, group, consumer, opts.claimIdleMs, batchSize);
      if (claimed.length > 0) { await handle(claimed, 'claimed'); return; }
    }
    if (pending && (opts.pendingEveryMs === 0 || now - lastPending > opts.pendingEveryMs)) {
      lastPending = now;
      await dropAhead();
      const mine = await readGroup(redis, stream, group, consumer, batchSize, 0, '0');
      if (mine.length > 0) { await handle(mine, 'pending'); return; }
      pending = false;
    }
    const reads = opts.readsPerBatch ?? 1;
    let fresh: StreamEntry[];
    if (ahead) {
      fresh = await ahead;
      ahead = undefined;
    } else {
      const block = pending && opts.pendingEveryMs > 0 ? Math.min(opts.blockMs, opts.pendingEveryMs) : opts.blockMs;
      fresh = await readGroup(blockingRedis, stream, group, consumer, batchSize, block, '>');
      if (reads > 1 && fresh.length >= batchSize) fresh.push(...(await readFreshNow(redis, stream, group, consumer, batchSize * (reads - 1))));
    }
    if (fresh.length === 0) return;
    // A backlog: the next batch is read (and its reply parsed) while this one is handled.
    if (opts.readAhead === true && fresh.length >= batchSize * reads) {
      const prepare = opts.onReadAhead;
      ahead = readFreshNow(redis, stream, group, consumer, batchSize * reads);
      if (prepare) ahead = ahead.then((entries) => { prepare(entries); return entries; });
      ahead.catch(() => undefined); // awaited at the next step, or dropped below
    }
    await handle(fresh, 'fresh');
    if (pending) await dropAhead();
  }

  /**
   * The pending list, read again from its start after a failure, holds what was read ahead
   * too, in stream order: that read is not handled on its own.
   */
  async function dropAhead(): Promise<void> {
    const a = ahead;
    ahead = undefined;
    await a?.catch(() => undefined);
  }

  return {
    ensureGroup: () => ensureGroup(redis, stream, group),
    step,
    setPending(p) { pending = p; },
    pending: () => pending,
    async takeOverAll() {
      for (;;) {
        const claimed = await autoClaim(redis, stream, group, consumer, 0, batchSize);
        if (claimed.length === 0) break;
        await handle(claimed, 'claimed');
      }
      pending = true;
    },
    async run(active, onError, finishAhead = () => false) {
      while (active()) {
        try {
          await step();
        } catch (err) {
          onError(err as Error);
          pending = true;
          await sleep(500);
        }
      }
      if (!finishAhead()) { await dropAhead(); return; }
      const a = ahead;
      ahead = undefined;
      const entries = await a?.catch(() => [] as StreamEntry[]) ?? [];
      if (entries.length > 0) await handle(entries, 'fresh').catch((err: unknown) => onError(err as Error));
    },
  };
}
