/**
 * The service's Cluster client (infra/redis/client.ts, shardedSubscribers) when the slot of
 * a shard channel it listens on moves to another master. Redis then pushes a `sunsubscribe`
 * nobody asked for to every subscriber of that channel; a client that takes it for the
 * answer to its next command has a command queue out of step (ioredis 5 reported "Command
 * queue state error", and threw it when the push reached a subscriber it had just stopped:
 * an uncaught exception in an API node during a failover). The client must see the push
 * as what it is, subscribe again on the new master, and keep receiving.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createRedis } from '../../infra/redis/client.js';
import { startTestRedisCluster, clusterRedisSettings, type TestRedisCluster } from '../support/redis-cluster.js';
import { waitFor } from '../support/process.js';

describe('Redis Cluster: a sharded subscriber whose channel\'s slot moves', function () {
  this.timeout(60_000);
  let cluster: TestRedisCluster;
  // one plain connection per node, for its admin commands
  const opened = new Map<number, Redis>();
  const node = (port: number): Redis => {
    let r = opened.get(port);
    if (!r) opened.set(port, r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 }));
    return r;
  };

  before(async () => { cluster = await startTestRedisCluster(); });
  after(async () => {
    for (const r of opened.values()) r.disconnect();
    await cluster?.close();
  });

  it('takes the server\'s own sunsubscribe as a push, subscribes again on the new master and keeps receiving', async () => {
    const settings = clusterRedisSettings(cluster.nodes);
    const sub = createRedis(settings);
    const pub = createRedis(settings);
    const errors: string[] = [];
    sub.on('nodeError', (err: Error) => { errors.push(err.message); });
    sub.on('error', (err: Error) => { errors.push(err.message); });
    const got: string[] = [];
    sub.on('smessage', (_channel: string, message: string) => { got.push(message); });
    try {
      const channel = 'sharded-subscriber-move';
      await sub.ssubscribe(channel);
      await pub.spublish(channel, 'before');
      await waitFor(async () => got.includes('before'), 10_000, 'the message published before the move');

      // move the (keyless) slot by hand: importing on the target, migrating on the source, then owned by the target
      const source = await cluster.masterOf(channel);
      const slot = Number(await node(source).call('CLUSTER', 'KEYSLOT', channel));
      const masters = [...new Set(await Promise.all(['{a}', '{b}', '{c}', '{d}', '{e}', '{f}'].map((k) => cluster.masterOf(k))))];
      const target = masters.find((p) => p !== source)!;
      const idOf = async (port: number): Promise<string> => String(await node(port).call('CLUSTER', 'MYID'));
      const [sourceId, targetId] = [await idOf(source), await idOf(target)];
      await node(target).call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', sourceId);
      await node(source).call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', targetId);
      await node(target).call('CLUSTER', 'SETSLOT', slot, 'NODE', targetId);
      await node(source).call('CLUSTER', 'SETSLOT', slot, 'NODE', targetId);
      await waitFor(async () => (await cluster.masterOf(channel)) === target, 15_000, 'the slot served by its new master');

      // the subscriber is found on the new master, and messages published there reach the client
      await waitFor(async () => {
        const channels = (await node(target).call('PUBSUB', 'SHARDCHANNELS')) as string[];
        return channels.includes(channel);
      }, 20_000, 'the channel subscribed again on its new master');
      let n = 0;
      await waitFor(async () => {
        n += 1;
        await pub.spublish(channel, `after-${n}`);
        return got.some((m) => m.startsWith('after-'));
      }, 20_000, 'a message published after the move');
      // the connection answers commands in order afterwards: a new channel subscribes and receives
      await sub.ssubscribe(`${channel}-2`);
      await pub.spublish(`${channel}-2`, 'second');
      await waitFor(async () => got.includes('second'), 10_000, 'a channel subscribed after the move');
      expect(errors.filter((m) => /queue state/i.test(m)), 'no reply taken for another command').to.deep.equal([]);
    } finally {
      sub.disconnect();
      pub.disconnect();
    }
  });
});
