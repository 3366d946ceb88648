/**
 * Pool search: the pools the sync worker keeps in Postgres, merged with live lookups at
 * the venues that can search (Meteora and Orca by text, Raydium by mint), tokens enriched
 * from the asset catalog, ranked by stars then TVL. One answer per (q, venue, limit) is
 * cached in Redis for every node.
 *
 * A live lookup that fails is left out (the stored pools still answer); when the stored
 * pools cannot be read either, the search rejects and the route answers no results.
 */
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import { keyPart, type SharedCache } from '../../infra/upstream/shared-cache.js';
import { VENUES, type Venue, type VenueClient, type VenuePool, type VenueToken } from '../../infra/upstream/venues/types.js';
import { lookupMints, type AssetDeps } from '../assets/lookup.js';
import type { AssetResolveData } from '../assets/model.js';
import { findPools } from './store.js';
import { poolTrust } from './stars.js';

export interface PoolToken {
  mint: string;
  symbol: string | null;
  decimals: number | null;
  logoUri: string | null;
  tier: string | null;
}

export interface PoolResult {
  address: string;
  venue: Venue;
  tokenX: PoolToken;
  tokenY: PoolToken;
  tvl: number | null;
  feeRate: number | null;
  stars: number;
  tier1: boolean;
  extras: Record<string, unknown>;
}

export interface PoolSearchDeps {
  db: Db;
  venues: readonly VenueClient[];
  assets: AssetDeps;
  cache: SharedCache;
  cacheSeconds: number;
  logger: Logger;
}

/** candidates read from the database before ranking; ranking needs more than `limit` */
const CANDIDATES = 200;

/** "SOL-USDC", "SOL/USDC", "SOL USDC" → two terms; anything else → the whole query. */
export function queryTerms(q: string): string[] {
  const parts = q.split(/[\s,/-]+/).filter((s) => s.length > 0);
  return parts.length === 2 ? parts : [q];
}

function enrich(t: VenueToken, asset: AssetResolveData | undefined): PoolToken {
  return {
    mint: t.mint,
    symbol: asset?.symbol ?? t.symbol,
    decimals: asset?.decimals ?? t.decimals,
    logoUri: asset?.imageUrl ?? t.logoUri,
    tier: asset?.tier ?? null,
  };
}

export function rankPools(pools: readonly VenuePool[], assets: ReadonlyMap<string, AssetResolveData>): PoolResult[] {
  return pools.map((p) => {
    const tokenX = enrich(p.tokenX, assets.get(p.tokenX.mint));
    const tokenY = enrich(p.tokenY, assets.get(p.tokenY.mint));
    const trust = poolTrust(assets.get(p.tokenX.mint)?.tier ?? null, assets.get(p.tokenY.mint)?.tier ?? null);
    return { address: p.address, venue: p.venue, tokenX, tokenY, tvl: p.tvl, feeRate: p.feeRate, ...trust, extras: p.extras };
  }).sort((a, b) => b.stars - a.stars
    || (b.tvl ?? -Infinity) - (a.tvl ?? -Infinity)
    || a.address.localeCompare(b.address));
}

async function liveLookups(deps: PoolSearchDeps, q: string, venues: readonly Venue[]): Promise<{ pools: VenuePool[]; failed: boolean }> {
  const clients = deps.venues.filter((c) => venues.includes(c.venue));
  const settled = await Promise.allSettled(clients.map((c) => c.search(q, CANDIDATES)));
  let failed = false;
  const pools = settled.flatMap((s, i) => {
    if (s.status === 'fulfilled') return s.value;
    failed = true;
    deps.logger.warn({ venue: clients[i]?.venue, err: (s.reason as Error).message }, 'pool search: live lookup failed');
    return [];
  });
  return { pools, failed };
}

/**
 * An answer is cached only when every source answered (database, live lookups, catalog):
 * a degraded answer is served but not kept, so recovery shows at the next request.
 */
export async function searchPools(deps: PoolSearchDeps, q: string, venue: Venue | null, limit: number): Promise<PoolResult[]> {
  const key = `pools:search:${venue ?? 'all'}:${limit}:${keyPart(q)}`;
  const answer = await deps.cache.wrap(key, deps.cacheSeconds, async () => {
    const venues = venue ? [venue] : [...VENUES];
    const [stored, live] = await Promise.all([
      findPools(deps.db, queryTerms(q), venues, CANDIDATES),
      liveLookups(deps, q, venues),
    ]);
    // The live answer is fresher than the last sync: it wins for a pool both know.
    const byKey = new Map<string, VenuePool>();
    for (const p of [...stored, ...live.pools]) byKey.set(`${p.venue}:${p.address}`, p);
    const pools = [...byKey.values()];
    const { found, error } = await lookupMints(deps.assets, pools.flatMap((p) => [p.tokenX.mint, p.tokenY.mint]));
    return { results: rankPools(pools, found).slice(0, limit), complete: !live.failed && error === undefined };
  }, (a) => a.complete);
  return answer.results;
}
