/**
 * An API node in-process for integration tests, bound to a test's database and prefix,
 * listening on a free port. `overrides` sets further environment variables.
 */
import { loadConfig } from '../../src/kernel/config/config.js';
import type { AppContext } from '../../src/app/context.js';
import { systemClock, type Clock } from '../../src/kernel/domain/clock.js';
import { startApiServer, type ServerAttachment } from '../../src/app/api-server.js';
import type { AppNode, RouteModule } from '../../src/app/node.js';
import { createLogger } from '../../infra/log/logger.js';
import type { TestEnv } from './env.js';

/** `node`: what the API node built once (its key ring, say), for tests that sign or count. */
export interface TestApi { url: string; ctx: AppContext; node: AppNode; close(): Promise<void> }

export async function startTestApi(
  env: TestEnv,
  overrides: Record<string, string> = {},
  opts: { clock?: Clock; modules?: readonly RouteModule[]; attachments?: readonly ServerAttachment[] } = {},
): Promise<TestApi> {
  const config = loadConfig({ ...env.env, PORT: '0', HOST: '127.0.0.1', ...overrides });
  const logger = createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', 'test-api');
  const ctx: AppContext = { config, db: env.db, dbRead: env.db, redis: env.redis, keys: env.keys, logger, clock: opts.clock ?? systemClock };
  const server = await startApiServer(ctx, { port: 0, host: '127.0.0.1', ...(opts.modules ? { modules: opts.modules } : {}), ...(opts.attachments ? { attachments: opts.attachments } : {}) });
  return { url: server.url, ctx, node: server.node, close: () => server.close() };
}
