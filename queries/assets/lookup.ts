/**
 * Asset search and mint lookup over the token catalog, with the caches shared by all
 * nodes (Redis) and the well-known override map. Used by the assets routes and by pool
 * search (token enrichment), so a mint looked up by either is cached for both.
 *
 * Cache rules: a search is kept 60 s per (query, limit); a mint 10 minutes. Only answers
 * the catalog actually gave are cached, never a fallback taken because it failed, so the
 * service returns to real data as soon as the catalog does.
 */
import type { Logger } from '../../infra/log/logger.js';
import { keyPart, type SharedCache } from '../../infra/upstream/shared-cache.js';
import type { CatalogToken, TokenCatalog } from '../../infra/upstream/token-catalog.js';
import { toResolveData, toSearchResult, type AssetResolveData, type AssetSearchResult } from './model.js';
import { WELL_KNOWN } from './overrides.js';

export const SEARCH_TTL_SECONDS = 60;
export const MINT_TTL_SECONDS = 600;

export interface AssetDeps {
  catalog: TokenCatalog;
  cache: SharedCache;
  logger: Logger;
}

export const mintKey = (mint: string) => `assets:mint:${mint}`;

function fromOverride(mint: string): AssetResolveData | undefined {
  const w = WELL_KNOWN[mint];
  return w && { mint, assetId: mint, symbol: w.symbol, name: w.name, decimals: w.decimals, imageUrl: w.imageUrl, category: w.category, tier: w.tier };
}

/** the catalog's answer, its gaps filled from the override map when the mint is well known */
function merged(t: CatalogToken): AssetResolveData {
  const data = toResolveData(t);
  const o = fromOverride(t.mint);
  if (!o) return data;
  return {
    ...data,
    symbol: data.symbol ?? o.symbol,
    name: data.name ?? o.name,
    decimals: data.decimals ?? o.decimals,
    imageUrl: data.imageUrl ?? o.imageUrl,
  };
}

/** Rejects with the catalog's UpstreamError; the caller decides what failure means. */
export async function searchAssets(deps: AssetDeps, query: string, limit: number): Promise<AssetSearchResult[]> {
  return deps.cache.wrap(`assets:search:${limit}:${keyPart(query)}`, SEARCH_TTL_SECONDS, async () => {
    const tokens = await deps.catalog.search(query);
    return tokens.map(toSearchResult).filter((a): a is AssetSearchResult => a !== undefined).slice(0, limit);
  });
}

export type LookupOutcome =
  | { kind: 'found'; data: AssetResolveData }
  /** the catalog answered and does not know these mints (and the map has none of them) */
  | { kind: 'unknown' }
  /** the catalog failed and the map has nothing: nobody can say */
  | { kind: 'unavailable'; error: Error };

/**
 * Many mints at once: cached ones from Redis, the rest in one catalog call, then the
 * override map for what the catalog does not know or when it fails. Never rejects.
 */
export async function lookupMints(deps: AssetDeps, mints: readonly string[]): Promise<{ found: Map<string, AssetResolveData>; error?: Error }> {
  const found = new Map<string, AssetResolveData>();
  const unique = [...new Set(mints)];
  const cached = await Promise.all(unique.map((m) => deps.cache.get<AssetResolveData>(mintKey(m))));
  const misses: string[] = [];
  unique.forEach((m, i) => {
    const hit = cached[i];
    if (hit) found.set(m, hit);
    else misses.push(m);
  });
  if (misses.length === 0) return { found };
  let error: Error | undefined;
  try {
    const tokens = await deps.catalog.byMints(misses);
    for (const t of tokens) {
      const data = merged(t);
      found.set(t.mint, data);
      await deps.cache.set(mintKey(t.mint), data, MINT_TTL_SECONDS);
    }
    // Unknown to the catalog but well known here: the catalog's answer is final, so cache it.
    for (const m of misses) {
      const o = found.has(m) ? undefined : fromOverride(m);
      if (o) {
        found.set(m, o);
        await deps.cache.set(mintKey(m), o, MINT_TTL_SECONDS);
      }
    }
  } catch (err) {
    error = err as Error;
    deps.logger.warn({ err: error.message, mints: misses.length }, 'token catalog lookup failed; using the well-known map');
    for (const m of misses) {
      const o = fromOverride(m);
      if (o) found.set(m, o);
    }
  }
  return error ? { found, error } : { found };
}

export async function resolveMint(deps: AssetDeps, mint: string): Promise<LookupOutcome> {
  const { found, error } = await lookupMints(deps, [mint]);
  const data = found.get(mint);
  if (data) return { kind: 'found', data };
  return error ? { kind: 'unavailable', error } : { kind: 'unknown' };
}
