/**
 * The catalog routes' limit: RATE_LIMIT_CATALOG_PER_MINUTE per client IP, one budget
 * shared by every node through Redis; X-Forwarded-For counts only behind a trusted proxy.
 */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startJupiterStandIn, type JupiterStandIn } from '../support/upstreams/jupiter.js';
import { NO_VENUES, MINTS } from '../support/upstreams/fixtures.js';
import { registerAssetRoutes } from '../../queries/assets/routes.js';
import { registerPoolRoutes } from '../../queries/pools/routes.js';

describe('catalog rate limit', function () {
  let env: TestEnv;
  let jup: JupiterStandIn;
  const nodes: TestApi[] = [];

  before(async () => {
    env = await createTestEnv('assets-rate-limit');
    jup = await startJupiterStandIn();
    const base = { TOKENS_API_URL: jup.url, RATE_LIMIT_CATALOG_PER_MINUTE: '4', POOL_SYNC_INTERVAL_MS: '0', ...NO_VENUES };
    const modules = { modules: [registerAssetRoutes, registerPoolRoutes] };
    nodes.push(await startTestApi(env, { ...base, TRUST_PROXY: 'false' }, modules));
    nodes.push(await startTestApi(env, { ...base, TRUST_PROXY: 'false' }, modules));
    nodes.push(await startTestApi(env, { ...base, TRUST_PROXY: 'loopback' }, modules));
  });
  after(async () => {
    for (const n of nodes) await n.close();
    await jup.close();
    await env.close();
  });

  const get = (node: TestApi, path: string, headers: Record<string, string> = {}) => fetch(`${node.url}${path}`, { headers });

  it('counts one budget per client IP across nodes and routes, then answers 429 with Retry-After', async () => {
    const [a, b] = nodes as [TestApi, TestApi];
    // two nodes, two asset routes, one spoofed header that an untrusting node ignores
    const spoof = { 'x-forwarded-for': '198.51.100.7' };
    const statuses = [
      (await get(a, '/v1/assets/search?q=USDC')).status,
      (await get(b, `/v1/assets/resolve?mint=${MINTS.USDC}`, spoof)).status,
      (await get(a, '/v1/assets/search?q=SOL', spoof)).status,
      (await get(b, '/v1/assets/search?q=JUP')).status,
    ];
    expect(statuses).to.deep.equal([200, 200, 200, 200]);
    const refused = await get(b, '/v1/assets/search?q=USDC', { 'x-forwarded-for': '203.0.113.9' });
    expect(refused.status).to.equal(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, 60);
    const body = await refused.json() as { success: boolean; error: string };
    expect(body.success).to.equal(false);
    expect(body.error).to.match(/rate limit/);
    expect((await get(a, `/v1/assets/resolve?mint=${MINTS.SOL}`)).status).to.equal(429);
  });

  it('gives pool search its own budget', async () => {
    const [a] = nodes as [TestApi];
    const res = await get(a, '/v1/pools/search?q=SOL');
    expect(res.status).to.equal(200);
    expect(res.headers.get('ratelimit-policy')).to.equal('4;w=60');
  });

  it('takes the client IP from X-Forwarded-For behind a trusted proxy', async () => {
    const trusting = nodes[2] as TestApi;
    for (let i = 0; i < 4; i++) {
      expect((await get(trusting, '/v1/assets/search?q=USDC', { 'x-forwarded-for': '192.0.2.44' })).status).to.equal(200);
    }
    expect((await get(trusting, '/v1/assets/search?q=USDC', { 'x-forwarded-for': '192.0.2.44' })).status).to.equal(429);
    expect((await get(trusting, '/v1/assets/search?q=USDC', { 'x-forwarded-for': '192.0.2.45' })).status).to.equal(200);
  });
});
