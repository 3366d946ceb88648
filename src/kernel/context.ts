/**
 * The composition root's product: every dependency a route, a projection or a worker
 * needs, built once per process and passed down. Nothing imports a module singleton.
 */
import type { Redis } from 'ioredis';
import type { Config } from './config/config.js';
import type { Db } from '../../infra/postgres/database.js';
import type { StreamKeys } from '../../infra/redis/client.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Metrics } from '../../infra/metrics/metrics.js';

export interface Clock { now(): number }
export const systemClock: Clock = { now: () => Date.now() };

export interface AppContext {
  config: Config;
  /** the primary: projections and commands write here */
  db: Db;
  /** query routes read here: DATABASE_READ_URL when set, else the primary */
  dbRead: Db;
  redis: Redis;
  keys: StreamKeys;
  logger: Logger;
  clock: Clock;
  /** this process's metrics; absent in contexts built by hand (tests), created by the HTTP app then */
  metrics?: Metrics;
}
