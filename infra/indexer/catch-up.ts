/**
 * One catch-up round: every signature of the program newer than the cursor, oldest
 * first; each successful transaction fetched, decoded and appended; the cursor moved
 * in the same atomic step as its events' append. Two batch requests are always in
 * flight while there is anything left to fetch, whatever Redis is doing, and each step
 * is decoded as soon as it arrives; appends follow in chain order, one at a time, each
 * carrying every step decoded since the previous one. Failed transactions are passed
 * over without a fetch. Live notifications and gap repair both come here, so the stream
 * receives events in chain order and the cursor never skips a transaction. An append
 * that finds the cursor moved by another writer is refused and ends the round early.
 */
import pRetry from 'p-retry';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import { appendSerialized, type CursorExpectation } from '../redis/event-stream.js';
import type { StreamKeys } from '../redis/client.js';
import type { ChainReader, SignatureInfo, TransactionJson } from '../solana/chain-reader.js';
import type { SerializedEvent } from '../../src/kernel/events/envelope.js';
import { cursorMove, readRoundStart, type Cursor } from './cursor.js';
import { serializeTransaction } from './decode.js';
import { retryForever } from './retry.js';
import type { IndexerCounters } from './stats.js';

export interface CatchUpDeps {
  reader: ChainReader;
  redis: Redis;
  keys: StreamKeys;
  prefix: string;
  programId: string;
  pageSize: number;
  /** transactions fetched per step (one batch request, or parallel calls when batchRequests is off); appended in order */
  concurrency: number;
  /** fetch a step's transactions in one JSON-RPC batch (default); off for nodes that refuse batches */
  batchRequests?: boolean;
  counters: IndexerCounters;
  signal: AbortSignal;
  logger?: Logger;
  /** called with every signature the round got past (processed or skipped) */
  onHandled?(signature: string): void;
}

class NotYetAvailable extends Error {}

/** getSignaturesForAddress pages, newest first, down to (excluding) the cursor. */
async function newerSignatures(deps: CatchUpDeps, cursor: Cursor | undefined): Promise<SignatureInfo[]> {
  const out: SignatureInfo[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await deps.reader.getSignaturesForAddress(deps.programId, {
      limit: deps.pageSize, ...(before ? { before } : {}), ...(cursor ? { until: cursor.signature } : {}),
    });
    out.push(...page);
    const last = page[page.length - 1];
    if (page.length < deps.pageSize || !last || deps.signal.aborted) return out;
    before = last.signature;
  }
}

/** A signature just listed may not be served by getTransaction yet on every node. */
function fetchTransaction(deps: CatchUpDeps, signature: string): Promise<TransactionJson> {
  return pRetry(async () => {
    const tx = await deps.reader.getTransaction(signature);
    if (!tx) throw new NotYetAvailable(`transaction ${signature} not available yet`);
    return tx;
  }, { retries: 6, minTimeout: 100, maxTimeout: 2_000, shouldRetry: ({ error }) => error instanceof NotYetAvailable });
}

/**
 * The transactions of a step, in its order; undefined for a failed one (not fetched). One
 * batch request, then single retried fetches for any the node did not serve yet (the
 * rest wait for nothing: no promise per transaction).
 */
async function fetchChunk(deps: CatchUpDeps, chunk: readonly SignatureInfo[]): Promise<(TransactionJson | undefined)[]> {
  const ok = (s: SignatureInfo) => s.err === null || s.err === undefined;
  if (deps.batchRequests === false) {
    return Promise.all(chunk.map((s) => (ok(s) ? fetchTransaction(deps, s.signature) : Promise.resolve(undefined))));
  }
  const wanted: string[] = [];
  for (const s of chunk) if (ok(s)) wanted.push(s.signature);
  const served = wanted.length > 0 ? await deps.reader.getTransactions(wanted) : [];
  const out = new Array<TransactionJson | undefined>(chunk.length);
  const late: Promise<void>[] = [];
  // the batch's answers come in the order asked, which is the step's order of its successful transactions
  let k = 0;
  chunk.forEach((s, i) => {
    if (!ok(s)) return;
    const tx = served[k];
    k += 1;
    if (tx) out[i] = tx;
    else late.push(fetchTransaction(deps, s.signature).then((t) => void (out[i] = t)));
  });
  if (late.length > 0) await Promise.all(late);
  return out;
}

/**
 * Batch requests in flight at once, each issued as soon as one returns, whatever the
 * appends are doing: the RPC node is never idle while the stream catches up. Two: more
 * requests in flight at once each take longer, and a slow node would time them out.
 */
const IN_FLIGHT = 2;
/**
 * Steps fetched and decoded but not yet appended, at most: the memory a slow Redis can
 * hold up, and the most steps one append carries.
 */
const AHEAD = 8;

/** A step's transactions decoded, each event as its stream entry's text, with what the counters and logs learn from it. */
interface DecodedStep {
  events: SerializedEvent[];
  failedSkipped: number;
  unknown: { signature: string; ixPath: string; index: number; payload: string }[];
  truncated: string[];
}

