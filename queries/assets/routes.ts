/**
 * GET /v1/assets/search and GET /v1/assets/resolve: the token catalog proxy. The catalog
 * credential stays on this server; answers are cached in Redis for every node; a failing
 * catalog degrades (search: no results; resolve: the well-known map) instead of failing.
 */
import type { RateLimitDeps } from '../../infra/http/rate-limit.js';
import { envelope, envelopeSchema } from '../../src/kernel/http/envelope.js';
import { invalid, notFound, upstreamUnavailable } from '../../src/kernel/http/errors.js';
import type { Api } from '../../infra/http/routes.js';
import { base58Key } from '../../src/kernel/http/schema.js';
import { isPublicKey } from '../../src/kernel/domain/pda.js';
import { assetResolveSchema, assetSearchResultSchema } from './model.js';
import { resolveMint, searchAssets, type AssetDeps } from './lookup.js';
import { catalogRateLimit } from './rate-limit.js';

export const SEARCH_LIMIT = { default: 20, min: 1, max: 50 } as const;

export function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, n));
}

/**
 * What the asset routes take: the node's catalog client and caches (built once per node,
 * shared with pool search, so one circuit breaker sees every call to the catalog), and the
 * rate limit's collaborators.
 */
export type AssetRouteDeps = { assets: AssetDeps } & RateLimitDeps;

export function registerAssetRoutes(api: Api, ctx: AssetRouteDeps): void {
  const deps = ctx.assets;
  const limit = catalogRateLimit(ctx, 'assets');

  api.route<{ q: string; limit: number }>({
    method: 'get',
    path: '/v1/assets/search',
    summary: 'Search the token catalog',
    description: 'Searches the upstream token catalog by symbol, name or asset id (mint). Only assets with a usable primary variant '
      + '(valid base58 mint, known decimals, SPL or Token-2022) are returned. Cached 60 s per (q, limit) across all nodes. '
      + 'When the catalog fails the answer is 200 with no results. 120 requests per minute per client IP.',
    tags: ['assets'],
    query: {
      type: 'object',
      additionalProperties: false,
      required: ['q'],
      properties: {
        q: { type: 'string', minLength: 1, maxLength: 200, description: 'symbol, name or asset id' },
        limit: { type: 'integer', default: SEARCH_LIMIT.default, description: 'results wanted; clamped to 1..50' },
      },
    },
    before: [limit],
    rateLimit: 'own',
    responses: {
      200: {
        description: 'matching assets',
        schema: envelopeSchema({
          type: 'object',
          required: ['query', 'results'],
          properties: { query: { type: 'string' }, results: { type: 'array', items: assetSearchResultSchema } },
        }),
      },
      429: { description: 'rate limited (Retry-After)' },
    },
    async handler({ query }) {
      const q = query.q.trim();
      if (q === '') throw invalid("query field 'q' must not be blank");
      const n = clamp(query.limit, SEARCH_LIMIT.min, SEARCH_LIMIT.max);
      try {
        return { body: envelope({ query: q, results: await searchAssets(deps, q, n) }) };
      } catch (err) {
        ctx.logger.warn({ err: (err as Error).message }, 'asset search: catalog failed; answering no results');
        return { body: envelope({ query: q, results: [] }) };
      }
    },
  });

  api.route<{ mint: string }>({
    method: 'get',
    path: '/v1/assets/resolve',
    summary: 'Resolve a mint to its asset',
    description: 'Looks a mint up in the token catalog (cached 10 minutes per mint across all nodes). When the catalog fails, '
      + 'or does not know the mint, the built-in map of five well-known mints answers (USDC, wrapped SOL, USDT, mSOL, devnet USDC). '
      + '404 only when the catalog does not know the mint and the map does not have it; 503 when the catalog fails and the map '
      + 'does not have it. 120 requests per minute per client IP.',
    tags: ['assets'],
    query: { type: 'object', additionalProperties: false, required: ['mint'], properties: { mint: base58Key } },
    before: [limit],
    rateLimit: 'own',
    responses: {
      200: { description: 'the asset', schema: envelopeSchema(assetResolveSchema) },
      404: { description: 'unknown mint' },
      429: { description: 'rate limited (Retry-After)' },
      503: { description: 'catalog unavailable and the mint is not a well-known one' },
    },
    async handler({ query }) {
      if (!isPublicKey(query.mint)) throw invalid("query 'mint' is not a base58 public key");
      const outcome = await resolveMint(deps, query.mint);
      switch (outcome.kind) {
        case 'found':
          return { body: envelope(outcome.data) };
        case 'unknown':
          throw notFound(`unknown mint ${query.mint}`);
        case 'unavailable':
          throw upstreamUnavailable('token catalog unavailable');
      }
    },
  });
}
