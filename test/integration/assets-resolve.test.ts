/**
 * GET /v1/assets/resolve: catalog answers cached 10 minutes in Redis for every node, the
 * well-known map when the catalog fails or does not know a mint, 404 only for a mint
 * nobody knows, 503 when the catalog fails and the map cannot help.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startJupiterStandIn, type JupiterStandIn } from '../support/upstreams/jupiter.js';
import { key, MINTS } from '../support/upstreams/fixtures.js';
import { registerAssetRoutes } from '../../queries/assets/routes.js';

interface ResolveBody { success: boolean; error?: string; data: { mint: string; assetId: string | null; symbol: string | null; name: string | null; decimals: number | null; imageUrl: string | null; category: string | null; tier: string | null } }

describe('GET /v1/assets/resolve', function () {
  let env: TestEnv;
  let jup: JupiterStandIn;
  let nodeA: TestApi;
  let nodeB: TestApi;

  before(async () => {
    env = await createTestEnv('assets-resolve');
    jup = await startJupiterStandIn({ apiKey: 'k' });
    const vars = { TOKENS_API_URL: jup.url, TOKENS_API_KEY: 'k', UPSTREAM_TIMEOUT_MS: '300' };
    nodeA = await startTestApi(env, vars, { modules: [registerAssetRoutes] });
    nodeB = await startTestApi(env, vars, { modules: [registerAssetRoutes] });
  });
  after(async () => {
    await nodeA.close();
    await nodeB.close();
    await jup.close();
    await env.close();
  });

  const resolve = async (node: TestApi, mint: string) => {
    const res = await fetch(`${node.url}/v1/assets/resolve?mint=${encodeURIComponent(mint)}`);
    return { status: res.status, body: await res.json() as ResolveBody };
  };

  it('answers the catalog entry of a mint', async () => {
    const { status, body } = await resolve(nodeA, MINTS.JUP);
    expect(status).to.equal(200);
    expect(body.data).to.deep.equal({
      mint: MINTS.JUP, assetId: MINTS.JUP, symbol: 'JUP', name: 'Jupiter', decimals: 6,
      imageUrl: 'https://icons.example/jup.png', category: 'token', tier: 'strict',
    });
  });

  it('shares its cache across nodes: the catalog is asked once per mint', async () => {
    const before = jup.searches();
    const a = await resolve(nodeA, MINTS.BONK);
    const b = await resolve(nodeB, MINTS.BONK);
    const c = await resolve(nodeA, MINTS.BONK);
    expect(b.body.data).to.deep.equal(a.body.data);
    expect(c.body.data.tier).to.equal('verified');
    expect(jup.searches()).to.equal(before + 1);
  });

  it('answers a well-known mint the catalog does not know from the built-in map', async () => {
    const { status, body } = await resolve(nodeA, MINTS.USDC_DEVNET);
    expect(status).to.equal(200);
    expect(body.data).to.include({ mint: MINTS.USDC_DEVNET, symbol: 'USDC', decimals: 6, category: 'stablecoin' });
  });

  it('answers 404 for a mint the catalog does not know and the map does not have', async () => {
    const { status, body } = await resolve(nodeA, key('nobody-knows-this-mint'));
    expect(status).to.equal(404);
    expect(body.success).to.equal(false);
  });

  it('refuses a missing or invalid mint with 400', async () => {
    for (const qs of ['', 'mint=', 'mint=abc', `mint=${'0'.repeat(44)}`, `mint=${'1'.repeat(50)}`, `mint=${'z'.repeat(44)}`, `mint=${'2'.repeat(32)}`]) {
      const res = await fetch(`${nodeA.url}/v1/assets/resolve?${qs}`);
      expect(res.status, qs).to.equal(400);
    }
  });

  it('falls back to the map for each of the five well-known mints when the catalog is down', async () => {
    jup.setMode({ kind: 'down' });
    const expected: Record<string, string> = { [MINTS.USDC]: 'USDC', [MINTS.SOL]: 'SOL', [MINTS.USDT]: 'USDT', [MINTS.MSOL]: 'mSOL', [MINTS.USDC_DEVNET]: 'USDC' };
    for (const [mint, symbol] of Object.entries(expected)) {
      const { status, body } = await resolve(nodeB, mint);
      expect(status, mint).to.equal(200);
      expect(body.data.symbol).to.equal(symbol);
      expect(body.data.decimals).to.be.a('number');
    }
    jup.setMode({ kind: 'ok' });
  });

  it('answers 503, not 404, for an unmapped mint while the catalog is down; cached mints still answer', async () => {
    jup.setMode({ kind: 'slow', ms: 2000 });
    const unknown = await resolve(nodeA, key('maybe-known'));
    expect(unknown.status).to.equal(503);
    const cached = await resolve(nodeB, MINTS.JUP);
    expect(cached.status).to.equal(200);
    expect(cached.body.data.name).to.equal('Jupiter');
    jup.setMode({ kind: 'ok' });
  });
});
