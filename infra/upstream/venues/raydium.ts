/**
 * Raydium's API v3 (`RAYDIUM_API_URL`, https://api-v3.raydium.io):
 *   GET /pools/info/list?poolType=all&poolSortField=liquidity&sortType=desc&pageSize=<n>&page=<1-based>
 *   GET /pools/info/mint?mint1=<mint>[&mint2=<mint>]&poolType=all&poolSortField=liquidity&sortType=desc&pageSize=<n>&page=1
 *   → { id, success: true, data: { count, hasNextPage, data: [ { type: "Standard" | "Concentrated",
 *        programId, id, mintA: { address, symbol, name, decimals, logoURI, tags }, mintB,
 *        price, tvl, feeRate: 0.0025 (a fraction), day: { volume, apr, ... }, ... } ] } }
 * Raydium searches by mint only, so a live lookup happens when the query is one or two mints.
 */
import type { UpstreamClient } from '../http-client.js';
import { UpstreamError } from '../errors.js';
import { isPublicKey } from '../../../src/kernel/domain/pda.js';
import { decimalsOf, num, record, text, type VenueClient, type VenuePool, type VenueToken } from './types.js';

const PAGE = 100;

function token(raw: unknown): VenueToken | undefined {
  const t = record(raw);
  const mint = text(t['address']);
  if (!isPublicKey(mint)) return undefined;
  return { mint, symbol: text(t['symbol']), decimals: decimalsOf(t['decimals']), logoUri: text(t['logoURI']) };
}

export function parseRaydiumPool(raw: unknown): VenuePool | undefined {
  const p = record(raw);
  const address = text(p['id']);
  const tokenX = token(p['mintA']);
  const tokenY = token(p['mintB']);
  if (!isPublicKey(address) || !tokenX || !tokenY) return undefined;
  const day = record(p['day']);
  return {
    venue: 'raydium',
    address,
    tokenX,
    tokenY,
    tvl: num(p['tvl']),
    feeRate: num(p['feeRate']),
    extras: {
      kind: text(p['type']),
      programId: text(p['programId']),
      price: num(p['price']),
      volume24h: num(day['volume']),
      apr24h: num(day['apr']),
    },
  };
}

function parsePage(body: unknown): { pools: VenuePool[]; hasNextPage: boolean } {
  const b = record(body);
  if (b['success'] !== true) throw new UpstreamError('raydium', 'invalid', 'answer is not successful');
  const data = record(b['data']);
  if (!Array.isArray(data['data'])) throw new UpstreamError('raydium', 'invalid', 'answer has no data.data array');
  return { pools: data['data'].map(parseRaydiumPool).filter((p): p is VenuePool => p !== undefined), hasNextPage: data['hasNextPage'] === true };
}

/** "MINT", "MINT-MINT", "MINT/MINT" or "MINT,MINT" → the mints, else []. */
export function mintsInQuery(query: string): string[] {
  const parts = query.split(/[\s,/-]+/).filter((s) => s.length > 0);
  return parts.length >= 1 && parts.length <= 2 && parts.every(isPublicKey) ? parts : [];
}

export function createRaydiumClient(http: UpstreamClient): VenueClient {
  const sort = { poolType: 'all', poolSortField: 'liquidity', sortType: 'desc' } as const;
  return {
    venue: 'raydium',
    async listTop(max) {
      const out: VenuePool[] = [];
      for (let page = 1; out.length < max; page++) {
        const { pools, hasNextPage } = parsePage(await http.getJson('pools/info/list', { ...sort, pageSize: PAGE, page }));
        out.push(...pools);
        if (!hasNextPage || pools.length === 0) break;
      }
      return out.slice(0, max);
    },
    async search(query, limit) {
      const [mint1, mint2] = mintsInQuery(query);
      if (!mint1) return [];
      const body = await http.getJson('pools/info/mint', { mint1, mint2, ...sort, pageSize: Math.min(PAGE, limit), page: 1 });
      return parsePage(body).pools;
    },
  };
}
