/**
 * A private Redis Cluster (3 masters, 3 replicas) for the cluster tests: started in a
 * temporary directory on free ports, with the faults the tests inject (a replica taking
 * over by CLUSTER FAILOVER, a master killed with -9).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startRedisCluster, type LocalRedisCluster } from '../../infra/cluster/redis-cluster.js';

export interface TestRedisCluster extends LocalRedisCluster {
  /** REDIS_CLUSTER_NODES for the service */
  nodesEnv: string;
  /** CLUSTER FAILOVER on a replica of the master serving `key`; resolves once that replica serves it. Returns the new master's port. */
  failoverOf(key: string): Promise<number>;
  /** kill -9 of the master serving `key`; resolves once another node serves it (the cluster's own failover). Returns the killed port. */
  killMasterOf(key: string): Promise<number>;
  close(): Promise<void>;
}

export async function startTestRedisCluster(opts: { nodeTimeoutMs?: number } = {}): Promise<TestRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'tributary-redis-cluster-'));
  const c = await startRedisCluster({ dir, nodeTimeoutMs: opts.nodeTimeoutMs ?? 1500, appendfsync: 'always' });
  const until = async (probe: () => Promise<boolean>, what: string, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await probe().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return {
    ...c,
    nodesEnv: c.nodes.join(','),
    async failoverOf(key) {
      const master = await c.masterOf(key);
      const [replica] = await c.replicasOf(master);
      if (replica === undefined) throw new Error(`master ${master} has no replica`);
      const r = new Redis({ port: replica, host: '127.0.0.1', maxRetriesPerRequest: 1 });
      try {
        await r.call('CLUSTER', 'FAILOVER');
      } finally {
        r.disconnect();
      }
      await until(async () => (await c.masterOf(key)) === replica, `replica ${replica} to serve ${key}`);
      await c.waitHealthy();
      return replica;
    },
    async killMasterOf(key) {
      const master = await c.masterOf(key);
      c.procs.get(master)!.signal('SIGKILL');
      await until(async () => (await c.masterOf(key)) !== master, `a replica to take over from ${master}`);
      await c.waitHealthy();
      return master;
    },
    async close() {
      await c.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
