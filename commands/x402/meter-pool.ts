/**
 * Rows recorded ahead for a payer's busy counter: the ledger's wait taken off the request's path.
 *
 * Every admitted pay-as-you-go request and prepaid draw holds a ledger row (its slices) that is
 * durable before its answer leaves (commands/settlement/usage-ledger.ts, prepaid/ledger.ts).
 * Written as the request comes, a row costs the request two waits, the meter script's and the
 * statement's commit; concurrent requests share them (meter-batch.ts, grouped-writes.ts) and so
 * move as one convoy, and while its rows commit the node has nothing to run (test/bench/README.md).
 *
 * When one counter (a policy's period at one price for one payer account and gateway, a prepaid
 * credit at one price) is busy, this node counts a block of n chunks in one meter script and
 * records n rows for it in one statement, each with its own request id and its own slices,
 * before any request needs them. A request then takes the next row of a block already durable:
 * its admission waits for nothing, and the next block is counted and recorded while the current
 * one still has rows, beside the requests being served.
 *
 * What a row guarantees is the same as a row written on demand:
 * - its slices were handed out by the counter within the cap, the credit or the account's limit,
 *   and the ledger refused any that overlaps a row it holds (a counter behind the ledger);
 * - it is a reservation until served: charged or drawn only once its request was answered and
 *   the node's served mark covers it (commands/settlement/served-marks.ts; prepaid rows recorded
 *   ahead carry reserved_until, migration 1022); a row no request took is deleted and its chunks
 *   given back to the counters, and one a dead node left is dropped by the settler at its bound;
 * - a block counts in the account's outstanding as a whole, so the exposure a merchant accepts is
 *   never passed, and is counted only with room for AHEAD_ROOM blocks of its size under each
 *   limit: near a limit requests are metered one by one, as without blocks;
 * - a request takes a row only while the block as a whole still fits the limits computed for
 *   this request (what the account can fund now, the exposure, the cap): funds that fell since the
 *   block was counted send the request through the script, and the block back.
 *
 * A counter's blocks start once it is busy (BUSY_AT requests metered within BUSY_WINDOW_MS, or
 * BUSY_WAITING waiting for the meter at once), and go back once none is taken for IDLE_MS or they
 * are BLOCK_TTL_MS old. X402_METER_AHEAD sets the largest block (0: none; docs/money.md).
 */
import { randomUUID } from 'node:crypto';
import { overlapOf, takeBackInDoubt } from './meter-slices.js';

/**
 * A counter is busy, and its blocks start, once BUSY_AT of its requests are metered within BUSY_WINDOW_MS,
 * or BUSY_WAITING are waiting for the script or the statement at once (a convoy forming).
 */
const BUSY_AT = 8;
const BUSY_WINDOW_MS = 10;
const BUSY_WAITING = 4;
/** A block is admitted only while the counter and the account have room for this many blocks of its size. */
const AHEAD_ROOM = 4n;
/** Unused rows go back after this long without a request taking one, or once their block is this old. */
const IDLE_MS = 25;
/** ... and once their block is this old, or a tenth of the rows' reservation bound when that is less (served-marks.ts gives up later) */
const BLOCK_TTL_MS = 2000;
const SWEEP_MS = 20;
/** After a block was refused or its rows failed, requests are metered one by one for this long. */
const COOL_MS = 1000;
const MIN_BLOCK = 8;

/** A block as its counter counted it: where its slices start, and the counts with the whole block in them. */
export interface Counted { start: bigint; accountStart: bigint; usedAfter: bigint; owedAfter: bigint }
/** A block the script refused, with the counts it read. */
export interface Refused { used: bigint; owed: bigint }

/**
 * One counter blocks are counted on (a pay-as-you-go period at one price for one account and gateway,
 * a prepaid credit at one price), as one request sees it: its limits are this request's.
 */
