/**
 * Stand-ins for the three pool venues, each in its public API's format:
 *   Meteora DLMM  GET /pair/all_with_pagination          → { pairs, total }
 *   Raydium v3    GET /pools/info/list, /pools/info/mint  → { id, success, data: { count, data, hasNextPage } }
 *   Orca v2       GET /pools, /pools/search               → { data, meta: { cursor: { previous, next } } }
 */
import { startStandIn, type StandIn, type StandInRequest } from './stand-in.js';
import { POOLS, tokenOf, type FixturePool } from './fixtures.js';

const sym = (mint: string) => tokenOf(mint)?.symbol ?? 'UNKNOWN';

function matches(p: FixturePool, term: string): boolean {
  const t = term.toLowerCase();
  return p.address === term || p.x === term || p.y === term || `${sym(p.x)}-${sym(p.y)}`.toLowerCase().includes(t);
}

const byTvl = (a: FixturePool, b: FixturePool) => b.tvl - a.tvl;

function meteoraPair(p: FixturePool): Record<string, unknown> {
  return {
    address: p.address, name: `${sym(p.x)}-${sym(p.y)}`, mint_x: p.x, mint_y: p.y,
    reserve_x: 'EYj9xKw6ZszwpyNibHY7JD5o3QgTVrSdcBp1fMJhrR9o', reserve_y: 'CoaxzEh8p5YyGLcj36Eo3cUThVJxeKCs7qvLAGDYwBcz',
    reserve_x_amount: 1_000_000_000, reserve_y_amount: 2_000_000_000, bin_step: 10,
    base_fee_percentage: String(p.fee * 100), max_fee_percentage: '10', protocol_fee_percentage: '5',
    liquidity: String(p.tvl), reward_mint_x: '11111111111111111111111111111111', reward_mint_y: '11111111111111111111111111111111',
    fees_24h: 1234.5, today_fees: 800.1, trade_volume_24h: 456_789.1, cumulative_trade_volume: '99999999.12', cumulative_fee_volume: '123456.78',
    current_price: 151.23, apr: 1.2, apy: 1.3, farm_apr: 0, farm_apy: 0, hide: false, is_blacklisted: false,
    fees: { min_30: 1, hour_1: 2, hour_2: 3, hour_4: 4, hour_12: 5, hour_24: 6 }, tags: [],
  };
}

function meteora(req: StandInRequest) {
  if (req.path !== '/pair/all_with_pagination') return { status: 404, body: { message: 'not found' } };
  const term = req.query.get('search_term');
  const page = Number(req.query.get('page') ?? 0);
  const limit = Number(req.query.get('limit') ?? 50);
  const all = POOLS.filter((p) => p.venue === 'meteora' && (!term || matches(p, term))).sort(byTvl);
  return { body: { pairs: all.slice(page * limit, (page + 1) * limit).map(meteoraPair), total: all.length } };
}

