/**
 * One catch-up round: every signature of the program newer than the cursor, oldest
 * first; each successful transaction fetched, decoded and appended; the cursor moved
 * in the same atomic step as its events' append. Fetches run a step ahead of the
 * appends, so the RPC node serves the next step while this one is decoded and appended,
 * and a step is decoded while the previous one's append is under way. Failed
 * transactions are passed over without a fetch. Live notifications and gap repair both come here, so the stream receives
 * events in chain order and the cursor never skips a transaction.
 */
import pRetry from 'p-retry';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import { appendEvents } from '../redis/event-stream.js';
import type { StreamKeys } from '../redis/client.js';
import type { ChainReader, SignatureInfo, TransactionJson } from '../solana/chain-reader.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { cursorEntry, readCursor, type Cursor } from './cursor.js';
import { decodeTransaction } from './decode.js';
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
 * batch request, then single retried fetches for any the node did not serve yet.
 */
async function fetchChunk(deps: CatchUpDeps, chunk: readonly SignatureInfo[]): Promise<(TransactionJson | undefined)[]> {
  const ok = (s: SignatureInfo) => s.err === null || s.err === undefined;
  if (deps.batchRequests === false) {
    return Promise.all(chunk.map((s) => (ok(s) ? fetchTransaction(deps, s.signature) : Promise.resolve(undefined))));
  }
  const wanted = chunk.filter(ok).map((s) => s.signature);
  const got = new Map<string, TransactionJson | null>();
  if (wanted.length > 0) (await deps.reader.getTransactions(wanted)).forEach((tx, i) => got.set(wanted[i]!, tx));
  return Promise.all(chunk.map((s) => {
    if (!ok(s)) return Promise.resolve(undefined);
    const tx = got.get(s.signature);
    return tx ? Promise.resolve(tx) : fetchTransaction(deps, s.signature);
  }));
}

/**
 * Steps fetched ahead of the one being decoded and appended: the RPC node works meanwhile.
 * One: more requests in flight at once each take longer, and a slow node would time them out.
 */
const PREFETCH = 1;

/** The step's transactions decoded, in chain order, counters updated. */
function decodeChunk(deps: CatchUpDeps, chunk: readonly SignatureInfo[], fetched: readonly (TransactionJson | undefined)[]): TributaryEvent[] {
  const events: TributaryEvent[] = [];
  chunk.forEach((s, i) => {
    const tx = fetched[i];
    if (!tx) {
      deps.counters.failedTransactionsSkipped += 1;
      return;
    }
    const decoded = decodeTransaction(tx, s.signature, deps.programId);
    if (decoded.failed) deps.counters.failedTransactionsSkipped += 1;
    for (const u of decoded.unknown) {
      deps.counters.unknownDiscriminators += 1;
      deps.logger?.warn({ signature: s.signature, ixPath: u.ixPath, index: u.index, payload: u.payload.slice(0, 24) }, 'unknown event discriminator');
    }
    if (decoded.truncated) deps.logger?.warn({ signature: s.signature }, 'transaction logs truncated; log events past the cut are lost');
    for (const e of decoded.events) events.push(e);
  });
  return events;
}

export async function catchUp(deps: CatchUpDeps): Promise<number> {
  const guard = { signal: deps.signal, ...(deps.logger ? { logger: deps.logger } : {}) };
  const cursor = await retryForever('reading the indexer cursor', () => readCursor(deps.redis, deps.prefix), guard);
  const pending = (await newerSignatures(deps, cursor)).reverse();
  const chunks: SignatureInfo[][] = [];
  for (let start = 0; start < pending.length; start += deps.concurrency) chunks.push(pending.slice(start, start + deps.concurrency));
  // Fetches run up to PREFETCH steps ahead; decoding, appending and the cursor stay in
  // order, one step at a time. A fetch that fails fails the round when its turn comes.
  const fetches: Promise<(TransactionJson | undefined)[]>[] = [];
  const fetchAhead = (upTo: number): void => {
    while (fetches.length < Math.min(upTo, chunks.length) && !deps.signal.aborted) {
      const f = fetchChunk(deps, chunks[fetches.length]!);
      f.catch(() => undefined); // awaited in its turn; not an unhandled rejection meanwhile
      fetches.push(f);
    }
  };
  let handled = 0;
  // A step's events and the cursor past it go to Redis in one atomic script; the next
  // step is decoded while that round trip is under way, and appended only after it.
  let appending: Promise<void> = Promise.resolve();
  const append = async (chunk: readonly SignatureInfo[], events: readonly TributaryEvent[]): Promise<void> => {
    const last = chunk[chunk.length - 1]!;
    const cursor = cursorEntry(deps.prefix, { signature: last.signature, slot: last.slot });
    const appended = await retryForever('appending events', () => appendEvents(deps.redis, deps.keys, events, cursor), guard);
    deps.counters.eventsAppended += appended;
    deps.counters.duplicatesAbsorbed += events.length - appended;
    deps.counters.transactionsProcessed += chunk.length;
    deps.counters.lastSlot = Math.max(deps.counters.lastSlot, last.slot);
    for (const s of chunk) deps.onHandled?.(s.signature);
    handled += chunk.length;
  };
  try {
    for (let step = 0; step < chunks.length && !deps.signal.aborted; step += 1) {
      fetchAhead(step + 1 + PREFETCH);
      const chunk = chunks[step]!;
      const events = decodeChunk(deps, chunk, await fetches[step]!);
      await appending;
      appending = append(chunk, events);
      appending.catch(() => undefined); // awaited at the next step or below
    }
  } finally {
    // a failed fetch fails the round, but never while an append is still under way
    await appending.catch(() => undefined);
  }
  await appending;
  return handled;
}
