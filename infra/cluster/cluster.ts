/**
 * The whole service on one machine as separate processes, as an operator runs it: the
 * localnet (unless SOLANA_RPC_URL names a real cluster), a projector, a webhook worker,
 * the notifier, the indexer, the scheduler (due payments and the pay-as-you-go settler)
 * and two API nodes, each a `tributary serve --role ...`
 * process with its own log file, behind nginx on PORT. Optionally a streaming replica
 * of the primary for the API nodes' reads (DATABASE_READ_URL), and Redis reached
 * through Sentinel (REDIS_SENTINELS) or a private Redis Cluster (REDIS_CLUSTER_NODES).
 * Used by `make cluster` and by the soak.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { supervise, type Supervised } from './child.js';
import { startNginx } from './nginx.js';
import { setUpReplica, type Replica } from './replica.js';
import { startRedisServer, startSentinel, waitRedisReady, waitSentinelMaster } from './redis.js';
import { startRedisCluster, type LocalRedisCluster } from './redis-cluster.js';

export type RoleName = 'projector' | 'webhooks' | 'notifier' | 'indexer' | 'scheduler' | 'api';

export interface ClusterOptions {
  root: string;
  runDir: string;
  /** nginx listens here; the API nodes on 127.0.0.1 only */
  host: string;
  port: number;
  /** how the CLI is run, e.g. [node, dist/src/app/cli/bin.js] */
  cli: readonly string[];
  /** environment of every role: DATABASE_URL, REDIS_URL, ADMIN_API_KEY, ... */
  env: Readonly<Record<string, string>>;
  /** processes per role (default one each, two API nodes) */
  counts?: Partial<Record<RoleName, number>>;
  /** first API node port (default PORT + 10, then + 11, ...) */
  apiBasePort?: number;
  /** a streaming replica of DATABASE_URL's primary on this port, read by the API nodes */
  replicaPort?: number;
  /** PostgreSQL server binaries (default the newest under /usr/lib/postgresql) */
  pgBin?: string;
  /** a private redis-server on redisPort, reached through a Sentinel on sentinelPort */
  sentinel?: { redisPort: number; sentinelPort: number; masterName: string };
  /** a private Redis Cluster of 3 masters and 3 replicas (on these six ports, or free ones), reached with REDIS_CLUSTER_NODES */
  redisCluster?: { ports?: readonly number[] };
  /** run the localnet (JSON-RPC on this port, websocket on the next) */
  localnet?: { port: number; seed: string; rate: number; maxEvents: number };
  nginxWorkers?: number;
  accessLog?: boolean;
  log: (line: string) => void;
}

export interface Cluster {
  url: string;
  apiUrls: string[];
  runDir: string;
  /** every process by name: localnet, projector, webhooks, notifier, indexer, scheduler, api-1, api-2, nginx, ... */
  procs: Map<string, Supervised>;
  replica?: Replica;
  /** the private Redis Cluster, when one was asked for */
  redisCluster?: LocalRedisCluster;
  /** the environment the roles run with */
  roleEnv: Record<string, string>;
  /** resolves once the process answers (API: /v1/health; others: alive for a moment) */
  waitUp(name: string, timeoutMs?: number): Promise<void>;
  /** starts the localnet now (when the cluster was started without it) */
  startLocalnet(l: NonNullable<ClusterOptions['localnet']>): Promise<void>;
  /** one more process of a role (not api), named role-N; returns its name */
  addRole(role: Exclude<RoleName, 'api'>): string;
  stop(): Promise<void>;
}

const ORDER: readonly RoleName[] = ['projector', 'webhooks', 'notifier', 'indexer', 'scheduler', 'api'];

export async function healthy(url: string): Promise<boolean> {
  try {
    const r = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(2000) });
    return r.ok;
  } catch {
    return false;
  }
}

