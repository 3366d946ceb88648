/**
 * Socket.IO through the sharded adapter while the Redis Cluster fails over: the channel of
 * a trackingId lives on one master; when that master is replaced (CLUSTER FAILOVER, then a
 * master killed with -9) the API nodes subscribe again on the new one and catch their
 * subscriptions up, so sockets on both nodes get every payment appended meanwhile.
 */
import { expect } from 'chai';
import { startClusterRun, type ClusterRun, type ClusterTestEnv, type TestRedisCluster } from '../support/redis-cluster.js';
import type { TestApi } from '../support/app.js';
import { connectClient, payment, type TestClient } from '../support/realtime-client.js';
import { appendTestEvents } from '../support/anchor-events.js';
import { waitFor } from '../support/process.js';
import { realtimeKeys } from '../../src/kernel/names/index.js';
import { roomOf } from '../../queries/realtime/keys.js';
import { Redis } from 'ioredis';

describe('Socket.IO on a Redis Cluster through a failover and a master killed', function () {
  this.timeout(240_000);
  let run: ClusterRun;
  let cluster: TestRedisCluster;
  let env: ClusterTestEnv;
  let a: TestApi;
  let b: TestApi;
  const clients: TestClient[] = [];

  before(async () => {
    run = await startClusterRun('rc-rt-failover', { nodeTimeoutMs: 1500, realtime: true, projector: { maxAttempts: 50 } });
    ({ cluster, env } = run);
    [a, b] = run.realtime!.nodes;
  });
  after(async () => {
    for (const c of clients) c.close();
    await run?.close();
  });

  it('delivers every payment appended while the channel\'s master is replaced to sockets on both nodes', async () => {
    const tid = 'rc-failover-room';
    const [ca, cb] = await Promise.all([connectClient(a.url), connectClient(b.url)]);
    clients.push(ca, cb);
    expect((await ca.subscribe(tid)).ok).to.equal(true);
    expect((await cb.subscribe(tid)).ok).to.equal(true);
    // the sharded adapter's channel of the room (dynamic mode): `<prefix>socket.io#/#<room>#`
    const channelKey = `${realtimeKeys(env.prefix).adapterChannel}#/#${roomOf(tid)}#`;
    const subscribed = async () => (await Promise.all(cluster.ports.filter((p) => cluster.procs.get(p)!.running()).map(async (port) => {
      const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
      try { return (await r.call('PUBSUB', 'SHARDCHANNELS')) as string[]; } finally { r.disconnect(); }
    }))).flat();
    expect(await subscribed()).to.include(channelKey);
    const sent: string[] = [];
    const appendSome = async (n: number) => {
      for (let i = 0; i < n; i += 1) {
        const e = payment(tid);
        sent.push(e.signature);
        await appendTestEvents(env, [e]);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await appendSome(3);
    const failover = cluster.failoverOf(channelKey);
    await appendSome(10);
    await failover;
    await appendSome(3);
    const kill = cluster.killMasterOf(channelKey);
    await appendSome(10);
    await kill;
    await appendSome(3);
    await waitFor(async () => (await subscribed()).filter((c) => c === channelKey).length >= 1, 30_000, 'the channel subscribed on its new master');
    for (const c of [ca, cb]) {
      await waitFor(async () => new Set(c.payments.map((p) => (p.data as { signature: string }).signature)).size >= sent.length, 60_000, 'every payment on the socket');
      const got = new Set(c.payments.map((p) => (p.data as { signature: string }).signature));
      expect(sent.filter((s) => !got.has(s))).to.deep.equal([]);
    }
  });
});
