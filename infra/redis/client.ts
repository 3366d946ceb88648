/**
 * Redis through ioredis: a plain URL, Sentinel when REDIS_SENTINELS is set (ioredis's own
 * failover), or a Redis Cluster when REDIS_CLUSTER_NODES is set (ioredis's Cluster client,
 * which follows MOVED/ASK and a failover by itself). Commands issued while Redis is down
 * are queued and retried by ioredis; callers see an error only when a command could not be
 * sent at all.
 *
 * A Cluster client is handed out under the `Redis` type: both are ioredis Commanders and
 * the service uses only what they share (commands, scripts, pipelines and MULTI within one
 * slot, duplicate, pub/sub). On a cluster every key of the deployment carries its prefix as
 * a hash tag unless it is used alone (src/kernel/names), so what runs together stays in a slot.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

export type { Redis };

export interface RedisSettings {
  url: string;
  sentinels: readonly string[];
  sentinelName: string;
  /** host:port of some nodes of a Redis Cluster; empty for one node or Sentinel */
  clusterNodes?: readonly string[];
}

/** How long commands wait out a failover (retried every 200 ms while slots move or a master is down). */
const CLUSTER_RETRIES = 150;

function hostPort(hp: string, dfltPort: number): { host: string; port: number } {
  const i = hp.lastIndexOf(':');
  return i < 0 ? { host: hp, port: dfltPort } : { host: hp.slice(0, i) || '127.0.0.1', port: Number(hp.slice(i + 1)) };
}

function credentials(url: string): Pick<RedisOptions, 'username' | 'password' | 'tls'> {
  const u = new URL(url);
  return {
    ...(u.username === '' ? {} : { username: decodeURIComponent(u.username) }),
    ...(u.password === '' ? {} : { password: decodeURIComponent(u.password) }),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

function createCluster(s: RedisSettings, base: RedisOptions): Redis {
  const { enableAutoPipelining: _ignored, autoPipeliningIgnoredCommands: _alsoIgnored, ...node } = base;
  const options: ClusterOptions = {
    scaleReads: 'master',
    enableReadyCheck: true,
    // ioredis groups a cluster's automatic pipelines by the slot of each command's first
    // argument, which is not the key of XINFO GROUPS, XGROUP, XREADGROUP or EVAL: such a
    // pipeline goes to the wrong master and, mixed with commands that succeed, surfaces
    // MOVED instead of following it. Off: each command is routed by its own key.
    enableAutoPipelining: false,
    // SSUBSCRIBE goes to the master of each channel's slot (Socket.IO's sharded adapter)
    shardedSubscribers: true,
    // the slots are read again every 2 s: a client that only subscribes (or is idle) would
    // otherwise never learn of a failover, and its sharded subscriptions would stay put
    slotsRefreshInterval: 2000,
    maxRedirections: CLUSTER_RETRIES,
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 200,
    clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
    redisOptions: { ...node, ...credentials(s.url) },
  };
  return new Cluster((s.clusterNodes ?? []).map((hp) => hostPort(hp, 6379)), options) as unknown as Redis;
}

export function createRedis(s: RedisSettings, extra: RedisOptions = {}): Redis {
  const base: RedisOptions = {
    // RESP2, the wire every reply shape here and the Socket.IO adapter's subscribers were
    // written against (ioredis 6 speaks RESP3 unless told otherwise)
    protocol: 2,
    maxRetriesPerRequest: null,
    enableAutoPipelining: false,
    retryStrategy: (times) => Math.min(50 * 2 ** times, 2000),
    ...extra,
  };
  if (s.clusterNodes !== undefined && s.clusterNodes.length > 0) return createCluster(s, base);
  if (s.sentinels.length === 0) return new Redis(s.url, base);
  const u = new URL(s.url);
  return new Redis({
    ...base,
    sentinels: s.sentinels.map((hp) => {
      const [host, port] = hp.split(':');
      return { host: host ?? '127.0.0.1', port: Number(port ?? 26379) };
    }),
    name: s.sentinelName,
    password: u.password === '' ? undefined : decodeURIComponent(u.password),
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
  });
}

/**
 * A connection for a consumer group's reads of the stream. ioredis sends a command again on the
 * new connection when the old one closed before its answer came; for XREADGROUP that is wrong: a
 * read Redis ran before the connection broke (a restart, a reset) moved its entries to this
 * consumer's pending list, and the read sent again returns the entries after them, so those are
 * handled first and the lost ones only when claimed, out of order (the soak's read models then
 * differed from their replay after a Redis restart). Here such a read fails instead, and the
 * consumer loop reads its pending list again from its start before any new entry
 * (consumer-loop.ts).
 */
export function createStreamReader(s: RedisSettings): Redis {
  return createRedis(s, { autoResendUnfulfilledCommands: false });
}

/** True when `r` is a Redis Cluster client (created with REDIS_CLUSTER_NODES). */
export function isCluster(r: Redis): boolean {
  return r.isCluster;
}

export { streamKeys, type StreamKeys } from '../../src/kernel/names/index.js';
