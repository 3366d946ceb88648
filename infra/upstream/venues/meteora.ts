/**
 * Meteora DLMM's public API (`METEORA_API_URL`, https://dlmm-api.meteora.ag):
 *   GET /pair/all_with_pagination?page=<0-based>&limit=<n>&sort_key=tvl&order_by=desc[&search_term=<q>]
 *   → { pairs: [ { address, name: "SOL-USDC", mint_x, mint_y, bin_step,
 *                  base_fee_percentage: "0.25" (percent, as a string), liquidity: "<usd>",
 *                  trade_volume_24h, fees_24h, apr, current_price, hide, is_blacklisted, ... } ],
 *       total }
 * The pair carries no token symbols but its name ("SOL-USDC"), which we split.
 */
import type { UpstreamClient } from '../http-client.js';
import { UpstreamError } from '../errors.js';
import { isPublicKey } from '../../../src/kernel/domain/pda.js';
import { num, record, text, type VenueClient, type VenuePool } from './types.js';

const PAGE = 100;

export function parseMeteoraPair(raw: unknown): VenuePool | undefined {
  const p = record(raw);
  const address = text(p['address']);
  const mintX = text(p['mint_x']);
  const mintY = text(p['mint_y']);
  if (!isPublicKey(address) || !isPublicKey(mintX) || !isPublicKey(mintY)) return undefined;
  if (p['hide'] === true || p['is_blacklisted'] === true) return undefined;
  const [symX, symY] = (text(p['name']) ?? '').split('-');
  const feePct = num(p['base_fee_percentage']);
  return {
    venue: 'meteora',
    address,
    tokenX: { mint: mintX, symbol: text(symX), decimals: null, logoUri: null },
    tokenY: { mint: mintY, symbol: text(symY), decimals: null, logoUri: null },
    tvl: num(p['liquidity']),
    feeRate: feePct === null ? null : feePct / 100,
    extras: {
      kind: 'dlmm',
      name: text(p['name']),
      binStep: num(p['bin_step']),
      volume24h: num(p['trade_volume_24h']),
      fees24h: num(p['fees_24h']),
      apr: num(p['apr']),
      currentPrice: num(p['current_price']),
    },
  };
}

function parsePage(body: unknown): { pools: VenuePool[]; count: number } {
  const pairs = record(body)['pairs'];
  if (!Array.isArray(pairs)) throw new UpstreamError('meteora', 'invalid', 'answer has no pairs array');
  return { pools: pairs.map(parseMeteoraPair).filter((p): p is VenuePool => p !== undefined), count: pairs.length };
}

export function createMeteoraClient(http: UpstreamClient): VenueClient {
  const path = 'pair/all_with_pagination';
  return {
    venue: 'meteora',
    async listTop(max) {
      const out: VenuePool[] = [];
      for (let page = 0; out.length < max; page++) {
        const limit = Math.min(PAGE, max - out.length);
        const { pools, count } = parsePage(await http.getJson(path, { page, limit, sort_key: 'tvl', order_by: 'desc' }));
        out.push(...pools);
        if (count < limit || count === 0) break;
      }
      return out.slice(0, max);
    },
    async search(query, limit) {
      const body = await http.getJson(path, { page: 0, limit: Math.min(PAGE, limit), sort_key: 'tvl', order_by: 'desc', search_term: query });
      return parsePage(body).pools;
    },
  };
}
