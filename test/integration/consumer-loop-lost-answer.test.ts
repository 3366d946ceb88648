/**
 * A read of the stream whose answer is lost with its connection (Redis restarted or the
 * connection reset after the read ran): its entries are in the consumer's pending list, and
 * the consumer must handle them before any entry after them. With ioredis's default, the read
 * was sent again on the new connection and answered the next entries, and the lost ones came
 * only when claimed: the soak's read models differed from their replay after a Redis restart.
 * The real consumer loop on the real Redis, through a proxy that loses one answer.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { createRedis, createStreamReader } from '../../infra/redis/client.js';
import { createConsumerLoop } from '../../infra/redis/consumer-loop.js';
import { ack, type StreamEntry } from '../../infra/redis/stream-group.js';
import { STREAM_FIELD } from '../../src/kernel/events/envelope.js';
import { startCuttingProxy, type CuttingProxy } from '../support/cutting-proxy.js';

describe('consumer loop: a read whose answer was lost', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let proxy: CuttingProxy;
  before(async () => {
    env = await createTestEnv('consumer_lost_answer');
    const u = new URL(env.redisUrl);
    proxy = await startCuttingProxy({ host: u.hostname, port: Number(u.port || 6379) });
  });
  after(async () => { await proxy?.close(); await env?.close(); });

  /** six entries e1..e6, read two at a time through the proxy; the answer holding e3 is lost. Returns the order handled within waitMs. */
  async function readThrough(connect: (url: string) => ReturnType<typeof createRedis>, stream: string, waitMs: number): Promise<string[]> {
    for (let i = 1; i <= 6; i += 1) await env.redis.xadd(stream, '*', STREAM_FIELD, `entry-e${i}`);
    const u = new URL(env.redisUrl);
    u.hostname = '127.0.0.1';
    u.port = String(proxy.port);
    const reads = connect(u.toString());
    const blocking = connect(u.toString());
    for (const r of [reads, blocking]) r.on('error', () => undefined);
    const handled: string[] = [];
    const loop = createConsumerLoop({ redis: reads, blockingRedis: blocking }, {
      stream, group: 'g', consumer: 'c', batchSize: 2, blockMs: 100, claimIdleMs: 60_000, pendingEveryMs: 0, startPending: false, now: Date.now,
    }, async (entries: StreamEntry[]) => {
      for (const e of entries) handled.push((e.payload ?? '').replace('entry-', ''));
      if (handled.length === 2) proxy.cutNextAnswerWith('entry-e3');
      await ack(env.redis, stream, 'g', entries.map((e) => e.streamId));
    });
    await loop.ensureGroup();
    const until = Date.now() + waitMs;
    await loop.run(() => handled.length < 6 && Date.now() < until, () => undefined);
    reads.disconnect();
    blocking.disconnect();
    return handled;
  }

  it('handles the lost read\'s entries before any later one, on the connections the projector reads with', async () => {
    const cutsBefore = proxy.cuts();
    const order = await readThrough((url) => createStreamReader({ url, sentinels: [], sentinelName: '' }), `${env.keys.events}:reader`, 8000);
    expect(proxy.cuts() - cutsBefore, 'the answer holding e3 was lost').to.equal(1);
    expect(order).to.deep.equal(['e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
  });

  it('(why) a connection that sends the read again skips the lost entries until they are claimed', async () => {
    const cutsBefore = proxy.cuts();
    const order = await readThrough((url) => createRedis({ url, sentinels: [], sentinelName: '' }), `${env.keys.events}:resending`, 2000);
    expect(proxy.cuts() - cutsBefore).to.equal(1);
    expect(order.slice(0, 4), 'the read sent again answered e5 and e6; e3 and e4 wait in the pending list').to.deep.equal(['e1', 'e2', 'e5', 'e6']);
  });
});
