/**
 * The soak's own PostgreSQL primary and Redis, private to the run (initdb into the run
 * directory, a redis-server on a free port): the soak stops and restarts them, which it
 * must never do to the machine's shared servers.
 */
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { initPrimary, pgBinDir, serverUser, startPgServer, waitPgReady } from '../../infra/cluster/postgres.js';
import { startRedisServer, waitRedisReady } from '../../infra/cluster/redis.js';
import type { Supervised } from '../../infra/cluster/child.js';

export interface PrivateServices {
  databaseUrl: string;
  redisUrl: string;
  pg: Supervised;
  redis: Supervised;
  restartPostgres(): Promise<void>;
  restartRedis(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrivateServices(runDir: string, pgPort: number, redisPort: number): Promise<PrivateServices> {
  mkdirSync(path.join(runDir, 'logs'), { recursive: true });
  chmodSync(runDir, 0o755); // the postgres user reaches its data directory through it
  const bin = pgBinDir();
  const user = await serverUser();
  const dataDir = path.join(runDir, 'pg-primary');
  await initPrimary(bin, dataDir, user);
  // fsync stays on: a restart must not lose what was committed
  const pg = startPgServer({
    name: 'pg-primary', bin, dataDir, port: pgPort, logFile: path.join(runDir, 'logs', 'pg-primary.log'), user,
    settings: { max_connections: 300, shared_buffers: '256MB', wal_keep_size: '1GB', max_wal_senders: 10, synchronous_commit: 'on' },
  });
  const adminUrl = `postgres://postgres@127.0.0.1:${pgPort}/postgres`;
  await waitPgReady(adminUrl, 60_000);
  const redis = startRedisServer({ name: 'redis', port: redisPort, dir: path.join(runDir, 'redis'), logFile: path.join(runDir, 'logs', 'redis.log') });
  await waitRedisReady(redisPort, 15_000);
  return {
    databaseUrl: `postgres://postgres@127.0.0.1:${pgPort}/tributary`,
    redisUrl: `redis://127.0.0.1:${redisPort}`,
    pg,
    redis,
    async restartPostgres() {
      await pg.stop();
      pg.start();
      await waitPgReady(adminUrl, 120_000);
    },
    async restartRedis() {
      await redis.stop();
      redis.start();
      await waitRedisReady(redisPort, 60_000);
    },
    async stop() {
      await redis.stop();
      await pg.stop();
    },
  };
}