/** The step's transactions decoded, in chain order (pure: counters and logs are the caller's, in step order). */
function decodeChunk(deps: CatchUpDeps, chunk: readonly SignatureInfo[], fetched: readonly (TransactionJson | undefined)[]): DecodedStep {
  const step: DecodedStep = { events: [], failedSkipped: 0, unknown: [], truncated: [] };
  chunk.forEach((s, i) => {
    const tx = fetched[i];
    if (!tx) {
      step.failedSkipped += 1;
      return;
    }
    const decoded = serializeTransaction(tx, s.signature, deps.programId);
    if (decoded.failed) step.failedSkipped += 1;
    for (const u of decoded.unknown) step.unknown.push({ signature: s.signature, ...u });
    if (decoded.truncated) step.truncated.push(s.signature);
    for (const e of decoded.events) step.events.push(e);
  });
  return step;
}

function countDecoded(deps: CatchUpDeps, step: DecodedStep): void {
  deps.counters.failedTransactionsSkipped += step.failedSkipped;
  for (const u of step.unknown) {
    deps.counters.unknownDiscriminators += 1;
    deps.logger?.warn({ signature: u.signature, ixPath: u.ixPath, index: u.index, payload: u.payload.slice(0, 24) }, 'unknown event discriminator');
  }
  for (const signature of step.truncated) deps.logger?.warn({ signature }, 'transaction logs truncated; log events past the cut are lost');
}

/** What a round did: the signatures it got past, and whether another writer's cursor move ended it early. */
export interface RoundResult { handled: number; refused: boolean }

export async function catchUp(deps: CatchUpDeps): Promise<RoundResult> {
  const guard = { signal: deps.signal, ...(deps.logger ? { logger: deps.logger } : {}) };
  const start = await retryForever('reading the indexer cursor', () => readRoundStart(deps.redis, deps.prefix, deps.keys.events), guard);
  if (start.fromStream) deps.logger?.warn({ from: start.cursor }, 'indexer cursor missing; resuming after the stream\'s last entry');
  // each append expects the cursor the previous one set; the first, the one read above
  let expect: CursorExpectation = start.expect;
  let refused = false;
  const pending = (await newerSignatures(deps, start.cursor)).reverse();
  const chunks: SignatureInfo[][] = [];
  for (let start = 0; start < pending.length; start += deps.concurrency) chunks.push(pending.slice(start, start + deps.concurrency));
  // Fetches run ahead, IN_FLIGHT at a time, each step decoded as soon as it arrives (its
  // transactions' JSON is garbage at once). Counting, appending and the cursor stay in
  // chain order. A fetch that fails fails the round when its turn comes.
  const steps: Promise<void>[] = [];
  const decoded = new Map<number, DecodedStep>();
  let inFlight = 0;
  let consumed = 0;
  let done = false;
  const fetchAhead = (): void => {
    while (!done && inFlight < IN_FLIGHT && steps.length < Math.min(chunks.length, consumed + AHEAD) && !deps.signal.aborted) {
      const at = steps.length;
      const chunk = chunks[at]!;
      inFlight += 1;
      const step = fetchChunk(deps, chunk).then((fetched) => void decoded.set(at, decodeChunk(deps, chunk, fetched))).finally(() => {
        inFlight -= 1;
        fetchAhead();
      });
      step.catch(() => undefined); // awaited in its turn; not an unhandled rejection meanwhile
      steps.push(step);
    }
  };
  let handled = 0;
  // Events and the cursor past them go to Redis in one atomic script, one script at a
  // time. Steps decoded while a script is under way go together in the next one (group
  // commit): a slow round trip to Redis costs one wait for all of them, not one each.
  let appending: Promise<void> = Promise.resolve();
  const append = async (sigs: readonly SignatureInfo[], events: readonly SerializedEvent[]): Promise<void> => {
    const last = sigs[sigs.length - 1]!;
    const move = cursorMove(deps.prefix, { signature: last.signature, slot: last.slot }, expect);
    const r = await retryForever('appending events', () => appendSerialized(deps.redis, deps.keys, events, move), guard);
    if (r.refused) {
      // another writer moved the cursor since: its appends hold these events, or will;
      // the round ends here and the next starts from the stored cursor
      refused = true;
      deps.counters.appendsRefused += 1;
      deps.logger?.info({ expected: move.expect, slot: last.slot }, 'indexer cursor moved by another writer; round ends, the next starts from it');
      return;
    }
    expect = { stored: move.value };
    deps.counters.eventsAppended += r.appended;
    deps.counters.transactionsProcessed += sigs.length;
    deps.counters.lastSlot = Math.max(deps.counters.lastSlot, last.slot);
    for (const s of sigs) deps.onHandled?.(s.signature);
    handled += sigs.length;
  };
  try {
    for (let step = 0; step < chunks.length && !deps.signal.aborted;) {
      fetchAhead();
      await steps[step];
      await appending;
      if (refused) break;
      let end = step + 1;
      while (end < chunks.length && end - step < AHEAD && decoded.has(end)) end += 1;
      const sigs: SignatureInfo[] = [];
      const events: SerializedEvent[] = [];
      for (let at = step; at < end; at += 1) {
        const d = decoded.get(at)!;
        countDecoded(deps, d);
        for (const s of chunks[at]!) sigs.push(s);
        for (const e of d.events) events.push(e);
        decoded.delete(at);
      }
      consumed = end;
      step = end;
      fetchAhead();
      appending = append(sigs, events);
      appending.catch(() => undefined); // awaited at the next step or below
    }
  } finally {
    done = true;
    // a failed fetch fails the round, but never while an append is still under way
    await appending.catch(() => undefined);
  }
  await appending;
  return { handled, refused };
}
