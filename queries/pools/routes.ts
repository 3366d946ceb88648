/**
 * GET /v1/pools/search: pools of three venues, ranked by trust then liquidity. SPEC: "On
 * any error the response is 200 with results: [], never a 500", read to the letter: bad
 * input too (a missing or blank q, an unknown venue, a malformed limit, an unknown
 * parameter) answers 200 with no results, `data.error` saying what was wrong. Only the
 * rate limit answers otherwise (429).
 */
import type { Config } from '../../src/kernel/config/config.js';
import type { Db } from '../../infra/postgres/database.js';
import { envelope, envelopeSchema } from '../../src/kernel/http/envelope.js';
import type { Api, Reply } from '../../infra/http/routes.js';
import type { JsonSchema } from '../../src/kernel/http/schema.js';
import { VENUES, type Venue } from '../../infra/upstream/venues/types.js';
import { TRUST_TIERS } from '../../infra/upstream/token-catalog.js';
import { clamp, type AssetRouteDeps } from '../assets/routes.js';
import { catalogRateLimit } from '../assets/rate-limit.js';
import { searchPools, type PoolSearchDeps } from './search.js';
import { STARS_RULE } from './stars.js';
import { createVenueClients } from './venues.js';

export const POOL_LIMIT = { default: 20, min: 1, max: 50 } as const;

const nullable = (s: JsonSchema): JsonSchema => ({ ...s, nullable: true });

const poolTokenSchema: JsonSchema = {
  type: 'object',
  required: ['mint', 'symbol', 'decimals', 'logoUri', 'tier'],
  properties: {
    mint: { type: 'string' },
    symbol: nullable({ type: 'string' }),
    decimals: nullable({ type: 'integer' }),
    logoUri: nullable({ type: 'string', format: 'uri' }),
    tier: nullable({ type: 'string', enum: [...TRUST_TIERS], description: 'catalog trust tier; null when the catalog does not know the token' }),
  },
};

export const poolResultSchema: JsonSchema = {
  type: 'object',
  required: ['address', 'venue', 'tokenX', 'tokenY', 'tvl', 'feeRate', 'stars', 'tier1', 'extras'],
  properties: {
    address: { type: 'string', description: 'pool address (base58)' },
    venue: { type: 'string', enum: [...VENUES] },
    tokenX: poolTokenSchema,
    tokenY: poolTokenSchema,
    tvl: nullable({ type: 'number', description: 'total value locked, USD' }),
    feeRate: nullable({ type: 'number', description: 'swap fee as a fraction (0.0025 = 0.25%)' }),
    stars: { type: 'integer', minimum: 0, maximum: 5, description: STARS_RULE },
    tier1: { type: 'boolean', description: 'both tokens at least verified in the catalog' },
    extras: { type: 'object', description: 'venue-specific: kind, volume24h, binStep (meteora), tickSpacing (whirlpool), programId (raydium), ...' },
  },
};

/** The answer to any error: no results; `error` only when the request itself was refused. */
function noResults(query: string, venue: string | null, error?: string): Reply {
  return { body: envelope({ query, venue, results: [], ...(error !== undefined ? { error } : {}) }) };
}

/** The node's catalog client and caches are the asset routes' own (AssetRouteDeps): one breaker for both. */
export function registerPoolRoutes(api: Api, ctx: AssetRouteDeps & { dbRead: Db; config: Config }): void {
  const deps: PoolSearchDeps = {
    db: ctx.dbRead,
    venues: createVenueClients(ctx.config, ctx.logger),
    assets: ctx.assets,
    cache: ctx.assets.cache,
    cacheSeconds: ctx.config.upstream.poolSearchCacheSeconds,
    logger: ctx.logger,
  };

  api.route<{ q: string; venue?: Venue; limit: number }>({
    method: 'get',
    path: '/v1/pools/search',
    summary: 'Search liquidity pools',
    description: 'Pools of Meteora DLMM (meteora), Raydium (raydium) and Orca whirlpools (whirlpool) matching a symbol, a pair '
      + '("SOL-USDC"), a mint or a pool address: the pools kept by the periodic sync plus live lookups where the venue can search. '
      + `Tokens are enriched from the asset catalog. Ranking: stars descending, then tvl descending. ${STARS_RULE} `
      + `Cached per (q, venue, limit). Any error answers 200 with no results (SPEC), bad input included: a missing or blank q, an unknown venue, `
      + `a malformed limit or an unknown parameter answer 200 with results [] and data.error saying why. limit defaults to ${POOL_LIMIT.default}, clamped to `
      + `${POOL_LIMIT.min}..${POOL_LIMIT.max}. 120 requests per minute per client IP.`,
    tags: ['pools'],
    query: {
      type: 'object',
      additionalProperties: false,
      required: ['q'],
      properties: {
        q: { type: 'string', minLength: 1, maxLength: 200, description: 'symbol, name, pair or mint' },
        venue: { type: 'string', enum: [...VENUES], description: 'one venue; omitted searches all three' },
        limit: { type: 'integer', default: POOL_LIMIT.default, description: 'results wanted; clamped to 1..50' },
      },
    },
    before: [catalogRateLimit(ctx, 'pools')],
    rateLimit: 'own',
    responses: {
      200: {
        description: 'matching pools, best first',
        schema: envelopeSchema({
          type: 'object',
          required: ['query', 'venue', 'results'],
          properties: {
            query: { type: 'string' },
            venue: nullable({ type: 'string', description: `the venue asked for (${VENUES.join(', ')}); null when all were searched` }),
            results: { type: 'array', items: poolResultSchema },
            error: { type: 'string', description: 'present when the request was refused (bad input): why there are no results' },
          },
        }),
      },
      429: { description: 'rate limited (Retry-After)' },
    },
    onInvalid(reason, req) {
      const { q, venue } = req.query;
      return noResults(typeof q === 'string' ? q.trim() : '', typeof venue === 'string' ? venue : null, reason);
    },
    async handler({ query }) {
      const q = query.q.trim();
      const venue = query.venue ?? null;
      if (q === '') return noResults(q, venue, "query field 'q' must not be blank");
      const limit = clamp(query.limit, POOL_LIMIT.min, POOL_LIMIT.max);
      try {
        return { body: envelope({ query: q, venue, results: await searchPools(deps, q, venue, limit) }) };
      } catch (err) {
        ctx.logger.warn({ err: (err as Error).message }, 'pool search failed; answering no results');
        return noResults(q, venue);
      }
    },
  });
}
