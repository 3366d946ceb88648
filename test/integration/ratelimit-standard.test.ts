/**
 * The standard rate limit: RATE_LIMIT_PER_MINUTE per client IP on every route without a
 * limit of its own, one budget across API nodes (Redis), 429 in the error envelope with
 * Retry-After and the RateLimit headers; routes with their own limit are not counted twice,
 * health probes are not limited, and gateway challenges have a stricter limit per gateway.
 */
import { expect } from 'chai';
import { parse } from 'yaml';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startJupiterStandIn, type JupiterStandIn } from '../support/upstreams/jupiter.js';
import { NO_VENUES } from '../support/upstreams/fixtures.js';
import { registerHealthRoutes } from '../../queries/health/routes.js';
import { registerAssetRoutes } from '../../queries/assets/routes.js';
import { signingRoutes } from '../../src/app/signing-routes.js';

const STANDARD = 5;
const CHALLENGES = 2;
const GATEWAY_A = 'So11111111111111111111111111111111111111112';
const GATEWAY_B = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

describe('standard rate limit', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let jup: JupiterStandIn;
  let a: TestApi;
  let b: TestApi;
  let ipSeq = 0;
  // each test counts under its own client address (the nodes trust the loopback proxy)
  const nextIp = () => `198.51.100.${++ipSeq}`;

  before(async () => {
    env = await createTestEnv('ratelimit-standard');
    jup = await startJupiterStandIn();
    const settings = {
      RATE_LIMIT_PER_MINUTE: String(STANDARD), RATE_LIMIT_CATALOG_PER_MINUTE: '50', RATE_LIMIT_GATEWAY_CHALLENGE_PER_MINUTE: String(CHALLENGES),
      TRUST_PROXY: 'loopback', TOKENS_API_URL: jup.url, POOL_SYNC_INTERVAL_MS: '0', ...NO_VENUES,
    };
    // every gateway exists, so a challenge answers 200 until it is limited
    const signing = signingRoutes({ gatewayLookup: () => (address) => Promise.resolve({ authority: address, signer: address, active: true }) });
    const modules = { modules: [registerHealthRoutes, registerAssetRoutes, signing] };
    [a, b] = await Promise.all([startTestApi(env, settings, modules), startTestApi(env, settings, modules)]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await jup?.close();
    await env?.close();
  });

  const get = (node: TestApi, path: string, ip: string) => fetch(`${node.url}${path}`, { headers: { 'x-forwarded-for': ip } });
  const post = (node: TestApi, path: string, ip: string) =>
    fetch(`${node.url}${path}`, { method: 'POST', headers: { 'x-forwarded-for': ip, 'content-type': 'application/json' }, body: '{}' });

  it('counts one budget per client across two nodes and answers 429 in the error envelope', async () => {
    const ip = nextIp();
    const answers = [];
    for (let i = 0; i < STANDARD; i++) answers.push(await get(i % 2 === 0 ? a : b, '/v1/jwks', ip));
    expect(answers.map((r) => r.status)).to.deep.equal(Array(STANDARD).fill(200));
    expect(answers.map((r) => r.headers.get('ratelimit-policy'))).to.deep.equal(Array(STANDARD).fill(`${STANDARD};w=60`));
    const remaining = answers.map((r) => /remaining=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1]);
    expect(remaining).to.deep.equal(['4', '3', '2', '1', '0']);
    expect(answers[0]!.headers.get('ratelimit')).to.match(/^limit=5, remaining=4, reset=\d+$/);

    const refused = await get(b, '/.well-known/jwks.json', ip);
    expect(refused.status).to.equal(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, 60);
    expect(refused.headers.get('ratelimit')).to.equal(`limit=${STANDARD}, remaining=0, reset=${retryAfter}`);
    expect(refused.headers.get('ratelimit-policy')).to.equal(`${STANDARD};w=60`);
    const body = await refused.json() as Record<string, unknown>;
    expect(body).to.include({ success: false, code: 'rate_limited' });
    expect(body['error']).to.be.a('string').and.match(/rate limit/);
    expect(body['timestamp']).to.be.a('number');
    // the OpenAPI document counts too, and the other node refuses as well
    expect((await get(a, '/openapi.yaml', ip)).status).to.equal(429);
    // a different client is not affected
    expect((await get(a, '/v1/jwks', nextIp())).status).to.equal(200);
  });

  it('counts invalid requests too, and refuses before validation', async () => {
    const ip = nextIp();
    for (let i = 0; i < STANDARD; i++) expect((await get(a, '/v1/jwks?bogus=1', ip)).status).to.equal(400);
    expect((await get(b, '/v1/jwks?bogus=1', ip)).status).to.equal(429);
  });

  it('counts IPv6 clients per /64', async () => {
    for (let i = 0; i < STANDARD; i++) expect((await get(a, '/v1/jwks', `2001:db8:0:7::${i + 1}`)).status).to.equal(200);
    expect((await get(b, '/v1/jwks', '2001:db8:0:7:ffff::9')).status).to.equal(429);
    expect((await get(b, '/v1/jwks', '2001:db8:0:8::1')).status).to.equal(200);
  });

  it('leaves health probes unlimited', async () => {
    const ip = nextIp();
    for (let i = 0; i < STANDARD + 3; i++) {
      const res = await get(i % 2 === 0 ? a : b, '/v1/health', ip);
      expect(res.status).to.equal(200);
      expect(res.headers.get('ratelimit')).to.equal(null);
    }
    expect((await get(a, '/v1/jwks', ip)).status).to.equal(200);
  });

  it('does not count routes with a limit of their own against the standard budget', async () => {
    const ip = nextIp();
    for (let i = 0; i < STANDARD; i++) expect((await get(a, '/v1/jwks', ip)).status).to.equal(200);
    expect((await get(a, '/v1/jwks', ip)).status).to.equal(429);
    const search = await get(b, '/v1/assets/search?q=USDC', ip);
    expect(search.status).to.equal(200);
    expect(search.headers.get('ratelimit-policy')).to.equal('50;w=60');
    expect(search.headers.get('ratelimit')).to.match(/^limit=50, remaining=49,/);
  });

  it('limits gateway challenges per client and gateway, on top of the standard limit', async () => {
    const ip = nextIp();
    for (let i = 0; i < CHALLENGES; i++) expect((await post(i === 0 ? a : b, `/v1/gateway/${GATEWAY_A}/auth/challenge`, ip)).status).to.equal(200);
    const refused = await post(a, `/v1/gateway/${GATEWAY_A}/auth/challenge`, ip);
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('ratelimit-policy')).to.equal(`${CHALLENGES};w=60`);
    expect(await refused.json()).to.include({ success: false, code: 'rate_limited' });
    // another gateway, and another client of the same gateway, still get challenges
    expect((await post(b, `/v1/gateway/${GATEWAY_B}/auth/challenge`, ip)).status).to.equal(200);
    expect((await post(b, `/v1/gateway/${GATEWAY_A}/auth/challenge`, nextIp())).status).to.equal(200);
    // and the challenges drew on the standard budget as well: 4 counted, 1 left
    expect((await get(a, '/v1/jwks', ip)).status).to.equal(200);
    expect((await get(a, '/v1/jwks', ip)).status).to.equal(429);
  });

  it('documents the 429 on standard-limited routes and not on health', async () => {
    const doc = parse(await (await get(a, '/openapi.yaml', nextIp())).text()) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    expect(doc.paths['/v1/jwks']!['get']!.responses).to.have.property('429');
    expect(doc.paths['/v1/gateway/{gateway}/auth/verify']!['post']!.responses).to.have.property('429');
    expect(doc.paths['/v1/health']!['get']!.responses).not.to.have.property('429');
  });
});
