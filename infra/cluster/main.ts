/**
 * `make cluster`: the service as separate processes behind nginx on PORT, until Ctrl-C
 * or SIGTERM stops every process. Settings (environment; the roles get everything else
 * as it is, DATABASE_URL, REDIS_URL, ADMIN_API_KEY, ...):
 *
 *   PORT (3002)                  nginx; API nodes on PORT+10, PORT+11, ...
 *   CLUSTER_HOST (0.0.0.0)       nginx's listen address
 *   CLUSTER_RUN_DIR (tmp/cluster) logs, nginx.conf, the replica's data, fixtures
 *   CLUSTER_API_NODES (2), CLUSTER_PROJECTORS, CLUSTER_WEBHOOK_WORKERS, CLUSTER_NOTIFIERS, CLUSTER_INDEXERS, CLUSTER_SCHEDULERS (1)
 *   CLUSTER_REPLICA_PORT (5433)  streaming replica of DATABASE_URL's primary for the API nodes' reads; CLUSTER_REPLICA=0: none
 *   CLUSTER_SENTINEL (0)         1: a private redis-server (CLUSTER_REDIS_PORT, 6380) reached through Sentinel (CLUSTER_SENTINEL_PORT, 26380)
 *   REDIS_CLUSTER (0)            1: a private Redis Cluster, 3 masters and 3 replicas (CLUSTER_REDIS_PORTS: six ports, default free ones)
 *   CLUSTER_CLI (dist)           dist: node dist/src/app/cli/bin.js (after make build); tsx: the TypeScript sources
 *   LOCALNET_PORT, LOCALNET_SEED, LOCALNET_RATE, LOCALNET_MAX_EVENTS as for make start; SOLANA_RPC_URL set: no localnet
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, type RoleName } from './cluster.js';
import { SERVICE_NODE_FLAGS } from './node-flags.js';

export function repoRoot(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('no package.json above the cluster scripts');
    dir = up;
  }
  return dir;
}

const env = process.env;
const num = (name: string, dflt: number): number => {
  const v = env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${name} must be an integer (got '${v}')`);
  return n;
};
const flag = (name: string, dflt: boolean): boolean => (env[name] === undefined || env[name] === '' ? dflt : !['0', 'false', 'no', 'off'].includes(env[name].toLowerCase()));

export function cliCommand(root: string, mode: string | undefined): string[] {
  if (mode === 'tsx') return [process.execPath, ...SERVICE_NODE_FLAGS, '--import', 'tsx', path.join(root, 'src', 'app', 'cli', 'bin.ts')];
  const bin = path.join(root, 'dist', 'src', 'app', 'cli', 'bin.js');
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run make build first (or CLUSTER_CLI=tsx)`);
  return [process.execPath, ...SERVICE_NODE_FLAGS, bin];
}

async function main(): Promise<void> {
  const root = repoRoot();
  const port = num('PORT', 3002);
  const runDir = path.resolve(root, env['CLUSTER_RUN_DIR'] ?? 'tmp/cluster');
  const roleEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !['PORT', 'HOST'].includes(k)) roleEnv[k] = v;
  // As `make start`: without an encryption key the service runs in its announced development mode.
  if (!env['SIGNING_KEY_ENCRYPTION_KEY']) roleEnv['TRIBUTARY_DEV_MODE'] ??= 'true';
  const counts: Partial<Record<RoleName, number>> = {
    api: num('CLUSTER_API_NODES', 2), projector: num('CLUSTER_PROJECTORS', 1), webhooks: num('CLUSTER_WEBHOOK_WORKERS', 1),
    notifier: num('CLUSTER_NOTIFIERS', 1), indexer: num('CLUSTER_INDEXERS', 1), scheduler: num('CLUSTER_SCHEDULERS', 1),
  };
  const log = (s: string) => process.stdout.write(`[cluster] ${s}\n`);
  log(`starting in ${runDir}`);
  const cluster = await startCluster({
    root, runDir, port, host: env['CLUSTER_HOST'] ?? '0.0.0.0', cli: cliCommand(root, env['CLUSTER_CLI']), env: roleEnv, counts, log,
    ...(flag('CLUSTER_REPLICA', true) ? { replicaPort: num('CLUSTER_REPLICA_PORT', 5433) } : {}),
    ...(flag('CLUSTER_SENTINEL', false) ? { sentinel: { redisPort: num('CLUSTER_REDIS_PORT', 6380), sentinelPort: num('CLUSTER_SENTINEL_PORT', 26380), masterName: env['REDIS_SENTINEL_NAME'] ?? 'mymaster' } } : {}),
    ...(flag('REDIS_CLUSTER', false) ? { redisCluster: env['CLUSTER_REDIS_PORTS'] ? { ports: env['CLUSTER_REDIS_PORTS'].split(',').map(Number) } : {} } : {}),
    ...(env['SOLANA_RPC_URL'] ? {} : { localnet: { port: num('LOCALNET_PORT', 8899), seed: env['LOCALNET_SEED'] ?? 'tributary', rate: num('LOCALNET_RATE', 5), maxEvents: Number(env['LOCALNET_MAX_EVENTS'] ?? 0) } }),
  });
  log(`up: ${cluster.url} (nginx) -> ${cluster.apiUrls.join(', ')}${cluster.replica ? `; reads from ${cluster.replica.url.replace(/\/\/[^@]*@/, '//')}` : ''}`);
  if (cluster.redisCluster) log(`Redis Cluster: REDIS_CLUSTER_NODES=${cluster.redisCluster.nodes.join(',')}`);
  log(`processes: ${[...cluster.procs.entries()].map(([n, p]) => `${n}(${p.pid()})`).join(' ')}`);
  log(`logs: ${path.join(runDir, 'logs')}; Ctrl-C stops everything`);
  let stopping = false;
  const stop = (sig: string) => {
    if (stopping) return;
    stopping = true;
    log(`${sig}: stopping every process`);
    cluster.stop().then(() => { log('stopped'); process.exit(0); }, (err: Error) => { log(`stop failed: ${err.message}`); process.exit(1); });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGHUP', () => stop('SIGHUP'));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: Error) => {
    process.stderr.write(`[cluster] ${err.message}\n`);
    process.exit(1);
  });
}
