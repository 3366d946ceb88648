/**
 * GET /v1/health: whether this node reaches Postgres and Redis and can open the secrets it
 * needs (the active JWT signing key first), and the API version. `degraded` names why in
 * `reasons`; the answer is 200 either way, as it always was for a dependency that is down.
 * During a rotation of SIGNING_KEY_ENCRYPTION_KEY it counts the secrets still under a
 * previous key: the operator removes that key at 0.
 */
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
    status: { type: 'string', enum: ['ok', 'degraded'], description: 'ok when Postgres and Redis both answer and every secret the node needs opens' },
    service: { type: 'string' },
    version: { type: 'string' },
    checks: {
      type: 'object',
      properties: {
        postgres: { type: 'boolean' },
        redis: { type: 'boolean' },
        secrets: { type: 'boolean', description: 'false when a secret this node needs cannot be opened (wrong SIGNING_KEY_ENCRYPTION_KEY, tampered row)' },
      },
    },
    reasons: {
      type: 'array', items: { type: 'string' },
      description: 'why the node is degraded, e.g. `signing key <kid> cannot be opened: wrong SIGNING_KEY_ENCRYPTION_KEY or tampered row`; empty when ok',
    },
    secretsUnderPreviousKey: {
      type: 'integer', minimum: 0,
      description: 'how many secrets (every kind) open only under a key of SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS, counted at start and then every minute; not a degradation (they open, and `tributary keys seal` or a restart re-seals them), but the previous keys may be removed only at 0. Absent until counted',
    },
  },
};

/**
 * What the node says of its secrets: why it cannot open one it needs (empty when all
 * open), and how many open only under a previous key (undefined until counted).
 */
export interface SecretsHealth { problems(): Promise<string[]>; underPreviousKey?(): number | undefined }

interface Checks { postgres: boolean; redis: boolean; secrets: boolean; reasons: string[] }

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

export function registerHealthRoutes(api: Api, ctx: { dbRead: Db; redis: Redis; secrets?: SecretsHealth }): void {
  let last: { at: number; checks: Promise<Checks> } | undefined;
  const secretProblems = async (): Promise<string[]> => {
    if (!ctx.secrets) return [];
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string[]>((ok) => { timer = setTimeout(() => ok([]), 2000); });
    // a database that does not answer is the postgres check's finding, not a secret's
    return Promise.race([ctx.secrets.problems().catch(() => []), late]).finally(() => clearTimeout(timer));
  };
  const check = () => {
    const now = Date.now();
    if (last && now - last.at < HEALTH_CHECK_REUSE_MS) return last.checks;
    const checks = Promise.all([
      within(sql`SELECT 1`.execute(ctx.dbRead), 2000),
      within(ctx.redis.ping(), 2000),
      secretProblems(),
    ]).then(([postgres, redis, problems]): Checks => {
      const reasons = [...(postgres ? [] : ['postgres does not answer']), ...(redis ? [] : ['redis does not answer']), ...problems];
      return { postgres, redis, secrets: problems.length === 0, reasons };
    });
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
      const { postgres, redis, secrets, reasons } = await check();
      const status = postgres && redis && secrets ? 'ok' : 'degraded';
      const secretsUnderPreviousKey = ctx.secrets?.underPreviousKey?.();
      return { body: envelope({ status, service: 'tributary', version: API_VERSION, checks: { postgres, redis, secrets }, reasons, secretsUnderPreviousKey }) };
    },
  });
}
