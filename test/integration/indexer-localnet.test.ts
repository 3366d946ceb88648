/**
 * The indexer against the localnet: every event the program emitted reaches the stream
 * exactly once with the same decoded fields, whatever the path (live, backfill, a second
 * indexer overlapping, a deleted cursor, a dropped websocket); failed transactions and
 * other programs' `Program data:` lines never become events.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import pino from 'pino';
import { loadConfig } from '../../src/kernel/config/config.js';
import { parseEvent, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import { startIndexer, type RunningIndexer } from '../../infra/indexer/index.js';
import { cursorKey } from '../../infra/indexer/cursor.js';
import { createRedis, streamKeys, type Redis } from '../../infra/redis/client.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

async function streamEvents(redis: Redis, prefix: string): Promise<TributaryEvent[]> {
  const entries = await redis.xrange(streamKeys(prefix).events, '-', '+');
  return entries.map(([, fields]) => parseEvent(fields[1] ?? ''));
}

function expectExactlyOnce(stream: TributaryEvent[], ledger: readonly TributaryEvent[]): void {
  const ids = stream.map((e) => e.id);
  expect(new Set(ids).size, 'no duplicate identities in the stream').to.equal(ids.length);
  const byId = new Map(stream.map((e) => [e.id, e]));
  const missing = ledger.filter((e) => !byId.has(e.id));
  expect(missing.map((e) => e.id), 'every ledger event is in the stream').to.deep.equal([]);
  for (const e of ledger) expect(byId.get(e.id)).to.deep.equal(e);
}

describe('indexer against the localnet', function () {
  this.timeout(60_000);
  const prefix = `t_indexer_${randomBytes(4).toString('hex')}:`;
  const logger = pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  let ln: Localnet;
  let redis: Redis;
  let indexer: RunningIndexer;
  let config: ReturnType<typeof loadConfig>;

  before(async () => {
    ln = await startLocalnet({ port: 0, seed: 'indexer-test', rate: 70, cpiEventShare: 0.3 });
    redis = createRedis({ url: REDIS_URL, sentinels: [], sentinelName: '' });
    config = loadConfig({
      SOLANA_RPC_URL: ln.rpcUrl, SOLANA_WS_URL: ln.wsUrl, SOLANA_CLUSTER: 'localnet', REDIS_URL, REDIS_PREFIX: prefix,
      INDEXER_BACKFILL_INTERVAL_MS: '2000', INDEXER_PAGE_SIZE: '50',
    });
    await new Promise((r) => setTimeout(r, 1_500)); // history to backfill before the first round
    indexer = await startIndexer({ config, redis, logger });
  });

  after(async () => {
    await indexer?.stop();
    await ln?.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('appends every ledger event exactly once with equal fields (backfill, then live)', async () => {
    await new Promise((r) => setTimeout(r, 2_500));
    const ledger = ln.ledger();
    await indexer.settled();
    expectExactlyOnce(await streamEvents(redis, prefix), ledger);
    const s = indexer.stats();
    expect(s.eventsAppended).to.be.at.least(ledger.length);
    expect(s.websocketConnected).to.equal(true);
    expect(s.lastSlot).to.be.greaterThan(0);
    expect(s.slotLag).to.be.at.most(10);
  });

  it('indexes self-CPI events and multi-instruction transactions', async () => {
    const stream = await streamEvents(redis, prefix);
    expect(stream.some((e) => e.ixPath.includes('.'))).to.equal(true);
    expect(stream.some((e) => e.ixPath !== '0' && !e.ixPath.includes('.'))).to.equal(true);
  });

  it('never indexes failed transactions or data logged by other programs', async () => {
    const stream = await streamEvents(redis, prefix);
    const ledgerIds = new Set(ln.ledger().map((e) => e.id));
    expect(stream.filter((e) => !ledgerIds.has(e.id)).map((e) => e.id)).to.deep.equal([]);
    const failed = new Set(ln.chain.transactions().filter((t) => t.err !== null).map((t) => t.signature));
    expect(failed.size).to.be.greaterThan(0);
    expect(stream.filter((e) => failed.has(e.signature))).to.deep.equal([]);
    expect(ln.chain.transactions().some((t) => t.logs.some((l) => l.startsWith('Program NoiseProgram')))).to.equal(true);
    expect(indexer.stats().failedTransactionsSkipped).to.be.greaterThan(0);
  });

  it('appends nothing twice with an overlapping second indexer (single calls, no batches) and a deleted cursor', async () => {
    await redis.del(cursorKey(prefix));
    // what the second indexer may resume after: the stream's last entry as the cursor went
    const [[, lastFields] = ['', []]] = await redis.xrevrange(streamKeys(prefix).events, '+', '-', 'COUNT', 1);
    const lastSignature = parseEvent(lastFields[1] ?? '').signature;
    const single = loadConfig({
      SOLANA_RPC_URL: ln.rpcUrl, SOLANA_WS_URL: ln.wsUrl, SOLANA_CLUSTER: 'localnet', REDIS_URL, REDIS_PREFIX: prefix,
      INDEXER_BACKFILL_INTERVAL_MS: '2000', INDEXER_PAGE_SIZE: '50', INDEXER_RPC_BATCH: 'false',
    });
    const second = await startIndexer({ config: single, redis, logger, concurrency: 4 });
    await new Promise((r) => setTimeout(r, 1_500));
    const ledger = ln.ledger();
    await Promise.all([second.settled(), indexer.settled()]);
    const s = second.stats();
    await second.stop();
    // the second resumed after the stream's last entry (not from the first transaction), and took part
    expect(s.transactionsProcessed + s.appendsRefused).to.be.greaterThan(0);
    const history = ln.chain.mentioning(config.solana.programId);
    const resumedAt = history.findIndex((t) => t.signature === lastSignature);
    expect(resumedAt, 'the stream\'s last entry is a transaction of the program').to.be.at.least(0);
    // nothing at or before the stream's last entry is read again: at most what came after it
    expect(s.transactionsProcessed).to.be.at.most(history.length - resumedAt - 1);
    expectExactlyOnce(await streamEvents(redis, prefix), ledger);
  });

  it('recovers from a websocket dropped by the server', async () => {
    const before = indexer.stats().websocketReconnects;
    expect(ln.dropWebsockets()).to.be.at.least(1);
    for (let i = 0; i < 50 && indexer.stats().websocketReconnects === before; i += 1) await new Promise((r) => setTimeout(r, 100));
    expect(indexer.stats().websocketReconnects).to.be.greaterThan(before);
    await new Promise((r) => setTimeout(r, 1_000));
    const ledger = ln.ledger();
    await indexer.settled();
    expectExactlyOnce(await streamEvents(redis, prefix), ledger);
    expect(indexer.stats().websocketConnected).to.equal(true);
  });
});
