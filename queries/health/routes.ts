/** GET /v1/health: whether this node reaches Postgres and Redis, and the API version. */
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Db } from '../../infra/postgres/database.js';
import { envelope, envelopeSchema } from '../../src/kernel/http/envelope.js';
import { API_VERSION } from '../../src/kernel/http/version.js';
import type { Api } from '../../infra/http/routes.js';

export const healthSchema = {
  type: 'object',
  required: ['status', 'service', 'version'],
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded'], description: 'ok when Postgres and Redis both answer' },
    service: { type: 'string' },
    version: { type: 'string' },
    checks: { type: 'object', properties: { postgres: { type: 'boolean' }, redis: { type: 'boolean' } } },
  },
};

async function within<T>(p: Promise<T>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([p, new Promise((_, rej) => { timer = setTimeout(() => rej(new Error('timeout')), ms); })]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How long one check's answer serves every probe: the route has no rate limit (load
 * balancers probe it), so a flood of probes must not become a flood of queries. One
 * check per node per this period, shared by concurrent probes.
 */
export const HEALTH_CHECK_REUSE_MS = 1000;

export function registerHealthRoutes(api: Api, ctx: { dbRead: Db; redis: Redis }): void {
  let last: { at: number; checks: Promise<{ postgres: boolean; redis: boolean }> } | undefined;
  const check = () => {
    const now = Date.now();
    if (last && now - last.at < HEALTH_CHECK_REUSE_MS) return last.checks;
    const checks = Promise.all([
      within(sql`SELECT 1`.execute(ctx.dbRead), 2000),
      within(ctx.redis.ping(), 2000),
    ]).then(([postgres, redis]) => ({ postgres, redis }));
    last = { at: now, checks };
    return checks;
  };
  api.route({
    method: 'get',
    path: '/v1/health',
    summary: 'Health of this node',
    tags: ['health'],
    rateLimit: 'none', // load balancers probe it
    query: { type: 'object', additionalProperties: false, properties: {} },
    responses: { 200: { description: 'health', schema: envelopeSchema(healthSchema) } },
    async handler() {
      const { postgres, redis } = await check();
      const status = postgres && redis ? 'ok' : 'degraded';
      return { body: envelope({ status, service: 'tributary', version: API_VERSION, checks: { postgres, redis } }) };
    },
  });
}
