/**
 * Test infrastructure: each test file gets its own Postgres database and Redis key
 * prefix on the machine's services (DATABASE_URL / REDIS_URL, defaulting to the local
 * ones). With TEST_CONTAINERS=1, test/support/containers.ts (loaded first) points both at
 * containers started through testcontainers.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb, ensureDatabase, type Db } from '../../infra/postgres/database.js';
import { migrateToLatest } from '../../infra/migrations/index.js';
import { createRedis, streamKeys, type StreamKeys } from '../../infra/redis/client.js';
import type { Redis } from 'ioredis';

const BASE_DB_URL = process.env['DATABASE_URL'] ?? 'postgres://root@127.0.0.1:5432/postgres';
const BASE_REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

function serviceUrls(): Promise<{ dbUrl: string; redisUrl: string }> {
  return Promise.resolve({ dbUrl: BASE_DB_URL, redisUrl: BASE_REDIS_URL });
}

export function uniqueName(tag: string): string {
  return `t_${tag.replace(/[^a-z0-9]/gi, '_').toLowerCase().slice(0, 30)}_${randomBytes(4).toString('hex')}`;
}

export interface TestEnv {
  name: string;
  dbUrl: string;
  redisUrl: string;
  prefix: string;
  db: Db;
  redis: Redis;
  keys: StreamKeys;
  /** environment for a child process of the service bound to this test's database and prefix */
  env: Record<string, string>;
  /**
   * A Db of one connection to this database, closed with it: a statement a test PREPAREs,
   * a setting it SETs, hold for the statements it runs next.
   */
  oneConnection(opts?: Parameters<typeof createDb>[3]): Db;
  close(): Promise<void>;
}

/**
 * A fresh, migrated database and a fresh key prefix for one test file. `keep`: a bench's
 * database of that fixed name, opened again if it exists and kept at close (a bench
 * whose data takes long to generate reuses it).
 */
export async function createTestEnv(tag: string, opts: { keep?: boolean } = {}): Promise<TestEnv> {
  const { dbUrl: base, redisUrl } = await serviceUrls();
  const name = opts.keep === true ? `t_${tag}_kept` : uniqueName(tag);
  const u = new URL(base);
  u.pathname = `/${name}`;
  const dbUrl = u.toString();
  await ensureDatabase(dbUrl);
  const db = createDb(dbUrl, 10, name);
  await migrateToLatest(db);
  const redis = createRedis({ url: redisUrl, sentinels: [], sentinelName: '' }, { enableAutoPipelining: true });
  const prefix = `${name}:`;
  const single: Db[] = [];
  return {
    name, dbUrl, redisUrl, prefix, db, redis, keys: streamKeys(prefix),
    env: { DATABASE_URL: dbUrl, REDIS_URL: redisUrl, REDIS_PREFIX: prefix, LOG_LEVEL: 'warn', TRIBUTARY_DEV_MODE: 'true' },
    oneConnection(opts) {
      const one = createDb(dbUrl, 1, `${name}-one`, opts);
      single.push(one);
      return one;
    },
    async close() {
      for (const one of single) await one.destroy();
      await db.destroy();
      const keys = await scanKeys(redis, `${prefix}*`);
      for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
      redis.disconnect();
      if (opts.keep !== true) await dropDatabase(base, name);
    },
  };
}

async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    out.push(...keys);
  } while (cursor !== '0');
  return out;
}

async function dropDatabase(base: string, name: string): Promise<void> {
  if (process.env['KEEP_TEST_DB'] === '1') return;
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const c = new pg.Client({ connectionString: admin.toString() });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await c.end();
  }
}
