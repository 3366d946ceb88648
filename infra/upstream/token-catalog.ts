/**
 * The token catalog client, speaking Jupiter's Tokens API V2 (`TOKENS_API_URL`, e.g.
 * https://api.jup.ag): `GET /tokens/v2/search?query=<text>` answers an array of tokens
 * matching a symbol, name or mint; the same endpoint with a comma-separated list of up to
 * 100 mints looks those mints up. The credential travels in the `x-api-key` header, from
 * this server only.
 *
 * A token of that API (fields we read; others ignored):
 *   { id: <mint>, name, symbol, icon, decimals, tokenProgram, isVerified,
 *     tags: ["verified", "community", "strict", "lst", ...], organicScore, ... }
 *
 * Trust tiers, from the catalog's own tags, strongest first:
 *   strict    — tagged "strict" (Jupiter's long-standing, most conservative list)
 *   verified  — isVerified, or tagged "verified" (Jupiter: community-verified and LSTs)
 *   community — tagged "community" only (vouched for by the community, not yet verified)
 *   unknown   — none of these: shown with a warning by the catalog itself
 */
import type { Logger } from '../log/logger.js';
import { createUpstreamClient, type BreakerSettings, type UpstreamClient } from './http-client.js';
import { UpstreamError } from './errors.js';

export const TRUST_TIERS = ['strict', 'verified', 'community', 'unknown'] as const;
export type TrustTier = (typeof TRUST_TIERS)[number];

export interface CatalogToken {
  mint: string;
  symbol: string | null;
  name: string | null;
  decimals: number | null;
  imageUrl: string | null;
  tokenProgram: string | null;
  tags: string[];
  trustTier: TrustTier;
}

export interface TokenCatalog {
  /** tokens matching a symbol, name or mint, in the catalog's relevance order */
  search(query: string): Promise<CatalogToken[]>;
  /** the catalog's entries for these mints; mints it does not know are absent */
  byMints(mints: readonly string[]): Promise<CatalogToken[]>;
}

const MAX_MINTS_PER_CALL = 100;

export function trustTierOf(tags: readonly string[], isVerified: boolean): TrustTier {
  if (tags.includes('strict')) return 'strict';
  if (isVerified || tags.includes('verified')) return 'verified';
  if (tags.includes('community')) return 'community';
  return 'unknown';
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

/** One element of the API's array, or undefined when it is not a token at all. */
export function parseCatalogToken(raw: unknown): CatalogToken | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const t = raw as Record<string, unknown>;
  const mint = str(t['id']);
  if (!mint) return undefined;
  const tags = Array.isArray(t['tags']) ? t['tags'].filter((x): x is string => typeof x === 'string') : [];
  const decimals = t['decimals'];
  return {
    mint,
    symbol: str(t['symbol']),
    name: str(t['name']),
    decimals: typeof decimals === 'number' && Number.isInteger(decimals) && decimals >= 0 && decimals <= 255 ? decimals : null,
    imageUrl: str(t['icon']),
    tokenProgram: str(t['tokenProgram']),
    tags,
    trustTier: trustTierOf(tags, t['isVerified'] === true),
  };
}

function parseList(upstream: string, body: unknown): CatalogToken[] {
  if (!Array.isArray(body)) throw new UpstreamError(upstream, 'invalid', 'search answered something other than an array');
  return body.map(parseCatalogToken).filter((t): t is CatalogToken => t !== undefined);
}

/** `/tokens/v2/search` under the configured base, whether or not it already ends in /tokens/v2. */
function searchPath(baseUrl: string): string {
  return /\/tokens\/v2\/?$/.test(new URL(baseUrl).pathname) ? 'search' : 'tokens/v2/search';
}

export interface TokenCatalogOptions {
  baseUrl: string | undefined;
  apiKey: string | undefined;
  timeoutMs: number;
  logger?: Logger;
  breaker?: Partial<BreakerSettings>;
}

export function createTokenCatalog(opts: TokenCatalogOptions): TokenCatalog {
  const name = 'token-catalog';
  if (!opts.baseUrl) {
    const unconfigured = async (): Promise<never> => { throw new UpstreamError(name, 'unconfigured', 'TOKENS_API_URL is not set'); };
    return { search: unconfigured, byMints: unconfigured };
  }
  const client: UpstreamClient = createUpstreamClient({
    name,
    baseUrl: opts.baseUrl,
    timeoutMs: opts.timeoutMs,
    headers: opts.apiKey ? { 'x-api-key': opts.apiKey } : {},
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.breaker ? { breaker: opts.breaker } : {}),
  });
  const path = searchPath(opts.baseUrl);
  return {
    async search(query) {
      return parseList(name, await client.getJson(path, { query }));
    },
    async byMints(mints) {
      const unique = [...new Set(mints)];
      const wanted = new Set(unique);
      const out: CatalogToken[] = [];
      for (let i = 0; i < unique.length; i += MAX_MINTS_PER_CALL) {
        const chunk = unique.slice(i, i + MAX_MINTS_PER_CALL);
        const found = parseList(name, await client.getJson(path, { query: chunk.join(',') }));
        out.push(...found.filter((t) => wanted.has(t.mint)));
      }
      return out;
    },
  };
}
