/**
 * The consumer-group loop reading ahead while a backlog waits: every entry is handed to
 * the handler once and in stream order, through a failed batch as well.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createRedis } from '../../infra/redis/client.js';
import { createConsumerLoop } from '../../infra/redis/consumer-loop.js';
import { ack, type StreamEntry } from '../../infra/redis/stream-group.js';
import { STREAM_FIELD } from '../../src/kernel/events/envelope.js';

describe('consumer loop reading ahead', () => {
  let env: TestEnv;
  let blocking: ReturnType<typeof createRedis>;
  before(async () => {
    env = await createTestEnv('consumer_loop');
    blocking = createRedis({ url: env.redisUrl, sentinels: [], sentinelName: '' });
  });
  after(async () => { blocking.disconnect(); await env.close(); });

  it('hands every entry once, in order, when a batch fails while the next was read ahead', async () => {
    const pipe = env.redis.pipeline();
    for (let i = 0; i < 1000; i += 1) pipe.xadd(env.keys.events, '*', STREAM_FIELD, String(i));
    await pipe.exec();
    const handled: string[] = [];
    let batches = 0;
    let failed = false;
    const loop = createConsumerLoop({ redis: env.redis, blockingRedis: blocking }, {
      stream: env.keys.events, group: 'g', consumer: 'c', batchSize: 50, blockMs: 50, claimIdleMs: 60_000,
      readsPerBatch: 2, readAhead: true, pendingEveryMs: 0, startPending: false, now: Date.now,
    }, async (entries: StreamEntry[]) => {
      batches += 1;
      // the third batch fails once without acknowledging: its entries and those read ahead stay pending
      if (batches === 3 && !failed) { failed = true; loop.setPending(true); return; }
      for (const e of entries) handled.push(e.payload ?? '');
      await ack(env.redis, env.keys.events, 'g', entries.map((e) => e.streamId));
    });
    await loop.ensureGroup();
    while (handled.length < 1000 && batches < 100) await loop.step();
    expect(failed).to.equal(true);
    expect(handled.map(Number)).to.deep.equal([...Array(1000).keys()]);
    expect(Number((await env.redis.xpending(env.keys.events, 'g'))[0])).to.equal(0);
  });

  it('hands a read-ahead\'s entries to onReadAhead as they arrive, before the handler gets the same entries', async () => {
    await env.redis.del(env.keys.events);
    const pipe = env.redis.pipeline();
    for (let i = 0; i < 400; i += 1) pipe.xadd(env.keys.events, '*', STREAM_FIELD, String(i));
    await pipe.exec();
    const seenAhead = new Set<StreamEntry>();
    const handed: { entries: StreamEntry[]; ahead: boolean }[] = [];
    const loop = createConsumerLoop({ redis: env.redis, blockingRedis: blocking }, {
      stream: env.keys.events, group: 'g2', consumer: 'c', batchSize: 50, blockMs: 50, claimIdleMs: 60_000,
      readsPerBatch: 2, readAhead: true, pendingEveryMs: 0, startPending: false, now: Date.now,
      onReadAhead: (entries) => { for (const e of entries) seenAhead.add(e); },
    }, async (entries: StreamEntry[]) => {
      handed.push({ entries, ahead: entries.every((e) => seenAhead.has(e)) });
      await ack(env.redis, env.keys.events, 'g2', entries.map((e) => e.streamId));
    });
    await loop.ensureGroup();
    while (handed.flatMap((h) => h.entries).length < 400) await loop.step();
    // the first batch was read by the loop itself; every later one of the backlog was read ahead
    expect(handed.map((h) => h.ahead)).to.deep.equal([false, true, true, true]);
    expect(handed.flatMap((h) => h.entries.map((e) => Number(e.payload)))).to.deep.equal([...Array(400).keys()]);
  });
});
