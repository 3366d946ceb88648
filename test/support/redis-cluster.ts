/**
 * A private Redis Cluster (3 masters, 3 replicas) for the cluster tests: started in a
 * temporary directory on free ports, fsync on every write, with the faults the tests
 * inject (infra/cluster/redis-cluster.ts: failoverOf, killMasterOf).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisCluster, type LocalRedisCluster } from '../../infra/cluster/redis-cluster.js';

export interface TestRedisCluster extends LocalRedisCluster {
  /** REDIS_CLUSTER_NODES for the service */
  nodesEnv: string;
  close(): Promise<void>;
}

export async function startTestRedisCluster(opts: { nodeTimeoutMs?: number } = {}): Promise<TestRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'tributary-redis-cluster-'));
  const c = await startRedisCluster({ dir, nodeTimeoutMs: opts.nodeTimeoutMs ?? 1500, appendfsync: 'always' });
  return Object.assign(c, {
    nodesEnv: c.nodes.join(','),
    async close() {
      await c.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  });
}
