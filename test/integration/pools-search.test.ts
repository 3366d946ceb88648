/**
 * GET /v1/pools/search against stand-ins of Meteora DLMM, Raydium v3, Orca and Jupiter:
 * stored pools plus live lookups, tokens enriched from the catalog, the stars rule, the
 * ranking, the cache per (q, venue, limit), and 200 with no results on any failure.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startJupiterStandIn, type JupiterStandIn } from '../support/upstreams/jupiter.js';
import { startVenueStandIns, type VenueStandIns } from '../support/upstreams/venues.js';
import { key, MINTS, POOLS } from '../support/upstreams/fixtures.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { startApiServer } from '../../src/app/api-server.js';
import { createDb } from '../../infra/postgres/database.js';
import { createLogger } from '../../infra/log/logger.js';
import { registerPoolRoutes } from '../../queries/pools/routes.js';
import { syncPoolsOnce } from '../../queries/pools/sync.js';
import { createVenueClients } from '../../queries/pools/venues.js';

interface Token { mint: string; symbol: string | null; decimals: number | null; logoUri: string | null; tier: string | null }
interface Pool { address: string; venue: string; tokenX: Token; tokenY: Token; tvl: number | null; feeRate: number | null; stars: number; tier1: boolean; extras: Record<string, unknown> }
interface Body { success: boolean; data: { query: string; venue: string | null; results: Pool[] } }

const addr = (venue: string, label: string) => key(`pool:${venue}:${label}`);

describe('GET /v1/pools/search', function () {
  let env: TestEnv;
  let jup: JupiterStandIn;
  let venues: VenueStandIns;
  let api: TestApi;
  let vars: Record<string, string>;

  before(async () => {
    env = await createTestEnv('pools-search');
    jup = await startJupiterStandIn();
    venues = await startVenueStandIns();
    vars = { TOKENS_API_URL: jup.url, UPSTREAM_TIMEOUT_MS: '300', POOL_SYNC_INTERVAL_MS: '0', ...venues.env };
    api = await startTestApi(env, vars, { modules: [registerPoolRoutes] });
  });
  after(async () => {
    await api.close();
    await venues.close();
    await jup.close();
    await env.close();
  });

  const search = async (qs: string, url = api.url) => {
    const res = await fetch(`${url}/v1/pools/search?${qs}`);
    return { status: res.status, body: await res.json() as Body };
  };

  it('finds pools by live lookup before any sync: text at Meteora, a mint at Raydium', async () => {
    const msol = await search('q=mSOL');
    expect(msol.body.data.results.map((p) => p.address)).to.deep.equal([addr('meteora', 'msol-sol')]);
    const bonk = await search(`q=${MINTS.BONK}`);
    expect(bonk.body.data.results.map((p) => p.address)).to.deep.equal([addr('raydium', 'bonk-sol')]);
    expect(venues.raydium.callsTo('/pools/info/mint').at(-1)?.query.get('mint1')).to.equal(MINTS.BONK);
  });

  it('ranks synced and live pools by stars, then tvl, with catalog-enriched tokens', async () => {
    const config = loadConfig({ ...env.env, ...vars });
    const report = await syncPoolsOnce({ db: env.db, venues: createVenueClients(config, api.ctx.logger), maxPerVenue: 500, logger: api.ctx.logger, clock: systemClock });
    expect(report).to.deep.equal({ meteora: 3, raydium: 3, whirlpool: 3 });

    const { status, body } = await search('q=USDC');
    expect(status).to.equal(200);
    expect(body.data).to.include({ query: 'USDC', venue: null });
    expect(body.data.results.map((p) => [p.venue, p.stars, p.tvl])).to.deep.equal([
      ['whirlpool', 5, 31_000_000],
      ['whirlpool', 5, 12_000_000],
      ['raydium', 5, 9_800_000],
      ['meteora', 5, 5_200_000],
      ['meteora', 3, 90_000],
      ['raydium', 1, 99_000_000],
    ]);
    const meteora = body.data.results.find((p) => p.address === addr('meteora', 'sol-usdc'));
    expect(meteora?.tokenX).to.deep.equal({ mint: MINTS.SOL, symbol: 'SOL', decimals: 9, logoUri: 'https://icons.example/sol.png', tier: 'strict' });
    expect(meteora?.tier1).to.equal(true);
    expect(meteora?.feeRate).to.be.closeTo(0.001, 1e-12);
    expect(meteora?.extras).to.include({ kind: 'dlmm', binStep: 10 });
    const rug = body.data.results.find((p) => p.address === addr('raydium', 'rug-usdc'));
    expect(rug?.tokenX.tier).to.equal('unknown');
    expect(rug?.tier1).to.equal(false);
    const whirl = body.data.results.find((p) => p.address === addr('whirlpool', 'usdc-usdt'));
    expect(whirl?.feeRate).to.be.closeTo(0.0001, 1e-12);
  });

  it('applies the stars rule to every tier pairing', async () => {
    const all = (await search('q=SOL&limit=50')).body.data.results;
    const stars = Object.fromEntries(all.map((p) => [p.address, [p.stars, p.tier1]]));
    expect(stars[addr('meteora', 'msol-sol')]).to.deep.equal([4, true]);
    expect(stars[addr('raydium', 'bonk-sol')]).to.deep.equal([4, true]);
    const comm = (await search('q=COMM&limit=50')).body.data.results;
    expect(Object.fromEntries(comm.map((p) => [p.address, p.stars]))).to.deep.equal({ [addr('meteora', 'comm-usdc')]: 3, [addr('whirlpool', 'rug-comm')]: 1 });
  });

  it('matches a pair in either order and restricts to one venue', async () => {
    const pair = await search('q=USDC%2FSOL');
    expect(pair.body.data.results.map((p) => p.venue).sort()).to.deep.equal(['meteora', 'raydium', 'whirlpool']);
    const one = await search('q=SOL-USDC&venue=raydium');
    expect(one.body.data.venue).to.equal('raydium');
    expect(one.body.data.results.map((p) => p.address)).to.deep.equal([addr('raydium', 'sol-usdc')]);
    const byAddress = await search(`q=${addr('whirlpool', 'rug-comm')}`);
    expect(byAddress.body.data.results.map((p) => p.address)).to.deep.equal([addr('whirlpool', 'rug-comm')]);
  });

  it('caches per (q, venue, limit)', async () => {
    const calls = () => venues.meteora.calls.length + venues.whirlpool.calls.length + jup.calls.length;
    await search('q=Bonk&limit=7');
    const first = calls();
    await search('q=Bonk&limit=7');
    expect(calls()).to.equal(first);
    await search('q=Bonk&limit=8');
    expect(calls()).to.be.greaterThan(first);
    const afterLimit = calls();
    await search('q=Bonk&limit=8&venue=meteora');
    expect(venues.meteora.calls.length + venues.whirlpool.calls.length + jup.calls.length).to.be.greaterThan(afterLimit);
  });

  it('defaults limit to 20, clamps it, and answers bad input 200 with no results (SPEC: any error)', async () => {
    expect((await search('q=USDC&limit=1')).body.data.results).to.have.length(1);
    expect((await search('q=USDC&limit=999')).status).to.equal(200);
    for (const qs of ['', 'q=', 'q=SOL&venue=uniswap', 'q=SOL&limit=x', 'q=SOL&foo=1']) {
      const r = await search(qs);
      expect(r.status, qs).to.equal(200);
      expect(r.body.data.results, qs).to.deep.equal([]);
    }
  });

  it('answers from stored pools when every upstream is down, without caching the degraded answer', async () => {
    for (const s of [venues.meteora, venues.raydium, venues.whirlpool, jup]) s.setMode({ kind: 'down' });
    const degraded = await search('q=USDT');
    expect(degraded.status).to.equal(200);
    const only = degraded.body.data.results;
    expect(only.map((p) => p.address)).to.deep.equal([addr('whirlpool', 'usdc-usdt')]);
    // the well-known map still knows USDC and USDT
    expect(only[0]?.stars).to.equal(5);
    for (const s of [venues.meteora, venues.raydium, venues.whirlpool, jup]) s.setMode({ kind: 'ok' });
    const before = venues.whirlpool.calls.length;
    await search('q=USDT');
    expect(venues.whirlpool.calls.length).to.equal(before + 1);
  });

  it('answers within the timeout when a venue is slow, with what the others found', async () => {
    venues.whirlpool.setMode({ kind: 'slow', ms: 3000 });
    const started = Date.now();
    const res = await search('q=SOL-USDC&limit=11');
    venues.whirlpool.setMode({ kind: 'ok' });
    expect(Date.now() - started).to.be.below(2000);
    expect(res.status).to.equal(200);
    // meteora and raydium live, whirlpool from the last sync
    expect(res.body.data.results.map((p) => p.venue).sort()).to.deep.equal(['meteora', 'raydium', 'whirlpool']);
  });

  it('answers 200 with no results when the database and the venues all fail', async () => {
    const config = loadConfig({ ...env.env, ...vars, PORT: '0' });
    const broken = createDb(`${env.dbUrl}_missing`, 1, 'broken');
    const logger = createLogger('silent', 'broken');
    const ctx = { ...api.ctx, config, db: broken, dbRead: broken, logger };
    const server = await startApiServer(ctx, { port: 0, host: '127.0.0.1', modules: [registerPoolRoutes] });
    try {
      for (const s of [venues.meteora, venues.raydium, venues.whirlpool]) s.setMode({ kind: 'drop' });
      const res = await search(`q=${encodeURIComponent(POOLS[0]?.address ?? '')}`, server.url);
      expect(res.status).to.equal(200);
      expect(res.body.data.results).to.deep.equal([]);
    } finally {
      for (const s of [venues.meteora, venues.raydium, venues.whirlpool]) s.setMode({ kind: 'ok' });
      await server.close();
      await broken.destroy();
    }
  });
});