export interface AheadCounter {
  /** the pool's identity: a row of another counter is never taken */
  id: string;
  chunk: bigint;
  /** the counter's limit and the account's outstanding limit (none for a credit) this request is admitted under */
  limit: bigint; accountLimit?: bigint;
  /**
   * counts `n` chunks as one, each limit lowered by `room` (one meter script). Refused (nothing counted): the
   * counter's use and the account's outstanding as the script read them; undefined when it asked for a rebuild
   */
  count(n: bigint, room: bigint): Promise<Counted | Refused | undefined>;
  /** writes the block's rows (one per id, the i-th holding the i-th chunk's slices), as reservations */
  record(ids: readonly string[], c: Counted): Promise<PromiseSettledResult<void>[]>;
  /**
   * after a row of the block (ending at `end`) failed: every row that may have been written taken back,
   * the counts set right (the block's chunks given back, unless the counter was found behind the ledger)
   */
  failed(ids: readonly string[], results: readonly PromiseSettledResult<void>[], end: bigint): Promise<void>;
  /**
   * deletes the unused rows `ids` of a block ending at `end` (the i-th holding the i-th of the last
   * ids.length chunks) and gives back the chunks of those deleted, each run of them as one slice
   */
  giveBack(ids: readonly string[], end: bigint): Promise<void>;
}

interface Block {
  ids: string[];
  next: number;
  /** the counter's use before the block */
  usedBefore: bigint;
  counted: Counted;
  at: number;
}

interface Pool {
  counter: AheadCounter;
  blocks: Block[];
  filling: boolean;
  /** requests of the counter in the current window, and its start */
  seen: number; windowAt: number;
  /** taken since the last block was asked for: the next block's size, at most `most` (halved each time the script refuses one) */
  taken: number; most: number;
  /** requests of the counter metered one by one, not answered yet */
  waiting: number;
  coolUntil: number;
  lastAt: number;
  /** given up (idle, limits, the node stopping): a block its fill brings back goes back at once */
  dropped: boolean;
}

export interface AheadSlot { requestId: string; used: bigint }
/** No row to take: the request is metered by the script, and says when that is over (`waiting`). */
export interface AheadMiss { waiting: () => void }

export interface MeterAhead {
  /** a row recorded ahead for `c` within its limits, or undefined: meter this request by the script (its demand noted) */
  take(c: AheadCounter): AheadSlot | AheadMiss | undefined;
  /** this node's unused rows of the counter `id` given back (a request refused at a limit tries once more after) */
  releaseCounter(id: string): Promise<boolean>;
  /** every unused row deleted and its chunks given back (a node stopping) */
  release(): Promise<void>;
  /** blocks recorded, rows taken from them and rows given back unused, since this node started */
  stats(): { blocks: number; taken: number; givenBack: number };
}

/**
 * After a block's rows failed (AheadCounter.failed): every row that may have been written is taken back
 * in the background (a row refused for an overlap was not written). True when the counter was found
 * behind the ledger (an overlap): the block's chunks are not to be given back then.
 */
export function takeBackBlock(
  ids: readonly string[], results: readonly PromiseSettledResult<void>[], discard: (id: string, cause?: unknown) => Promise<void>,
): boolean {
  ids.forEach((id, i) => {
    const w = results[i]!;
    if (w.status === 'fulfilled') takeBackInDoubt(() => discard(id));
    else if (!overlapOf(w.reason)) takeBackInDoubt(() => discard(id, w.reason));
  });
  return results.some((w) => w.status === 'rejected' && overlapOf(w.reason) !== undefined);
}

/**
 * Deletes a block's unused rows `ids` (the i-th holding the i-th of the last ids.length chunks before
 * `end`) and gives back the chunks of those it deleted, each run of them as one slice, highest first
 * (so that the first moves the counter back when nothing was counted after the block). A row not
 * deleted (an error, or not found) keeps its chunk counted. True when every row was deleted.
 */
