/**
 * The Socket.IO Redis adapter of every real-time process (API nodes and the notifier),
 * on two connections of its own: plain pub/sub by default, or Redis 7 sharded pub/sub
 * (WS_SHARDED_ADAPTER) where each room with sockets on a node gets its own channel, so a
 * payment reaches only the nodes that hold its trackingId's sockets. ioredis speaks both.
 * Channels carry the deployment's prefix.
 */
import { createAdapter, createShardedAdapter } from '@socket.io/redis-adapter';
import type { Server } from 'socket.io';
import type { Redis } from 'ioredis';
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

export async function attachRedisAdapter(io: Server, config: Config, logger: Logger): Promise<RealtimeAdapter> {
  const pub = createRedis(config.redis);
  const sub = createRedis(config.redis);
  for (const [r, role] of [[pub, 'pub'], [sub, 'sub']] as const) {
    r.on('error', (err: Error) => logger.warn({ err: err.message, connection: role }, 'socket.io adapter redis error'));
  }
  await Promise.all([ready(pub), ready(sub)]);
  const channel = realtimeKeys(config.redis.prefix).adapterChannel;
  io.adapter(config.ws.sharded
    ? createShardedAdapter(pub, sub, { channelPrefix: channel, subscriptionMode: 'dynamic' })
    : createAdapter(pub, sub, { key: channel }));
  const barrier = async () => { await sub.ping(); };
  await barrier();
  const listeners: ((lostAtMs: number) => void)[] = [];
  let lostAt: number | undefined;
  sub.on('close', () => { lostAt ??= Date.now(); });
  sub.on('ready', () => {
    const at = lostAt;
    if (at === undefined) return;
    lostAt = undefined;
    // ioredis queues its re-subscriptions right after 'ready': the PING goes behind them
    setImmediate(() => {
      barrier().then(() => { for (const l of listeners) l(at); }, (err: Error) => logger.warn({ err: err.message }, 'socket.io adapter: barrier after resubscription failed'));
    });
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
