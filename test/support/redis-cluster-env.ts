/**
 * A test's database and key prefix with Redis on a private Redis Cluster: the TestEnv
 * of createTestEnv with its Redis swapped for a Cluster client, its prefix made the
 * cluster's hash tag (as the configuration does), and REDIS_CLUSTER_NODES in its env.
 */
import { createRedis, streamKeys } from '../../infra/redis/client.js';
import { clusterPrefix } from '../../src/kernel/names/index.js';
import type { Redis } from 'ioredis';
import { createTestEnv, type TestEnv } from './env.js';
import type { TestRedisCluster } from './redis-cluster.js';

export interface ClusterTestEnv extends TestEnv {
  cluster: TestRedisCluster;
  /** a new Cluster client (a blocking reader's own connection, a second node's) */
  connect(): Redis;
}

export async function createClusterTestEnv(tag: string, cluster: TestRedisCluster): Promise<ClusterTestEnv> {
  const base = await createTestEnv(tag);
  const settings = { url: 'redis://127.0.0.1:6379', sentinels: [], sentinelName: '', clusterNodes: cluster.nodes };
  const clients: Redis[] = [];
  const connect = (): Redis => {
    const r = createRedis(settings);
    clients.push(r);
    return r;
  };
  const redis = createRedis(settings, { enableAutoPipelining: true });
  const prefix = clusterPrefix(base.prefix);
  return {
    ...base, cluster, connect, redis, prefix, keys: streamKeys(prefix),
    env: { ...base.env, REDIS_CLUSTER_NODES: cluster.nodesEnv },
    async close() {
      for (const c of clients) c.disconnect();
      redis.disconnect();
      await base.close();
    },
  };
}
