/**
 * Orca's public API v2 for whirlpools (`ORCA_API_URL`, https://api.orca.so/v2/solana):
 *   GET /pools?sortBy=tvl&sortDirection=desc&size=<n>[&next=<cursor>]
 *   GET /pools/search?q=<symbol, pair, mint or address>&size=<n>&sortBy=tvl&sortDirection=desc
 *   → { data: [ { address, tokenMintA, tokenMintB, tickSpacing,
 *                 feeRate: 400 (hundredths of a basis point: 400 = 0.04%), poolType,
 *                 tokenA: { address, symbol, name, decimals, imageUrl, tags }, tokenB,
 *                 price: "<string>", tvlUsdc: "<string>", hasWarning,
 *                 stats: { "24h": { volume, fees, ... } }, ... } ],
 *       meta: { cursor: { previous, next } } }
 */
import type { UpstreamClient } from '../http-client.js';
import { UpstreamError } from '../errors.js';
import { isPublicKey } from '../../../src/kernel/domain/pda.js';
import { decimalsOf, num, record, text, type VenueClient, type VenuePool, type VenueToken } from './types.js';

const PAGE = 100;
/** whirlpool fee rates are in hundredths of a basis point */
const FEE_RATE_DENOMINATOR = 1_000_000;

function token(mintRaw: unknown, raw: unknown): VenueToken | undefined {
  const t = record(raw);
  const mint = text(mintRaw) ?? text(t['address']);
  if (!isPublicKey(mint)) return undefined;
  return { mint, symbol: text(t['symbol']), decimals: decimalsOf(t['decimals']), logoUri: text(t['imageUrl']) };
}

export function parseWhirlpool(raw: unknown): VenuePool | undefined {
  const p = record(raw);
  const address = text(p['address']);
  const tokenX = token(p['tokenMintA'], p['tokenA']);
  const tokenY = token(p['tokenMintB'], p['tokenB']);
  if (!isPublicKey(address) || !tokenX || !tokenY) return undefined;
  const fee = num(p['feeRate']);
  const day = record(record(p['stats'])['24h']);
  return {
    venue: 'whirlpool',
    address,
    tokenX,
    tokenY,
    tvl: num(p['tvlUsdc']),
    feeRate: fee === null ? null : fee / FEE_RATE_DENOMINATOR,
    extras: {
      kind: text(p['poolType']),
      tickSpacing: num(p['tickSpacing']),
      price: num(p['price']),
      volume24h: num(day['volume']),
      fees24h: num(day['fees']),
      hasWarning: p['hasWarning'] === true,
    },
  };
}

function parsePage(body: unknown): { pools: VenuePool[]; next: string | null } {
  const b = record(body);
  if (!Array.isArray(b['data'])) throw new UpstreamError('whirlpool', 'invalid', 'answer has no data array');
  const next = text(record(record(b['meta'])['cursor'])['next']);
  return { pools: b['data'].map(parseWhirlpool).filter((p): p is VenuePool => p !== undefined), next };
}

export function createWhirlpoolClient(http: UpstreamClient): VenueClient {
  return {
    venue: 'whirlpool',
    async listTop(max) {
      const out: VenuePool[] = [];
      let next: string | undefined;
      do {
        const page = parsePage(await http.getJson('pools', { sortBy: 'tvl', sortDirection: 'desc', size: PAGE, next }));
        out.push(...page.pools);
        next = page.pools.length === 0 ? undefined : page.next ?? undefined;
      } while (next !== undefined && out.length < max);
      return out.slice(0, max);
    },
    async search(query, limit) {
      const body = await http.getJson('pools/search', { q: query, size: Math.min(PAGE, limit), sortBy: 'tvl', sortDirection: 'desc' });
      return parsePage(body).pools;
    },
  };
}
