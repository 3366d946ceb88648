/** Builds the per-process dependencies from the configuration, and tears them down. */
import type { Config } from '../kernel/config/config.js';
import { createDb } from '../../infra/postgres/database.js';
import { createRedis, streamKeys } from '../../infra/redis/client.js';
import type { Logger } from '../../infra/log/logger.js';
import { createMetrics } from '../../infra/metrics/metrics.js';
import type { AppContext } from './context.js';
import { systemClock, type Clock } from '../kernel/domain/clock.js';

export function buildContext(config: Config, logger: Logger, role: string, clock: Clock = systemClock): AppContext {
  const db = createDb(config.db.url, config.db.poolMax, `tributary-${role}`);
  // query routes read through a pool of their own, bounded by a statement timeout (the
  // primary's pool, used by projections and commands, has none), with named statements:
  // a few statement shapes each run many times, parsed once per connection
  const readTimeout = config.db.readStatementTimeoutMs;
  const dbRead = config.db.readUrl || readTimeout > 0
    ? createDb(config.db.readUrl ?? config.db.url, config.db.poolMax, `tributary-${role}-read`, { statementTimeoutMs: readTimeout, namedStatements: true })
    : db;
  // many requests each issue a command or two in the same tick: one write for all of them
  const redis = createRedis(config.redis, { enableAutoPipelining: true });
  redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error'));
  return { config, db, dbRead, redis, keys: streamKeys(config.redis.prefix), logger, clock, metrics: createMetrics() };
}

export async function closeContext(ctx: AppContext): Promise<void> {
  if (ctx.dbRead !== ctx.db) await ctx.dbRead.destroy();
  await ctx.db.destroy();
  ctx.redis.disconnect();
}
