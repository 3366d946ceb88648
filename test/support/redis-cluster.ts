/**
 * A private Redis Cluster (3 masters, 3 replicas) for the cluster tests and the cluster
 * bench, and what they run on it, each started and stopped in one place:
 *
 * - the cluster itself, in a temporary directory on free ports (fsync on every write for
 *   the tests, which kill nodes), with the faults the tests inject
 *   (infra/cluster/redis-cluster.ts: failoverOf, killMasterOf);
 * - a test's database and key prefix with its Redis on the cluster (createTestEnv with its
 *   Redis swapped for a Cluster client, its prefix made the cluster's hash tag as the
 *   configuration does, REDIS_CLUSTER_NODES in its env), or on any Redis the bench names;
 * - the spine's processes: the payments projection, and two API nodes with Socket.IO
 *   and the notifier (the sharded adapter joins them).
 *
 * The soak starts its cluster with its roles (infra/cluster/cluster.ts) and keeps its own
 * faults (test/soak/redis-cluster.ts); it takes the client settings from here.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { startRedisCluster, type LocalRedisCluster, type RedisClusterOptions } from '../../infra/cluster/redis-cluster.js';
import { createRedis, streamKeys, type RedisSettings } from '../../infra/redis/client.js';
import { createLogger } from '../../infra/log/logger.js';
import { clusterPrefix } from '../../src/kernel/names/index.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { startProjection, type RunnerOptions, type RunningProjection } from '../../projections/runner/runner.js';
import { paymentsProjection } from '../../projections/payments/projection.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';
import { startNotifier, type NotifierOptions, type RunningNotifier } from '../../queries/realtime/notifier.js';
import { createTestEnv, type TestEnv } from './env.js';
import { startTestApi, type TestApi } from './app.js';

const logger = createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', 'test');

export interface TestRedisCluster extends LocalRedisCluster {
  /** REDIS_CLUSTER_NODES for the service */
  nodesEnv: string;
  close(): Promise<void>;
}

/** Defaults for tests: a node failed over after 1.5 s silent, fsync on every write. The bench asks production's (5 s, everysec). */
export async function startTestRedisCluster(opts: Pick<RedisClusterOptions, 'nodeTimeoutMs' | 'appendfsync'> = {}): Promise<TestRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'tributary-redis-cluster-'));
  try {
    const c = await startRedisCluster({ dir, nodeTimeoutMs: opts.nodeTimeoutMs ?? 1500, appendfsync: opts.appendfsync ?? 'always' });
    return Object.assign(c, {
      nodesEnv: c.nodes.join(','),
      async close() {
        await c.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The settings of a Cluster client on `nodes` (host:port each). */
export function clusterRedisSettings(nodes: readonly string[]): RedisSettings {
  return { url: 'redis://127.0.0.1:6379', sentinels: [], sentinelName: '', clusterNodes: nodes };
}

export interface RedisTestEnv extends TestEnv {
  /** a new client on the same Redis (a blocking reader's own connection, a second node's) */
  connect(): Redis;
}

/** A test's database and key prefix with its Redis on `settings`: a cluster's (prefix tagged) or one server's. */
export async function createRedisTestEnv(tag: string, settings: RedisSettings): Promise<RedisTestEnv> {
  const base = await createTestEnv(tag);
  const nodes = settings.clusterNodes ?? [];
  const prefix = nodes.length > 0 ? clusterPrefix(base.prefix) : base.prefix;
  const clients: Redis[] = [];
  const redis = createRedis(settings, { enableAutoPipelining: true });
  return {
    ...base, redis, prefix, keys: streamKeys(prefix),
    env: { ...base.env, ...(nodes.length > 0 ? { REDIS_CLUSTER_NODES: nodes.join(',') } : { REDIS_URL: settings.url }) },
    connect() {
      const r = createRedis(settings);
      clients.push(r);
      return r;
    },
    async close() {
      for (const c of clients) c.disconnect();
      redis.disconnect();
      await base.close();
    },
  };
}

export interface ClusterTestEnv extends RedisTestEnv { cluster: TestRedisCluster }

export async function createClusterTestEnv(tag: string, cluster: TestRedisCluster): Promise<ClusterTestEnv> {
  return { ...(await createRedisTestEnv(tag, clusterRedisSettings(cluster.nodes))), cluster };
}

/** The payments projection on the env's Redis (its blocking reads on a connection of their own). */
export function startPaymentsProjector(env: RedisTestEnv, opts: RunnerOptions): RunningProjection {
  return startProjection({ db: env.db, redis: env.redis, blockingRedis: env.connect(), keys: env.keys, logger }, paymentsProjection, opts);
}

export interface RealtimeNodes {
  /** two API nodes with Socket.IO, joined through the adapter */
  nodes: [TestApi, TestApi];
  notifier: RunningNotifier;
  close(): Promise<void>;
}

/** Two API nodes with Socket.IO and the notifier, on the env's Redis and with `overrides` in their config. */
export async function startRealtimeNodes(env: TestEnv, opts: { overrides?: Record<string, string>; notifier: NotifierOptions }): Promise<RealtimeNodes> {
  const overrides = opts.overrides ?? {};
  const started: { close(): Promise<void> }[] = [];
  const close = async () => {
    for (const s of started.splice(0).reverse()) await s.close();
  };
  try {
    const start = async () => {
      const api = await startTestApi(env, overrides, { attachments: [realtimeAttachment()] });
      started.push(api);
      return api;
    };
    const nodes: [TestApi, TestApi] = [await start(), await start()];
    const config = loadConfig({ ...env.env, ...overrides });
    const notifier = await startNotifier({ config, dbRead: env.db, redis: env.redis, keys: env.keys, logger, clock: systemClock }, opts.notifier);
    started.push({ close: () => notifier.stop() });
    return { nodes, notifier, close };
  } catch (err) {
    await close();
    throw err;
  }
}

export interface ClusterRun {
  cluster: TestRedisCluster;
  env: ClusterTestEnv;
  projector?: RunningProjection;
  realtime?: RealtimeNodes;
  /** stops what runs, closes the env, stops the cluster and removes its directory */
  close(): Promise<void>;
}

/**
 * A test's cluster and env, and what it asks to run on them: the payments projection (with
 * its retry budget) and the two realtime API nodes. What started is stopped if a later
 * part fails to start, and by close() in the reverse order.
 */
export async function startClusterRun(tag: string, opts: {
  nodeTimeoutMs?: number;
  projector?: { maxAttempts: number };
  realtime?: boolean;
} = {}): Promise<ClusterRun> {
  const stops: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    const cluster = await startTestRedisCluster(opts.nodeTimeoutMs === undefined ? {} : { nodeTimeoutMs: opts.nodeTimeoutMs });
    stops.push(() => cluster.close());
    const env = await createClusterTestEnv(tag, cluster);
    stops.push(() => env.close());
    const run: ClusterRun = { cluster, env, close };
    if (opts.realtime) {
      const realtime = await startRealtimeNodes(env, { notifier: { batchSize: 100, blockMs: 100, claimIdleMs: 2000 } });
      stops.push(() => realtime.close());
      run.realtime = realtime;
    }
    if (opts.projector) {
      const projector = startPaymentsProjector(env, { batchSize: 100, blockMs: 100, maxAttempts: opts.projector.maxAttempts, claimIdleMs: 2000 });
      stops.push(() => projector.stop());
      run.projector = projector;
    }
    return run;
  } catch (err) {
    await close();
    throw err;
  }
}
