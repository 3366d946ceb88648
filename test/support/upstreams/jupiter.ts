/**
 * Stand-in for Jupiter's Tokens API V2: GET /tokens/v2/search?query=… with the x-api-key
 * header. A comma-separated query looks mints up (up to 100); otherwise symbol, name or
 * mint match, 20 results at most, as the real API documents. Tokens in its full format.
 */
import { startStandIn, type StandIn } from './stand-in.js';
import { TOKENS, type FixtureToken } from './fixtures.js';

function jupiterToken(t: FixtureToken): Record<string, unknown> {
  const stats = { priceChange: 0.12, liquidityChange: 0, volumeChange: 3.4, buyVolume: 1200, sellVolume: 1100, buyOrganicVolume: 900, sellOrganicVolume: 800, numBuys: 40, numSells: 38, numTraders: 30, numOrganicBuyers: 12, numNetBuyers: 2 };
  return {
    id: t.id,
    name: t.name,
    symbol: t.symbol,
    icon: t.icon,
    ...(t.decimals === null ? {} : { decimals: t.decimals }),
    twitter: 'https://twitter.com/example',
    website: 'https://example.com',
    dev: '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU',
    circSupply: 1_000_000_000,
    totalSupply: 1_000_000_000,
    tokenProgram: t.tokenProgram,
    firstPool: { id: '58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2', createdAt: '2021-03-29T10:05:48Z' },
    holderCount: 123_456,
    audit: { mintAuthorityDisabled: true, freezeAuthorityDisabled: false, topHoldersPercentage: 12.5 },
    organicScore: t.isVerified ? 97.1 : 3.2,
    organicScoreLabel: t.isVerified ? 'high' : 'low',
    isVerified: t.isVerified,
    cexes: t.isVerified ? ['Binance', 'Coinbase'] : [],
    tags: t.tags,
    fdv: 1_000_000_000,
    mcap: 900_000_000,
    usdPrice: 1.0001,
    priceBlockId: 349_281_000,
    liquidity: 250_000_000,
    stats5m: stats,
    stats1h: stats,
    stats6h: stats,
    stats24h: stats,
    updatedAt: '2025-06-01T12:00:00Z',
  };
}

export function searchTokens(query: string, tokens: readonly FixtureToken[] = TOKENS): FixtureToken[] {
  if (query.includes(',')) {
    const wanted = new Set(query.split(',').slice(0, 100));
    return tokens.filter((t) => wanted.has(t.id));
  }
  const q = query.toLowerCase();
  const hits = tokens.filter((t) => t.id === query || t.symbol.toLowerCase().includes(q) || t.name.toLowerCase().includes(q));
  // exact symbol first, then verified, as a relevance order
  return hits.sort((a, b) => Number(b.symbol.toLowerCase() === q) - Number(a.symbol.toLowerCase() === q)
    || Number(b.isVerified) - Number(a.isVerified)).slice(0, 20);
}

export interface JupiterStandIn extends StandIn {
  /** calls to the search endpoint */
  searches(): number;
}

export async function startJupiterStandIn(opts: { apiKey?: string; tokens?: readonly FixtureToken[] } = {}): Promise<JupiterStandIn> {
  const s = await startStandIn((req) => {
    if (req.path !== '/tokens/v2/search') return { status: 404, body: { error: 'Not Found' } };
    if (opts.apiKey !== undefined && req.headers['x-api-key'] !== opts.apiKey) return { status: 401, body: { error: 'Unauthorized' } };
    const query = req.query.get('query');
    if (!query) return { status: 400, body: { error: 'query is required' } };
    return { body: searchTokens(query, opts.tokens).map(jupiterToken) };
  });
  return { ...s, searches: () => s.callsTo('/tokens/v2/search').length };
}
