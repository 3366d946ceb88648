/**
 * GET /v1/assets/search against a stand-in of Jupiter's Tokens API: usable assets only,
 * the shared 60 s cache, limit clamping, and a failing or slow catalog answering 200 [].
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startJupiterStandIn, type JupiterStandIn } from '../support/upstreams/jupiter.js';
import { MINTS } from '../support/upstreams/fixtures.js';
import { registerAssetRoutes } from '../../queries/assets/routes.js';

const API_KEY = 'jup-secret-9f8e7d6c5b4a';

interface SearchBody { success: boolean; data: { query: string; results: { assetId: string; symbol: string; category: string; primaryVariant: { mint: string; decimals: number; kind: string; trustTier: string } }[] } }

describe('GET /v1/assets/search', function () {
  let env: TestEnv;
  let jup: JupiterStandIn;
  let api: TestApi;

  before(async () => {
    env = await createTestEnv('assets-search');
    jup = await startJupiterStandIn({ apiKey: API_KEY });
    api = await startTestApi(env, { TOKENS_API_URL: jup.url, TOKENS_API_KEY: API_KEY, UPSTREAM_TIMEOUT_MS: '300' }, { modules: [registerAssetRoutes] });
  });
  after(async () => {
    await api.close();
    await jup.close();
    await env.close();
  });

  const search = async (qs: string) => {
    const res = await fetch(`${api.url}/v1/assets/search?${qs}`);
    return { status: res.status, body: await res.json() as SearchBody };
  };

  it('answers usable assets with their trust tiers, and sends the key to the catalog', async () => {
    const { status, body } = await search('q=USD');
    expect(status).to.equal(200);
    expect(body.success).to.equal(true);
    expect(body.data.query).to.equal('USD');
    const bySymbol = Object.fromEntries(body.data.results.map((r) => [r.symbol, r]));
    expect(Object.keys(bySymbol)).to.include.members(['USDC', 'USDT', 'PYUSD', 'RUG']);
    // no valid mint, no decimals, or a program that is not a token program: left out
    expect(Object.keys(bySymbol)).to.not.include.members(['USDX', 'NODEC']);
    expect(bySymbol['USDC']).to.deep.include({ assetId: MINTS.USDC, category: 'stablecoin' });
    expect(bySymbol['USDC']?.primaryVariant).to.deep.equal({ mint: MINTS.USDC, decimals: 6, kind: 'spl-token', trustTier: 'strict' });
    expect(bySymbol['PYUSD']?.primaryVariant).to.include({ kind: 'spl-token-2022', trustTier: 'verified' });
    expect(bySymbol['RUG']?.primaryVariant.trustTier).to.equal('unknown');
    expect(jup.calls.at(-1)?.headers['x-api-key']).to.equal(API_KEY);
    expect((await search('q=Odd')).body.data.results).to.deep.equal([]);
  });

  it('calls the catalog once per (q, limit) while cached', async () => {
    const before = jup.searches();
    const a = await search('q=Jupiter&limit=5');
    const b = await search('q=Jupiter&limit=5');
    expect(a.body.data.results.map((r) => r.symbol)).to.deep.equal(['JUP']);
    expect(b.body).to.deep.include({ data: a.body.data });
    expect(jup.searches()).to.equal(before + 1);
    await search('q=Jupiter&limit=6');
    expect(jup.searches()).to.equal(before + 2);
  });

  it('defaults limit to 20 and clamps it to 1..50', async () => {
    expect((await search('q=o')).body.data.results.length).to.be.at.most(20);
    expect((await search('q=o&limit=0')).body.data.results).to.have.length(1);
    expect((await search('q=o&limit=-4')).body.data.results).to.have.length(1);
    const many = await search('q=o&limit=5000');
    expect(many.status).to.equal(200);
    expect(many.body.data.results.length).to.be.within(2, 50);
  });

  it('refuses a missing or blank q and unknown parameters with 400', async () => {
    for (const qs of ['', 'q=', 'q=%20%20', 'q=SOL&limit=abc', 'q=SOL&extra=1']) {
      const res = await fetch(`${api.url}/v1/assets/search?${qs}`);
      expect(res.status, qs).to.equal(400);
      const body = await res.json() as { success: boolean; error: string };
      expect(body.success).to.equal(false);
      expect(body.error).to.be.a('string');
    }
  });

  it('answers 200 with no results when the catalog is down, and does not cache that', async () => {
    jup.setMode({ kind: 'down' });
    const down = await search('q=Bonk');
    expect(down.status).to.equal(200);
    expect(down.body.data.results).to.deep.equal([]);
    jup.setMode({ kind: 'ok' });
    const up = await search('q=Bonk');
    expect(up.body.data.results.map((r) => r.symbol)).to.deep.equal(['Bonk']);
  });

  it('answers 200 with no results within the timeout when the catalog is slow', async () => {
    jup.setMode({ kind: 'slow', ms: 2000 });
    const started = Date.now();
    const slow = await search('q=mSOL');
    expect(slow.status).to.equal(200);
    expect(slow.body.data.results).to.deep.equal([]);
    expect(Date.now() - started).to.be.below(1500);
    jup.setMode({ kind: 'ok' });
  });

  it('stops calling a failing catalog once its circuit opens', async () => {
    jup.setMode({ kind: 'drop' });
    for (let i = 0; i < 8; i++) await search(`q=breaker${i}`);
    const afterOpen = jup.searches();
    for (let i = 0; i < 5; i++) expect((await search(`q=open${i}`)).body.data.results).to.deep.equal([]);
    expect(jup.searches()).to.equal(afterOpen);
    jup.setMode({ kind: 'ok' });
  });
});
