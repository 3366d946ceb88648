/**
 * The Socket.IO Redis adapter of every real-time process (API nodes and the notifier),
 * on two connections of its own: plain pub/sub by default, or Redis 7 sharded pub/sub
 * (WS_SHARDED_ADAPTER) where each room with sockets on a node gets its own channel, so a
 * payment reaches only the nodes that hold its trackingId's sockets. ioredis speaks both.
 * Channels carry the deployment's prefix. On a Redis Cluster the adapter is always the
 * sharded one: each channel lives on the master of its slot, and ioredis keeps one
 * subscriber connection a master.
 */
import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import type { Server } from 'socket.io';
import type { Cluster, Redis } from 'ioredis';
import { createRedis } from '../../infra/redis/client.js';
import type { Config } from '../../src/kernel/config/config.js';
import type { Logger } from '../../infra/log/logger.js';
import { realtimeKeys } from './keys.js';

export interface RealtimeAdapter {
  /** the connection that publishes; commands queued on it after a broadcast run after its PUBLISH */
  pub: Redis;
  /** the subscriber connection */
  sub: Redis;
  /**
   * Resolves once every message published before the call has reached this process and
   * been handed to its sockets, and every subscription asked for before it is in force
   * (a PING queued behind them on the subscriber connection: Redis answers in order).
   */
  barrier(): Promise<void>;
  /**
   * Called when the subscriber connection is back after a loss (a Redis restart, a network
   * cut), once its subscriptions are in force again, with when the loss began. Whatever
   * was published meanwhile never reached this process: pub/sub keeps nothing.
   */
  onResubscribed(listener: (lostAtMs: number) => void): void;
  close(): Promise<void>;
}

async function ready(r: Redis): Promise<void> {
  if (r.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    r.once('ready', () => resolve());
    r.once('end', () => reject(new Error('redis connection ended before it was ready')));
  });
}

/** How long after a change of masters the sharded subscribers are taken to be subscribed again. */
const CLUSTER_RESUBSCRIBE_MS = 500;

type ShardedGroup = { shardedSubscribers?: Map<string, { getInstance(): Redis | null }> };

/** The connections this process's messages arrive on: the subscriber, or on a cluster each master's sharded subscriber. */
function subscriberConnections(sub: Redis): Redis[] {
  if (!sub.isCluster) return [sub];
  const group = (sub as unknown as { shardedSubscribers?: ShardedGroup }).shardedSubscribers;
  return [...(group?.shardedSubscribers?.values() ?? [])].flatMap((s) => s.getInstance() ?? []);
}

/**
 * A cluster's sharded channels move with their slots: after a failover (a replica taking
 * over, a master lost) ioredis subscribes again on the new masters, and what was published
 * meanwhile is gone. Calls `changed` with when the masters were last seen as before.
 */
function watchClusterMasters(sub: Redis, changed: (lostAtMs: number) => void): void {
  const cluster = sub as unknown as Cluster;
  const masters = () => cluster.nodes('master').map((n) => `${n.options.host}:${n.options.port}`).sort().join(',');
  let known = masters();
  let lostAt: number | undefined;
  let seenAt = Date.now();
  cluster.on('-node', () => { lostAt ??= seenAt; });
  cluster.on('refresh', () => {
    const now = masters();
    if (now === known && lostAt === undefined) { seenAt = Date.now(); return; }
    const at = lostAt ?? seenAt;
    known = now;
    lostAt = undefined;
    seenAt = Date.now();
    changed(at);
  });
}

export async function attachRedisAdapter(io: Server, config: Config, logger: Logger): Promise<RealtimeAdapter> {
  const pub = createRedis(config.redis);
  const sub = createRedis(config.redis);
  for (const [r, role] of [[pub, 'pub'], [sub, 'sub']] as const) {
    r.on('error', (err: Error) => logger.warn({ err: err.message, connection: role }, 'socket.io adapter redis error'));
  }
  await Promise.all([ready(pub), ready(sub)]);
  const channel = realtimeKeys(config.redis.prefix).adapterChannel;
  io.adapter(config.ws.sharded || sub.isCluster
    ? createShardedAdapter(pub, sub, { channelPrefix: channel, subscriptionMode: 'dynamic' })
    : createAdapter(pub, sub, { key: channel }));
  const barrier = async () => { await Promise.all(subscriberConnections(sub).map((c) => c.ping())); };
  await barrier();
  const listeners: ((lostAtMs: number) => void)[] = [];
  const resubscribed = (at: number, delayMs: number) => {
    setTimeout(() => {
      barrier().then(() => { for (const l of listeners) l(at); }, (err: Error) => logger.warn({ err: err.message }, 'socket.io adapter: barrier after resubscription failed'));
    }, delayMs);
  };
  if (sub.isCluster) watchClusterMasters(sub, (at) => resubscribed(at, CLUSTER_RESUBSCRIBE_MS));
  let lostAt: number | undefined;
  sub.on('close', () => { lostAt ??= Date.now(); });
  sub.on('ready', () => {
    const at = lostAt;
    if (at === undefined) return;
    lostAt = undefined;
    // ioredis queues its re-subscriptions right after 'ready': the PING goes behind them
    resubscribed(at, 0);
  });
  return {
    pub,
    sub,
    barrier,
    onResubscribed: (listener) => { listeners.push(listener); },
    async close() {
      pub.disconnect();
      sub.disconnect();
    },
  };
}
