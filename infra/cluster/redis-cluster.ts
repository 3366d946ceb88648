/**
 * A local Redis Cluster of three masters and three replicas for `make cluster
 * REDIS_CLUSTER=1`, the soak and the cluster tests: six redis-server processes with
 * cluster mode on, joined by `redis-cli --cluster create --cluster-replicas 1`. Each node
 * keeps an append-only file in its own directory under the run directory; the cluster
 * bus listens on port + 10000, as Redis does.
 */
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { supervise, type Supervised } from './child.js';
import { waitRedisReady } from './redis.js';

const run = promisify(execFile);

export interface LocalRedisCluster {
  /** host:port of every node, what REDIS_CLUSTER_NODES takes */
  nodes: string[];
  ports: number[];
  procs: Map<number, Supervised>;
  /** the port of the master that serves `key`'s slot now */
  masterOf(key: string): Promise<number>;
  /** the ports of the replicas of the master on `port` */
  replicasOf(port: number): Promise<number[]>;
  /** resolves once every slot is served, every node agrees the cluster is ok and every replica is in sync */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** CLUSTER FAILOVER on a replica of the master serving `key`; resolves once that replica serves it. Returns its port. */
  failoverOf(key: string): Promise<number>;
  /** kill -9 of the master serving `key`; resolves once a replica serves it (the cluster's own failover). Returns the killed port. */
  killMasterOf(key: string): Promise<number>;
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  dir: string;
  /** six ports (default: free ones whose bus port is free too) */
  ports?: readonly number[];
  /** how long a node may be silent before it is failed over (ms) */
  nodeTimeoutMs?: number;
  /** fsync of the append-only file: everysec as in production, always for tests that kill nodes */
  appendfsync?: 'always' | 'everysec';
  log?: (line: string) => void;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Free ports below 55535 whose cluster bus port (+10000) is free too. */
export async function freeClusterPorts(n: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < n) {
    const p = 20_000 + Math.floor(Math.random() * 35_000);
    if (out.includes(p) || out.includes(p + 10_000) || out.includes(p - 10_000)) continue;
    if ((await portFree(p)) && (await portFree(p + 10_000))) out.push(p);
  }
  return out;
}

/** A node's view of the masters: port → slot ranges, and replica port → its master's port. */
async function topology(port: number): Promise<{ masters: Map<number, [number, number][]>; replicaOf: Map<number, number> }> {
  const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: () => null, lazyConnect: true });
  r.on('error', () => undefined);
  try {
    await r.connect();
    const text = (await r.call('CLUSTER', 'NODES')) as string;
    const byId = new Map<string, number>();
    const rows = text.trim().split('\n').map((l) => l.split(' '));
    for (const f of rows) byId.set(f[0]!, Number(f[1]!.split(':')[1]!.split('@')[0]));
    const masters = new Map<number, [number, number][]>();
    const replicaOf = new Map<number, number>();
    for (const f of rows) {
      const p = byId.get(f[0]!)!;
      if (f[2]!.includes('fail')) continue;
      if (f[2]!.includes('master')) {
        masters.set(p, f.slice(8).filter((s) => !s.startsWith('[')).map((s) => {
          const [a, b] = s.split('-');
          return [Number(a), Number(b ?? a)];
        }));
      } else if (f[3] !== '-') replicaOf.set(p, byId.get(f[3]!)!);
    }
    return { masters, replicaOf };
  } finally {
    r.disconnect();
  }
}

async function keySlot(port: number, key: string): Promise<number> {
  const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: () => null });
  r.on('error', () => undefined);
  try {
    return Number(await r.call('CLUSTER', 'KEYSLOT', key));
  } finally {
    r.disconnect();
  }
}

async function clusterOk(port: number): Promise<boolean> {
  const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
  r.on('error', () => undefined);
  try {
    await r.connect();
    const info = (await r.call('CLUSTER', 'INFO')) as string;
    if (!info.includes('cluster_state:ok') || !info.includes('cluster_slots_ok:16384')) return false;
    // a replica counts once it is in sync: only then can it take over its master
    const repl = await r.info('replication');
    return repl.includes('role:master') || repl.includes('master_link_status:up');
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

async function until(probe: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startRedisCluster(o: RedisClusterOptions): Promise<LocalRedisCluster> {
  const ports = o.ports ? [...o.ports] : await freeClusterPorts(6);
  if (ports.length !== 6) throw new Error('a local Redis Cluster takes six ports');
  const log = o.log ?? (() => undefined);
  const procs = new Map<number, Supervised>();
  for (const port of ports) {
    const dir = path.join(o.dir, `redis-${port}`);
    mkdirSync(dir, { recursive: true });
    procs.set(port, supervise({
      name: `redis-${port}`, command: 'redis-server', logFile: path.join(o.dir, `redis-${port}.log`), cwd: dir,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, restart: false,
      args: ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--cluster-enabled', 'yes',
        '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(o.nodeTimeoutMs ?? 5000),
        '--appendonly', 'yes', '--appendfsync', o.appendfsync ?? 'everysec', '--save', '', '--daemonize', 'no', '--maxclients', '10000'],
    }));
  }
  const stop = async () => { await Promise.all([...procs.values()].map((p) => p.stop())); };
  try {
    await Promise.all(ports.map((p) => waitRedisReady(p, 15_000)));
    const nodes = ports.map((p) => `127.0.0.1:${p}`);
    if (!(await clusterOk(ports[0]!))) {
      log(`creating the cluster on ${nodes.join(' ')}`);
      await run('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '1', '--cluster-yes'], { timeout: 60_000 });
    }
    const c: LocalRedisCluster = {
      nodes, ports, procs, stop,
      async masterOf(key) {
        const live = ports.filter((p) => procs.get(p)!.running());
        const slot = await keySlot(live[0]!, key);
        const { masters } = await topology(live[0]!);
        for (const [port, ranges] of masters) if (ranges.some(([a, b]) => slot >= a && slot <= b)) return port;
        throw new Error(`no master serves slot ${slot}`);
      },
      async replicasOf(port) {
        const live = ports.filter((p) => procs.get(p)!.running());
        const { replicaOf } = await topology(live[0]!);
        return [...replicaOf.entries()].filter(([, m]) => m === port).map(([r]) => r);
      },
      async waitHealthy(timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const live = ports.filter((p) => procs.get(p)!.running());
          const oks = await Promise.all(live.map((p) => clusterOk(p)));
          if (oks.every(Boolean)) return;
          if (Date.now() > deadline) throw new Error(`Redis Cluster not healthy after ${timeoutMs} ms`);
          await new Promise((r) => setTimeout(r, 200));
        }
      },
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
        procs.get(master)!.signal('SIGKILL');
        await until(async () => (await c.masterOf(key)) !== master, `a replica to take over from ${master}`);
        await c.waitHealthy();
        return master;
      },
    };
    await c.waitHealthy(60_000);
    // every replica attached to a master, so a failover has somewhere to go
    const deadline = Date.now() + 30_000;
    while ((await topology(ports[0]!)).replicaOf.size < 3) {
      if (Date.now() > deadline) throw new Error('Redis Cluster replicas did not attach');
      await new Promise((r) => setTimeout(r, 200));
    }
    log(`Redis Cluster up: ${nodes.join(',')}`);
    return c;
  } catch (err) {
    await stop();
    throw err;
  }
}
