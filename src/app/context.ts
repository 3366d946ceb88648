/**
 * The composition root's product: every collaborator a process needs, built once and
 * passed down. Only the composition root (src/app) sees it whole: a command, query,
 * projection or adapter names the few collaborators it takes, and the layer rule keeps it
 * that way (.dependency-cruiser.cjs).
 */
import type { Redis } from 'ioredis';
import type { Config } from '../kernel/config/config.js';
import type { Db } from '../../infra/postgres/database.js';
import type { StreamKeys } from '../../infra/redis/client.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Metrics } from '../../infra/metrics/metrics.js';

import type { Clock } from '../kernel/domain/clock.js';

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
