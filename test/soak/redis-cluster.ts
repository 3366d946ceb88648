/**
 * SOAK_REDIS_CLUSTER=1: the soak on a private Redis Cluster (3 masters, 3 replicas) in
 * place of its one Redis. The Redis fault becomes two: the replica of the master holding
 * the spine's slot takes over (CLUSTER FAILOVER), then that new master is killed with -9
 * and the cluster promotes its replica; the killed node is started again (as a supervisor
 * would) and rejoins as a replica. The cluster starts with the roles (infra/cluster), not
 * as the tests' does (test/support/redis-cluster.ts), whose client settings it shares.
 */
import { Redis } from 'ioredis';
import type { Cluster } from '../../infra/cluster/cluster.js';
import type { LocalRedisCluster } from '../../infra/cluster/redis-cluster.js';
import { createRedis } from '../../infra/redis/client.js';
import { clusterPrefix } from '../../src/kernel/names/index.js';
import { clusterRedisSettings } from '../support/redis-cluster.js';
import type { Fault } from './fault.js';

export const SOAK_PREFIX = 'tributary:';

/** The prefix the roles' keys carry: the tag on a cluster. */
export const soakPrefix = (cluster: Cluster): string => (cluster.redisCluster ? clusterPrefix(SOAK_PREFIX) : SOAK_PREFIX);

/** The checks' own connection: to the cluster, or to the private Redis. */
export function soakRedis(cluster: Cluster, redisUrl: string): Redis {
  const rc = cluster.redisCluster;
  const r = rc ? createRedis(clusterRedisSettings(rc.nodes)) : new Redis(redisUrl);
  r.on('error', () => undefined); // Redis is restarted, failed over and killed on purpose
  return r;
}

export function redisClusterFaults(rc: LocalRedisCluster, spineKey: string): Fault[] {
  return [
    { name: 'CLUSTER FAILOVER (spine master)', run: async () => { await rc.failoverOf(spineKey); } },
    {
      name: 'kill -9 Redis master (spine)',
      async run() {
        const killed = await rc.killMasterOf(spineKey);
        rc.procs.get(killed)!.start();
        await rc.waitHealthy(120_000);
      },
    },
  ];
}
