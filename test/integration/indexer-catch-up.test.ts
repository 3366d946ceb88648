/**
 * The catch-up pipeline against the localnet and Redis: batches that answer out of
 * order still reach the stream in chain order, exactly once; a Redis that stalls does
 * not stall the RPC reads (two batch requests stay in flight, up to the fetch-ahead
 * bound); a fetch that fails mid-round leaves the cursor exactly at the events
 * appended before it, from which the next round completes the stream without a loss
 * or a duplicate; two writers catching up the same backlog at once append each event
 * once, the one that comes second refused and going on from the stored cursor.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { parseEvent, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import { catchUp, type RoundResult } from '../../infra/indexer/catch-up.js';
import { readCursor } from '../../infra/indexer/cursor.js';
import { newCounters, type IndexerCounters } from '../../infra/indexer/stats.js';
import { PROGRAM_ID } from '../../infra/localnet/constants.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { createRedis, streamKeys, type Redis } from '../../infra/redis/client.js';
import { createChainReader, type ChainReader } from '../../infra/solana/chain-reader.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const STEP = 20;

describe('indexer catch-up pipeline', function () {
  this.timeout(60_000);
  const base = `t_catchup_${randomBytes(4).toString('hex')}`;
  let ln: Localnet;
  let redis: Redis;
  let reader: ChainReader;
  /** every ledger event in the order the stream must hold them: by transaction, then index */
  let expected: TributaryEvent[];
  /** the program's transactions, oldest first */
  let signatures: string[];

  before(async () => {
    ln = await startLocalnet({ port: 0, seed: 'catch-up-test', rate: 3_000, maxEvents: 1_200, cpiEventShare: 0.3 });
    while (ln.workload.stats().events < 1_200) await new Promise((r) => setTimeout(r, 50));
    redis = createRedis({ url: REDIS_URL, sentinels: [], sentinelName: '' });
    reader = createChainReader(createRpcClient({ url: ln.rpcUrl, timeoutMs: 10_000 }), { commitment: 'confirmed' });
    signatures = ln.chain.mentioning(PROGRAM_ID.toBase58()).map((t) => t.signature);
    const position = new Map(signatures.map((s, i) => [s, i]));
    expected = ln.ledger().sort((a, b) => position.get(a.signature)! - position.get(b.signature)! || a.index - b.index);
  });

  after(async () => {
    await ln?.close();
    const keys = await redis.keys(`${base}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  const run = (prefix: string, r: ChainReader, counters: IndexerCounters = newCounters(), concurrency = STEP): Promise<RoundResult> => catchUp({
    reader: r, redis, keys: streamKeys(prefix), prefix, programId: PROGRAM_ID.toBase58(), pageSize: 100, concurrency,
    counters, signal: new AbortController().signal,
  });

  async function streamIds(prefix: string): Promise<string[]> {
    const entries = await redis.xrange(streamKeys(prefix).events, '-', '+');
    return entries.map(([, fields]) => parseEvent(fields[1] ?? '').id);
  }

  /** The reader with every batch call observed: when it began and ended, how many were in flight at most. */
  function observed(opts: { delay?: (call: number) => number; failAt?: number } = {}) {
    const calls: { call: number; start: number; end?: number }[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const r: ChainReader = {
      ...reader,
      getTransactions: async (sigs) => {
        const entry: { call: number; start: number; end?: number } = { call: calls.length, start: performance.now() };
        calls.push(entry);
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          if (entry.call === opts.failAt) throw new Error('the node refused this batch');
          const ms = opts.delay?.(entry.call) ?? 0;
          if (ms > 0) await new Promise((res) => setTimeout(res, ms));
          return await reader.getTransactions(sigs);
        } finally {
          inFlight -= 1;
          entry.end = performance.now();
        }
      },
    };
    return { reader: r, calls, maxInFlight: () => maxInFlight };
  }

  it('appends every event once, in chain order, when later batches answer before earlier ones', async () => {
    const prefix = `${base}:order:`;
    // every other batch is slow: its successor, in flight beside it, answers first
    const o = observed({ delay: (call) => (call % 2 === 0 ? 40 : 0) });
    const counters = newCounters();
    const { handled, refused } = await run(prefix, o.reader, counters);
    expect(refused).to.equal(false);
    const overtaken = o.calls.filter((c, i) => i + 1 < o.calls.length && c.end! > o.calls[i + 1]!.end!);
    expect(overtaken.length, 'batches answered out of order').to.be.greaterThan(5);
    expect(await streamIds(prefix)).to.deep.equal(expected.map((e) => e.id));
    expect(handled).to.equal(signatures.length);
    expect(counters.eventsAppended).to.equal(expected.length);
    expect((await readCursor(redis, prefix))?.signature).to.equal(signatures[signatures.length - 1]);
  });

  it('fetches alone each transaction a batch did not serve yet, and appends its events in their place', async () => {
    const prefix = `${base}:late:`;
    // the node answers null for every fifth transaction of a batch, as for one it lists
    // before it serves it; the single fetch that follows gets it
    const single: string[] = [];
    const r: ChainReader = {
      ...reader,
      getTransactions: async (sigs) => (await reader.getTransactions(sigs)).map((tx, i) => (i % 5 === 2 ? null : tx)),
      getTransaction: async (sig) => {
        single.push(sig);
        return reader.getTransaction(sig);
      },
    };
    const { handled, refused } = await run(prefix, r);
    expect(refused).to.equal(false);
    expect(single.length, 'transactions fetched alone').to.be.greaterThan(signatures.length / 6);
    expect(await streamIds(prefix)).to.deep.equal(expected.map((e) => e.id));
    expect(handled).to.equal(signatures.length);
  });

  it('keeps two batch requests in flight while Redis is stalled, and never more', async () => {
    const prefix = `${base}:stall:`;
    const blocker = createRedis({ url: REDIS_URL, sentinels: [], sentinelName: '' });
    let stalled: Promise<{ start: number; end: number }> | undefined;
    const o = observed();
    const stallingReader: ChainReader = {
      ...o.reader,
      getTransactions: (sigs) => {
        // once the first batch is asked for (the cursor was read), Redis runs a 400 ms script
        stalled ??= (async () => {
          const start = performance.now();
          await blocker.eval(`local t0 = redis.call('TIME')
            repeat local t = redis.call('TIME') until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 400000
            return 1`, 0);
          return { start, end: performance.now() };
        })();
        return o.reader.getTransactions(sigs);
      },
    };
    try {
      await run(prefix, stallingReader);
      const stall = await stalled!;
      const servedDuringStall = o.calls.filter((c) => c.end! > stall.start && c.end! < stall.end).length;
      // the fetch-ahead bound is 8 steps past the oldest step not appended
      expect(servedDuringStall, 'batches answered while Redis was stalled').to.be.at.least(6);
      expect(o.maxInFlight()).to.equal(2);
      expect(await streamIds(prefix)).to.deep.equal(expected.map((e) => e.id));
    } finally {
      blocker.disconnect();
    }
  });

  it('stops at a failed fetch with the cursor exactly past the events appended, and the next round completes the stream', async () => {
    const prefix = `${base}:fail:`;
    const failAt = 9;
    const o = observed({ delay: (call) => (call < failAt ? 5 : 0), failAt });
    let failure: unknown;
    await run(prefix, o.reader).catch((err: unknown) => { failure = err; });
    expect((failure as Error | undefined)?.message).to.equal('the node refused this batch');
    const cursor = await readCursor(redis, prefix);
    const upTo = signatures.indexOf(cursor!.signature);
    // whole steps only, and none from the failed step on
    expect((upTo + 1) % STEP).to.equal(0);
    expect(upTo + 1).to.be.at.most(failAt * STEP);
    const covered = new Set(signatures.slice(0, upTo + 1));
    expect(await streamIds(prefix)).to.deep.equal(expected.filter((e) => covered.has(e.signature)).map((e) => e.id));
    await run(prefix, reader);
    expect(await streamIds(prefix)).to.deep.equal(expected.map((e) => e.id));
    expect((await readCursor(redis, prefix))?.signature).to.equal(signatures[signatures.length - 1]);
  });

  it('two writers catching up the same backlog at once: each event once, the second refused and going on from the stored cursor', async () => {
    const prefix = `${base}:two:`;
    // both read the (missing) cursor and list the backlog before either appends
    let listed = 0;
    let release = (): void => undefined;
    const bothListed = new Promise<void>((r) => { release = r; });
    const gated: ChainReader = {
      ...reader,
      getSignaturesForAddress: async (address, opts) => {
        if (listed < 2) {
          listed += 1;
          if (listed === 2) release();
          await bothListed;
        }
        return reader.getSignaturesForAddress(address, opts);
      },
    };
    // each writer runs rounds as the indexer does: a refused round is followed by another at once
    const writer = async (counters: IndexerCounters, concurrency: number): Promise<number> => {
      for (let rounds = 1; ; rounds += 1) if (!(await run(prefix, gated, counters, concurrency)).refused) return rounds;
    };
    const [a, b] = [newCounters(), newCounters()];
    const rounds = await Promise.all([writer(a, STEP), writer(b, 7)]);
    expect(await streamIds(prefix)).to.deep.equal(expected.map((e) => e.id));
    expect(a.eventsAppended + b.eventsAppended, 'each event appended by one writer').to.equal(expected.length);
    expect(a.appendsRefused + b.appendsRefused, 'appends refused').to.be.at.least(1);
    expect(rounds[0] + rounds[1], 'rounds').to.equal(2 + a.appendsRefused + b.appendsRefused);
    expect((await readCursor(redis, prefix))?.signature).to.equal(signatures[signatures.length - 1]);
  });
});