async function until(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function runOnce(o: ClusterOptions, args: string[], env: Record<string, string>, logFile: string): Promise<void> {
  const p = supervise({ name: args.join(' '), command: o.cli[0]!, args: [...o.cli.slice(1), ...args], env, logFile, cwd: o.root, restart: false });
  const code = await p.nextExit();
  if (code !== 0) throw new Error(`tributary ${args.join(' ')} exited ${code}; see ${logFile}`);
}

export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  const logs = path.join(o.runDir, 'logs');
  mkdirSync(logs, { recursive: true });
  const procs = new Map<string, Supervised>();
  const stopping = { now: false };
  const onExit = (name: string, code: number | null, sig: NodeJS.Signals | null): void => {
    if (!stopping.now) o.log(`${name} exited (${sig ?? `code ${code}`})${procs.get(name)?.spec.restart === false ? '' : '; restarting'}`);
  };
  const logFile = (name: string) => path.join(logs, `${name}.log`);
  const counts = { projector: 1, webhooks: 1, notifier: 1, indexer: 1, scheduler: 1, api: 2, ...o.counts };
  const apiBase = o.apiBasePort ?? o.port + 10;
  const apiPorts = Array.from({ length: counts.api }, (_, i) => apiBase + i);
  const roleEnv: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root', ...o.env,
  };
  let replica: Replica | undefined;
  const spawnRole = (role: RoleName, name: string, extra: Record<string, string>): void => {
    const env = { ...roleEnv, ...extra };
    procs.set(name, supervise({ name, command: o.cli[0]!, args: [...o.cli.slice(1), 'serve', '--role', role], env, logFile: logFile(name), cwd: o.root }, onExit));
  };

  const cluster: Cluster = {
    url: `http://${o.host === '0.0.0.0' ? '127.0.0.1' : o.host}:${o.port}`,
    apiUrls: apiPorts.map((p) => `http://127.0.0.1:${p}`),
    runDir: o.runDir,
    procs,
    roleEnv,
    async waitUp(name, timeoutMs = 60_000) {
      const p = procs.get(name);
      if (!p) throw new Error(`no process ${name}`);
      const api = /^api-(\d+)$/.exec(name);
      if (api) {
        const url = cluster.apiUrls[Number(api[1]) - 1]!;
        await until(() => healthy(url), timeoutMs, `${name} healthy`);
        return;
      }
      const started = Date.now();
      await until(async () => p.running() && Date.now() - started > 1500, timeoutMs, `${name} running`);
    },
    async startLocalnet(l) {
      Object.assign(roleEnv, { LOCALNET_PORT: String(l.port), LOCALNET_SEED: l.seed, LOCALNET_FIXTURES: roleEnv['LOCALNET_FIXTURES'] ?? path.join(o.runDir, 'fixtures.json') });
      const env = { ...roleEnv, LOCALNET_RATE: String(l.rate), LOCALNET_MAX_EVENTS: String(l.maxEvents) };
      // The chain lives in the localnet's memory: a restart would be a new chain, so it is not
      // restarted. It stands in for a cluster that runs on other machines, whose pace the
      // service's load cannot slow: on one machine it gets a higher scheduling priority.
      procs.set('localnet', supervise({ name: 'localnet', command: o.cli[0]!, args: [...o.cli.slice(1), 'localnet'], env, logFile: logFile('localnet'), cwd: o.root, restart: false, nice: -5 }, onExit));
      await until(async () => {
        const r = await fetch(`http://127.0.0.1:${l.port}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getHealth"}' }).catch(() => undefined);
        return r?.ok === true;
      }, 60_000, 'the localnet');
      o.log(`localnet on 127.0.0.1:${l.port} (websocket ${l.port + 1}), ${l.rate} events/s${l.maxEvents ? `, stops after ${l.maxEvents}` : ''}`);
    },
    addRole(role) {
      const taken = [...procs.keys()].filter((n) => n === role || n.startsWith(`${role}-`)).length;
      const name = `${role}-${taken + 1}`;
      spawnRole(role, name, {});
      return name;
    },
    async stop() {
      stopping.now = true;
      const groups: string[][] = [['nginx'], apiPorts.map((_, i) => `api-${i + 1}`), ['scheduler'], ['indexer'], ['notifier', 'webhooks'], ['projector'], ['localnet'], ['sentinel', 'redis']];
      for (const g of groups) {
        const names = [...procs.keys()].filter((n) => g.some((x) => n === x || n.startsWith(`${x}-`)));
        await Promise.all(names.map((n) => procs.get(n)!.stop()));
      }
      await replica?.stop();
      for (const p of procs.values()) await p.stop();
    },
  };

  try {
    if (o.sentinel) {
      const s = o.sentinel;
      procs.set('redis', startRedisServer({ name: 'redis', port: s.redisPort, dir: path.join(o.runDir, 'redis'), logFile: logFile('redis'), onExit }));
      await waitRedisReady(s.redisPort, 15_000);
      procs.set('sentinel', startSentinel({ name: 'sentinel', port: s.sentinelPort, dir: path.join(o.runDir, 'sentinel'), logFile: logFile('sentinel'), masterName: s.masterName, masterPort: s.redisPort, onExit }));
      await waitSentinelMaster(s.sentinelPort, s.masterName, s.redisPort, 15_000);
      Object.assign(roleEnv, { REDIS_URL: 'redis://127.0.0.1', REDIS_SENTINELS: `127.0.0.1:${s.sentinelPort}`, REDIS_SENTINEL_NAME: s.masterName });
      o.log(`redis on 127.0.0.1:${s.redisPort}, reached through sentinel 127.0.0.1:${s.sentinelPort} (${s.masterName})`);
    }
    if (o.redisCluster) {
      const rc = await startRedisCluster({ dir: path.join(o.runDir, 'redis-cluster'), log: o.log, ...(o.redisCluster.ports ? { ports: o.redisCluster.ports } : {}) });
      for (const [port, p] of rc.procs) procs.set(`redis-${port}`, p);
      roleEnv['REDIS_CLUSTER_NODES'] = rc.nodes.join(',');
      cluster.redisCluster = rc;
    }
    if (o.localnet) await cluster.startLocalnet(o.localnet);
    await runOnce(o, ['migrate'], roleEnv, logFile('migrate'));
    if (o.replicaPort !== undefined) {
      const primaryUrl = roleEnv['DATABASE_URL'] ?? 'postgres://root@127.0.0.1:5432/tributary';
      replica = await setUpReplica({ primaryUrl, port: o.replicaPort, dataDir: path.join(o.runDir, 'replica'), logFile: logFile('pg-replica'), ...(o.pgBin ? { pgBin: o.pgBin } : {}), log: o.log, onExit });
      procs.set('pg-replica', replica.server);
    }
    for (const role of ORDER) {
      for (let i = 0; i < counts[role]; i += 1) {
        const name = role === 'api' || counts[role] > 1 ? `${role}-${i + 1}` : role;
        const extra: Record<string, string> = {};
        if (role === 'api') {
          Object.assign(extra, { PORT: String(apiPorts[i]), HOST: '127.0.0.1', TRUST_PROXY: 'loopback' });
          if (replica) extra['DATABASE_READ_URL'] = replica.url;
        }
        spawnRole(role, name, extra);
      }
    }
    for (const [i] of apiPorts.entries()) await cluster.waitUp(`api-${i + 1}`, 90_000);
    procs.set('nginx', await startNginx({
      root: o.root, runDir: o.runDir, host: o.host, port: o.port, apiPorts, onExit,
      ...(o.nginxWorkers ? { workers: o.nginxWorkers } : {}), ...(o.accessLog === false ? { accessLog: false } : {}),
    }));
    await until(() => healthy(cluster.url), 30_000, `nginx on ${cluster.url}`);
    cluster.replica = replica;
    return cluster;
  } catch (err) {
    await cluster.stop().catch(() => undefined);
    await replica?.stop().catch(() => undefined);
    throw err;
  }
}