export async function giveBackRuns(
  ids: readonly string[], end: bigint, chunk: bigint,
  deleteRow: (id: string) => Promise<boolean>, giveBackSlice: (sliceEnd: bigint, amount: bigint) => Promise<void>,
): Promise<boolean> {
  const gone = (await Promise.allSettled(ids.map(deleteRow))).map((r) => r.status === 'fulfilled' && r.value);
  let runEnd = end;
  let run = 0n;
  for (let i = ids.length - 1; i >= -1; i -= 1) {
    if (i >= 0 && gone[i]) { run += 1n; continue; }
    if (run > 0n) await giveBackSlice(runEnd, run * chunk);
    // the run below starts under this row's chunk
    runEnd = end - BigInt(ids.length - i) * chunk;
    run = 0n;
  }
  return gone.every(Boolean);
}

/** `reservationSeconds`: the rows' reservation bound (X402_PAYG_RESERVATION_SECONDS): a block is taken from for a tenth of it at most */
export function createMeterAhead(opts: { max: number; reservationSeconds?: number; onError?: (err: unknown) => void }): MeterAhead {
  const pools = new Map<string, Pool>();
  const max = Math.floor(opts.max);
  const ttlMs = Math.min(BLOCK_TTL_MS, (opts.reservationSeconds ?? Infinity) * 100);
  let sweeper: NodeJS.Timeout | undefined;
  let closed = false;
  const filling = new Set<Promise<void>>();
  const counts = { blocks: 0, taken: 0, givenBack: 0 };
  const failed = (err: unknown): void => { opts.onError?.(err); };

  async function releaseBlock(c: AheadCounter, b: Block): Promise<void> {
    const unused = b.ids.slice(b.next);
    b.next = b.ids.length;
    if (unused.length === 0) return;
    counts.givenBack += unused.length;
    try {
      await c.giveBack(unused, b.counted.start + BigInt(b.ids.length) * c.chunk);
    } catch (err) {
      failed(err);
    }
  }
  const dropPool = (p: Pool): Promise<void> => {
    p.dropped = true;
    const blocks = p.blocks;
    p.blocks = [];
    if (pools.get(p.counter.id) === p) pools.delete(p.counter.id);
    return Promise.all(blocks.map((b) => releaseBlock(p.counter, b))).then(() => undefined);
  };
  const sweep = (): void => {
    const now = Date.now();
    for (const p of pools.values()) {
      if (now - p.lastAt > IDLE_MS && !p.filling) { void dropPool(p); continue; }
      while (p.blocks[0] && now - p.blocks[0].at > ttlMs) void releaseBlock(p.counter, p.blocks.shift()!);
    }
    if (pools.size === 0) { clearInterval(sweeper); sweeper = undefined; }
  };

  /** one block for `p`, counted and recorded; never throws (a failure cools the counter and is reported) */
  async function fill(p: Pool, c: AheadCounter): Promise<void> {
    p.filling = true;
    try {
      // no larger than a quarter of the least limit (AHEAD_ROOM blocks fit under it), nor than the script last admitted
      const least = c.accountLimit !== undefined && c.accountLimit < c.limit ? c.accountLimit : c.limit;
      const fits = least / (AHEAD_ROOM * c.chunk);
      const wanted = BigInt(Math.min(p.most, Math.max(MIN_BLOCK, 2 * p.taken)));
      let n = wanted < fits ? wanted : fits;
      p.taken = 0;
      let counted: Counted | Refused | undefined;
      for (let tries = 0; ; tries += 1) {
        if (n < BigInt(MIN_BLOCK)) { p.coolUntil = Date.now() + COOL_MS; return; }
        counted = await c.count(n, (AHEAD_ROOM - 1n) * n * c.chunk);
        if (!counted || 'start' in counted) break;
        // too little room left for a block this size: at once the largest that leaves room for AHEAD_ROOM of it, as the
        // script read the counts; refused again, one by one for a while, and smaller blocks after
        const left = [c.limit - counted.used, ...(c.accountLimit !== undefined ? [c.accountLimit - counted.owed] : [])].reduce((x, y) => (x < y ? x : y));
        const room = left / (AHEAD_ROOM * c.chunk);
        if (tries > 0 || room >= n) {
          p.most = Math.max(MIN_BLOCK, Math.floor(Number(n) / 2));
          p.coolUntil = Date.now() + COOL_MS;
          return;
        }
        n = room;
      }
      if (!counted) { p.coolUntil = Date.now() + COOL_MS; return; }
      const cost = n * c.chunk;
      const ids = Array.from({ length: Number(n) }, () => randomUUID());
      const written = await c.record(ids, counted);
      if (written.some((w) => w.status === 'rejected')) {
        p.coolUntil = Date.now() + COOL_MS;
        await c.failed(ids, written, counted.start + cost);
        return;
      }
      const block: Block = { ids, next: 0, usedBefore: counted.usedAfter - cost, counted, at: Date.now() };
      counts.blocks += 1;
      // its pool given up meanwhile (or the node stopping): straight back
      if (p.dropped || closed) { await releaseBlock(c, block); return; }
      p.blocks.push(block);
    } catch (err) {
      p.coolUntil = Date.now() + COOL_MS;
      failed(err);
    } finally {
      p.filling = false;
    }
  }
  const startFill = (p: Pool, c: AheadCounter): void => {
    const f = fill(p, c).catch(failed).finally(() => { filling.delete(f); });
    filling.add(f);
  };

  return {
    take(c) {
      if (max <= 0 || closed) return undefined;
      const now = Date.now();
      let p = pools.get(c.id);
      if (!p) {
        p = { counter: c, blocks: [], filling: false, seen: 0, windowAt: now, taken: 0, most: max, waiting: 0, coolUntil: 0, lastAt: now, dropped: false };
        pools.set(c.id, p);
        sweeper ??= setInterval(sweep, SWEEP_MS).unref();
      }
      p.lastAt = now;
      while (p.blocks[0] && p.blocks[0].next >= p.blocks[0].ids.length) p.blocks.shift();
      const b = p.blocks[0];
      // the block as a whole no longer within this request's limits (funds fell, a smaller exposure): metered by the script
      if (b && (b.counted.usedAfter > c.limit || (c.accountLimit !== undefined && b.counted.owedAfter > c.accountLimit))) {
        p.coolUntil = now + COOL_MS;
        void dropPool(p);
        return undefined;
      }
      if (now - p.windowAt > BUSY_WINDOW_MS) { p.windowAt = now; p.seen = 0; }
      p.seen += 1;
      p.taken += 1;
      const left = p.blocks.reduce((s, x) => s + x.ids.length - x.next, 0);
      const busy = b !== undefined || p.seen >= BUSY_AT || p.waiting >= BUSY_WAITING;
      if (!p.filling && now >= p.coolUntil && busy && left <= Math.max(MIN_BLOCK, p.taken)) startFill(p, c);
      if (!b) {
        const pool = p;
        pool.waiting += 1;
        return { waiting: () => { pool.waiting -= 1; } };
      }
      const i = b.next;
      b.next += 1;
      counts.taken += 1;
      return { requestId: b.ids[i]!, used: b.usedBefore + BigInt(i + 1) * c.chunk };
    },
    async releaseCounter(id) {
      const p = pools.get(id);
      if (!p || p.blocks.every((b) => b.next >= b.ids.length)) return false;
      p.coolUntil = Date.now() + COOL_MS;
      await dropPool(p);
      return true;
    },
    async release() {
      closed = true;
      clearInterval(sweeper);
      sweeper = undefined;
      // the fills in flight first: each gives its block back itself once it sees the node stopping
      await Promise.all([...filling]);
      await Promise.all([...pools.values()].map(dropPool));
    },
    stats: () => ({ ...counts }),
  };
}