function raydiumMint(mint: string): Record<string, unknown> {
  const t = tokenOf(mint);
  return { chainId: 101, address: mint, programId: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', logoURI: t?.icon ?? '', symbol: t?.symbol ?? '', name: t?.name ?? '', decimals: t?.decimals ?? 6, tags: [], extensions: {} };
}

function raydiumPool(p: FixturePool): Record<string, unknown> {
  const period = { volume: 1_000_000, volumeQuote: 1_000_000, volumeFee: 2500, apr: 12.3, feeApr: 10.1, priceMin: 140, priceMax: 160, rewardApr: [] };
  return {
    type: 'Standard', programId: '675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8', id: p.address,
    mintA: raydiumMint(p.x), mintB: raydiumMint(p.y), price: 151.2, mintAmountA: 1000, mintAmountB: 151_200,
    feeRate: p.fee, openTime: '0', tvl: p.tvl, day: period, week: period, month: period,
    pooltype: ['OpenBookMarket'], rewardDefaultPoolInfos: 'Raydium', rewardDefaultInfos: [],
    farmUpcomingCount: 0, farmOngoingCount: 0, farmFinishedCount: 0, marketId: '8BnEgHoWFysVcuFFX7QztDmzuH8r5ZFvyP3sYwn1XTh6',
    lpMint: raydiumMint('8HoQnePLqPj4M7PUDzfw8e3Ymdwgc7NLGnaTUapubyvu'), lpPrice: 12.3, lpAmount: 1_000_000, burnPercent: 99.9,
  };
}

function raydium(req: StandInRequest) {
  const pageSize = Number(req.query.get('pageSize') ?? 100);
  const page = Number(req.query.get('page') ?? 1);
  let all = POOLS.filter((p) => p.venue === 'raydium');
  if (req.path === '/pools/info/mint') {
    const m1 = req.query.get('mint1');
    const m2 = req.query.get('mint2');
    all = all.filter((p) => (!m1 || p.x === m1 || p.y === m1) && (!m2 || p.x === m2 || p.y === m2));
  } else if (req.path !== '/pools/info/list') {
    return { status: 404, body: { id: 'x', success: false, msg: 'not found' } };
  }
  all.sort(byTvl);
  const slice = all.slice((page - 1) * pageSize, page * pageSize);
  return { body: { id: 'b2c3d4e5-0000-4000-8000-000000000000', success: true, data: { count: all.length, data: slice.map(raydiumPool), hasNextPage: page * pageSize < all.length } } };
}

function orcaToken(mint: string): Record<string, unknown> {
  const t = tokenOf(mint);
  return { address: mint, programId: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', imageUrl: t?.icon ?? '', name: t?.name ?? '', symbol: t?.symbol ?? '', decimals: t?.decimals ?? 6, tags: [] };
}

function orcaPool(p: FixturePool): Record<string, unknown> {
  return {
    address: p.address, whirlpoolsConfig: '2LecshUwdy9xi7meFgHtFJQNSKk4KdTrcpvaB56dP2NQ', whirlpoolBump: [254], tickSpacing: 4,
    tickSpacingSeed: [4, 0], feeRate: Math.round(p.fee * 1_000_000), protocolFeeRate: 1300, liquidity: '123456789012',
    sqrtPrice: '7161000000000000000', tickCurrentIndex: -19000, tokenMintA: p.x, tokenVaultA: 'EUuUbDcafPrmVTD5M6qoJAoyyNbihBhugADAxRMn5he9',
    tokenMintB: p.y, tokenVaultB: '2WLWEuKDgkDUccTpbwYp1GToYktiSB1cXvreHUwiSUVP', poolType: 'concentrated', hasWarning: false,
    tokenA: orcaToken(p.x), tokenB: orcaToken(p.y), price: '151.2', tvlUsdc: String(p.tvl), yieldOverTvl: '0.0004',
    tokenBalanceA: '1000', tokenBalanceB: '151200',
    stats: { '24h': { volume: '1000000', fees: '400', rewards: null, yieldOverTvl: '0.0004' }, '7d': { volume: '7000000', fees: '2800', rewards: null, yieldOverTvl: '0.003' }, '30d': { volume: '30000000', fees: '12000', rewards: null, yieldOverTvl: '0.01' } },
    rewards: [], updatedAt: '2025-06-01T12:00:00Z', updatedSlot: 349281000,
  };
}

function orca(raw: StandInRequest) {
  // The real API lives under /v2/solana: serve it there, so base URLs with a path are exercised.
  if (!raw.path.startsWith('/v2/solana/')) return { status: 404, body: { status: 404, message: 'not found', code: 'NOT_FOUND' } };
  const req = { ...raw, path: raw.path.slice('/v2/solana'.length) };
  const size = Number(req.query.get('size') ?? 50);
  let all = POOLS.filter((p) => p.venue === 'whirlpool');
  if (req.path === '/pools/search') {
    const q = req.query.get('q') ?? '';
    const terms = q.split(/[\s/-]+/).filter((x) => x.length > 0);
    all = all.filter((p) => terms.every((term) => matches(p, term)));
  } else if (req.path !== '/pools') {
    return { status: 404, body: { status: 404, message: 'not found', code: 'NOT_FOUND' } };
  }
  all.sort(byTvl);
  const from = Number(req.query.get('next') ?? 0);
  const slice = all.slice(from, from + size);
  const next = from + size < all.length ? String(from + size) : null;
  return { body: { data: slice.map(orcaPool), meta: { cursor: { previous: from > 0 ? String(Math.max(0, from - size)) : null, next } } } };
}

export interface VenueStandIns { meteora: StandIn; raydium: StandIn; whirlpool: StandIn; env: Record<string, string>; close(): Promise<void> }

export async function startVenueStandIns(): Promise<VenueStandIns> {
  const [m, r, w] = await Promise.all([startStandIn(meteora), startStandIn(raydium), startStandIn(orca)]);
  return {
    meteora: m, raydium: r, whirlpool: w,
    env: { METEORA_API_URL: m.url, RAYDIUM_API_URL: r.url, ORCA_API_URL: `${w.url}/v2/solana` },
    async close() { await Promise.all([m.close(), r.close(), w.close()]); },
  };
}
